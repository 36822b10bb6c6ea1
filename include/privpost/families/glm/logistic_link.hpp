// privpost/families/glm/logistic_link.hpp
// The link functionals kappa_j(m, q) = E[g^(j)(eta)], eta ~ N(m, q), g(eta) = E[y | x] = tanh(eta / 2), through which
// the logistic moments of the released statistic depend on the model (spec glm.md Sec. 3.2, 3.7; Kulkarni et al. 2021,
// Sec. 3.2, with the sign of its Eq. 5 corrected, E1): exactly by quadrature (default) or by the paper's Taylor link.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <numbers>

#include "privpost/core/errors.hpp"

namespace privpost {

/// kappa_0 .. kappa_5 at one (mean, variance) of the linear predictor. Their derivatives follow from Gaussian
/// integration by parts and the heat equation: d kappa_j / d m = kappa_(j+1), d kappa_j / d q = kappa_(j+2) / 2.
using link_functionals = std::array<double, 6>;

namespace detail {
// g^(j) as polynomials in g = tanh(eta / 2), from g' = (1 - g^2) / 2.
inline link_functionals tanh_half_derivatives(double g) noexcept {
  const double g2 = g * g;
  return {g,
          0.5 * (1.0 - g2),
          -0.5 * g * (1.0 - g2),
          0.25 * (-1.0 + 4.0 * g2 - 3.0 * g2 * g2),
          0.5 * g * (2.0 - 5.0 * g2 + 3.0 * g2 * g2),
          0.25 * (2.0 - 17.0 * g2 + 30.0 * g2 * g2 - 15.0 * g2 * g2 * g2)};
}
}  // namespace detail

/// The exact link: kappa_j = E[g^(j)(eta)], eta ~ N(m, q), by trapezoid rules that are spectrally accurate because the
/// integrands are analytic in a strip (tanh(eta / 2) has its poles at eta = +-i pi):
/// - q <= 16: in xi (eta = m + sqrt(q) xi) on [-10, 10] with step min(0.5, 0.5 / sqrt(q)), 41 to 161 nodes;
/// - q > 16: in eta on [m - 10 sqrt(q), m + 10 sqrt(q)] cut to [-45, 45] (beyond, every g^(j), j >= 1, is below
///   4 e^-45) with step 0.5, at most 181 nodes; kappa_0 as E[erf(a eta)] in closed form plus the rule on
///   g - erf(a eta), which decays like e^-|eta| (a = sqrt(pi) / 4 matches the slopes at 0).
/// About 1e-13 absolute for every (m, q) (tested against Simpson's rule with 40,001 points). No division by q: q = 0
/// gives g^(j)(m) exactly. The cost is bounded in q, so a sampler exploring a far tail cannot stall on it.
struct exact_logistic_link {
  static constexpr const char* name = "exact";
  static link_functionals functionals(double mean, double variance) {
    check_finite("exact_logistic_link", "mean of the linear predictor", mean);
    if (!(variance >= 0.0 && std::isfinite(variance)))
      throw_domain("exact_logistic_link", "variance of the linear predictor", variance, "a finite number >= 0");
    if (variance == 0.0) return detail::tanh_half_derivatives(std::tanh(0.5 * mean));
    const double sd = std::sqrt(variance);
    link_functionals k{};
    if (variance <= 16.0) {
      const double h = std::min(0.5, 0.5 / sd);
      const int half = static_cast<int>(std::ceil(10.0 / h));
      double total = 0.0;
      for (int i = -half; i <= half; ++i) {
        const double xi = h * i;
        const double w = std::exp(-0.5 * xi * xi);
        const link_functionals d = detail::tanh_half_derivatives(std::tanh(0.5 * (mean + sd * xi)));
        for (std::size_t j = 0; j < k.size(); ++j) k[j] += w * d[j];
        total += w;
      }
      // Normalised by the rule's own total weight (sqrt(2 pi) / h up to 1e-16), which keeps constants exact.
      for (double& v : k) v /= total;
      return k;
    }
    constexpr double h = 0.5, cut = 45.0;
    const double a = 0.25 * std::sqrt(std::numbers::pi);
    const double lo = std::max(-cut, mean - 10.0 * sd), hi = std::min(cut, mean + 10.0 * sd);
    const double norm = h / (sd * std::sqrt(2.0 * std::numbers::pi));
    if (lo < hi) {
      // Nodes on the fixed grid h Z, so that the rule does not move with m.
      const int first = static_cast<int>(std::ceil(lo / h)), last = static_cast<int>(std::floor(hi / h));
      for (int i = first; i <= last; ++i) {
        const double eta = h * i;
        const double x = (eta - mean) / sd;
        const double w = norm * std::exp(-0.5 * x * x);
        link_functionals d = detail::tanh_half_derivatives(std::tanh(0.5 * eta));
        d[0] -= std::erf(a * eta);
        for (std::size_t j = 0; j < k.size(); ++j) k[j] += w * d[j];
      }
    }
    k[0] += std::erf(a * mean / std::sqrt(1.0 + 2.0 * a * a * variance));  // E[erf(a eta)], eta ~ N(m, q)
    return k;
  }
};

/// The paper's Taylor link g(eta) ~ eta / 2 - eta^3 / 24 (Sec. 3.2, sign corrected): kappa in closed form from the
/// normal moments of eta. Its E[y x] vanishes at q = 4 and changes sign beyond (the paper's "accuracy decreases sharply
/// when ||theta|| >= 3"); kept to reproduce the paper.
struct taylor_logistic_link {
  static constexpr const char* name = "taylor";
  static link_functionals functionals(double mean, double variance) {
    check_finite("taylor_logistic_link", "mean of the linear predictor", mean);
    if (!(variance >= 0.0 && std::isfinite(variance)))
      throw_domain("taylor_logistic_link", "variance of the linear predictor", variance, "a finite number >= 0");
    const double m = mean, q = variance;
    return {0.5 * m - (m * m * m + 3.0 * m * q) / 24.0, 0.5 - (m * m + q) / 8.0, -0.25 * m, -0.25, 0.0, 0.0};
  }
};

}  // namespace privpost
