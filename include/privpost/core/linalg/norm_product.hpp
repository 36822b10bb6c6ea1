// privpost/core/linalg/norm_product.hpp
// norm_product: the normal density proportional to N(s; m, S) N(z; s, diag(w)) (dissertation Algorithm 3, NormProduct),
// computed through one Cholesky factorisation of S + diag(w) (positive definite since w > 0), never an explicit inverse;
// and matheron_draw, an exact draw from that product for a singular S (a statistic under linear constraints, such as
// the consistent edge tables of a tree; docs/design-cgm.md Sec. 6) that never factorises the singular conditional covariance
// (matheron_update: its second half, for a caller that draws N(m, S) by other means).
#pragma once

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <string>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/linalg/robust_cholesky.hpp"
#include "privpost/core/numerical_events.hpp"
#include "privpost/core/random/normal.hpp"

namespace privpost {

/// Storage norm_product reuses between calls (fixed-size for D > 0; for Eigen::Dynamic sized by the first call, so a
/// chain that keeps one allocates nothing after its first sweep, apart from a rare eigenvalue repair).
template <int D>
struct norm_product_workspace {
  /// D x D matrix type of the workspace (dynamic when D is Eigen::Dynamic).
  using matrix = Eigen::Matrix<double, D, D>;
  /// D-vector type of the workspace (dynamic when D is Eigen::Dynamic).
  using vector = Eigen::Matrix<double, D, 1>;
  /// @{
  /// Scratch storage of the product's matrices, vector and Cholesky factorisation; contents between calls are unspecified.
  matrix a, l, b, cov;
  vector r;
  cholesky_workspace<matrix> cholesky;
  /// @}

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

/// Storage of matheron_prepare and matheron_draw, reused between calls (sized by the first call: a chain that keeps one
/// allocates nothing afterwards, apart from a rare counted eigenvalue repair of S + W).
struct matheron_workspace {
  Eigen::LDLT<Eigen::MatrixXd> ldlt;  ///< pivoted L D L^T of S (semidefinite allowed)
  Eigen::MatrixXd a;                  ///< S + W
  Eigen::MatrixXd l;                  ///< the lower Cholesky factor of S + W
  Eigen::VectorXd root_d;             ///< sqrt of the pivots, those below pivot_cutoff times the largest set to 0
  /// @{
  /// Standard normals and scratch vectors; contents between calls are unspecified.
  Eigen::VectorXd e, t, r;
  /// @}
  cholesky_workspace<Eigen::MatrixXd> cholesky;  ///< the Cholesky factorisation of S + W and its retries

  /// Pivots of the L D L^T of S at most this times the largest are treated as 0: S's null space shows up as pivots of
  /// rounding size (~1e-16 relative), which would otherwise add noise off S's range.
  static constexpr double pivot_cutoff = 1e-12;

  matheron_workspace() = default;  // sized by the first matheron_prepare
  /// @{
  /// Scratch storage: a copy starts empty (an unused Eigen::LDLT holds uninitialised members, so copying one would read
  /// them), and assignment keeps the target's own storage.
  matheron_workspace(const matheron_workspace&) noexcept {}
  matheron_workspace& operator=(const matheron_workspace&) noexcept { return *this; }
  /// @}
};

/// The half of matheron_prepare that matheron_update needs: factorises S + diag(w) (positive definite for w > 0;
/// robust_cholesky, repairs counted in events) and sizes matheron_update's scratch vector. For a caller that draws N(m, S) itself
/// (a model that knows how, without factorising S; `f` names the caller in errors). Throws std::domain_error for a non-finite
/// entry of S, std::invalid_argument for sizes that disagree.
inline void matheron_prepare_update(const Eigen::MatrixXd& s, const Eigen::VectorXd& w, numerical_events& events,
                                    matheron_workspace& ws, const char* f = "matheron_prepare_update") {
  check_size_match(f, "variances w", w.size(), "covariance rows", s.rows());
  check_size_match(f, "covariance columns", s.cols(), "covariance rows", s.rows());
  if (!s.allFinite()) throw std::domain_error(std::string(f) + ": the covariance S has a non-finite entry");
  ws.a = s;
  ws.a.diagonal() += w;
  robust_cholesky(ws.a, ws.l, events, ws.cholesky);
  ws.r.resize(s.rows());
}

/// Factorises S (symmetric positive semidefinite, possibly singular: a pivoted L D L^T, negative and negligible pivots
/// set to 0) and S + diag(w) (matheron_prepare_update) for the draws of matheron_draw. Throws std::domain_error for a
/// non-finite entry, std::invalid_argument for sizes that disagree.
// A template (its parameter never deduced) only so that a translation unit that never calls it does not compile
// Eigen's LDLT (2-3 s of g++); the arguments convert as for a plain function.
template <class Unused = void>
void matheron_prepare(const Eigen::MatrixXd& s, const Eigen::VectorXd& w, numerical_events& events, matheron_workspace& ws) {
  matheron_prepare_update(s, w, events, ws, "matheron_prepare");  // checks S before the LDLT reads it
  ws.ldlt.compute(s);
  ws.e.resize(s.rows());  // matheron_draw's prior half
  ws.t.resize(s.rows());
  const auto& d = ws.ldlt.vectorD();
  const double largest = d.size() > 0 ? std::max(d.maxCoeff(), 0.0) : 0.0;
  ws.root_d.resize(d.size());
  for (Eigen::Index i = 0; i < d.size(); ++i)
    ws.root_d(i) = d(i) > matheron_workspace::pivot_cutoff * largest ? std::sqrt(d(i)) : 0.0;
}

/// Matheron's update: with x a draw of N(m, S) on entry, x on exit is a draw of the normalised product
/// N(x; m, S) N(z; x, diag(w)):
///   x <- x + S (S + W)^{-1} (z - x - e_w),  e_w ~ N(0, diag(w)),
/// which has the product's mean and covariance S - S (S + W)^{-1} S, and keeps x - m in S's range (the affine set the
/// constraints define), which a Cholesky factor of the conditional covariance cannot promise. After
/// matheron_prepare_update(S, w) (or matheron_prepare); O(d^2); allocates nothing once the workspace is sized.
template <random_engine G>
void matheron_update(G& g, const Eigen::MatrixXd& s, const Eigen::VectorXd& z, const Eigen::VectorXd& w, matheron_workspace& ws,
                     Eigen::VectorXd& x) {
  const Eigen::Index d = x.size();
  for (Eigen::Index i = 0; i < d; ++i) ws.r(i) = z(i) - x(i) - std::sqrt(w(i)) * draw_normal(g);
  ws.l.triangularView<Eigen::Lower>().solveInPlace(ws.r);
  ws.l.transpose().triangularView<Eigen::Upper>().solveInPlace(ws.r);  // (S + W)^{-1} (z - x_pri - e_w)
  x.noalias() += s.selfadjointView<Eigen::Lower>() * ws.r;
}

/// One exact draw x from the normalised product N(x; m, S) N(z; x, diag(w)) by Matheron's rule, after
/// matheron_prepare(S, w): x_pri = m + P^T L D^{1/2} e ~ N(m, S), then matheron_update. O(d^2) per draw, so rejection
/// retries are cheap. Allocates nothing once the workspace is sized.
template <random_engine G>
void matheron_draw(G& g, const Eigen::VectorXd& m, const Eigen::MatrixXd& s, const Eigen::VectorXd& z, const Eigen::VectorXd& w,
                   matheron_workspace& ws, Eigen::VectorXd& x) {
  const Eigen::Index d = m.size();
  for (Eigen::Index i = 0; i < d; ++i) ws.e(i) = ws.root_d(i) * draw_normal(g);
  ws.t.noalias() = ws.ldlt.matrixL() * ws.e;                   // L D^{1/2} e
  x.noalias() = ws.ldlt.transpositionsP().transpose() * ws.t;  // P^T L D^{1/2} e
  x += m;                                                      // x_pri
  matheron_update(g, s, z, w, ws, x);
}

}  // namespace privpost
