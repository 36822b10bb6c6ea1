// privpost/families/regression/gram_support.hpp
// gram_support: the valid set of a linear-regression statistic, the entries of B = [X y]^T [X y] that make B positive
// semidefinite with its public (0, 0) entry n c^2 (001 Sec. 3.3, "projected so that [X y]^T [X y] is PSD"). With an
// intercept the Schur complement of that entry is clipped at eigenvalue 0; without one, B itself.
#pragma once

#include <Eigen/Core>
#include <Eigen/Eigenvalues>

#include "privpost/core/linalg/robust_cholesky.hpp"
#include "privpost/core/numerical_events.hpp"
#include "privpost/families/regression/regression_layout.hpp"

namespace privpost {

/// Projects the Gram matrix B onto the PSD matrices, keeping the public entry n c^2 and the sums in the intercept row:
/// the Schur complement B_rest - b b^T / B_00 is clipped at eigenvalue 0 (B is PSD iff that is). Without an intercept,
/// B itself is clipped. Returns true (and counts events.psd_repairs) if B changed.
inline bool project_gram(const regression_layout& layout, Eigen::MatrixXd& b, numerical_events& events) {
  if (!layout.intercept()) return project_psd(b, events);
  const Eigen::Index q = b.rows();
  const Eigen::VectorXd r = b.block(1, 0, q - 1, 1);
  Eigen::MatrixXd schur = b.bottomRightCorner(q - 1, q - 1) - r * r.transpose() / b(0, 0);
  schur = 0.5 * (schur + schur.transpose()).eval();
  if (!project_psd(schur, events)) return false;
  b.bottomRightCorner(q - 1, q - 1) = schur + r * r.transpose() / b(0, 0);
  return true;
}

/// The support policy of a regression statistic (refers to the layout of its model, which must outlive it). Draws are
/// never retried: the projection is cheap beside a rejection loop in a set of measure far from 1 at small n.
class gram_support {
 public:
  static constexpr int rejection_tries = 0;

  explicit gram_support(const regression_layout& layout) noexcept : layout_(&layout) {}

  bool contains(const Eigen::VectorXd& s, double n) const {
    Eigen::MatrixXd b = layout_->gram(s, n);
    numerical_events scratch;
    return !project_gram(*layout_, b, scratch);
  }
  bool project(Eigen::VectorXd& s, double n, numerical_events& events) const {
    Eigen::MatrixXd b = layout_->gram(s, n);
    if (!project_gram(*layout_, b, events)) return false;
    s = layout_->statistic_of(b);
    return true;
  }

 private:
  const regression_layout* layout_;
};

}  // namespace privpost
