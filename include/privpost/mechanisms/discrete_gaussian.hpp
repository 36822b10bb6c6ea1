// privpost/mechanisms/discrete_gaussian.hpp
// discrete_gaussian_mechanism: (epsilon, delta)-DP (through zCDP) release on the lattice gamma Z^d with exact discrete
// Gaussian noise drawn in integer arithmetic (CKS 2020, Alg. 3, Thm. 14); privacy, inference, the lattice: lattice.hpp.
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <string_view>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/random/discrete_noise.hpp"
#include "privpost/mechanisms/csprng_release.hpp"
#include "privpost/mechanisms/lattice.hpp"
#include "privpost/mechanisms/noise_views.hpp"

namespace privpost {

/// The discrete Gaussian mechanism on a lattice: (epsilon, delta)-DP, through zCDP, for statistics whose L2
/// sensitivity is at most `l2_sensitivity`; z = gamma (k + Y) with P(Y_j = y) proportional to exp(-y^2 / (2 sigma^2)).
///
///     const discrete_gaussian_mechanism m(std::sqrt(2.0), 1.0, 1e-6);  // multinomial counts, gamma = 1
class discrete_gaussian_mechanism : public detail::csprng_release<discrete_gaussian_mechanism>,
                                    public fixed_variance_mixture<discrete_gaussian_mechanism> {
 public:
  /// release(s): z = gamma (k + Y) with Y from the operating system's CSPRNG (the default for real releases).
  using detail::csprng_release<discrete_gaussian_mechanism>::release;
  /// The denominator of the rational variance sigma^2 = numerator / 2^10.
  static constexpr std::uint64_t variance_denominator = std::uint64_t{1} << 10;

  /// Throws std::invalid_argument unless l2_sensitivity is finite and > 0, epsilon finite and >= 2^-50, delta in
  /// (0, 1), the lattice valid, and sigma at most 2^20 lattice units.
  discrete_gaussian_mechanism(double l2_sensitivity, double epsilon, double delta, lattice l = {})
      : sensitivity_(l2_sensitivity), budget_{epsilon, delta}, lattice_(l) {
    check_sensitivity("discrete_gaussian_mechanism", "l2_sensitivity", l2_sensitivity);
    check_epsilon("discrete_gaussian_mechanism", epsilon);
    check_delta("discrete_gaussian_mechanism", delta, false);
    detail::check_lattice("discrete_gaussian_mechanism", l);
    const double x = l2_sensitivity / l.granularity;
    if (!(x <= 0x1.0p20)) throw_invalid("discrete_gaussian_mechanism", "l2_sensitivity / granularity", x, "at most 2^20");
    const double reach =
        l.statistics == lattice_statistic::exact ? x + 1e-3 : x + std::sqrt(static_cast<double>(l.dimension)) + 1e-3;
    // Neighbouring lattice points differ by an integer vector: its squared norm is a whole number <= reach^2.
    lattice_sensitivity_ = std::sqrt(std::max(1.0, std::floor(reach * reach)));
    // log(1/delta) without underflow for a denormal delta (as the Gaussian calibrations)
    const double log_inv_delta = -std::log(delta);
    // rho = (sqrt(L + e) - sqrt(L))^2 with sqrt(L + e) - sqrt(L) = e / (sqrt(L + e) + sqrt(L)): no cancellation.
    // The factor 1 + 1e-12 below covers the rounding of these few operations, so that sigma^2 is never too small.
    const double rho_target = std::pow(epsilon / (std::sqrt(log_inv_delta + epsilon) + std::sqrt(log_inv_delta)), 2.0);
    const double variance = lattice_sensitivity_ * lattice_sensitivity_ / (2.0 * rho_target) * (1.0 + 1e-12);
    if (!(variance <= 0x1.0p40))
      throw_invalid("discrete_gaussian_mechanism", "sigma (lattice units)", std::sqrt(variance),
                    "at most 2^20 lattice units: choose a coarser granularity or a larger epsilon");
    numerator_ = static_cast<std::uint64_t>(std::max(1.0, std::ceil(variance * static_cast<double>(variance_denominator))));
    lattice_variance_ = static_cast<double>(numerator_) / static_cast<double>(variance_denominator);
    rho_ = lattice_sensitivity_ * lattice_sensitivity_ / (2.0 * lattice_variance_);
    sigma_ = std::sqrt(lattice_variance_) * l.granularity;
    if (!(sigma_ * sigma_ >= std::numeric_limits<double>::min() && std::isfinite(sigma_ * sigma_)))
      throw_invalid("discrete_gaussian_mechanism", "sigma", sigma_, "a noise sd whose square is a positive normal double");
    log_norm_ = -log_normaliser(lattice_variance_);
  }

  /// The declared L2 sensitivity, in the statistic's units.
  double l2_sensitivity() const noexcept { return sensitivity_; }
  /// The lattice the statistics meet.
  const lattice& lattice_spec() const noexcept { return lattice_; }
  /// The lattice's granularity gamma.
  double granularity() const noexcept { return lattice_.granularity; }
  /// The L2 sensitivity of the lattice point, in lattice units.
  double lattice_sensitivity() const noexcept { return lattice_sensitivity_; }
  /// sigma^2 in lattice units (a multiple of 2^-10).
  double lattice_variance() const noexcept { return lattice_variance_; }
  /// The sd of the continuous view, gamma sigma, in the statistic's units.
  double sigma() const noexcept { return sigma_; }
  /// The privacy cost of one release.
  privacy_budget budget() const noexcept { return budget_; }
  /// rho = D2_lattice^2 / (2 sigma^2) (CKS Thm. 14), at most the rho that gives (epsilon, delta).
  double zcdp_rho() const noexcept { return rho_; }
  /// The continuous view's variance per coordinate, (gamma sigma)^2 (the discrete noise's own is below it,
  /// CKS Cor. 9).
  double noise_variance() const noexcept { return sigma_ * sigma_; }

  /// The coordinate view (noise_views.hpp): Gaussian-type noise of variance sigma^2 on the lattice of granularity gamma.
  coordinate_noise coordinate_kernel() const { return coordinate_noise::gaussian(lattice_variance_, lattice_.granularity); }

  /// z = gamma (k + Y), Y drawn exactly from the given engine (tests and simulation studies).
  template <class Derived, random_engine G>
  typename Derived::PlainObject release(const Eigen::MatrixBase<Derived>& s, G& g) const {
    const Eigen::VectorXd k = detail::lattice_points("discrete_gaussian_mechanism::release", lattice_, s);
    typename Derived::PlainObject z(s.size());
    for (Eigen::Index j = 0; j < s.size(); ++j) {
      const auto y = static_cast<double>(draw_discrete_gaussian(g, numerator_, variance_denominator));
      z(j) = lattice_.granularity * (k(j) + y);
    }
    return z;
  }

  /// log p(z | s) = sum_j [-(z_j / gamma - k_j)^2 / (2 sigma^2) - log N(sigma)], N(sigma) = sum_y exp(-y^2/(2 sigma^2)).
  /// Throws std::invalid_argument unless z is a finite lattice point.
  template <class DerivedZ, class DerivedS>
  double log_likelihood(const Eigen::MatrixBase<DerivedZ>& z, const Eigen::MatrixBase<DerivedS>& s) const {
    return detail::lattice_log_likelihood("discrete_gaussian_mechanism::log_likelihood", lattice_.granularity, z, s,
                                          [&](double r) { return log_norm_ - 0.5 * r * r / lattice_variance_; });
  }

  /// log sum_{y in Z} exp(-y^2 / (2 v)): by direct summation for v < 1, else by Poisson summation,
  /// sqrt(2 pi v) (1 + 2 sum_m exp(-2 pi^2 v m^2)), whose terms past m = 3 are below exp(-177).
  static double log_normaliser(double v) {
    if (v < 1.0) {
      double sum = 1.0;
      for (int y = 1; y <= 40; ++y) sum += 2.0 * std::exp(-0.5 * y * y / v);
      return std::log(sum);
    }
    double correction = 0.0;
    for (int m = 1; m <= 3; ++m) correction += 2.0 * std::exp(-2.0 * std::numbers::pi * std::numbers::pi * v * m * m);
    return 0.5 * std::log(2.0 * std::numbers::pi * v) + std::log1p(correction);
  }

 private:
  double sensitivity_;
  privacy_budget budget_;
  lattice lattice_;
  double lattice_sensitivity_ = 0.0;
  std::uint64_t numerator_ = 0;
  double lattice_variance_ = 0.0;
  double rho_ = 0.0;
  double sigma_ = 0.0;
  double log_norm_ = 0.0;
};

}  // namespace privpost
