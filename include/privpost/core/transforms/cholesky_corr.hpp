// privpost/core/transforms/cholesky_corr.hpp
// The Cholesky factor of a correlation matrix from d(d-1)/2 unconstrained reals, as Stan constrains it: z = tanh(y)
// are canonical partial correlations, filled row by row (Lewandowski, Kurowicka & Joe 2009; Stan's
// cholesky_corr_constrain), with the log-Jacobian of the whole map and its reverse pass for hand-derived gradients.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>

#include "privpost/core/errors.hpp"

namespace privpost {

/// Number of unconstrained reals for a d x d correlation matrix: d(d-1)/2.
constexpr Eigen::Index cholesky_corr_free_size(Eigen::Index d) noexcept { return d * (d - 1) / 2; }

/// Writes the lower-triangular Cholesky factor L (unit-norm rows, positive diagonal; L L' is a correlation matrix) of
/// the unconstrained y (size d(d-1)/2, rows i = 1..d-1, columns j < i) and returns log |det J| of y -> L's free
/// entries: sum log(1 - z^2) (tanh) + sum over rows i, 0 < j < i of log(1 - sum_{k<j} L_ik^2) / 2. L must be d x d.
inline double cholesky_corr_constrain(const Eigen::VectorXd& y, Eigen::MatrixXd& l) {
  const Eigen::Index d = l.rows();
  check_size_match("cholesky_corr_constrain", "unconstrained size", y.size(), "d(d-1)/2", cholesky_corr_free_size(d));
  l.setZero();
  l(0, 0) = 1.0;
  double log_j = 0.0;
  Eigen::Index c = 0;
  for (Eigen::Index i = 1; i < d; ++i) {
    double s = 0.0;
    for (Eigen::Index j = 0; j < i; ++j, ++c) {
      const double z = std::tanh(y(c));
      log_j += std::log1p(-z * z);
      if (j > 0) log_j += 0.5 * std::log1p(-s);
      l(i, j) = z * std::sqrt(1.0 - s);
      s += l(i, j) * l(i, j);
    }
    l(i, i) = std::sqrt(std::max(0.0, 1.0 - s));
  }
  return log_j;
}

/// The inverse of cholesky_corr_constrain: the unconstrained y (resized to d(d-1)/2) of a lower-triangular Cholesky
/// factor L of a correlation matrix (unit-norm rows, positive diagonal). Partial correlations are clamped to
/// [-1 + 1e-12, 1 - 1e-12] so that y stays finite on the boundary.
inline void cholesky_corr_unconstrain(const Eigen::MatrixXd& l, Eigen::VectorXd& y) {
  const Eigen::Index d = l.rows();
  y.resize(cholesky_corr_free_size(d));
  Eigen::Index c = 0;
  for (Eigen::Index i = 1; i < d; ++i) {
    double s = 0.0;
    for (Eigen::Index j = 0; j < i; ++j, ++c) {
      const double rest = std::sqrt(std::max(0.0, 1.0 - s));
      const double z = rest > 0.0 ? l(i, j) / rest : 0.0;
      y(c) = std::atanh(std::clamp(z, -1.0 + 1e-12, 1.0 - 1e-12));
      s += l(i, j) * l(i, j);
    }
  }
}

/// The reverse pass: given l_bar, the adjoint of a target with respect to the entries of L on and below the diagonal
/// (L_00 excluded, it is constant), adds d(target + log|det J|)/dy to y_bar. y and l as in cholesky_corr_constrain.
inline void cholesky_corr_adjoint(const Eigen::VectorXd& y, const Eigen::MatrixXd& l, const Eigen::MatrixXd& l_bar,
                                  Eigen::VectorXd& y_bar) {
  const Eigen::Index d = l.rows();
  Eigen::Index row_start = 0;
  for (Eigen::Index i = 1; i < d; ++i) {
    // s_j = sum_{k<j} L_ik^2 is recomputed from the end: s_i = 1 - L_ii^2.
    double s_next = 1.0 - l(i, i) * l(i, i);
    double s_bar_next = -0.5 * l_bar(i, i) / l(i, i);
    for (Eigen::Index j = i - 1; j >= 0; --j) {
      const Eigen::Index c = row_start + j;
      const double s = s_next - l(i, j) * l(i, j);
      const double z = std::tanh(y(c));
      const double lbar = l_bar(i, j) + 2.0 * l(i, j) * s_bar_next;
      const double root = std::sqrt(1.0 - s);
      const double z_bar = lbar * root;
      double s_bar = s_bar_next - 0.5 * lbar * z / root;
      if (j > 0) s_bar -= 0.5 / (1.0 - s);
      y_bar(c) += z_bar * (1.0 - z * z) - 2.0 * z;
      s_next = s;
      s_bar_next = s_bar;
    }
    row_start += i;
  }
}

}  // namespace privpost
