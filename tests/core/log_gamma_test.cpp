// log_gamma against long double lgammal: both of its branches (Boost's Lanczos approximation below x = 10, Stirling's
// series from 10) to a few units in the last place, and agreeing where they meet.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "privpost/core/math/log_gamma.hpp"

using privpost::log_gamma;

namespace {
// Relative error against lgammal, absolute near the zeros of log Gamma (x = 1 and 2).
double error_of(double x) {
  const long double exact = lgammal(static_cast<long double>(x));
  const long double scale = std::max(1.0L, std::fabs(exact));
  return static_cast<double>(std::fabs(static_cast<long double>(log_gamma(x)) - exact) / scale);
}
}  // namespace

TEST_CASE("log_gamma is accurate to a few ulps on both sides of the switch to Stirling's series", "[log-gamma]") {
  double worst_below = 0.0, worst_above = 0.0;
  for (double x = 1e-6; x < 10.0; x *= 1.001) worst_below = std::max(worst_below, error_of(x));
  for (double x = 10.0; x < 1e12; x *= 1.001) worst_above = std::max(worst_above, error_of(x));
  INFO("worst relative error below 10: " << worst_below << ", from 10: " << worst_above);
  CHECK(worst_below < 2e-15);
  CHECK(worst_above < 2e-15);
  // Log factorials as the CGM's densities take them; log 1! = log 0! = 0 exactly.
  CHECK(log_gamma(1.0) == 0.0);
  CHECK(log_gamma(2.0) == 0.0);
  CHECK(log_gamma(11.0) == Approx(std::log(3628800.0)).epsilon(1e-15));
  // Continuous across the switch: the two branches at the same points just below and at 10.
  const double below = std::nextafter(privpost::detail::stirling_from, 0.0);
  CHECK(std::fabs(log_gamma(below) - privpost::detail::log_gamma_stirling(below)) < 4e-15);
  CHECK(std::fabs(log_gamma(privpost::detail::stirling_from) -
                  boost::math::lgamma(privpost::detail::stirling_from, privpost::detail::log_gamma_policy())) < 4e-15);
  // Far out: Stirling's branch up to 1e300, Boost's beyond (where x log x would overflow).
  CHECK(error_of(1e200) < 2e-15);
  CHECK(std::isfinite(log_gamma(1e305)));
  CHECK(log_gamma(1e305) > log_gamma(1e300));
}
