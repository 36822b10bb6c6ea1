// privpost/diagnostics/calibration.hpp
// Simulation-based calibration (Cook, Gelman & Rubin 2006; dissertation Sec. 4.4): the quantile of a true value among
// posterior draws, the Kolmogorov-Smirnov test of those quantiles against U(0, 1), and coverage of central intervals.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <functional>
#include <numbers>
#include <span>
#include <vector>

#include "privpost/core/errors.hpp"
#include "privpost/diagnostics/sample_quantile.hpp"

namespace privpost {

/// The fraction of draws below the true value, ties counted half: uniform on [0, 1] over repeated trials iff the
/// posterior is exact (dissertation App. B.4).
inline double posterior_quantile(double true_value, const Eigen::Ref<const Eigen::VectorXd>& draws) {
  check_finite("posterior_quantile", "true_value", true_value);
  if (draws.size() == 0) throw_invalid("posterior_quantile", "number of draws", 0.0, "at least 1");
  double below = 0.0;
  for (Eigen::Index i = 0; i < draws.size(); ++i) {
    check_finite("posterior_quantile", "draw", draws(i));
    below += (draws(i) < true_value) ? 1.0 : (draws(i) == true_value ? 0.5 : 0.0);
  }
  return below / static_cast<double>(draws.size());
}

/// The Kolmogorov distribution's survival function Q(lambda) = 2 sum_{k>=1} (-1)^{k-1} exp(-2 k^2 lambda^2),
/// switching to the Jacobi-theta form for small lambda where the alternating series converges slowly.
inline double kolmogorov_survival(double lambda) {
  // Below the switch the theta series needs at most 20 terms, above it the alternating one at most 100 (terms fall
  // below 1e-300 long before), both to full double precision.
  constexpr double series_switch = 1.18;
  constexpr int theta_terms = 20, alternating_terms = 100;
  constexpr double negligible_term = 1e-300;
  if (!(lambda > 0.0)) return 1.0;
  if (lambda < series_switch) {
    // 1 - sqrt(2 pi)/lambda sum_{k>=1} exp(-(2k-1)^2 pi^2 / (8 lambda^2))
    const double c = -std::numbers::pi * std::numbers::pi / (8.0 * lambda * lambda);
    double sum = 0.0;
    for (int k = 1; k <= theta_terms; ++k) sum += std::exp(c * (2.0 * k - 1.0) * (2.0 * k - 1.0));
    return std::clamp(1.0 - std::sqrt(2.0 * std::numbers::pi) / lambda * sum, 0.0, 1.0);
  }
  double sum = 0.0;
  for (int k = 1; k <= alternating_terms; ++k) {
    const double term = std::exp(-2.0 * k * k * lambda * lambda);
    sum += (k % 2 == 1) ? term : -term;
    if (term < negligible_term) break;
  }
  return std::clamp(2.0 * sum, 0.0, 1.0);
}

/// The result of a one-sample Kolmogorov-Smirnov test.
struct ks_result {
  double statistic = 0.0;  ///< D = sup |F_n - F|
  double p_value = 1.0;    ///< asymptotic, with Stephens' (1970) small-sample correction
};

/// One-sample KS test of the sample against a continuous CDF. Throws for an empty sample or a NaN value.
// clang-format off
template <class Cdf>
  requires std::invocable<const Cdf&, double>
ks_result ks_test(std::span<const double> sample, const Cdf& cdf) {
  // clang-format on
  if (sample.empty()) throw_invalid("ks_test", "sample size", 0.0, "at least 1");
  std::vector<double> u(sample.size());
  for (std::size_t i = 0; i < sample.size(); ++i) {
    if (std::isnan(sample[i])) throw_invalid("ks_test", "sample value", sample[i], "a number (not NaN)");
    u[i] = cdf(sample[i]);
  }
  std::sort(u.begin(), u.end());
  const double n = static_cast<double>(u.size());
  double d = 0.0;
  for (std::size_t i = 0; i < u.size(); ++i) {
    const double k = static_cast<double>(i);
    d = std::max({d, (k + 1.0) / n - u[i], u[i] - k / n});
  }
  const double sqrt_n = std::sqrt(n);
  return {d, kolmogorov_survival((sqrt_n + 0.12 + 0.11 / sqrt_n) * d)};
}

/// KS test of values in [0, 1] against U(0, 1) (the calibration test of posterior quantiles).
inline ks_result ks_uniform(std::span<const double> quantiles) {
  for (double q : quantiles) check_bounded("ks_uniform", "quantile", q, 0.0, 1.0);
  return ks_test(quantiles, [](double x) { return x; });
}

/// Two-sample KS: D = sup_x |F_a(x) - F_b(x)| between the empirical CDFs of two samples (ties handled exactly), with
/// the asymptotic p-value at the effective size n_a n_b / (n_a + n_b) and Stephens' correction. The p-value assumes
/// independent draws: for autocorrelated MCMC draws it is too small, and the statistic alone is the distance (the
/// DP-GLM paper's "KS score", Fig. 5). Throws for an empty sample or a NaN value.
inline ks_result ks_two_sample(std::span<const double> a, std::span<const double> b) {
  if (a.empty() || b.empty())
    throw_invalid("ks_two_sample", "sample size", static_cast<double>(std::min(a.size(), b.size())), "at least 1");
  std::vector<double> sa(a.begin(), a.end()), sb(b.begin(), b.end());
  for (const std::vector<double>* s : {&sa, &sb})
    for (double x : *s)
      if (std::isnan(x)) throw_invalid("ks_two_sample", "sample value", x, "a number (not NaN)");
  std::sort(sa.begin(), sa.end());
  std::sort(sb.begin(), sb.end());
  const double na = static_cast<double>(sa.size()), nb = static_cast<double>(sb.size());
  std::size_t i = 0, j = 0;
  double d = 0.0;
  while (i < sa.size() && j < sb.size()) {
    const double x = std::min(sa[i], sb[j]);  // step both CDFs past every copy of x before comparing
    while (i < sa.size() && sa[i] == x) ++i;
    while (j < sb.size() && sb[j] == x) ++j;
    d = std::max(d, std::abs(static_cast<double>(i) / na - static_cast<double>(j) / nb));
  }
  const double sqrt_n = std::sqrt(na * nb / (na + nb));
  return {d, kolmogorov_survival((sqrt_n + 0.12 + 0.11 / sqrt_n) * d)};
}

/// The central credible interval holding `level` of the draws: the (1 - level)/2 and (1 + level)/2 quantiles.
struct credible_interval {
  /// Lower end of the interval.
  double lower = 0.0;
  /// Upper end of the interval.
  double upper = 0.0;
  /// lower <= x <= upper.
  bool contains(double x) const { return lower <= x && x <= upper; }
};

inline credible_interval central_interval(const Eigen::Ref<const Eigen::VectorXd>& draws, double level) {
  if (!(level > 0.0 && level < 1.0)) throw_invalid("central_interval", "level", level, "a number in (0, 1)");
  std::vector<double> v(draws.data(), draws.data() + draws.size());
  for (double e : v) check_finite("central_interval", "draw", e);
  std::sort(v.begin(), v.end());
  return {sorted_sample_quantile(v, 0.5 * (1.0 - level)), sorted_sample_quantile(v, 0.5 * (1.0 + level))};
}

/// Coverage from posterior quantiles: the fraction of trials whose true value lies in the central `level` interval,
/// i.e. whose quantile lies in [(1 - level)/2, (1 + level)/2].
inline double coverage(std::span<const double> quantiles, double level) {
  if (!(level > 0.0 && level < 1.0)) throw_invalid("coverage", "level", level, "a number in (0, 1)");
  if (quantiles.empty()) throw_invalid("coverage", "number of trials", 0.0, "at least 1");
  const double lo = 0.5 * (1.0 - level), hi = 0.5 * (1.0 + level);
  double inside = 0.0;
  for (double q : quantiles) {
    check_bounded("coverage", "quantile", q, 0.0, 1.0);
    inside += (q >= lo && q <= hi) ? 1.0 : 0.0;
  }
  return inside / static_cast<double>(quantiles.size());
}

}  // namespace privpost
