// privpost/core/random/beta.hpp
// draw_beta: Beta(a, b) as X / (X + Y) for independent gamma draws, combined in log space so that
// small shapes (posteriors of rare events) give values in [0, 1] rather than 0/0.
#pragma once

#include <cmath>
#include <limits>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/random/gamma.hpp"

namespace privpost {

/// Beta(a, b) with a, b > 0 finite.
template <random_engine G>
inline double draw_beta(G& g, double a, double b) {
  check_positive_finite("draw_beta", "a", a);
  check_positive_finite("draw_beta", "b", b);
  const double lx = draw_log_gamma(g, a);
  const double ly = draw_log_gamma(g, b);
  // Shapes so small (denormal) that both log-gamma draws overflow to -infinity: log X is -E1 / a and log Y is -E2 / b to
  // double precision (E exponential), so X / (X + Y) is 1 exactly when E1 / a < E2 / b, with probability a / (a + b),
  // and 0 otherwise; -infinity minus -infinity would be NaN.
  if (lx == -std::numeric_limits<double>::infinity() && ly == -std::numeric_limits<double>::infinity())
    return draw_uniform(g) * (a + b) < a ? 1.0 : 0.0;
  // X / (X + Y) = 1 / (1 + exp(ly - lx)), evaluated on the side that keeps exp() from overflowing.
  const double d = ly - lx;
  if (d > 0.0) {
    const double e = std::exp(-d);
    return e / (1.0 + e);
  }
  return 1.0 / (1.0 + std::exp(d));
}

}  // namespace privpost
