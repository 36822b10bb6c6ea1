// privpost/samplers/record_releases.hpp
// record_gibbs_releases: the record-level sampler (samplers/record_augmented.hpp; spec exact-small-n.md C.2-C.3) for
// several releases of the same records. Release r is z_r ~ p_r(z_r | S_r) with S_r = sum_i c_r(x_i), its own mechanism
// and its own contribution rule (the statistic, the clamped statistic, or the dropped one): for example the same count
// released twice with different budgets, or a clamped and a dropped release of one column. The target is
//     p(theta) prod_i f(x_i | theta) prod_r p_r(z_r | S_r),
// and a record update proposes x* ~ f(. | theta) and accepts with
//     alpha = min(1, prod_r p_r(z_r | S_r - c_r(x_i) + c_r(x*)) / p_r(z_r | S_r)),
// where a release whose contribution does not change contributes a factor 1 without a density evaluation. For
// eps_r-DP Laplace releases whose contributions stay in their declared ranges every alpha is at least
// exp(-sum_r eps_r), the acceptance floor the tests check. With one release it is record_gibbs, draw for draw.
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
  /// t(x).
  typename F::vector_type operator()(const typename F::record_type& x) const { return F::statistic(x); }
};

/// The statistic of the record clamped into [lo, hi] (a truncated release under the clamp policy; scalar records).
template <exponential_family F>
struct clamped_contribution {
  /// @{
  /// The bounds [lo, hi].
  double lo = 0.0, hi = 0.0;
  /// @}
  /// Clamps into [lower, upper]; std::invalid_argument on a NaN bound or lower > upper.
  clamped_contribution(double lower, double upper) : lo(lower), hi(upper) {
    check_interval("clamped_contribution", "[lo, hi]", lo, hi);
  }
  /// t(clamp(x, lo, hi)).
  typename F::vector_type operator()(const typename F::record_type& x) const {
    return F::statistic(std::clamp(static_cast<double>(x), lo, hi));
  }
};

/// The statistic of a record inside [lo, hi], and nothing (zero) for a record outside it (the drop policy).
template <exponential_family F>
struct dropped_contribution {
  /// @{
  /// The bounds [lo, hi].
  double lo = 0.0, hi = 0.0;
  /// @}
  /// Keeps records in [lower, upper]; std::invalid_argument on a NaN bound or lower > upper.
  dropped_contribution(double lower, double upper) : lo(lower), hi(upper) {
    check_interval("dropped_contribution", "[lo, hi]", lo, hi);
  }
  /// t(x) inside [lo, hi], zero outside.
  typename F::vector_type operator()(const typename F::record_type& x) const {
    const auto v = static_cast<double>(x);
    return (v >= lo && v <= hi) ? typename F::vector_type(F::statistic(x)) : F::vector_type::Zero();
  }
};

/// The contribution rule of a release that names none: the data owner summed the family's statistic unchanged (a
/// bounded family's release: binomial, multinomial). record_gibbs_releases reads it as statistic_contribution<F>.
struct family_statistic {};

/// One release of the records: its mechanism, the released value z and what the data owner summed per record (a
/// record_contribution of the sampler's family, or family_statistic when the release is of the statistic itself).
template <release_mechanism Mechanism, class Contribution = family_statistic>
struct record_release {
  /// The release's mechanism.
  Mechanism mechanism;
  /// The released value.
  Eigen::VectorXd z;
  /// What the data owner summed per record.
  Contribution contribution;
  /// The release z of mechanism m with contribution rule c.
  record_release(Mechanism m, Eigen::VectorXd released, Contribution c = {})
      : mechanism(std::move(m)), z(std::move(released)), contribution(std::move(c)) {}
};

template <release_mechanism M>
record_release(M, Eigen::VectorXd) -> record_release<M>;
template <release_mechanism M, class C>
record_release(M, Eigen::VectorXd, C) -> record_release<M, C>;

namespace detail {
// The contribution rule of a release for family F: its own, or the family's statistic for family_statistic. The only
// place that default is expressed; release_rule_t and record_gibbs_releases both go through it.
template <class F, class C>
auto resolve_rule(const C& c) {
  if constexpr (std::same_as<C, family_statistic>)
    return statistic_contribution<F>{};
  else
    return c;
}
template <class F, class Release>
using release_rule_t = decltype(resolve_rule<F>(std::declval<const Release&>().contribution));

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

template <class R>
inline constexpr bool is_record_release = false;
template <class M, class C>
inline constexpr bool is_record_release<record_release<M, C>> = true;
}  // namespace detail

/// How a record-level chain starts (spec exact-small-n.md C.3). Neither choice affects what the chain converges to,
/// only its burn-in.
enum class record_init {
  /// theta from the prior and the records from f(. | theta) (the default).
  prior,
  /// Then at most record_init_passes greedy passes move the records' contributions towards the releases: every record
  /// in turn is offered x* ~ f(. | theta') with a fresh theta' from the prior per pass, and x* replaces it when the sum
  /// of the releases' log densities does not fall (binomial with one Laplace release: S reaches round(clamp(z, 0, n)) as
  /// closely as the proposals allow). The passes stop after five in a row raise nothing; theta is then drawn given the
  /// records. Costs at most record_init_passes sweeps' worth of record draws, once.
  consistent
};

/// The most greedy passes of record_init::consistent.
inline constexpr int record_init_passes = 20;

/// A release of the records of family F: a record_release whose contribution rule (family_statistic meaning
/// statistic_contribution<F>) is a record_contribution of F.
template <class R, class F>
concept record_release_for = detail::is_record_release<R> && record_contribution<detail::release_rule_t<F, R>, F>;

/// The record-level sampler over (theta, x_1..x_n) given R >= 1 releases of the same records. Models privpost::sampler.
/// Sweeps allocate nothing.
template <conjugate_prior Prior, class... Releases>
requires record_generating_family<typename Prior::family> &&(sizeof...(Releases) >= 1) &&
    (record_release_for<Releases, typename Prior::family> && ...) class record_gibbs_releases {
 public:
  /// The exponential family.
  using family = typename Prior::family;
  /// A record.
  using record_type = typename family::record_type;
  /// The family's parameter type.
  using parameter_type = typename family::parameter_type;
  /// Type of t(x).
  using vector_type = typename family::vector_type;
  /// Number of releases.
  static constexpr std::size_t release_count = sizeof...(Releases);
  /// The most records a chain holds (as record_gibbs).
  static constexpr double max_records = 1e7;

  /// n: the public number of records (a whole number in [1, 1e7]); each release's z has family::dimension finite
  /// entries. theta starts from the prior and the records from f(. | theta) (record_init::prior), or also moved
  /// towards the releases (record_init::consistent). std::invalid_argument for a wrong size, a non-finite z or a bad
  /// n; std::domain_error if a release has zero density at the initial records.
  template <random_engine G>
  record_gibbs_releases(const Prior& prior, double n, G& g, Releases... releases)
      : record_gibbs_releases("record_gibbs_releases", prior, n, g, record_init::prior, std::move(releases)...) {}
  /// As above, with the records' start chosen by init.
  template <random_engine G>
  record_gibbs_releases(const Prior& prior, double n, G& g, record_init init, Releases... releases)
      : record_gibbs_releases("record_gibbs_releases", prior, n, g, init, std::move(releases)...) {}

  /// One sweep: theta | records (conjugate, on the exact sum T), then every record in turn (systematic scan).
  template <random_engine G>
  void step(G& g) {
    theta_ = prior_.update(total_, n_).draw(g);
    for (std::size_t i = 0; i < records_.size(); ++i) update_record(i, g);
    if (!whole_sums_)
      resum();
    else
      resync();
  }

  /// log alpha of replacing record i by x (before the min with 0): the sum over releases of log p_r(z_r | S_r*) -
  /// log p_r(z_r | S_r), each 0 when that release's contribution is unchanged.
  double log_acceptance(std::size_t i, const record_type& x) const {
    double log_alpha = 0.0;
    for_each_release([&](const auto& rel, const release_state& st, std::size_t) {
      const vector_type c = rule(rel)(x);
      if (c == st.contributions[i]) return;
      const vector_type proposed = st.sum - st.contributions[i] + c;
      double log_new = 0.0;
      log_alpha += change(rel.mechanism, st, proposed, log_new);
    });
    return log_alpha;
  }

  /// One Metropolis-Hastings update of record i at the current theta: x* ~ f(. | theta), accepted with probability
  /// min(1, exp(log_acceptance(i, x*))) (no uniform is drawn when that is 1). Returns whether it was accepted.
  template <random_engine G>
  bool update_record(std::size_t i, G& g) {
    const record_type x = family::draw_record(theta_, g);
    ++proposed_;
    bool changed = false;
    const double log_alpha = evaluate(i, x, changed);
    if (changed) {
      smallest_log_alpha_ = std::min(smallest_log_alpha_, log_alpha);
      if (log_alpha < 0.0 && !(std::log(draw_uniform(g)) < log_alpha)) return false;
    }
    ++accepted_;
    replace(i, x);
    return true;
  }

  /// The current draw of theta.
  const parameter_type& parameter() const noexcept { return theta_; }
  /// The current draw as a vector.
  auto parameter_vector() const { return family_model<family>::parameter_vector(theta_); }
  /// Sets theta (the kernel tests hold it fixed and call update_record).
  void set_parameter(const parameter_type& theta) { theta_ = theta; }
  /// Replaces the records (the kernel tests); the sums are recomputed. std::invalid_argument for a wrong count.
  void set_records(const std::vector<record_type>& records) {
    check_size_match(std::string(function_) + "::set_records", "records", static_cast<Eigen::Index>(records.size()), "n",
                     static_cast<Eigen::Index>(records_.size()));
    records_ = records;
    resum();
  }
  /// The current latent records.
  const std::vector<record_type>& records() const noexcept { return records_; }
  /// T: the sum of the records' statistics (what theta | records is conditioned on).
  const vector_type& statistic() const noexcept { return total_; }
  /// S_r: the sum of the records' contributions to release r (0-based).
  const vector_type& release_sum(std::size_t r) const {
    if (r >= release_count)
      throw_invalid(std::string(function_) + "::release_sum", "r", static_cast<double>(r),
                    "a release index in [0, " + std::to_string(release_count - 1) + "]");
    return states_[r].sum;
  }
  /// Accepted / proposed record updates so far (1 before any).
  double record_acceptance() const noexcept {
    return proposed_ == 0 ? 1.0 : static_cast<double>(accepted_) / static_cast<double>(proposed_);
  }
  /// The smallest log alpha computed so far (0 before any change of contribution was proposed).
  double smallest_log_acceptance() const noexcept { return smallest_log_alpha_; }
  /// Nothing is ever repaired or retried: all zero.
  const numerical_events& events() const noexcept { return events_; }

 protected:
  /// The checks and the start under the name `function` (record_gibbs uses its own). A single release is "the release".
  template <random_engine G>
  record_gibbs_releases(const char* function, const Prior& prior, double n, G& g, record_init init, Releases... releases)
      : prior_(prior), releases_(std::move(releases)...), n_(n), function_(function) {
    const char* f = function_;
    if (init != record_init::prior && init != record_init::consistent)
      throw_invalid(f, "init", static_cast<double>(static_cast<int>(init)), "record_init::prior or record_init::consistent");
    check_record_count(f, n);
    if (!(std::floor(n) == n && n <= max_records)) throw_invalid(f, "n", n, "a whole number in [1, 1e7]");
    for_each_release([&](auto& rel, release_state& st, std::size_t r) {
      const std::string which = release_name(r) + " z";
      check_size_match(f, which, rel.z.size(), "the family's statistic size", family::dimension);
      check_finite(f, which, rel.z);
      for (int j = 0; j < family::dimension; ++j) {
        const auto [lo, hi] = detail::contribution_sum_range<family>(detail::resolve_rule<family>(rel.contribution), n, j);
        check_reachable(f, family::dimension == 1 ? which : which + "(" + std::to_string(j) + ")", rel.z(j), lo, hi, n,
                        noise_scale(rel.mechanism));
      }
      st.z = rel.z;
    });
    theta_ = prior_.draw(g);
    const auto count = static_cast<std::size_t>(n);
    records_.resize(count);
    statistics_.resize(count);
    for (auto& st : states_) st.contributions.resize(count);
    for (std::size_t i = 0; i < count; ++i) records_[i] = family::draw_record(theta_, g);
    resum();
    if (init == record_init::consistent) start_consistent(g);
    for (std::size_t r = 0; r < release_count; ++r)
      if (!(states_[r].log_density > -std::numeric_limits<double>::infinity()))
        throw std::domain_error(std::string(f) + ": " + (release_count == 1 ? "the release" : release_name(r)) +
                                " has zero density at the initial records (log density " +
                                std::to_string(states_[r].log_density) + "); accepted: a mechanism with positive density there");
  }

 private:
  static std::string release_name(std::size_t r) {
    return release_count == 1 ? std::string("release") : "release " + std::to_string(r + 1);
  }

  struct release_state {
    vector_type z = vector_type::Zero(), sum = vector_type::Zero(), proposed = vector_type::Zero(), c_new = vector_type::Zero();
    std::vector<vector_type> contributions;
    double log_density = 0.0, log_new = 0.0;
    bool changed = false;
  };

  template <class R>
  static auto rule(const R& rel) {
    return detail::resolve_rule<family>(rel.contribution);
  }

  // fn(release, its state, index) for every release in order.
  template <class Fn>
  void for_each_release(Fn&& fn) {
    [&]<std::size_t... r>(std::index_sequence<r...>) { (fn(std::get<r>(releases_), states_[r], r), ...); }
    (std::index_sequence_for<Releases...>{});
  }
  template <class Fn>
  void for_each_release(Fn&& fn) const {
    [&]<std::size_t... r>(std::index_sequence<r...>) { (fn(std::get<r>(releases_), states_[r], r), ...); }
    (std::index_sequence_for<Releases...>{});
  }

  // Fills every release state's c_new, changed, proposed and log_new for replacing record i by x; returns log alpha
  // (the sum of the changed releases' log-density changes) and sets changed when any contribution differs.
  double evaluate(std::size_t i, const record_type& x, bool& changed) {
    double log_alpha = 0.0;
    for_each_release([&](const auto& rel, release_state& st, std::size_t) {
      st.c_new = rule(rel)(x);
      st.changed = !(st.c_new == st.contributions[i]);
      if (!st.changed) return;
      changed = true;
      st.proposed = st.sum - st.contributions[i] + st.c_new;
      log_alpha += change(rel.mechanism, st, st.proposed, st.log_new);
    });
    return log_alpha;
  }

  // Replaces record i by x after evaluate(i, x, ...): T, and the changed releases' sums, densities and contributions.
  void replace(std::size_t i, const record_type& x) {
    const vector_type t_new = family::statistic(x);
    whole_sums_ = whole_sums_ && whole(t_new);
    total_ += t_new - statistics_[i];
    statistics_[i] = t_new;
    for (auto& st : states_) {
      if (!st.changed) continue;
      whole_sums_ = whole_sums_ && whole(st.c_new);
      st.sum = st.proposed;
      st.log_density = st.log_new;  // a running sum of changes only within a sweep (resync)
      st.contributions[i] = st.c_new;
    }
    records_[i] = x;
  }

  // record_init::consistent (see there): greedy passes with proposals from f(. | theta'), theta' fresh from the prior
  // each pass, accepting rises and ties of the summed log density (through log_likelihood, from -infinity any finite
  // density is a rise); passes without a rise are idle. Then theta | records. Not counted in record_acceptance().
  template <random_engine G>
  void start_consistent(G& g) {
    int idle = 0;
    for (int pass = 0; pass < record_init_passes && idle < 5; ++pass) {
      const parameter_type proposal_theta = prior_.draw(g);
      bool moved = false;
      for (std::size_t i = 0; i < records_.size(); ++i) {
        const record_type x = family::draw_record(proposal_theta, g);
        bool changed = false;
        const double log_alpha = evaluate(i, x, changed);
        if (changed && log_alpha >= 0.0) {  // ties move too (plateaus of the L1 density), but only rises count
          replace(i, x);
          moved = moved || log_alpha > 0.0;
        }
      }
      if (!whole_sums_)
        resum();
      else
        resync();
      idle = moved ? 0 : idle + 1;
    }
    theta_ = prior_.update(total_, n_).draw(g);
  }

  // log p(z | proposed) - log p(z | S) for a release, and log p(z | proposed) into log_new: the mechanism's own
  // log_density_change when it has one (then log_new = the kept log density plus the change), else one log_likelihood
  // call against the kept log density.
  template <class M>
  static double change(const M& mechanism, const release_state& st, const vector_type& proposed, double& log_new) {
    if constexpr (density_change_mechanism<M>) {
      const double delta = mechanism.log_density_change(st.z, st.sum, proposed);
      log_new = st.log_density + delta;
      return delta;
    } else {
      log_new = mechanism.log_likelihood(st.z, proposed);
      return log_new - st.log_density;
    }
  }

  // Recomputes every release's log density from its sum (end of a sweep: the changes added within it never drift).
  void resync() {
    for_each_release(
        [&](const auto& rel, release_state& st, std::size_t) { st.log_density = rel.mechanism.log_likelihood(st.z, st.sum); });
  }

  static bool whole(const vector_type& v) {
    for (Eigen::Index j = 0; j < v.size(); ++j)
      if (!(std::floor(v(j)) == v(j) && std::abs(v(j)) < 4.5e15)) return false;
    return true;
  }

  void resum() {
    total_.setZero();
    whole_sums_ = true;
    for (std::size_t i = 0; i < records_.size(); ++i) {
      statistics_[i] = family::statistic(records_[i]);
      total_ += statistics_[i];
      whole_sums_ = whole_sums_ && whole(statistics_[i]);
    }
    for_each_release([&](const auto& rel, release_state& st, std::size_t) {
      const auto c = rule(rel);
      st.sum.setZero();
      for (std::size_t i = 0; i < records_.size(); ++i) {
        st.contributions[i] = c(records_[i]);
        st.sum += st.contributions[i];
        whole_sums_ = whole_sums_ && whole(st.contributions[i]);
      }
      st.log_density = rel.mechanism.log_likelihood(st.z, st.sum);
    });
  }

  Prior prior_;
  std::tuple<Releases...> releases_;
  std::array<release_state, release_count> states_;
  double n_;
  parameter_type theta_{};
  std::vector<record_type> records_;
  std::vector<vector_type> statistics_;
  vector_type total_ = vector_type::Zero();
  std::uint64_t proposed_ = 0, accepted_ = 0;
  double smallest_log_alpha_ = 0.0;
  bool whole_sums_ = true;
  const char* function_;
  numerical_events events_;
};

}  // namespace privpost
