// privpost/core/random/exponential.hpp
// draw_exponential: exponential draws by inversion of the uniform on (0, 1), so the result is finite and > 0.
// Used by the Laplace mechanism, the scale-mixture latents and the tail sampler of the truncated normal.
#pragma once

#include <cmath>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/random/uniform.hpp"

namespace privpost {

/// A standard exponential draw (rate 1).
template <random_engine G>
inline double draw_exponential(G& g) {
  return -std::log(draw_uniform(g));
}

/// An exponential draw with the given rate (> 0, finite): density rate * exp(-rate x).
template <random_engine G>
inline double draw_exponential(G& g, double rate) {
  check_positive_finite("draw_exponential", "rate", rate);
  return draw_exponential(g) / rate;
}

/// A Laplace draw with the given location and scale b (> 0): density exp(-|x - location| / b) / (2 b).
template <random_engine G>
inline double draw_laplace(G& g, double location, double scale) {
  check_finite("draw_laplace", "location", location);
  check_positive_finite("draw_laplace", "scale", scale);
  // Inversion: one uniform gives the sign and the magnitude.
  const double u = draw_uniform(g) - 0.5;  // in (-1/2, 1/2), never 0 at the ends
  const double mag = -std::log(1.0 - 2.0 * std::abs(u));
  return location + (u < 0.0 ? -scale * mag : scale * mag);
}

}  // namespace privpost
