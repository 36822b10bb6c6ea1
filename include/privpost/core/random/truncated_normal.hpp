// privpost/core/random/truncated_normal.hpp
// draw_truncated_normal: exact draws of N(mean, sd^2) restricted to [lo, hi], one- or two-sided, including
// intervals far in a tail (Robert 1995, "Simulation of truncated normal variables": exponential rejection).
#pragma once

#include <cmath>
#include <limits>
#include <utility>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/random/exponential.hpp"
#include "privpost/core/random/normal.hpp"
#include "privpost/core/random/uniform.hpp"

namespace privpost {

namespace detail {

inline constexpr int truncated_normal_max_tries = 100000;

// Standard normal on [a, b] with 0 <= a < b (b may be +inf): Robert (1995) Sec. 2, choosing between the
// translated-exponential proposal with the optimal rate alpha* = (a + sqrt(a^2 + 4)) / 2 and a uniform
// proposal on [a, b], whichever has the larger acceptance rate (Robert's Prop. 2.3 comparison).
template <random_engine G>
inline double standard_truncated_normal_right(G& g, double a, double b) {
  // Beyond a = 1e8 the closed form loses a * a to overflow (a > 1.3e154) or sqrt(a^2 + 4) to rounding; alpha* is then
  // a + 1/a to double precision (the next term is -1/a^3).
  const double alpha = a < 1e8 ? 0.5 * (a + std::sqrt(a * a + 4.0)) : a + 1.0 / a;
  // Envelope constants: uniform M_u = (b - a) exp(-a^2 / 2), exponential M_e = exp(alpha^2 / 2 - alpha a) / alpha;
  // the smaller envelope has the larger acceptance rate, i.e. uniform iff b - a < exp((alpha - a)^2 / 2) / alpha.
  const double gap = alpha - a;
  const bool use_uniform = std::isfinite(b) && (b - a) < std::exp(0.5 * gap * gap) / alpha;
  for (int tries = 0; tries < truncated_normal_max_tries; ++tries) {
    if (use_uniform) {
      const double x = a + (b - a) * draw_uniform(g);
      // rho(x) = exp((a^2 - x^2) / 2) since the density is decreasing on [a, b] for a >= 0.
      if (std::log(draw_uniform(g)) <= 0.5 * (a * a - x * x)) return x;
    } else {
      const double x = a + draw_exponential(g) / alpha;
      if (x > b) continue;
      const double d = x - alpha;
      if (std::log(draw_uniform(g)) <= -0.5 * d * d) return x;
    }
  }
  throw retry_limit_exceeded("draw_truncated_normal: rejection sampler exceeded its retry bound");
}

// Standard normal on [a, b] with a < 0 < b.
template <random_engine G>
inline double standard_truncated_normal_centre(G& g, double a, double b) {
  constexpr double sqrt_2pi = 2.5066282746310002;
  if (b - a < sqrt_2pi) {
    // Uniform proposal; the density's maximum on [a, b] is at 0. Acceptance >= exp(-pi) since |x| < sqrt(2 pi).
    for (int tries = 0; tries < truncated_normal_max_tries; ++tries) {
      const double x = a + (b - a) * draw_uniform(g);
      if (std::log(draw_uniform(g)) <= -0.5 * x * x) return x;
    }
  } else {
    // The interval holds at least Phi(sqrt(2 pi)) - 1/2 > 0.49 of the mass: plain rejection from N(0, 1).
    for (int tries = 0; tries < truncated_normal_max_tries; ++tries) {
      const double x = draw_normal(g);
      if (x >= a && x <= b) return x;
    }
  }
  throw retry_limit_exceeded("draw_truncated_normal: rejection sampler exceeded its retry bound");
}

// Standard normal restricted to [a, b], a <= b, no NaN.
template <random_engine G>
inline double standard_truncated_normal(G& g, double a, double b) {
  if (a == b) return a;
  if (a >= 0.0) return standard_truncated_normal_right(g, a, b);
  if (b <= 0.0) return -standard_truncated_normal_right(g, -b, -a);
  return standard_truncated_normal_centre(g, a, b);
}

}  // namespace detail

/// A draw of N(mean, sd^2) conditioned on lo <= x <= hi. Bounds may be infinite; lo == hi returns lo.
/// Throws std::invalid_argument for sd <= 0, non-finite mean or sd, NaN bounds or lo > hi.
template <random_engine G>
inline double draw_truncated_normal(G& g, double mean, double sd, double lo, double hi) {
  check_finite("draw_truncated_normal", "mean", mean);
  check_positive_finite("draw_truncated_normal", "sd", sd);
  check_interval("draw_truncated_normal", "[lo, hi]", lo, hi);
  const double a = (lo - mean) / sd;
  const double b = (hi - mean) / sd;
  // A bound more sds away than a double holds (a release 1e300 from the mean): the draw is that bound to double
  // precision, as it is for any a beyond about 1e8 (the excess over the bound is Exp(1) / a).
  if (a == std::numeric_limits<double>::infinity()) return lo;
  if (b == -std::numeric_limits<double>::infinity()) return hi;
  const double x = mean + sd * detail::standard_truncated_normal(g, a, b);
  // Rounding in mean + sd * x may step a hair outside the bounds; the exact draw lies inside them.
  return x < lo ? lo : (x > hi ? hi : x);
}

}  // namespace privpost
