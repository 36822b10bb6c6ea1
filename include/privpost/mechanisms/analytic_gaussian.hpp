// privpost/mechanisms/analytic_gaussian.hpp
// The analytic calibration of the Gaussian mechanism (Balle & Wang 2018, Theorem 8 and Algorithm 1; 004 Def. 2.3):
// the smallest sigma with delta(sigma) <= delta, by bisection on the exact condition, returning the bracket's upper end.
#pragma once

#include <cmath>
#include <numbers>

#include "privpost/core/errors.hpp"
#include "privpost/core/math/normal_tail.hpp"

namespace privpost {

namespace detail {
// Doubling or halving a double 2100 times spans every finite double; bisection of a factor-2 bracket reaches adjacent
// doubles in about 64 steps, 200 is a safe bound.
inline constexpr int analytic_bracket_max_steps = 2100;
inline constexpr int analytic_bisection_max_steps = 200;
}  // namespace detail

/// The exact delta of the Gaussian mechanism with noise sd sigma (Balle & Wang 2018, Theorem 8):
/// delta(sigma) = Phi(D/(2 sigma) - eps sigma/D) - e^eps Phi(-D/(2 sigma) - eps sigma/D), D = L2 sensitivity.
/// e^eps Phi(.) is computed as exp(eps + log Phi(.)) so that large epsilon cannot overflow.
inline double analytic_gaussian_delta(double sigma, double epsilon, double l2_sensitivity) {
  check_positive_finite("analytic_gaussian_delta", "sigma", sigma);
  check_epsilon("analytic_gaussian_delta", epsilon);
  check_sensitivity("analytic_gaussian_delta", "l2_sensitivity", l2_sensitivity);
  const double a = l2_sensitivity / (2.0 * sigma);
  const double c = epsilon * sigma / l2_sensitivity;
  const double first = normal_cdf(a - c);
  const double second = std::exp(epsilon + log_normal_cdf(-a - c));
  return first - second;
}

/// The smallest noise sd sigma for which the Gaussian mechanism is (epsilon, delta)-DP at the given L2
/// sensitivity (analytic calibration). The result always satisfies analytic_gaussian_delta(sigma) <= delta and
/// is within a relative 1e-14 of the exact threshold. Valid for any epsilon >= 2^-50 (also epsilon >= 1).
inline double analytic_gaussian_sigma(double epsilon, double delta, double l2_sensitivity) {
  check_epsilon("analytic_gaussian_sigma", epsilon);
  check_delta("analytic_gaussian_sigma", delta, /*allow_zero=*/false);
  check_sensitivity("analytic_gaussian_sigma", "l2_sensitivity", l2_sensitivity);
  auto delta_of = [&](double sigma) { return analytic_gaussian_delta(sigma, epsilon, l2_sensitivity); };
  // delta(sigma) is strictly decreasing from 1 - 0 (sigma -> 0) to 0 (sigma -> inf). Bracket the root from a
  // start at the classic formula's scale, doubling/halving (each loop bounded: 2100 steps span all doubles).
  // ln(1.25) - ln(delta): a denormal delta would overflow 1.25 / delta to infinity.
  const double start = l2_sensitivity * std::sqrt(2.0 * (std::log(1.25) - std::log(delta))) / epsilon;
  if (!std::isfinite(start))
    throw_invalid("analytic_gaussian_sigma", "sigma", start,
                  "a finite noise scale (a smaller l2_sensitivity or a larger epsilon)");
  double hi = start;
  double lo = start;
  for (int i = 0; delta_of(hi) > delta; ++i) {
    if (i > detail::analytic_bracket_max_steps || !std::isfinite(hi * 2.0))
      throw_domain("analytic_gaussian_sigma", "delta", delta, "a delta reachable with a finite sigma");
    lo = hi;
    hi *= 2.0;
  }
  if (lo == hi) {
    for (int i = 0; delta_of(lo) <= delta; ++i) {
      if (i > detail::analytic_bracket_max_steps || lo * 0.5 == 0.0)
        throw_domain("analytic_gaussian_sigma", "delta", delta, "a delta that needs a sigma > 0");
      hi = lo;
      lo *= 0.5;
    }
  }
  // Invariant: delta(lo) > delta >= delta(hi). Bisect to adjacent doubles (at most ~64 steps for a factor-2 bracket).
  for (int i = 0; i < detail::analytic_bisection_max_steps; ++i) {
    const double mid = lo + 0.5 * (hi - lo);
    if (mid <= lo || mid >= hi) break;
    if (delta_of(mid) > delta) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return hi;
}

/// The classic calibration sigma = D sqrt(2 ln(1.25 / delta)) / epsilon (Dwork & Roth 2014, Thm. A.1), which is
/// only proven for epsilon < 1: asking for it at epsilon >= 1 throws std::domain_error.
inline double classic_gaussian_sigma(double epsilon, double delta, double l2_sensitivity) {
  check_epsilon("classic_gaussian_sigma", epsilon);
  if (!(epsilon < 1.0))
    throw_domain("classic_gaussian_sigma", "epsilon", epsilon,
                 "a number in [2^-50, 1) (the classic bound is proven only for epsilon < 1; use the analytic calibration)");
  check_delta("classic_gaussian_sigma", delta, /*allow_zero=*/false);
  check_sensitivity("classic_gaussian_sigma", "l2_sensitivity", l2_sensitivity);
  // ln(1.25) - ln(delta), not ln(1.25 / delta): a denormal delta would overflow the quotient to infinity.
  const double sigma = l2_sensitivity * std::sqrt(2.0 * (std::log(1.25) - std::log(delta))) / epsilon;
  if (!std::isfinite(sigma))
    throw_invalid("classic_gaussian_sigma", "sigma", sigma,
                  "a finite noise scale (a smaller l2_sensitivity or a larger epsilon)");
  return sigma;
}

}  // namespace privpost
