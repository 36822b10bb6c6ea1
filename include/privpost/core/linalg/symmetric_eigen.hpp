// privpost/core/linalg/symmetric_eigen.hpp
// symmetric_eigen: eigenvalues and eigenvectors of a small symmetric matrix by the cyclic Jacobi method, for the
// library's repairs of matrices that should be positive semidefinite and are not quite (robust_cholesky, project_psd).
//
// Why not Eigen::SelfAdjointEigenSolver: it is the slowest part of Eigen to compile (about 5 s of g++ per translation
// unit, plus its code generation), and robust_cholesky, which every Gibbs-SS sweep instantiates, needs a decomposition
// for its rare last-resort repair, so every program that samples would compile it. Cyclic Jacobi is a few loops over matrix
// entries: it compiles in a fraction of a second, it is backward stable like the QR algorithm (Golub & Van Loan,
// Matrix Computations, 4th ed., Sec. 8.5: computed eigenvalues within a small multiple of machine epsilon times
// ||A||_F of exact ones), and with quadratic convergence (6-10 sweeps of O(d^3)) it is as fast as Eigen's solver at
// d = 5, five times slower at d = 20 and ten at d = 50 (1.4 ms against 0.13 ms): right for rare repairs of small matrices, wrong
// for large ones, where the callers keep Eigen's solver (the regression moments' check, PASS-GLM at d up to 1000).
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

namespace privpost {

/// The eigenvalues of the symmetric matrix `a` in ascending order, and, when `vectors` is not null, orthonormal
/// eigenvectors as the columns of *vectors in the same order (a = V diag(values) V^T up to rounding). Reads the lower
/// triangle of `a` only, as Eigen's SelfAdjointEigenSolver does. Cyclic Jacobi rotations on a copy scaled by its
/// largest entry (no overflow for entries near the largest double), until the off-diagonal Frobenius norm is below
/// machine epsilon times the whole matrix's, at most 100 sweeps (quadratic convergence needs about 10; the bound only
/// guards the loop). Throws std::invalid_argument for a matrix that is not square and std::domain_error for a
/// non-finite entry of its lower triangle.
inline void symmetric_eigen(const Eigen::MatrixXd& a, Eigen::VectorXd& values, Eigen::MatrixXd* vectors = nullptr) {
  if (a.rows() != a.cols())
    throw std::invalid_argument("symmetric_eigen: the matrix is " + std::to_string(a.rows()) + " x " + std::to_string(a.cols()) +
                                "; accepted: a square matrix");
  const Eigen::Index d = a.rows();
  Eigen::MatrixXd w(d, d);
  double scale = 0.0;
  for (Eigen::Index j = 0; j < d; ++j)
    for (Eigen::Index i = j; i < d; ++i) {
      if (!std::isfinite(a(i, j)))
        throw std::domain_error("symmetric_eigen: entry (" + std::to_string(i) + ", " + std::to_string(j) + ") is " +
                                std::to_string(a(i, j)) + "; accepted: finite entries");
      w(i, j) = w(j, i) = a(i, j);
      scale = std::max(scale, std::abs(a(i, j)));
    }
  Eigen::MatrixXd v;
  if (vectors != nullptr) v.setIdentity(d, d);
  if (scale > 0.0) w /= scale;

  constexpr int max_sweeps = 100;
  constexpr double eps = std::numeric_limits<double>::epsilon();
  Eigen::VectorXd column(d);
  for (int sweep = 0; sweep < max_sweeps; ++sweep) {
    double off = 0.0, diag = 0.0;
    for (Eigen::Index j = 0; j < d; ++j) {
      diag += w(j, j) * w(j, j);
      for (Eigen::Index i = j + 1; i < d; ++i) off += 2.0 * w(i, j) * w(i, j);
    }
    if (off <= eps * eps * (off + diag)) break;
    for (Eigen::Index p = 0; p + 1 < d; ++p)
      for (Eigen::Index q = p + 1; q < d; ++q) {
        const double apq = w(p, q);
        if (apq == 0.0) continue;
        // The rotation [c s; -s c] that zeroes entry (p, q) (Golub & Van Loan's sym.schur2), with the smaller of the
        // two angles; t ~ 1 / (2 tau) where tau^2 would overflow.
        const double tau = (w(q, q) - w(p, p)) / (2.0 * apq);
        const double t =
            std::abs(tau) > 1e150 ? 0.5 / tau : (tau >= 0.0 ? 1.0 : -1.0) / (std::abs(tau) + std::sqrt(1.0 + tau * tau));
        const double c = 1.0 / std::sqrt(1.0 + t * t), s = t * c;
        const double app = w(p, p) - t * apq, aqq = w(q, q) + t * apq;
        // W <- J^T W J on the columns, which are contiguous; then the 2 x 2 block from its closed form, and rows p and q
        // copied from the columns (W stays symmetric).
        column = w.col(p);
        w.col(p) = c * column - s * w.col(q);
        w.col(q) = s * column + c * w.col(q);
        w(p, p) = app;
        w(q, q) = aqq;
        w(p, q) = w(q, p) = 0.0;
        w.row(p) = w.col(p).transpose();
        w.row(q) = w.col(q).transpose();
        if (vectors != nullptr) {  // V <- V J
          column = v.col(p);
          v.col(p) = c * column - s * v.col(q);
          v.col(q) = s * column + c * v.col(q);
        }
      }
  }

  std::vector<Eigen::Index> order(static_cast<std::size_t>(d));
  std::iota(order.begin(), order.end(), Eigen::Index{0});
  std::stable_sort(order.begin(), order.end(), [&](Eigen::Index i, Eigen::Index j) { return w(i, i) < w(j, j); });
  values.resize(d);
  for (Eigen::Index i = 0; i < d; ++i)
    values(i) = scale * w(order[static_cast<std::size_t>(i)], order[static_cast<std::size_t>(i)]);
  if (vectors != nullptr) {
    vectors->resize(d, d);
    for (Eigen::Index i = 0; i < d; ++i) vectors->col(i) = v.col(order[static_cast<std::size_t>(i)]);
  }
}

}  // namespace privpost
