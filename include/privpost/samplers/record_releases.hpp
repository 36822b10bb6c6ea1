// privpost/samplers/record_releases.hpp
// The record-level frame (samplers/record_frame.hpp) for a conjugate exponential family: conjugate_record_model, the
// contribution rules of a family's releases (the statistic, the clamped statistic, the dropped one) and
// record_gibbs_releases, the frame over several releases of the same records. Release r is z_r ~ p_r(z_r | S_r) with
// S_r = sum_i c_r(x_i): for example the same count released twice with different budgets, or a clamped and a dropped
// release of one column. With one release it is record_gibbs (samplers/record_augmented.hpp), draw for draw.
//
//     record_gibbs_releases chain(beta_prior(1, 1), 10.0, g, record_release(laplace_mechanism(1, 0.5), z1),
//                                 record_release(gaussian_mechanism::analytic(1, 0.5, 1e-5), z2));
//     record_gibbs_releases poisson(poisson_gamma_prior(10, 2), 10.0, g,
//         record_release(laplace_mechanism(8, 0.5), z1, clamped_contribution<poisson_family>(0, 8)),
//         record_release(laplace_mechanism(8, 0.5), z2, dropped_contribution<poisson_family>(0, 8)));
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <limits>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/interval.hpp"
#include "privpost/core/numerical_events.hpp"
#include "privpost/core/random/uniform.hpp"
#include "privpost/families/family_model.hpp"
#include "privpost/mechanisms/reachable.hpp"
#include "privpost/samplers/record_frame.hpp"

namespace privpost {

/// What the data owner summed for a record: a callable from the family's record to the family's statistic vector type
/// (exactly that type, so that a rule of another family is refused at compile time).
template <class C, class F>
concept record_contribution = exponential_family<F> && requires(const C& c, const typename F::record_type& x) {
  { c(x) } -> std::same_as<typename F::vector_type>;
};

/// The record's statistic t(x), unchanged (a bounded family's release: binomial, multinomial).
template <exponential_family F>
struct statistic_contribution {
  /// The family's own statistic (whole wherever the family's are: the record frame then keeps exact running sums).
  static constexpr bool is_statistic = true;
  /// t(x).
  typename F::vector_type operator()(const typename F::record_type& x) const { return F::statistic(x); }
};

namespace detail {
/// The declared bounds [lo, hi] of a truncated release's contribution rule (scalar records).
struct contribution_bounds {
  /// @{
  /// The bounds [lo, hi].
  double lo = 0.0, hi = 0.0;
  /// @}
  /// [lower, upper]; std::invalid_argument naming `rule` on a NaN bound or lower > upper.
  contribution_bounds(const char* rule, double lower, double upper) : lo(lower), hi(upper) {
    check_interval(rule, "[lo, hi]", lo, hi);
  }
};
}  // namespace detail

/// The statistic of the record clamped into [lo, hi] (a truncated release under the clamp policy; scalar records).
template <exponential_family F>
struct clamped_contribution : detail::contribution_bounds {
  /// Clamps into [lower, upper]; std::invalid_argument on a NaN bound or lower > upper.
  clamped_contribution(double lower, double upper) : contribution_bounds("clamped_contribution", lower, upper) {}
  /// t(clamp(x, lo, hi)).
  typename F::vector_type operator()(const typename F::record_type& x) const {
    return F::statistic(std::clamp(static_cast<double>(x), lo, hi));
  }
};

/// The statistic of a record inside [lo, hi], and nothing (zero) for a record outside it (the drop policy).
template <exponential_family F>
struct dropped_contribution : detail::contribution_bounds {
  /// Keeps records in [lower, upper]; std::invalid_argument on a NaN bound or lower > upper.
  dropped_contribution(double lower, double upper) : contribution_bounds("dropped_contribution", lower, upper) {}
  /// t(x) inside [lo, hi], zero outside.
  typename F::vector_type operator()(const typename F::record_type& x) const {
    const auto v = static_cast<double>(x);
    return (v >= lo && v <= hi) ? typename F::vector_type(F::statistic(x)) : F::vector_type::Zero();
  }
};

namespace detail {
// [lo, hi] containing coordinate j of the sum of n records' contributions under rule c, for the rule of
// mechanisms/reachable.hpp: the family's support bounds for the statistic itself; n times the statistic's range over
// [lo, hi] (by interval arithmetic) for the clamped rule, widened to 0 for the dropped one; unbounded where the family
// gives neither.
template <class F, class C>
std::pair<double, double> contribution_sum_range(const C& c, double n, int j) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  if constexpr (std::same_as<C, statistic_contribution<F>>) {
    using support = family_support_t<F>;
    if constexpr (interval_support<support>) return {support{}.lower(n), support{}.upper(n)};
  } else if constexpr (generic_statistic_family<F> &&
                       (std::same_as<C, clamped_contribution<F>> || std::same_as<C, dropped_contribution<F>>)) {
    const interval r = F::generic_statistic(interval(c.lo, c.hi))[static_cast<std::size_t>(j)];
    if constexpr (std::same_as<C, clamped_contribution<F>>) return {n * r.lo, n * r.hi};
    return {n * std::min(0.0, r.lo), n * std::max(0.0, r.hi)};
  }
  return {-inf, inf};
}

}  // namespace detail

/// An exponential family with a conjugate prior as a record_model (samplers/record_frame.hpp): theta from the prior,
/// records from the family, the family's statistic both as the summed statistic of the conjugate update and as the
/// contribution of a release that names no rule.
template <conjugate_prior Prior>
requires record_generating_family<typename Prior::family>
struct conjugate_record_model {
  /// The exponential family.
  using family = typename Prior::family;
  /// @{
  /// The model's types (record_model).
  using parameter_type = typename family::parameter_type;
  using record_type = typename family::record_type;
  using vector_type = typename family::vector_type;
  using statistic_type = typename family::vector_type;
  /// @}
  /// The prior.
  Prior prior;
  /// Whether the records' statistics are whole numbers (a family with an integer sum law: binomial, Poisson), so that
  /// the frame's running sums are exact.
  static constexpr bool whole_contributions = integer_sum_model<family_model<family>>;

  /// theta ~ the prior.
  template <random_engine G>
  parameter_type draw_prior(G& g) const {
    return prior.draw(g);
  }
  /// x ~ f(. | theta).
  template <random_engine G>
  record_type draw_record(const parameter_type& theta, std::size_t, G& g) const {
    return family::draw_record(theta, g);
  }
  /// t(x).
  vector_type statistic(const record_type& x, std::size_t) const { return family::statistic(x); }
  /// t(x): a release that names no rule sums the statistic.
  vector_type contribution(const record_type& x, std::size_t) const { return family::statistic(x); }
  /// theta ~ p(theta | T, n), the conjugate update.
  template <random_engine G>
  parameter_type draw_given_statistic(const statistic_type& t, double n, G& g) const {
    return prior.update(t, n).draw(g);
  }
  /// theta as a vector.
  Eigen::VectorXd parameter_vector(const parameter_type& theta) const { return family_model<family>::parameter_vector(theta); }
  /// The range of coordinate j of n records' summed contributions under rule c (mechanisms/reachable.hpp's rule).
  template <class C>
  std::pair<double, double> contribution_sum_range(const C& c, double n, int j) const {
    if constexpr (std::same_as<C, family_statistic>)
      return detail::contribution_sum_range<family>(statistic_contribution<family>{}, n, j);
    else
      return detail::contribution_sum_range<family>(c, n, j);
  }
};

/// A release of the records of family F: a record_release whose rule is a record_contribution of F (or names none).
template <class R, class F>
concept record_release_for = exponential_family<F> && detail::is_record_release<R> &&
    (std::same_as<std::remove_cvref_t<decltype(std::declval<const R&>().contribution)>, family_statistic> ||
     record_contribution<std::remove_cvref_t<decltype(std::declval<const R&>().contribution)>, F>);

/// The record-level sampler over (theta, x_1..x_n) for a conjugate prior given R >= 1 releases of the same records:
/// record_frame over conjugate_record_model<Prior>. Models privpost::sampler. Sweeps allocate nothing.
template <conjugate_prior Prior, class... Releases>
requires record_generating_family<typename Prior::family> &&(sizeof...(Releases) >= 1) &&
    (record_release_for<Releases, typename Prior::family> && ...) class record_gibbs_releases
    : public record_frame<conjugate_record_model<Prior>, Releases...> {
  using base = record_frame<conjugate_record_model<Prior>, Releases...>;

 public:
  /// The exponential family.
  using family = typename Prior::family;

  /// n: the public number of records (a whole number in [1, 1e7]); each release's z has family::dimension finite
  /// entries. theta starts from the prior and the records from f(. | theta). std::invalid_argument for a wrong size, a
  /// non-finite or unreachable z or a bad n; std::domain_error if a release has zero density at the initial records.
  template <random_engine G>
  record_gibbs_releases(const Prior& prior, double n, G& g, Releases... releases)
      : base("record_gibbs_releases", {prior}, n, g, record_init::prior, std::move(releases)...) {}
  /// As above, with the records' start chosen by init.
  template <random_engine G>
  record_gibbs_releases(const Prior& prior, double n, G& g, record_init init, Releases... releases)
      : base("record_gibbs_releases", {prior}, n, g, init, std::move(releases)...) {}

 protected:
  /// The checks and the start under the name `function` (record_gibbs uses its own).
  template <random_engine G>
  record_gibbs_releases(const char* function, const Prior& prior, double n, G& g, record_init init, Releases... releases)
      : base(function, {prior}, n, g, init, std::move(releases)...) {}
};

}  // namespace privpost
