// privpost/core/random/wishart.hpp
// draw_wishart and draw_inverse_wishart by the Bartlett decomposition: W = L A A^T L^T with A lower triangular,
// A_ii ~ sqrt(chi^2_{nu - i}), A_ij ~ N(0, 1); the inverse Wishart uses triangular solves, never an explicit inverse.
#pragma once

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <cmath>
#include <stdexcept>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/random/gamma.hpp"
#include "privpost/core/random/normal.hpp"

namespace privpost {

namespace detail {

// Bartlett factor A (p x p, lower triangular) for nu degrees of freedom.
template <random_engine G>
inline Eigen::MatrixXd bartlett_factor(G& g, double nu, Eigen::Index p) {
  Eigen::MatrixXd a = Eigen::MatrixXd::Zero(p, p);
  for (Eigen::Index i = 0; i < p; ++i) {
    a(i, i) = std::sqrt(2.0 * draw_gamma(g, 0.5 * (nu - static_cast<double>(i)), 1.0));  // chi^2_{nu-i}
    for (Eigen::Index j = 0; j < i; ++j) a(i, j) = draw_normal(g);
  }
  return a;
}

template <class Derived>
inline Eigen::MatrixXd checked_cholesky(const char* function, const Eigen::MatrixBase<Derived>& s, double nu) {
  if (s.rows() != s.cols() || s.rows() < 1)
    throw_invalid(function, "scale matrix rows", static_cast<double>(s.rows()), "a non-empty square matrix");
  const double p = static_cast<double>(s.rows());
  if (!(std::isfinite(nu) && nu > p - 1.0))
    throw_invalid(function, "nu", nu, "a finite number > dimension - 1 = " + detail::format_value(p - 1.0));
  check_symmetric_positive_definite(function, "scale matrix", s);
  return Eigen::LLT<Eigen::MatrixXd>(s).matrixL();
}

}  // namespace detail

/// Wishart(nu, S): the distribution of sum_{k=1}^{nu} x_k x_k^T with x_k ~ N(0, S), for real nu > p - 1.
template <random_engine G, class Derived>
inline Eigen::MatrixXd draw_wishart(G& g, double nu, const Eigen::MatrixBase<Derived>& scale) {
  const Eigen::MatrixXd l = detail::checked_cholesky("draw_wishart", scale, nu);
  const Eigen::MatrixXd la = l * detail::bartlett_factor(g, nu, scale.rows());
  return la * la.transpose();
}

/// Inverse Wishart(nu, Psi): X^{-1} for X ~ Wishart(nu, Psi^{-1}); mean Psi / (nu - p - 1) when nu > p + 1.
template <random_engine G, class Derived>
inline Eigen::MatrixXd draw_inverse_wishart(G& g, double nu, const Eigen::MatrixBase<Derived>& psi) {
  // Psi = L L^T, so Psi^{-1} = L^{-T} L^{-1} and X = L^{-T} A A^T L^{-1}; X^{-1} = (L A^{-T})(L A^{-T})^T.
  const Eigen::MatrixXd l = detail::checked_cholesky("draw_inverse_wishart", psi, nu);
  const Eigen::MatrixXd a = detail::bartlett_factor(g, nu, psi.rows());
  // B = L A^{-T}  <=>  A B^T = L^T: one triangular solve.
  const Eigen::MatrixXd bt = a.triangularView<Eigen::Lower>().solve(l.transpose());
  return bt.transpose() * bt;
}

/// Storage draw_inverse_wishart reuses between draws of one dimension.
struct inverse_wishart_workspace {
  /// @{
  /// Scratch storage: the scale's factorisation and the factors of the draw; contents between calls are unspecified.
  Eigen::LLT<Eigen::MatrixXd> llt;
  Eigen::MatrixXd l, a, bt;
  /// @}

  inverse_wishart_workspace() = default;
  /// @{
  /// Scratch storage: a copy starts empty, assignment keeps the target's storage (see cholesky_workspace).
  inverse_wishart_workspace(const inverse_wishart_workspace&) noexcept {}
  inverse_wishart_workspace& operator=(const inverse_wishart_workspace&) noexcept { return *this; }
  /// @}
};

/// draw_inverse_wishart into `out`, reusing `out` and `ws` (no allocation once sized): the same draw as the value form.
/// The scale matrix must be symmetric (not checked here: samplers build it symmetric); positive definiteness is.
template <random_engine G>
void draw_inverse_wishart(G& g, double nu, const Eigen::MatrixXd& psi, Eigen::MatrixXd& out, inverse_wishart_workspace& ws) {
  const Eigen::Index p = psi.rows();
  if (psi.cols() != p || p < 1)
    throw_invalid("draw_inverse_wishart", "scale matrix rows", static_cast<double>(p), "a non-empty square matrix");
  if (!(std::isfinite(nu) && nu > static_cast<double>(p) - 1.0))
    throw_invalid("draw_inverse_wishart", "nu", nu, "a finite number > dimension - 1 = " + detail::format_value(p - 1.0));
  if (!psi.allFinite()) throw std::domain_error("draw_inverse_wishart: the scale matrix has a non-finite entry");
  ws.llt.compute(psi);
  if (ws.llt.info() != Eigen::Success) throw std::domain_error("draw_inverse_wishart: the scale matrix is not positive definite");
  ws.l = ws.llt.matrixL();
  if (ws.a.rows() != p) ws.a.resize(p, p);
  ws.a.setZero();
  for (Eigen::Index i = 0; i < p; ++i) {
    ws.a(i, i) = std::sqrt(2.0 * draw_gamma(g, 0.5 * (nu - static_cast<double>(i)), 1.0));  // chi^2_{nu-i}
    for (Eigen::Index j = 0; j < i; ++j) ws.a(i, j) = draw_normal(g);
  }
  ws.bt = ws.l.transpose();
  ws.a.triangularView<Eigen::Lower>().solveInPlace(ws.bt);
  out.noalias() = ws.bt.transpose() * ws.bt;
}

}  // namespace privpost
