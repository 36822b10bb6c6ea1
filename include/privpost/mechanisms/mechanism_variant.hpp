// privpost/mechanisms/mechanism_variant.hpp
// mechanism_variant<Ms...>: one of several release mechanisms, chosen at run time (for example from a release record
// that says "laplace" or "gaussian"). A sampler over the variant is one instantiation instead of one per mechanism, and
// draws exactly what a sampler over the held mechanism draws from the same engine.
#pragma once

#include <Eigen/Core>
#include <concepts>
#include <type_traits>
#include <utility>
#include <variant>

#include "privpost/core/concepts.hpp"
#include "privpost/mechanisms/reachable.hpp"

namespace privpost {

namespace detail {
// M::fixed_variance when M is a scale mixture, else false (the variant only uses it when every alternative is one).
template <class M>
constexpr bool fixed_variance_of() {
  if constexpr (scale_mixture_noise<M>)
    return M::fixed_variance;
  else
    return false;
}

template <class M>
concept reports_noise_variance = requires(const M& m) {
  { m.noise_variance() } -> std::convertible_to<double>;
};
template <class M>
concept reports_l1_sensitivity = requires(const M& m) {
  { m.l1_sensitivity() } -> std::convertible_to<double>;
};
template <class M>
concept reports_l2_sensitivity = requires(const M& m) {
  { m.l2_sensitivity() } -> std::convertible_to<double>;
};

template <class M, class... Ms>
struct first_mechanism {
  using type = M;
};
}  // namespace detail

/// One of the release mechanisms Ms, held by value and chosen at run time. Every call is forwarded to the held
/// mechanism, so it releases, evaluates and draws exactly as that mechanism does (same engine, same draws).
///
/// It is a release_mechanism (its opt-in is the alternatives' own: it adds only their noise), a scale_mixture_noise
/// when every alternative is one (fixed_variance when every alternative's variance is fixed; a fixed-variance
/// alternative's redraw_variance uses no randomness, so a Gaussian held here draws the same chain as a Gaussian alone),
/// and reports noise_variance(), l1_sensitivity() or l2_sensitivity() only when every alternative does. So
/// mechanism_variant<laplace_mechanism, gaussian_mechanism> is not sensitivity_calibrated and release_statistic does not
/// accept it: release through the concrete mechanism, whose declared sensitivity it checks, and use the variant on
/// the inference side (what privpost-infer and privpost-calibrate do).
///
///     using either = mechanism_variant<laplace_mechanism, gaussian_mechanism>;
///     const either m = record.mechanism == "laplace" ? either(laplace_mechanism(l1, eps))
///                                                    : either(gaussian_mechanism::analytic(l2, eps, delta));
///     gibbs_ss chain(prior, m, z, n, g);
// clang-format off
template <release_mechanism... Ms>
requires(sizeof...(Ms) > 0) &&
        (std::same_as<typename Ms::vector_type, typename detail::first_mechanism<Ms...>::type::vector_type> && ...)
class mechanism_variant {
 public:
  /// Marks a release mechanism.
  using mechanism_category = mechanism_tag;
  /// Type of the statistic and of the release (that of the first alternative).
  using vector_type = typename detail::first_mechanism<Ms...>::type::vector_type;
  /// True when every alternative's scale-mixture variance is a constant (then samplers skip the redraw).
  static constexpr bool fixed_variance = (detail::fixed_variance_of<Ms>() && ...);
  /// True when every alternative's noise is exactly its scale mixture (core/concepts.hpp exact_scale_mixture_noise).
  static constexpr bool exact_scale_mixture = (exact_scale_mixture_noise<Ms> && ...);

  /// Holds a copy of one of the alternatives (implicit, so an alternative converts where a variant is expected).
  template <class M>
  requires(std::same_as<std::remove_cvref_t<M>, Ms> || ...)
  mechanism_variant(M&& mechanism) : held_(std::forward<M>(mechanism)) {}
  // clang-format on

  /// True when the held mechanism is an M.
  template <class M>
  bool holds() const noexcept {
    return std::holds_alternative<M>(held_);
  }
  /// The held mechanism if it is an M, else nullptr.
  template <class M>
  const M* get_if() const noexcept {
    return std::get_if<M>(&held_);
  }
  /// f(held mechanism).
  template <class F>
  decltype(auto) visit(F&& f) const {
    return std::visit(std::forward<F>(f), held_);
  }

  /// The held mechanism's privacy cost of one release.
  privacy_budget budget() const {
    return visit([](const auto& m) { return m.budget(); });
  }
  /// The held mechanism's zCDP parameter (privpost::zcdp_rho: +infinity when it has no zCDP view).
  double zcdp_rho() const {
    return visit([](const auto& m) { return privpost::zcdp_rho(m); });
  }

  /// The held mechanism's release from the given engine (tests and simulation studies).
  template <class Derived, random_engine G>
  auto release(const Eigen::MatrixBase<Derived>& s, G& g) const {
    return visit([&](const auto& m) -> typename Derived::PlainObject { return m.release(s, g); });
  }

  /// The held mechanism's release with noise from the operating system's CSPRNG.
  template <class Derived>
  auto release(const Eigen::MatrixBase<Derived>& s) const {
    return visit([&](const auto& m) -> typename Derived::PlainObject { return m.release(s); });
  }

  /// log p(z | s) under the held mechanism.
  template <class DerivedZ, class DerivedS>
  double log_likelihood(const Eigen::MatrixBase<DerivedZ>& z, const Eigen::MatrixBase<DerivedS>& s) const {
    return visit([&](const auto& m) -> double { return m.log_likelihood(z, s); });
  }

  /// log p(z | s_new) - log p(z | s) under the held mechanism (its log_density_change, or two log_likelihood calls).
  template <class DerivedZ, class DerivedS, class DerivedT>
  double log_density_change(const Eigen::MatrixBase<DerivedZ>& z, const Eigen::MatrixBase<DerivedS>& s,
                            const Eigen::MatrixBase<DerivedT>& s_new) const {
    return visit([&](const auto& m) -> double { return privpost::log_density_change(m, z, s, s_new); });
  }

  // clang-format off
  /// A draw of one coordinate's latent variance from the held mechanism's prior.
  template <random_engine G>
  requires(scale_mixture_noise<Ms> && ...)
  double draw_variance(G& g) const {
    return visit([&](const auto& m) -> double { return m.draw_variance(g); });
  }

  /// A draw of one coordinate's latent variance given the residual z_j - s_j, from the held mechanism.
  template <random_engine G>
  requires(scale_mixture_noise<Ms> && ...)
  double redraw_variance(double residual, G& g) const {
    return visit([&](const auto& m) -> double { return m.redraw_variance(residual, g); });
  }

  /// The held mechanism's noise variance per coordinate (when every alternative reports one).
  double noise_variance() const requires(detail::reports_noise_variance<Ms> && ...) {
    return visit([](const auto& m) -> double { return m.noise_variance(); });
  }

  /// The held mechanism's noise scale (privpost::noise_scale: the Laplace b, the Gaussian sigma, ...).
  double noise_scale() const {
    return visit([](const auto& m) -> double { return privpost::noise_scale(m); });
  }

  /// The held mechanism's L1 sensitivity (when every alternative reports one).
  double l1_sensitivity() const requires(detail::reports_l1_sensitivity<Ms> && ...) {
    return visit([](const auto& m) -> double { return m.l1_sensitivity(); });
  }

  /// The held mechanism's L2 sensitivity (when every alternative reports one).
  double l2_sensitivity() const requires(detail::reports_l2_sensitivity<Ms> && ...) {
    return visit([](const auto& m) -> double { return m.l2_sensitivity(); });
  }

  // clang-format on

 private:
  std::variant<Ms...> held_;
};

}  // namespace privpost
