// Test support: sampling helpers and the goodness-of-fit rule used by every statistical test.
// Rule: a draw passes when the one-sample KS test against its exact CDF has p > 0.001 at n = 20000 draws
// (fixed seeds, so each test is deterministic); power is shown by a deliberately wrong variant with p < 1e-6.
#pragma once

#include <catch2/catch.hpp>

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

}  // namespace privpost::test
