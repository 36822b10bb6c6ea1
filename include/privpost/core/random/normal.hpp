// privpost/core/random/normal.hpp
// draw_normal: standard and general normal draws (Marsaglia's polar method, one value per call so the
// draws carry no hidden state and every chain is reproducible from its engine alone).
#pragma once

#include <cmath>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/random/uniform.hpp"

namespace privpost {

namespace detail {
// The polar method accepts with probability pi/4 per try: 200 failures in a row have probability < 1e-130.
inline constexpr int normal_polar_max_tries = 200;
}  // namespace detail

/// A standard normal draw.
template <random_engine G>
inline double draw_normal(G& g) {
  // Acceptance probability pi/4 per try: 200 failures in a row has probability < 1e-130.
  for (int tries = 0; tries < detail::normal_polar_max_tries; ++tries) {
    const double u = 2.0 * draw_uniform(g) - 1.0;
    const double v = 2.0 * draw_uniform(g) - 1.0;
    const double s = u * u + v * v;
    if (s < 1.0 && s > 0.0) return u * std::sqrt(-2.0 * std::log(s) / s);
  }
  throw retry_limit_exceeded("draw_normal: polar method exceeded 200 tries (broken engine?)");
}

/// A normal draw with the given mean and standard deviation (sd > 0, both finite).
template <random_engine G>
inline double draw_normal(G& g, double mean, double sd) {
  check_finite("draw_normal", "mean", mean);
  check_positive_finite("draw_normal", "sd", sd);
  return mean + sd * draw_normal(g);
}

}  // namespace privpost
