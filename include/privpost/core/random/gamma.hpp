// privpost/core/random/gamma.hpp
// draw_gamma (shape, scale) and draw_inverse_gamma (shape, scale): Marsaglia & Tsang (2000) squeeze method,
// with the boost G(a) = G(a + 1) U^(1/a) for shape < 1, carried out in log space so tiny shapes do not underflow.
#pragma once

#include <cmath>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/random/normal.hpp"
#include "privpost/core/random/uniform.hpp"

namespace privpost {

namespace detail {

// Marsaglia-Tsang accepts with probability > 0.95: 1000 rejections in a row have probability < 1e-1300.
inline constexpr int gamma_max_tries = 1000;

// Gamma(shape, 1) for shape >= 1 (Marsaglia & Tsang 2000); acceptance > 0.95 for every shape.
template <random_engine G>
inline double gamma_marsaglia_tsang(G& g, double shape) {
  const double d = shape - 1.0 / 3.0;
  const double c = 1.0 / std::sqrt(9.0 * d);
  for (int tries = 0; tries < gamma_max_tries; ++tries) {
    const double x = draw_normal(g);
    double v = 1.0 + c * x;
    if (v <= 0.0) continue;
    v = v * v * v;
    const double u = draw_uniform(g);
    if (u < 1.0 - 0.0331 * (x * x) * (x * x)) return d * v;  // squeeze
    if (std::log(u) < 0.5 * x * x + d * (1.0 - v + std::log(v))) return d * v;
  }
  throw retry_limit_exceeded("draw_gamma: Marsaglia-Tsang exceeded 1000 tries (broken engine?)");
}

}  // namespace detail

/// log of a Gamma(shape, 1) draw; finite for any shape > 0, however small (for Dirichlet and beta draws).
template <random_engine G>
inline double draw_log_gamma(G& g, double shape) {
  check_positive_finite("draw_log_gamma", "shape", shape);
  if (shape >= 1.0) return std::log(detail::gamma_marsaglia_tsang(g, shape));
  return std::log(detail::gamma_marsaglia_tsang(g, shape + 1.0)) + std::log(draw_uniform(g)) / shape;
}

/// Gamma(shape, scale): density x^(shape-1) exp(-x / scale) / (Gamma(shape) scale^shape). shape, scale > 0.
/// For very small shapes the draw can underflow to 0 (the true value is below the smallest double).
template <random_engine G>
inline double draw_gamma(G& g, double shape, double scale = 1.0) {
  check_positive_finite("draw_gamma", "shape", shape);
  check_positive_finite("draw_gamma", "scale", scale);
  if (shape >= 1.0) return scale * detail::gamma_marsaglia_tsang(g, shape);
  return scale * std::exp(draw_log_gamma(g, shape));
}

/// Inverse gamma(shape, scale): 1 / X with X ~ Gamma(shape, 1 / scale); density
/// scale^shape x^(-shape-1) exp(-scale / x) / Gamma(shape). A draw beyond the largest double throws std::domain_error
/// naming the shape (never infinity): at shape s it happens with probability P(X < scale / DBL_MAX), about
/// exp(-709.8 s) for scale 1 and small s, so only where the shape is far below 1/2, e.g. a posterior of n -> 0 records
/// under a prior of shape -> 0 (fuzzing found n = 3e-319 and shape 8e-320).
template <random_engine G>
inline double draw_inverse_gamma(G& g, double shape, double scale) {
  check_positive_finite("draw_inverse_gamma", "shape", shape);
  check_positive_finite("draw_inverse_gamma", "scale", scale);
  const double x = scale * std::exp(-draw_log_gamma(g, shape));
  if (!std::isfinite(x))
    throw_domain("draw_inverse_gamma", "shape (the draw overflowed)", shape,
                 "a shape and scale whose draw is finite; far below 1/2 the draw exceeds the largest double");
  return x;
}

}  // namespace privpost
