// privpost/core/linalg/robust_cholesky.hpp
// robust_cholesky: the one shared repair for a covariance that is not numerically positive definite. Tries the plain
// factorisation, then adds growing diagonal jitter (bounded tries), then clips eigenvalues; every repair is counted.
#pragma once

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "privpost/core/numerical_events.hpp"

namespace privpost {

/// Writes the lower Cholesky factor of the symmetric matrix `a` into `l`. If `a` is not numerically positive definite,
/// adds jitter 1e-12, 1e-10, ... 1e-4 times the mean diagonal (counted in events.jitter), and as a last resort clips
/// eigenvalues at that scale (events.psd_repairs). Throws std::domain_error for non-finite input.
namespace detail {
// Jitter relative to the mean diagonal: first 1e-12, then x100 per retry up to 1e-4; then eigenvalue clipping at
// 1e-4 times that scale. The floor keeps a zero matrix's scale positive.
inline constexpr double first_jitter = 1e-12;
inline constexpr double last_jitter = 1e-4;
inline constexpr double jitter_growth = 100.0;
inline constexpr double eigenvalue_floor = 1e-4;
inline constexpr double min_scale = 1e-300;
}  // namespace detail

template <class MatrixType>
void robust_cholesky(const MatrixType& a, MatrixType& l, numerical_events& events) {
  if (!a.allFinite()) throw std::domain_error("robust_cholesky: matrix has a non-finite entry");
  Eigen::LLT<MatrixType> llt(a);
  if (llt.info() == Eigen::Success) {
    l = llt.matrixL();
    return;
  }
  const double scale = std::max(std::abs(a.diagonal().mean()), detail::min_scale);
  for (double jitter = detail::first_jitter; jitter <= detail::last_jitter; jitter *= detail::jitter_growth) {
    MatrixType b = a;
    b.diagonal().array() += jitter * scale;
    llt.compute(b);
    if (llt.info() == Eigen::Success) {
      ++events.jitter;
      l = llt.matrixL();
      return;
    }
  }
  ++events.psd_repairs;
  Eigen::SelfAdjointEigenSolver<MatrixType> eig(a);
  auto values = eig.eigenvalues().eval();
  for (Eigen::Index i = 0; i < values.size(); ++i) values(i) = std::max(values(i), detail::eigenvalue_floor * scale);
  MatrixType b = eig.eigenvectors() * values.asDiagonal() * eig.eigenvectors().transpose();
  llt.compute(b);
  if (llt.info() != Eigen::Success) throw std::domain_error("robust_cholesky: eigenvalue clipping did not give a PD matrix");
  l = llt.matrixL();
}

/// Projects a symmetric matrix onto the cone of positive semidefinite matrices by clipping negative eigenvalues at 0
/// (nearest PSD matrix in Frobenius norm). Returns true (and counts events.psd_repairs) if anything changed.
template <class MatrixType>
bool project_psd(MatrixType& a, numerical_events& events) {
  Eigen::SelfAdjointEigenSolver<MatrixType> eig(a);
  if (eig.eigenvalues().minCoeff() >= 0.0) return false;
  auto values = eig.eigenvalues().eval();
  for (Eigen::Index i = 0; i < values.size(); ++i) values(i) = std::max(values(i), 0.0);
  a = eig.eigenvectors() * values.asDiagonal() * eig.eigenvectors().transpose();
  ++events.psd_repairs;
  return true;
}

}  // namespace privpost
