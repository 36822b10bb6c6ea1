// privpost/core/linalg/robust_cholesky.hpp
// robust_cholesky: the one shared repair for a covariance that is not numerically positive definite. Tries the plain
// factorisation, then adds growing diagonal jitter (bounded tries), then clips eigenvalues; every repair is counted.
#pragma once

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <type_traits>

#include "privpost/core/linalg/symmetric_eigen.hpp"
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

// Clips the eigenvalues of the symmetric matrix `a` at `floor` (a = V max(Lambda, floor) V^T); returns whether any was
// below it. Always on a dynamic-size matrix: one function serves every size (fixed-size callers copy; the repair is
// rare and counted).
inline bool clip_eigenvalues(Eigen::MatrixXd& a, double floor) {
  Eigen::VectorXd values;
  Eigen::MatrixXd vectors;
  symmetric_eigen(a, values, &vectors);
  if (values.size() == 0 || values.minCoeff() >= floor) return false;
  for (Eigen::Index i = 0; i < values.size(); ++i) values(i) = std::max(values(i), floor);
  // a = V diag(values) V^T by loops: Eigen's matrix product would be compiled into every program that samples (half a
  // second of the compiler each) for a repair that is rare.
  const Eigen::Index d = a.rows();
  for (Eigen::Index j = 0; j < d; ++j)
    for (Eigen::Index i = j; i < d; ++i) {
      double sum = 0.0;
      for (Eigen::Index k = 0; k < d; ++k) sum += vectors(i, k) * values(k) * vectors(j, k);
      a(i, j) = a(j, i) = sum;
    }
  return true;
}
}  // namespace detail

/// Storage that robust_cholesky and project_psd reuse between calls, so that a preallocated sweep does not touch the
/// heap: the Cholesky factorisation and a scratch matrix. The eigenvalue repair (rare, counted in events.psd_repairs)
/// allocates: it runs on a dynamic-size copy (see detail::clip_eigenvalues).
template <class MatrixType>
struct cholesky_workspace {
  /// @{
  /// Scratch storage: the factorisation and a copy of the matrix for its retries; contents between calls are unspecified.
  Eigen::LLT<MatrixType> llt;
  MatrixType scratch;
  /// @}

  cholesky_workspace() = default;  // sized by the first call that uses it
  /// @{
  /// Scratch storage: a copy starts empty (an unused Eigen::LLT holds uninitialised members, so copying one would read
  /// them), and assignment keeps the target's own storage.
  cholesky_workspace(const cholesky_workspace&) noexcept {}
  cholesky_workspace& operator=(const cholesky_workspace&) noexcept { return *this; }
  /// @}
};

// clang-format off
template <class MatrixType>
  requires std::is_base_of_v<Eigen::MatrixBase<MatrixType>, MatrixType>
void robust_cholesky(const MatrixType& a, MatrixType& l, numerical_events& events, cholesky_workspace<MatrixType>& ws) {
  // clang-format on
  if (!a.allFinite()) throw std::domain_error("robust_cholesky: matrix has a non-finite entry");
  auto& llt = ws.llt;
  llt.compute(a);
  if (llt.info() == Eigen::Success) {
    l = llt.matrixL();
    return;
  }
  const double scale = std::max(std::abs(a.diagonal().mean()), detail::min_scale);
  MatrixType& b = ws.scratch;
  for (double jitter = detail::first_jitter; jitter <= detail::last_jitter; jitter *= detail::jitter_growth) {
    b = a;
    b.diagonal().array() += jitter * scale;
    llt.compute(b);
    if (llt.info() == Eigen::Success) {
      ++events.jitter;
      l = llt.matrixL();
      return;
    }
  }
  ++events.psd_repairs;
  Eigen::MatrixXd repaired = a;
  detail::clip_eigenvalues(repaired, detail::eigenvalue_floor * scale);
  b = repaired;
  llt.compute(b);
  if (llt.info() != Eigen::Success) throw std::domain_error("robust_cholesky: eigenvalue clipping did not give a PD matrix");
  l = llt.matrixL();
}

/// robust_cholesky with its own (temporary) workspace.
// clang-format off
template <class MatrixType>
  requires std::is_base_of_v<Eigen::MatrixBase<MatrixType>, MatrixType>
void robust_cholesky(const MatrixType& a, MatrixType& l, numerical_events& events) {
  // clang-format on
  cholesky_workspace<MatrixType> ws;
  robust_cholesky(a, l, events, ws);
}

/// Projects a symmetric matrix onto the cone of positive semidefinite matrices by clipping negative eigenvalues at 0
/// (nearest PSD matrix in Frobenius norm). Returns true (and counts events.psd_repairs) if anything changed. A matrix
/// whose Cholesky factorisation succeeds is positive definite and left as it is without an eigendecomposition (so that
/// check allocates nothing with a preallocated workspace); otherwise the eigenvalues decide.
// clang-format off
template <class MatrixType>
  requires std::is_base_of_v<Eigen::MatrixBase<MatrixType>, MatrixType>
bool project_psd(MatrixType& a, numerical_events& events, cholesky_workspace<MatrixType>& ws) {
  // clang-format on
  ws.llt.compute(a);
  if (ws.llt.info() == Eigen::Success) return false;
  Eigen::MatrixXd repaired = a;
  if (!detail::clip_eigenvalues(repaired, 0.0)) return false;
  a = repaired;
  ++events.psd_repairs;
  return true;
}

/// project_psd with its own (temporary) workspace.
// clang-format off
template <class MatrixType>
  requires std::is_base_of_v<Eigen::MatrixBase<MatrixType>, MatrixType>
bool project_psd(MatrixType& a, numerical_events& events) {
  // clang-format on
  cholesky_workspace<MatrixType> ws;
  return project_psd(a, events, ws);
}

}  // namespace privpost
