// privpost/core/math/normal_tail.hpp
// Normal-tail functions accurate where the plain formulas underflow or cancel: log erfc, log Phi, log(Phi(b) - Phi(a)),
// the inverse Mills ratio and log(1 - e^u), all from one continued fraction of erfc (Abramowitz & Stegun 7.1.14);
// Phi and its inverse.
#pragma once

#include <boost/math/policies/policy.hpp>
#include <boost/math/special_functions/erf.hpp>
#include <cmath>
#include <limits>
#include <numbers>

#include "privpost/core/errors.hpp"

namespace privpost {

namespace detail {
// erfc in double arithmetic: Boost's default policy evaluates a double erfc in long double, which made it most of the
// time of a truncated-normal sweep (Lemma 1's moments call it for every draw); its double rational approximations
// are accurate to a few ulp, all that the log-space formulas below keep.
using erfc_policy = boost::math::policies::policy<boost::math::policies::promote_double<false>>;

// Depth of the backward evaluation of the erfc continued fraction; full double precision for y >= 2 (x <= -3 in
// the inverse Mills ratio, y >= 25 in log_erfc, where it is used).
inline constexpr int erfc_fraction_depth = 80;
inline constexpr double log_sqrt_2pi = 0.91893853320467274178;
// Below this argument erfc(y) is computed directly; above it by the continued fraction (erfc(25) ~ 1e-274).
inline constexpr double log_erfc_switch = 25.0;
// Below this x the inverse Mills ratio uses the continued fraction instead of exp(log phi - log Phi).
inline constexpr double inverse_mills_switch = -3.0;

// K(y) = y + (1/2)/(y + 1/(y + (3/2)/(y + 2/(y + ...)))), so that erfc(y) = exp(-y^2) / (sqrt(pi) K(y)) for y > 0.
inline double erfc_continued_fraction(double y) {
  double t = y;
  for (int k = erfc_fraction_depth; k >= 1; --k) t = y + (0.5 * k) / t;
  return t;
}
}  // namespace detail

/// log erfc(y), finite wherever erfc(y) > 0 in exact arithmetic (also where erfc(y) underflows a double).
inline double log_erfc(double y) {
  if (y < detail::log_erfc_switch) return std::log(boost::math::erfc(y, detail::erfc_policy()));
  return -y * y - std::log(std::sqrt(std::numbers::pi) * detail::erfc_continued_fraction(y));
}

/// Phi(x), the standard normal CDF.
inline double normal_cdf(double x) { return 0.5 * boost::math::erfc(-x / std::numbers::sqrt2, detail::erfc_policy()); }

/// Phi^{-1}(p), the standard normal quantile: -sqrt(2) erfc^{-1}(2 p), with Phi^{-1}(0) = -inf and Phi^{-1}(1) = +inf.
/// std::invalid_argument for p outside [0, 1] (NaN included).
inline double normal_quantile(double p) {
  if (!(p >= 0.0 && p <= 1.0)) throw_invalid("normal_quantile", "p", p, "a probability in [0, 1]");
  if (p == 0.0) return -std::numeric_limits<double>::infinity();
  if (p == 1.0) return std::numeric_limits<double>::infinity();
  return -std::numbers::sqrt2 * boost::math::erfc_inv(2.0 * p, detail::erfc_policy());
}

/// log Phi(x), accurate in the far lower tail.
inline double log_normal_cdf(double x) { return std::log(0.5) + log_erfc(-x / std::numbers::sqrt2); }

/// log(1 - e^u) for u < 0, accurate for u near 0 and far below it (Maechler 2012).
inline double log1mexp(double u) { return u > -std::numbers::ln2 ? std::log(-std::expm1(u)) : std::log1p(-std::exp(u)); }

/// log(Phi(b) - Phi(a)) for a <= b (either may be infinite), without cancellation: both ends in the upper tail use
/// Q = 1 - Phi, both in the lower tail use Phi. -inf when a >= b.
inline double log_normal_interval(double a, double b) {
  if (a >= b) return -std::numeric_limits<double>::infinity();
  if (a > 0.0) {
    const double la = log_normal_cdf(-a);
    return std::isinf(b) ? la : la + log1mexp(log_normal_cdf(-b) - la);
  }
  if (b < 0.0) {
    const double lb = log_normal_cdf(b);
    return std::isinf(a) ? lb : lb + log1mexp(log_normal_cdf(a) - lb);
  }
  const double pa = std::isinf(a) ? 0.0 : std::exp(log_normal_cdf(a));
  const double qb = std::isinf(b) ? 0.0 : std::exp(log_normal_cdf(-b));
  return std::log1p(-(pa + qb));
}

/// The inverse Mills ratio phi(x) / Phi(x); in the lower tail by the continued fraction, so that no exp of a large
/// negative number loses digits.
inline double inverse_mills(double x) {
  if (x < detail::inverse_mills_switch) return std::numbers::sqrt2 * detail::erfc_continued_fraction(-x / std::numbers::sqrt2);
  return std::exp(-0.5 * x * x - detail::log_sqrt_2pi - log_normal_cdf(x));
}

}  // namespace privpost
