// privpost/core/linalg/norm_product.hpp
// norm_product: the normal density proportional to N(s; m, S) N(z; s, diag(w)) (dissertation Algorithm 3, NormProduct),
// computed through one Cholesky factorisation of S + diag(w) (positive definite since w > 0), never an explicit inverse.
#pragma once

#include <Eigen/Cholesky>
#include <Eigen/Core>

#include "privpost/core/linalg/robust_cholesky.hpp"
#include "privpost/core/numerical_events.hpp"

namespace privpost {

/// Storage norm_product reuses between calls (fixed-size for D > 0; for Eigen::Dynamic sized by the first call, so a
/// chain that keeps one allocates nothing after its first sweep, apart from a rare eigenvalue repair).
template <int D>
struct norm_product_workspace {
  using matrix = Eigen::Matrix<double, D, D>;
  using vector = Eigen::Matrix<double, D, 1>;
  matrix a, l, b, cov;
  vector r;
  cholesky_workspace<matrix> cholesky;

  /// Sizes the dynamic members (a no-op for fixed sizes).
  void resize(Eigen::Index size) {
    if (a.rows() == size) return;
    a.resize(size, size);
    l.resize(size, size);
    b.resize(size, size);
    cov.resize(size, size);
    r.resize(size);  // (the Cholesky workspace sizes itself on first use)
  }
};

/// Mean and covariance of the product N(s; m, S) N(z; s, diag(w)), normalised:
///   cov = S - S (S + W)^{-1} S,  mean = m + S (S + W)^{-1} (z - m).
/// This form stays valid when S is singular (e.g. a binomial with theta at 0), unlike (S^{-1} + W^{-1})^{-1}.
/// `cov_cholesky` receives the lower Cholesky factor of cov (repairs counted in events); `ws` is reused storage.
template <int D>
void norm_product(const Eigen::Matrix<double, D, 1>& m, const Eigen::Matrix<double, D, D>& s,
                  const Eigen::Matrix<double, D, 1>& z, const Eigen::Matrix<double, D, 1>& w, Eigen::Matrix<double, D, 1>& mean,
                  Eigen::Matrix<double, D, D>& cov_cholesky, numerical_events& events, norm_product_workspace<D>& ws) {
  if constexpr (D == 1) {
    // Scalar case: the familiar precision-weighted average, written without dividing by a possibly zero variance.
    const double v = s(0, 0), ww = w(0);
    const double total = v + ww;
    mean(0) = m(0) + v / total * (z(0) - m(0));
    cov_cholesky(0, 0) = std::sqrt(v * ww / total);
  } else if constexpr (D != Eigen::Dynamic) {
    // Fixed size: expressions on the stack (the workspace is not needed; this form is the fastest for small D).
    Eigen::Matrix<double, D, D> a = s;
    a.diagonal() += w;
    Eigen::Matrix<double, D, D> l;
    robust_cholesky(a, l, events, ws.cholesky);
    const auto tri = l.template triangularView<Eigen::Lower>();
    const Eigen::Matrix<double, D, D> b = tri.solve(s);  // L^{-1} S
    mean = m + b.transpose() * tri.solve(z - m);
    Eigen::Matrix<double, D, D> cov = s - b.transpose() * b;
    cov = 0.5 * (cov + cov.transpose()).eval();
    robust_cholesky(cov, cov_cholesky, events, ws.cholesky);
  } else {
    // Dynamic size: every intermediate in the workspace, so a chain that keeps one allocates nothing.
    ws.resize(m.size());
    ws.a = s;
    ws.a.diagonal() += w;
    robust_cholesky(ws.a, ws.l, events, ws.cholesky);
    const auto tri = ws.l.template triangularView<Eigen::Lower>();
    ws.b = s;
    tri.solveInPlace(ws.b);  // L^{-1} S
    ws.r = z - m;
    tri.solveInPlace(ws.r);  // L^{-1} (z - m)
    mean.noalias() = ws.b.transpose() * ws.r;
    mean += m;
    ws.cov = s;
    ws.cov.noalias() -= ws.b.transpose() * ws.b;
    // Symmetrise in place: (cov + cov^T) / 2 entry by entry.
    for (Eigen::Index j = 0; j < ws.cov.cols(); ++j)
      for (Eigen::Index i = j + 1; i < ws.cov.rows(); ++i) ws.cov(i, j) = ws.cov(j, i) = 0.5 * (ws.cov(i, j) + ws.cov(j, i));
    robust_cholesky(ws.cov, cov_cholesky, events, ws.cholesky);
  }
}

/// norm_product with its own (temporary) workspace.
template <int D>
void norm_product(const Eigen::Matrix<double, D, 1>& m, const Eigen::Matrix<double, D, D>& s,
                  const Eigen::Matrix<double, D, 1>& z, const Eigen::Matrix<double, D, 1>& w, Eigen::Matrix<double, D, 1>& mean,
                  Eigen::Matrix<double, D, D>& cov_cholesky, numerical_events& events) {
  norm_product_workspace<D> ws;
  norm_product(m, s, z, w, mean, cov_cholesky, events, ws);
}

}  // namespace privpost
