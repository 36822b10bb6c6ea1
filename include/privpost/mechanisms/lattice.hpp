// privpost/mechanisms/lattice.hpp
// lattice and lattice_statistic: the lattice of the floating-point-safe mechanisms.
// discrete_laplace_mechanism (discrete_laplace.hpp) and discrete_gaussian_mechanism (discrete_gaussian.hpp) release
// z = gamma (k + Y), where k is the statistic's point on the lattice gamma Z^d and Y has independent discrete Laplace or
// discrete Gaussian coordinates drawn exactly, in integer arithmetic, from the CSPRNG (Canonne, Kamath & Steinke 2020;
// core/random/discrete_noise.hpp). The released value is a function of the integer k + Y alone, so its low-order bits
// carry nothing (textbook floating-point Laplace leaks through them: Mironov, CCS 2012). These are the mechanisms for
// real releases; laplace_mechanism and gaussian_mechanism remain for simulation studies.
//
// Privacy (replace-one neighbours, like every privpost mechanism). The noise is calibrated to the sensitivity of the
// lattice point k, in lattice units:
// - lattice_statistic::exact: every statistic is a multiple of gamma (counts at gamma = 1). Neighbouring k differ by an
//   integer vector of L1 norm at most floor(D1 / gamma + 1/2) and squared L2 norm at most floor((D2 / gamma + 1e-3)^2);
//   release() refuses a statistic more than 1e-6 lattice units off the lattice.
// - lattice_statistic::rounded: k = floor(s / gamma + 1/2) coordinatewise. Rounding moves a coordinate's difference
//   by less than one unit, so the sensitivities grow to ceil(D1 / gamma) + d (L1; one unit of it is a margin for the
//   floating-point division) and D2 / gamma + sqrt(d) + 1e-3 (L2) for a statistic of dimension d (declared).
// Discrete Laplace with scale t >= D_lattice / epsilon is epsilon-DP (CKS Sec. 2 / Thm. 2 with integer sensitivity);
// discrete Gaussian with variance sigma^2 is (D2_lattice^2 / (2 sigma^2))-zCDP (CKS Thm. 14), and is calibrated here
// through zCDP to (epsilon, delta): rho = (sqrt(ln(1/delta) + epsilon) - sqrt(ln(1/delta)))^2, so that
// rho + 2 sqrt(rho ln(1/delta)) = epsilon (Bun & Steinke 2016, Prop. 1.3). The integer samplers need rational
// parameters: the Laplace scale is rounded up to a multiple of 2^-20 and sigma^2 up to a multiple of 2^-10, which only
// adds noise.
//
// Inference. log_likelihood() is the exact pmf of z given s (the rounding included). The scale-mixture view is the
// continuous Laplace of scale gamma t, or the Gaussian of sd gamma sigma, so every Gibbs sampler accepts these
// mechanisms. For statistics on the lattice the view is exact: p(z | s) of the discrete noise equals the continuous
// density at z - s times a constant that does not depend on s (the discrete pmf is the continuous density restricted to
// the lattice and renormalised), so the posterior of s over the lattice (integer-valued statistics at gamma = 1: the
// exact, corrected, window and record samplers) is unchanged. For rounded statistics off the lattice the view ignores
// the rounding; its log-density error in s is at most d / (2 t) (Laplace) and (|z_j - s_j| / gamma + 1/4) / (2 sigma^2)
// per coordinate (Gaussian), in lattice units (README, "Privacy notes").
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>

#include "privpost/core/errors.hpp"

namespace privpost {

/// How the statistics meet the lattice gamma Z^d of a discrete mechanism.
enum class lattice_statistic {
  exact,    ///< every statistic is a multiple of gamma (counts at gamma = 1); release() refuses one that is not
  rounded,  ///< statistics are rounded to the nearest multiple of gamma; the lattice sensitivity covers the rounding
};

/// The lattice of a discrete mechanism: granularity gamma, how statistics meet it, and (rounded only) the dimension
/// d of the statistics, which the rounding allowance depends on.
struct lattice {
  /// Granularity gamma > 0 of the lattice gamma Z^d.
  double granularity = 1.0;
  /// How the statistics meet the lattice.
  lattice_statistic statistics = lattice_statistic::exact;
  /// Dimension d of the statistics (used by rounded only).
  Eigen::Index dimension = 1;
  /// The largest |statistic| released without clamping: 2^44 lattice units, gamma 2^44 (see lattice_points). A
  /// release decides from public quantities whether its statistics can reach it (n and the declared bounds) and
  /// refuses before anything is charged; a release of a statistic beyond it would be of the clamped value.
  double capacity() const { return 0x1.0p44 * granularity; }
};

namespace detail {

// Largest lattice index (in absolute value) a statistic or release may have. A release z = gamma m is computed in
// floating point, so z / gamma recovers m only to a few ulps, |m| 2^-51; at |m| <= 2^45 that is below 2^-6, and the
// nearest whole number is m whatever gamma is.
inline constexpr double max_lattice_index = 0x1.0p45;
// Largest lattice point of a statistic: half of it, so that the noise (scale at most 2^32 lattice units) cannot carry a
// release past max_lattice_index except with probability below exp(-4000).
inline constexpr double max_statistic_index = 0x1.0p44;
// Largest dimension in exact mode: the 1e-6 tolerance of d coordinates must stay far below half a lattice unit.
inline constexpr Eigen::Index max_exact_dimension = 100000;

// The lattice point of a statistic value v (in lattice units): the nearest whole number, clamped to
// +-max_statistic_index (see lattice_points). release() and log_likelihood() both use it, so that the likelihood is
// that of the mechanism as it runs, clamp included.
inline double lattice_point(double v) { return std::clamp(std::floor(v + 0.5), -max_statistic_index, max_statistic_index); }

inline void check_lattice(std::string_view function, const lattice& l) {
  if (!(std::isfinite(l.granularity) && l.granularity >= std::numeric_limits<double>::min()))
    throw_invalid(function, "granularity", l.granularity, "a finite normal number > 0");
  if (l.statistics != lattice_statistic::exact && l.statistics != lattice_statistic::rounded)
    throw std::invalid_argument(std::string(function) + ": lattice.statistics is neither exact nor rounded");
  if (l.dimension < 1 || l.dimension > max_exact_dimension)
    throw_invalid(function, "dimension", static_cast<double>(l.dimension), "a whole number in [1, 100000]");
}

// The lattice points k of the statistics s (see the header comment). Statistic values never appear in an error
// message: they are private. A point beyond max_statistic_index lattice units is clamped to it, never refused: a
// refusal that depends on the statistic's value would itself release something (of two neighbouring data sets one
// would be released and the other refused, which no epsilon covers). Clamping coordinatewise moves neighbouring points
// no further apart (it is 1-Lipschitz in every norm), so the sensitivity and the guarantee hold for every input; a
// caller that must not release a clamped value checks lattice::capacity() against the statistic's public range first.
template <class Derived>
Eigen::VectorXd lattice_points(std::string_view function, const lattice& l, const Eigen::MatrixBase<Derived>& s) {
  check_statistics(function, "s", s);
  if (l.statistics == lattice_statistic::rounded && s.size() > l.dimension)
    throw_invalid(function, "the statistic's dimension", static_cast<double>(s.size()),
                  "at most the lattice's declared dimension (the rounding allowance covers that many coordinates)");
  if (l.statistics == lattice_statistic::exact && s.size() > max_exact_dimension)
    throw_invalid(function, "the statistic's dimension", static_cast<double>(s.size()), "at most 100000");
  Eigen::VectorXd k(s.size());
  for (Eigen::Index j = 0; j < s.size(); ++j) {
    const double v = s(j) / l.granularity;
    const double point = lattice_point(v);
    if (l.statistics == lattice_statistic::exact && std::abs(point) < max_statistic_index && !(std::abs(v - point) <= 1e-6))
      throw std::invalid_argument(std::string(function) +
                                  ": a statistic is not a multiple of the granularity (value withheld: it is private), "
                                  "but the lattice was declared lattice_statistic::exact; declare rounded instead");
    k(j) = point;
  }
  return k;
}

// The lattice index of a released value z_j; throws unless z_j is a lattice point, to 1e-6 lattice units or the
// rounding of gamma m in floating point (|m| 2^-48, above 1e-6 beyond |m| = 2^28), whichever is larger.
inline double release_index(std::string_view function, double granularity, double z) {
  if (!std::isfinite(z)) throw_invalid(function, "z", z, "a finite lattice point (a multiple of the granularity)");
  const double v = z / granularity;
  const double point = std::floor(v + 0.5);
  const double tolerance = std::max(1e-6, std::abs(point) * 0x1.0p-48);
  if (!(std::abs(v - point) <= tolerance && std::abs(point) <= max_lattice_index))
    throw_invalid(function, "z", z, "a multiple of the granularity within 2^45 lattice units (a release of this mechanism)");
  return point;
}

// sum_j log_kernel(r_j) over the lattice residuals r_j = z_j / gamma - k_j, k_j the lattice point of s_j and z_j
// checked to be a lattice point: the one loop of the discrete mechanisms' log-likelihoods.
template <class DerivedZ, class DerivedS, class LogKernel>
double lattice_log_likelihood(std::string_view function, double granularity, const Eigen::MatrixBase<DerivedZ>& z,
                              const Eigen::MatrixBase<DerivedS>& s, LogKernel log_kernel) {
  check_size_match(function, "z", z.size(), "s", s.size());
  check_finite(function, "s", s);
  double total = 0.0;
  for (Eigen::Index j = 0; j < z.size(); ++j)
    total += log_kernel(release_index(function, granularity, z(j)) - lattice_point(s(j) / granularity));
  return total;
}

}  // namespace detail

}  // namespace privpost
