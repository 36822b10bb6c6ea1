// privpost/families/regression/gram_support.hpp
// gram_support: the valid set of a linear-regression statistic, the entries of B = [X y]^T [X y] that make B positive
// semidefinite with its public (0, 0) entry n c^2 (001 Sec. 3.3, "projected so that [X y]^T [X y] is PSD"). With an
// intercept the Schur complement of that entry is clipped at eigenvalue 0; without one, B itself.
#pragma once

#include <Eigen/Core>
#include <Eigen/Eigenvalues>
#include <concepts>

#include "privpost/core/linalg/robust_cholesky.hpp"
#include "privpost/core/numerical_events.hpp"
#include "privpost/families/regression/regression_layout.hpp"

namespace privpost {

/// Storage the Gram projection reuses between sweeps (owned by the model; sized on first use).
struct gram_workspace {
  /// @{
  /// Scratch storage of the projection; contents between calls are unspecified.
  Eigen::MatrixXd b, schur;
  Eigen::VectorXd r;
  cholesky_workspace<Eigen::MatrixXd> cholesky;
  /// @}
};

/// Projects the Gram matrix B onto the PSD matrices, keeping the public entry n c^2 and the sums in the intercept row:
/// the Schur complement B_rest - b b^T / B_00 is clipped at eigenvalue 0 (B is PSD iff that is). Without an intercept,
/// B itself is clipped. Returns true (and counts events.psd_repairs) if B changed. With a preallocated workspace it
/// allocates nothing unless it repairs (the eigendecomposition of a repair allocates).
/// (A template on the matrix type so that a translation unit that never projects does not compile Eigen's eigensolver.)
// clang-format off
template <class Matrix>
  requires std::same_as<Matrix, Eigen::MatrixXd>
bool project_gram(const regression_layout& layout, Matrix& b, numerical_events& events, gram_workspace& ws) {
  // clang-format on
  if (!layout.intercept()) return project_psd(b, events, ws.cholesky);
  const Eigen::Index q = b.rows();
  ws.r = b.block(1, 0, q - 1, 1);
  if (ws.schur.rows() != q - 1) ws.schur.resize(q - 1, q - 1);
  const double b00 = b(0, 0);
  // B is symmetric, so the complement is too (entry by entry, no temporaries).
  for (Eigen::Index j = 0; j < q - 1; ++j)
    for (Eigen::Index i = 0; i < q - 1; ++i) ws.schur(i, j) = b(1 + i, 1 + j) - ws.r(i) * ws.r(j) / b00;
  if (!project_psd(ws.schur, events, ws.cholesky)) return false;
  for (Eigen::Index j = 0; j < q - 1; ++j)
    for (Eigen::Index i = 0; i < q - 1; ++i) b(1 + i, 1 + j) = ws.schur(i, j) + ws.r(i) * ws.r(j) / b00;
  return true;
}

/// project_gram with its own (temporary) workspace.
// clang-format off
template <class Matrix>
  requires std::same_as<Matrix, Eigen::MatrixXd>
bool project_gram(const regression_layout& layout, Matrix& b, numerical_events& events) {
  // clang-format on
  gram_workspace ws;
  return project_gram(layout, b, events, ws);
}

/// The support policy of a regression statistic (refers to the layout of its model, which must outlive it, and to the
/// model's workspace if given). Draws are never retried: the projection is cheap beside a rejection loop in a set of
/// measure far from 1 at small n.
class gram_support {
 public:
  /// Draws are never retried (see the class comment).
  static constexpr int rejection_tries = 0;

  /// The support of layout's statistic, projecting with workspace when given (both must outlive it).
  explicit gram_support(const regression_layout& layout, gram_workspace* workspace = nullptr) noexcept
      : layout_(&layout), workspace_(workspace) {}

  // (Member templates: compiled only where a sampler uses them.)
  // clang-format off
  /// Whether the Gram matrix of s and n is positive semidefinite (project_gram would leave it unchanged).
  template <class Vector>
    requires std::same_as<Vector, Eigen::VectorXd>
  bool contains(const Vector& s, double n) const {
    // clang-format on
    gram_workspace local;
    gram_workspace& ws = workspace_ ? *workspace_ : local;
    layout_->gram(s, n, ws.b);
    numerical_events scratch;
    return !project_gram(*layout_, ws.b, scratch, ws);
  }
  // clang-format off
  /// Repairs s's Gram matrix by project_gram and writes its statistic back; false when nothing changed.
  template <class Vector>
    requires std::same_as<Vector, Eigen::VectorXd>
  bool project(Vector& s, double n, numerical_events& events) const {
    // clang-format on
    gram_workspace local;
    gram_workspace& ws = workspace_ ? *workspace_ : local;
    layout_->gram(s, n, ws.b);
    if (!project_gram(*layout_, ws.b, events, ws)) return false;
    layout_->statistic_of(ws.b, s);
    return true;
  }

 private:
  const regression_layout* layout_;
  gram_workspace* workspace_;
};

}  // namespace privpost
