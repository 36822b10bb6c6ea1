// privpost/core/random/inverse_gaussian.hpp
// draw_inverse_gaussian: IG(mu, lambda) by Michael, Schucany & Haas (1976), in the rearrangement that avoids
// cancellation when mu is large (the Laplace scale-mixture update of dissertation App. B.2 has mu = 1/(b |z - s|)).
#pragma once

#include <cmath>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/random/normal.hpp"
#include "privpost/core/random/uniform.hpp"

namespace privpost {

/// Inverse Gaussian with mean mu > 0 and shape lambda > 0: density
/// sqrt(lambda / (2 pi x^3)) exp(-lambda (x - mu)^2 / (2 mu^2 x)). mu may be +inf (the Levy limit).
template <random_engine G>
inline double draw_inverse_gaussian(G& g, double mu, double lambda) {
  if (!(mu > 0.0)) throw_invalid("draw_inverse_gaussian", "mu", mu, "a number > 0 (+inf allowed)");
  check_positive_finite("draw_inverse_gaussian", "lambda", lambda);
  const double nu = draw_normal(g);
  const double y = nu * nu;
  if (std::isinf(mu)) return lambda / y;  // mu -> inf: IG becomes Levy(0, lambda), x = lambda / chi^2_1
  // Smaller root of the quadratic, x1 = mu + mu^2 y/(2 lambda) - mu/(2 lambda) sqrt(4 mu lambda y + mu^2 y^2),
  // written as mu * 2c / (2c + y + sqrt(4 c y + y^2)) with c = lambda/mu (rationalised: no cancellation).
  const double c = lambda / mu;
  const double x1 = mu * (2.0 * c) / (2.0 * c + y + std::sqrt(y * (4.0 * c + y)));
  // Accept x1 with probability mu / (mu + x1), else take mu^2 / x1.
  if (draw_uniform(g) * (mu + x1) <= mu) return x1;
  return mu * (mu / x1);
}

}  // namespace privpost
