// privpost/core/random/lkj.hpp
// draw_lkj_cholesky: the Cholesky factor of a correlation matrix drawn from LKJ(eta) (Lewandowski, Kurowicka & Joe
// 2009), through canonical partial correlations z_ij = 2 Beta(b_j, b_j) - 1, b_j = eta - 1 + (d - j) / 2 (0-based j),
// filled row by row as Stan's constraining transform does (docs/design-glm.md Sec. 3.4).
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/random/beta.hpp"

namespace privpost {

/// Writes into l (d x d) the Cholesky factor of an LKJ(eta) correlation matrix; eta > 0. Every off-diagonal entry of
/// L L' is then 2 Beta(eta - 1 + d/2, eta - 1 + d/2) - 1.
template <random_engine G>
void draw_lkj_cholesky(G& g, double eta, Eigen::MatrixXd& l) {
  check_positive_finite("draw_lkj_cholesky", "eta", eta);
  const Eigen::Index d = l.rows();
  if (d < 1 || l.cols() != d)
    throw_invalid("draw_lkj_cholesky", "matrix size", static_cast<double>(d), "a square matrix, d >= 1");
  l.setZero();
  l(0, 0) = 1.0;
  for (Eigen::Index i = 1; i < d; ++i) {
    double s = 0.0;
    for (Eigen::Index j = 0; j < i; ++j) {
      const double b = eta - 1.0 + 0.5 * static_cast<double>(d - j);
      const double z = 2.0 * draw_beta(g, b, b) - 1.0;
      l(i, j) = z * std::sqrt(1.0 - s);
      s += l(i, j) * l(i, j);
    }
    l(i, i) = std::sqrt(std::max(0.0, 1.0 - s));
  }
}

}  // namespace privpost
