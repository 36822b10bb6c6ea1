// privpost/families/glm/logistic_link.hpp
// The link functionals kappa_j(m, q) = E[g^(j)(eta)], eta ~ N(m, q), g(eta) = E[y | x] = tanh(eta / 2), through which
// the logistic moments of the released statistic depend on the model (docs/design-glm.md Sec. 3.2, 3.7; Kulkarni et al. 2021,
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
// The law N(mean, variance) of a linear predictor at which a link's functionals are asked: a finite mean and a finite
// variance >= 0.
inline void check_predictor_law(const char* link, double mean, double variance) {
  check_finite(link, "mean of the linear predictor", mean);
  if (!(variance >= 0.0 && std::isfinite(variance)))
    throw_domain(link, "variance of the linear predictor", variance, "a finite number >= 0");
}

// tanh(x / 2) = (1 - e^-|x|) / (1 + e^-|x|) with the sign of x: one exp, a quarter of std::tanh's cost here, within
// 2e-16 absolute (the functionals need absolute, not relative, accuracy).
inline double tanh_half(double x) noexcept {
  const double t = std::exp(-std::abs(x));
  return std::copysign((1.0 - t) / (1.0 + t), x);
}
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

// The wide branch's grid (q > 16): step 0.35 in eta on [-45, 45], with the integrands g^(j)(eta) (and
// g - erf(a eta) for j = 0, a = sqrt(pi) / 4) tabulated once per process.
inline constexpr double wide_link_step = 0.35;
inline constexpr double wide_link_cut = 45.0;
inline constexpr int wide_link_half = 128;  // floor(45 / 0.35)
inline const double wide_link_erf_slope = 0.25 * std::sqrt(std::numbers::pi);
inline const std::array<link_functionals, 2 * wide_link_half + 1>& wide_link_table() {
  static const auto table = [] {
    std::array<link_functionals, 2 * wide_link_half + 1> t{};
    for (int i = -wide_link_half; i <= wide_link_half; ++i) {
      const double eta = wide_link_step * i;
      link_functionals d = tanh_half_derivatives(tanh_half(eta));
      d[0] -= std::erf(wide_link_erf_slope * eta);
      t[static_cast<std::size_t>(i + wide_link_half)] = d;
    }
    return t;
  }();
  return table;
}
}  // namespace detail

/// The exact link: kappa_j = E[g^(j)(eta)], eta ~ N(m, q), by trapezoid rules that are spectrally accurate because the
/// integrands are analytic in a strip (tanh(eta / 2) has its poles at eta = +-i pi):
/// - q <= 16: in xi (eta = m + sqrt(q) xi) on [-10, 10] with step min(0.35, 0.35 / sqrt(q)), 57 to 229 nodes in pairs
///   +-xi (one tanh per pair at m = 0, where g is odd);
/// - q > 16: in eta on [m - 10 sqrt(q), m + 10 sqrt(q)] cut to [-45, 45] (beyond, every g^(j), j >= 1, is below
///   4 e^-45) on the fixed grid 0.35 Z, at most 257 nodes whose integrands are tabulated once; kappa_0 as E[erf(a eta)]
///   in closed form plus the rule on g - erf(a eta), which decays like e^-|eta| (a = sqrt(pi) / 4 matches the slopes
///   at 0).
/// Gaussian weights by recurrences (no exp per node). The step in eta is at most 0.35, so the rule's error, of order
/// exp(-2 pi^2 / 0.35) times a factor that grows with j, is at round-off for every kappa_j, j <= 5: within 1e-14 of a
/// rule at step 0.02 over q in [0, 400], |m| <= 30 (the step 0.5 used before left 1e-10 in kappa_5 and 1e-11 in
/// kappa_3, and with them a gradient that differed from the derivative of the density by 3e-5 relative where N V is
/// large). Cost (2.45 GHz EPYC): 0.7 us at m = 0, 1.3 us otherwise for q <= 1, up to 4.9 us at q = 16, 0.5 us for
/// q > 16. No division by q: q = 0 gives g^(j)(m) exactly. The cost is bounded in q, so a sampler exploring a far
/// tail cannot stall on it.
struct exact_logistic_link {
  /// Name of the link in reports.
  static constexpr const char* name = "exact";
  /// The link's functionals at a linear predictor eta ~ N(mean, variance), computed as the struct comment says.
  static link_functionals functionals(double mean, double variance) {
    detail::check_predictor_law("exact_logistic_link", mean, variance);
    if (variance == 0.0) return detail::tanh_half_derivatives(std::tanh(0.5 * mean));
    const double sd = std::sqrt(variance);
    link_functionals k{};
    if (variance <= 16.0) {
      const double h = std::min(0.35, 0.35 / sd);
      const int half = static_cast<int>(std::ceil(10.0 / h));
      // Nodes in pairs +-xi sharing a weight exp(-xi^2 / 2), by the recurrence w_(i+1) = w_i r_i, r_(i+1) = r_i
      // exp(-h^2) (no exp per node; relative drift below 1e-13 over the <= 229 nodes). At mean 0, g is odd: one tanh
      // per pair, the even-order terms cancel exactly and the odd-order ones double.
      const double decay = std::exp(-h * h);
      double w = 1.0, ratio = std::exp(-0.5 * h * h), total = 1.0;
      k = detail::tanh_half_derivatives(std::tanh(0.5 * mean));
      for (int i = 1; i <= half; ++i) {
        w *= ratio;
        ratio *= decay;
        const double xi = h * i;
        total += 2.0 * w;
        if (mean == 0.0) {
          const link_functionals d = detail::tanh_half_derivatives(detail::tanh_half(sd * xi));
          for (std::size_t j = 1; j < k.size(); j += 2) k[j] += 2.0 * w * d[j];
        } else {
          const link_functionals dp = detail::tanh_half_derivatives(detail::tanh_half(mean + sd * xi));
          const link_functionals dm = detail::tanh_half_derivatives(detail::tanh_half(mean - sd * xi));
          for (std::size_t j = 0; j < k.size(); ++j) k[j] += w * (dp[j] + dm[j]);
        }
      }
      if (mean == 0.0) k[0] = k[2] = k[4] = 0.0;
      // Normalised by the rule's own total weight (sqrt(2 pi) / h up to 1e-16), which keeps constants exact.
      for (double& v : k) v /= total;
      return k;
    }
    constexpr double h = detail::wide_link_step;
    const double a = detail::wide_link_erf_slope;
    const double lo = std::max(-detail::wide_link_cut, mean - 10.0 * sd), hi = std::min(detail::wide_link_cut, mean + 10.0 * sd);
    if (lo < hi) {
      // Nodes on the fixed grid h Z (the rule does not move with m), where the integrands are tabulated once; the
      // weights exp(-x^2 / 2), x = (eta - m) / sd, by recurrences outward from the node nearest m (the largest
      // weight), so that their relative drift (of order n^2 eps) falls where the weights are small.
      const auto& table = detail::wide_link_table();
      const int first = static_cast<int>(std::ceil(lo / h)), last = static_cast<int>(std::floor(hi / h));
      // Clamped in double before the cast: mean / h may exceed int's range when sd is huge.
      const int centre =
          static_cast<int>(std::clamp(std::round(mean / h), static_cast<double>(first), static_cast<double>(last)));
      const double delta = h / sd, xc = (h * centre - mean) / sd;
      const double decay = std::exp(-delta * delta);
      const double wc = h / (sd * std::sqrt(2.0 * std::numbers::pi)) * std::exp(-0.5 * xc * xc);
      auto add = [&](int i, double w) {
        const link_functionals& d = table[static_cast<std::size_t>(i + detail::wide_link_half)];
        for (std::size_t j = 0; j < k.size(); ++j) k[j] += w * d[j];
      };
      add(centre, wc);
      double w = wc, ratio = std::exp(-(xc * delta + 0.5 * delta * delta));
      for (int i = centre + 1; i <= last; ++i) {
        w *= ratio;
        ratio *= decay;
        add(i, w);
      }
      w = wc;
      ratio = std::exp(xc * delta - 0.5 * delta * delta);
      for (int i = centre - 1; i >= first; --i) {
        w *= ratio;
        ratio *= decay;
        add(i, w);
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
  /// Name of the link in reports.
  static constexpr const char* name = "taylor";
  /// The Taylor link's functionals at a linear predictor eta ~ N(mean, variance), in closed form.
  static link_functionals functionals(double mean, double variance) {
    detail::check_predictor_law("taylor_logistic_link", mean, variance);
    const double m = mean, q = variance;
    return {0.5 * m - (m * m * m + 3.0 * m * q) / 24.0, 0.5 - (m * m + q) / 8.0, -0.25 * m, -0.25, 0.0, 0.0};
  }
};

}  // namespace privpost
