// privpost/families/glm/glm_sensitivity.hpp
// L2 sensitivities of the PASS-GLM summary statistics released with block Gaussian noise (Kulkarni et al. 2021,
// Sec. 3.3): Lemma 3.3 (logistic) as its exact supremum, the general order-m bound (Sec. 3.3.1) as a guaranteed upper
// bound, and the exact Poisson value that corrects Lemma 3.5 (which can under-state it; docs/design-glm.md Sec. 2.3, E10).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>
#include <vector>

#include "privpost/core/errors.hpp"

namespace privpost {

/// Lemma 3.3, exact (docs/design-glm.md Sec. 2.1): the L2 sensitivity of the logistic statistic [y x; t2(x)] (y in {-1, +1},
/// ||x|| <= radius, t2 with the sqrt(2) cross terms) released with Gaussian noise sigma1 on the y x block and sigma2 on
/// the t2 block, in units of sigma1: the mechanism is (epsilon, delta)-DP iff the scalar Gaussian mechanism with noise
/// sigma1 and this sensitivity is. The paper's value 1/(2c) + 2R^2 + 2cR^4 (c = sigma1^2 / sigma2^2) when its vertex is
/// feasible (sigma2^2 <= 2 sigma1^2 R^2), else 2R (the paper's value is then a loose bound). Equal noise, R = 1:
/// sqrt(4.5) (Corollary 3.4).
///
/// With an intercept column of public constant `intercept` (x~ = (intercept, x), its constant square not released;
/// docs/design-glm.md Sec. 3.7) the inner product <x~, x~'> ranges over [c^2 - R^2, c^2 + R^2] and the supremum is taken there.
inline double logistic_joint_sensitivity(double radius, double sigma1, double sigma2, double intercept = 0.0) {
  constexpr const char* f = "logistic_joint_sensitivity";
  check_positive_finite(f, "radius", radius);
  check_positive_finite(f, "sigma1", sigma1);
  check_positive_finite(f, "sigma2", sigma2);
  check_finite(f, "intercept", intercept);
  const double c = (sigma1 * sigma1) / (sigma2 * sigma2);
  const double r2 = radius * radius;
  const double k2 = intercept * intercept;
  const double norm2 = k2 + r2;  // the largest squared norm of an augmented record
  // ||F - F'||^2 = ||x~||^2 + ||x~'||^2 - 2 yy' v + c (||x~||^4 + ||x~'||^4 - 2 v^2), v = <x~, x~'>; increasing in the
  // norms, so both are at their bound; y y' = -sign(v) makes it 2 norm2 + 2 c norm2^2 + 2|v| - 2 c v^2, concave in |v|
  // with its vertex at 1 / (2c), clamped to the range of |v|.
  const double a_lo = k2 >= r2 ? k2 - r2 : 0.0;
  const double a_hi = k2 + r2;
  const double a = std::clamp(1.0 / (2.0 * c), a_lo, a_hi);
  const double delta2 = 2.0 * norm2 + 2.0 * c * norm2 * norm2 + 2.0 * a - 2.0 * c * a * a;
  return std::sqrt(delta2);
}

/// The general order-m logistic statistic [y t_1(x); t_2(x); y t_3(x); ...; y^m t_m(x)] (Sec. 3.3.1) with noise
/// sigmas[i - 1] on block i, in units of sigmas[0]: a guaranteed upper bound on
///   sqrt(max over u in [-R^2, R^2] of sum_i c_i 2 (R^(2i) - u^i)),   c_i = sigma_1^2 / sigma_i^2,
/// from <t_i(x), t_i(x')> = <x, x'>^i. The maximum is taken on a grid of 2^20 + 1 points and raised by the
/// polynomial's Lipschitz constant times half the grid step, so that it never falls below the supremum (an
/// under-stated sensitivity would leak). Equal noise, R = 1: m = 2 gives sqrt(4.5), m = 6 sqrt(12.7298).
inline double polynomial_joint_sensitivity(double radius, std::span<const double> sigmas) {
  constexpr const char* f = "polynomial_joint_sensitivity";
  check_positive_finite(f, "radius", radius);
  if (sigmas.empty() || sigmas.size() > 64)
    throw_invalid(f, "order m (number of sigmas)", static_cast<double>(sigmas.size()), "an integer in [1, 64]");
  for (double s : sigmas) check_positive_finite(f, "sigma", s);
  const std::size_t m = sigmas.size();
  const double r2 = radius * radius;
  std::vector<double> c(m);
  double lipschitz = 0.0;
  double r2i = 1.0;  // R^(2(i-1))
  for (std::size_t i = 0; i < m; ++i) {
    c[i] = (sigmas[0] * sigmas[0]) / (sigmas[i] * sigmas[i]);
    lipschitz += 2.0 * c[i] * static_cast<double>(i + 1) * r2i;  // |d/du u^i| <= i R^(2(i-1)) on the interval
    r2i *= r2;
  }
  auto value = [&](double u) {
    double total = 0.0, ui = 1.0, ri = 1.0;
    for (std::size_t i = 0; i < m; ++i) {
      ui *= u;
      ri *= r2;
      total += 2.0 * c[i] * (ri - ui);
    }
    return total;
  };
  constexpr std::int64_t cells = std::int64_t{1} << 20;
  const double h = 2.0 * r2 / static_cast<double>(cells);
  double best = 0.0;
  for (std::int64_t k = 0; k <= cells; ++k) best = std::max(best, value(-r2 + h * static_cast<double>(k)));
  // The margin also covers rounding in the sums (relative 1e-12).
  const double bound = best + 0.5 * lipschitz * h;
  return std::sqrt(bound * (1.0 + 1e-12));
}

/// Equal noise on every block: polynomial_joint_sensitivity with m equal sigmas.
inline double polynomial_joint_sensitivity(double radius, int order) {
  if (order < 1 || order > 64) throw_invalid("polynomial_joint_sensitivity", "order", order, "an integer in [1, 64]");
  const std::vector<double> sigmas(static_cast<std::size_t>(order), 1.0);
  return polynomial_joint_sensitivity(radius, sigmas);
}

/// The exact L2 sensitivity of the Poisson statistic [x; t2(x); y x; y t2(x)] (||x|| <= radius_x, 0 <= y <= radius_y)
/// with noise sigma1..sigma4 on the four blocks, in units of sigma1 (docs/design-glm.md Sec. 2.3, derived there; the paper's
/// Lemma 3.5 under-states it for unequal noise, E10). Without the y t2 block (include_y_t2 = false) sigma4 is unused.
///   Delta^2 = max(G(R_y, R_y), G(R_y, 0)),
///   G(y, y') = R_x^2 (2 + c3 (y^2 + y'^2)) + R_x^4 (2 c2 + c4 (y^2 + y'^2)) + h(1 + c3 y y', c2 + c4 y y'),
///   h(a, b) = a^2 / (2b) if a / (2b) <= R_x^2, else 2 a R_x^2 - 2 b R_x^4,   c_k = sigma1^2 / sigma_k^2.
/// Equal noise, R_x = 1: sqrt(4.5 (1 + R_y^2)) (Corollary 3.6).
inline double poisson_joint_sensitivity(double radius_x, double radius_y, double sigma1, double sigma2, double sigma3,
                                        double sigma4, bool include_y_t2 = true) {
  constexpr const char* f = "poisson_joint_sensitivity";
  check_positive_finite(f, "radius_x", radius_x);
  check_positive_finite(f, "radius_y", radius_y);
  check_positive_finite(f, "sigma1", sigma1);
  check_positive_finite(f, "sigma2", sigma2);
  check_positive_finite(f, "sigma3", sigma3);
  if (include_y_t2) check_positive_finite(f, "sigma4", sigma4);
  const double s1 = sigma1 * sigma1;
  const double c2 = s1 / (sigma2 * sigma2);
  const double c3 = s1 / (sigma3 * sigma3);
  const double c4 = include_y_t2 ? s1 / (sigma4 * sigma4) : 0.0;
  const double rx2 = radius_x * radius_x;
  auto g = [&](double y, double yp) {
    const double a = 1.0 + c3 * y * yp;
    const double b = c2 + c4 * y * yp;
    const double h = a / (2.0 * b) <= rx2 ? a * a / (2.0 * b) : 2.0 * a * rx2 - 2.0 * b * rx2 * rx2;
    return rx2 * (2.0 + c3 * (y * y + yp * yp)) + rx2 * rx2 * (2.0 * c2 + c4 * (y * y + yp * yp)) + h;
  };
  return std::sqrt(std::max(g(radius_y, radius_y), g(radius_y, 0.0)));
}

/// Equal noise on the four (or three) Poisson blocks.
inline double poisson_joint_sensitivity(double radius_x, double radius_y, bool include_y_t2 = true) {
  return poisson_joint_sensitivity(radius_x, radius_y, 1.0, 1.0, 1.0, 1.0, include_y_t2);
}

}  // namespace privpost
