// privpost/mechanisms/discrete_laplace.hpp
// discrete_laplace_mechanism: epsilon-DP release on the lattice gamma Z^d with exact discrete Laplace noise drawn in
// integer arithmetic (Canonne, Kamath & Steinke 2020, Alg. 2); privacy, inference and the lattice: lattice.hpp.
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/random/discrete_noise.hpp"
#include "privpost/core/random/exponential.hpp"
#include "privpost/core/random/inverse_gaussian.hpp"
#include "privpost/mechanisms/csprng_release.hpp"
#include "privpost/mechanisms/laplace.hpp"
#include "privpost/mechanisms/lattice.hpp"
#include "privpost/mechanisms/noise_views.hpp"

namespace privpost {

/// The discrete Laplace mechanism on a lattice: epsilon-DP for statistics whose L1 sensitivity is at most
/// `l1_sensitivity`; z = gamma (k + Y) with P(Y_j = y) proportional to exp(-|y| / t), t >= D1_lattice / epsilon.
///
///     const discrete_laplace_mechanism m(1.0, 0.5);  // counts, gamma = 1
///     const Eigen::VectorXd z = m.release(s);         // noise from the OS CSPRNG
class discrete_laplace_mechanism : public detail::csprng_release<discrete_laplace_mechanism> {
 public:
  /// release(s): z = gamma (k + Y) with Y from the operating system's CSPRNG (the default for real releases).
  using detail::csprng_release<discrete_laplace_mechanism>::release;
  /// The scale-mixture view (continuous Laplace of scale gamma t) has latent variances, redrawn every sweep.
  static constexpr bool fixed_variance = false;
  /// The denominator of the rational noise scale t = numerator / 2^20.
  static constexpr std::uint64_t scale_denominator = std::uint64_t{1} << 20;

  /// Throws std::invalid_argument unless l1_sensitivity is finite and > 0, epsilon finite and >= 2^-50, the lattice
  /// valid (granularity a finite normal number > 0, dimension in [1, 100000]) and the noise scale at most 2^32 lattice
  /// units.
  discrete_laplace_mechanism(double l1_sensitivity, double epsilon, lattice l = {})
      : sensitivity_(l1_sensitivity), epsilon_(epsilon), lattice_(l) {
    check_sensitivity("discrete_laplace_mechanism", "l1_sensitivity", l1_sensitivity);
    check_epsilon("discrete_laplace_mechanism", epsilon);
    detail::check_lattice("discrete_laplace_mechanism", l);
    const double x = l1_sensitivity / l.granularity;
    if (!(x <= 0x1.0p40)) throw_invalid("discrete_laplace_mechanism", "l1_sensitivity / granularity", x, "at most 2^40");
    lattice_sensitivity_ = l.statistics == lattice_statistic::exact ? std::max(1.0, std::floor(x + 0.5))
                                                                    : std::ceil(x) + static_cast<double>(l.dimension);
    const double tau = lattice_sensitivity_ / epsilon;
    if (!(tau <= 0x1.0p32))
      throw_invalid("discrete_laplace_mechanism", "noise scale (lattice units)", tau,
                    "at most 2^32 lattice units: choose a coarser granularity");
    // t / 2^20 >= tau: scaling by 2^20 is exact, ceil is exact, so the scale is never below tau.
    numerator_ = static_cast<std::uint64_t>(std::max(1.0, std::ceil(tau * static_cast<double>(scale_denominator))));
    lattice_scale_ = static_cast<double>(numerator_) / static_cast<double>(scale_denominator);
    scale_ = lattice_scale_ * l.granularity;
    if (!(scale_ * scale_ >= std::numeric_limits<double>::min() && std::isfinite(2.0 * scale_ * scale_)))
      throw_invalid("discrete_laplace_mechanism", "noise scale", scale_, "a scale whose square is a positive normal double");
    // log of the pmf's normaliser (1 - q) / (1 + q), q = exp(-1 / t)
    log_norm_ = std::log(-std::expm1(-1.0 / lattice_scale_)) - std::log1p(std::exp(-1.0 / lattice_scale_));
  }

  /// The declared L1 sensitivity, in the statistic's units.
  double l1_sensitivity() const noexcept { return sensitivity_; }
  /// The privacy loss epsilon of one release.
  double epsilon() const noexcept { return epsilon_; }
  /// The lattice the statistics meet.
  const lattice& lattice_spec() const noexcept { return lattice_; }
  /// The lattice's granularity gamma.
  double granularity() const noexcept { return lattice_.granularity; }
  /// The L1 sensitivity of the lattice point, in lattice units (a whole number).
  double lattice_sensitivity() const noexcept { return lattice_sensitivity_; }
  /// The noise scale t in lattice units (a multiple of 2^-20, >= lattice_sensitivity() / epsilon).
  double lattice_scale() const noexcept { return lattice_scale_; }
  /// The scale of the continuous view, gamma t, in the statistic's units.
  double scale() const noexcept { return scale_; }
  /// The privacy cost of one release: (epsilon, 0).
  privacy_budget budget() const noexcept { return {epsilon_, 0.0}; }
  /// The scale-mixture view's variance per coordinate, 2 (gamma t)^2 (the discrete noise's own is
  /// 2 q / (1 - q)^2 gamma^2 with q = exp(-1/t), within 1/6 gamma^2 of it).
  double noise_variance() const noexcept { return 2.0 * scale_ * scale_; }

  /// z = gamma (k + Y), Y drawn exactly from the given engine (tests and simulation studies).
  template <class Derived, random_engine G>
  typename Derived::PlainObject release(const Eigen::MatrixBase<Derived>& s, G& g) const {
    const Eigen::VectorXd k = detail::lattice_points("discrete_laplace_mechanism::release", lattice_, s);
    typename Derived::PlainObject z(s.size());
    for (Eigen::Index j = 0; j < s.size(); ++j) {
      const auto y = static_cast<double>(draw_discrete_laplace(g, numerator_, scale_denominator));
      z(j) = lattice_.granularity * (k(j) + y);
    }
    return z;
  }

  /// log p(z | s) = sum_j [log((1 - q) / (1 + q)) - |z_j / gamma - k_j| / t], k the lattice point of s (clamped at 2^44
  /// units, as release() clamps it), q = exp(-1/t).
  /// Throws std::invalid_argument unless z is a finite lattice point.
  template <class DerivedZ, class DerivedS>
  double log_likelihood(const Eigen::MatrixBase<DerivedZ>& z, const Eigen::MatrixBase<DerivedS>& s) const {
    return detail::lattice_log_likelihood("discrete_laplace_mechanism::log_likelihood", lattice_.granularity, z, s,
                                          [&](double r) { return log_norm_ - std::abs(r) / lattice_scale_; });
  }

  /// The coordinate view (noise_views.hpp): Laplace-type noise of scale t on the lattice of granularity gamma.
  coordinate_noise coordinate_kernel() const { return coordinate_noise::laplace(lattice_scale_, lattice_.granularity); }

  /// A draw of one coordinate's latent variance from its prior Exp(rate 1/(2 (gamma t)^2)) (the continuous view,
  /// laplace_scale_mixture).
  template <random_engine G>
  double draw_variance(G& g) const {
    return laplace_scale_mixture{scale_}.draw_variance(g);
  }

  /// A draw of one coordinate's latent variance given the residual (the continuous view, laplace_scale_mixture).
  template <random_engine G>
  double redraw_variance(double residual, G& g) const {
    return laplace_scale_mixture{scale_}.redraw_variance("discrete_laplace_mechanism::redraw_variance", residual, g);
  }

 private:
  double sensitivity_;
  double epsilon_;
  lattice lattice_;
  double lattice_sensitivity_ = 0.0;
  std::uint64_t numerator_ = 0;
  double lattice_scale_ = 0.0;
  double scale_ = 0.0;
  double log_norm_ = 0.0;
};

}  // namespace privpost
