// privpost/core/random/poisson.hpp
// draw_poisson: Poisson(lambda) draws by sequential inversion for lambda < 10 and Hoermann's (1993) transformed
// rejection with squeeze (PTRS) above; both loops bounded. Used to simulate data in calibration studies.
#pragma once

#include <cmath>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/math/log_gamma.hpp"
#include "privpost/core/random/uniform.hpp"

namespace privpost {

namespace detail {
// Below this rate draws are by inversion (a CDF walk), above it by Hoermann's PTRS.
inline constexpr double poisson_inversion_limit = 10.0;
// Bound of the CDF walk and of the PTRS loop: P(k > 1000) and 1000 PTRS rejections in a row are both far below 1e-150.
inline constexpr int poisson_max_steps = 1000;
// Largest rate accepted (the PTRS constants and double-valued counts are exact well beyond it).
inline constexpr double poisson_max_rate = 1e12;
}  // namespace detail

/// A Poisson(lambda) draw, lambda in [0, 1e12], returned as a double holding a whole number.
template <random_engine G>
inline double draw_poisson(G& g, double lambda) {
  if (!(lambda >= 0.0 && lambda <= detail::poisson_max_rate))
    throw_invalid("draw_poisson", "lambda", lambda, "a number in [0, 1e12]");
  if (lambda == 0.0) return 0.0;
  if (lambda < detail::poisson_inversion_limit) {
    // Inversion: walk the CDF from 0; P(k > 200) < 1e-150 for lambda < 10.
    const double u = draw_uniform(g);
    double p = std::exp(-lambda), cdf = p;
    for (int k = 0; k < detail::poisson_max_steps; ++k) {
      if (u <= cdf) return static_cast<double>(k);
      p *= lambda / (k + 1.0);
      cdf += p;
    }
    return static_cast<double>(detail::poisson_max_steps);
  }
  const double slam = std::sqrt(lambda), loglam = std::log(lambda);
  const double b = 0.931 + 2.53 * slam;
  const double a = -0.059 + 0.02483 * b;
  const double inv_alpha = 1.1239 + 1.1328 / (b - 3.4);
  const double vr = 0.9277 - 3.6224 / (b - 2.0);
  // Acceptance is above 0.9 for every lambda >= 10 (Hoermann 1993), so 1000 tries never run out in practice.
  for (int tries = 0; tries < detail::poisson_max_steps; ++tries) {
    const double u = draw_uniform(g) - 0.5;
    const double v = draw_uniform(g);
    const double us = 0.5 - std::abs(u);
    const double k = std::floor((2.0 * a / us + b) * u + lambda + 0.43);
    if (us >= 0.07 && v <= vr) return k;
    if (k < 0.0 || (us < 0.013 && v > us)) continue;
    if (std::log(v) + std::log(inv_alpha) - std::log(a / (us * us) + b) <= -lambda + k * loglam - log_gamma(k + 1.0)) return k;
  }
  throw retry_limit_exceeded("draw_poisson: PTRS exceeded 1000 tries (broken engine?)");
}

}  // namespace privpost
