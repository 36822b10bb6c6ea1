// privpost/inference/predictive.hpp
// Posterior predictive draws of a linear regression at a new covariate vector (001 Sec. 4.3): for each posterior draw
// (theta, sigma^2), y* = theta^T x~ + sigma e; central predictive intervals from them.
#pragma once

#include <Eigen/Core>
#include <cmath>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/random/normal.hpp"
#include "privpost/diagnostics/calibration.hpp"
#include "privpost/families/regression/regression_layout.hpp"
#include "privpost/inference/posterior.hpp"

namespace privpost {

/// One predictive draw per posterior draw. The posterior's coordinates are (theta_0, ..., theta_{p-1}, sigma^2), as the
/// regression samplers store them.
template <random_engine G>
Eigen::VectorXd predictive_draws(const posterior& draws, const regression_layout& layout, const Eigen::VectorXd& x, G& g) {
  check_size_match("predictive_draws", "posterior dimension", draws.dimension(), "design columns + 1", layout.columns() + 1);
  const Eigen::VectorXd row = layout.design_row(x);
  const Eigen::MatrixXd m = draws.draw_matrix();
  Eigen::VectorXd y(m.rows());
  for (Eigen::Index i = 0; i < m.rows(); ++i) {
    const double variance = m(i, layout.columns());
    if (!(variance > 0.0)) throw_domain("predictive_draws", "sigma^2 draw", variance, "a number > 0");
    y(i) = m.row(i).head(layout.columns()).dot(row) + std::sqrt(variance) * draw_normal(g);
  }
  return y;
}

/// The central `level` posterior predictive interval at x.
template <random_engine G>
credible_interval predictive_interval(const posterior& draws, const regression_layout& layout, const Eigen::VectorXd& x,
                                      double level, G& g) {
  return central_interval(predictive_draws(draws, layout, x, g), level);
}

}  // namespace privpost
