// Test support: sampling helpers and the goodness-of-fit rule used by every statistical test.
// Rule: a draw passes when the one-sample KS test against its exact CDF has p > 0.001 at n = 20000 draws
// (fixed seeds, so each test is deterministic); power is shown by a deliberately wrong variant with p < 1e-6.
#pragma once

#include <catch2/catch.hpp>

#include <boost/math/distributions/chi_squared.hpp>
#include <cstddef>
#include <random>
#include <vector>

#include "privpost/diagnostics/calibration.hpp"

namespace privpost::test {

inline constexpr std::size_t ks_draws = 20000;
inline constexpr double ks_level = 1e-3;
inline constexpr double power_level = 1e-6;

template <class F>
std::vector<double> sample(std::size_t n, F&& draw) {
  std::vector<double> out(n);
  for (auto& x : out) x = draw();
  return out;
}

template <class Cdf>
void require_fits(const std::vector<double>& x, const Cdf& cdf) {
  const auto r = privpost::ks_test(x, cdf);
  INFO("KS D = " << r.statistic << ", p = " << r.p_value << ", n = " << x.size());
  REQUIRE(r.p_value > ks_level);
}

template <class Cdf>
void require_rejects(const std::vector<double>& x, const Cdf& cdf) {
  const auto r = privpost::ks_test(x, cdf);
  INFO("KS D = " << r.statistic << ", p = " << r.p_value << ", n = " << x.size());
  REQUIRE(r.p_value < power_level);
}

// Pearson's chi-square test of observed counts against bin probabilities, for discrete draws: bins whose expected count
// is below 5 are pooled with the following ones (in the given order; a short tail pools into the last kept bin). The
// same levels as KS apply (pass p > ks_level, power p < power_level).
inline double chi_square_p_value(const std::vector<double>& observed, const std::vector<double>& probability) {
  double total = 0.0;
  for (const double o : observed) total += o;
  double chi2 = 0.0, obs = 0.0, exp = 0.0, last_obs = 0.0, last_exp = 0.0;
  int bins = 0;
  for (std::size_t i = 0; i < observed.size(); ++i) {
    obs += observed[i];
    exp += total * probability[i];
    if (exp >= 5.0) {
      chi2 += (obs - exp) * (obs - exp) / exp;
      last_obs = obs;
      last_exp = exp;
      obs = exp = 0.0;
      ++bins;
    }
  }
  if (exp > 0.0 && bins > 0) {  // pool the short tail into the last kept bin
    chi2 -= (last_obs - last_exp) * (last_obs - last_exp) / last_exp;
    chi2 += (last_obs + obs - last_exp - exp) * (last_obs + obs - last_exp - exp) / (last_exp + exp);
  }
  if (bins < 2) return 1.0;
  return boost::math::cdf(boost::math::complement(boost::math::chi_squared(bins - 1), chi2));
}

}  // namespace privpost::test
