// privpost/core/linalg/norm_product.hpp
// norm_product: the normal density proportional to N(s; m, S) N(z; s, diag(w)) (dissertation Algorithm 3, NormProduct),
// computed through one Cholesky factorisation of S + diag(w) (positive definite since w > 0), never an explicit inverse.
#pragma once

#include <Eigen/Cholesky>
#include <Eigen/Core>

#include "privpost/core/linalg/robust_cholesky.hpp"
#include "privpost/core/numerical_events.hpp"

namespace privpost {

/// Mean and covariance of the product N(s; m, S) N(z; s, diag(w)), normalised:
///   cov = S - S (S + W)^{-1} S,  mean = m + S (S + W)^{-1} (z - m).
/// This form stays valid when S is singular (e.g. a binomial with theta at 0), unlike (S^{-1} + W^{-1})^{-1}.
/// `cov_cholesky` receives the lower Cholesky factor of cov (repairs counted in events).
template <int D>
void norm_product(const Eigen::Matrix<double, D, 1>& m, const Eigen::Matrix<double, D, D>& s,
                  const Eigen::Matrix<double, D, 1>& z, const Eigen::Matrix<double, D, 1>& w, Eigen::Matrix<double, D, 1>& mean,
                  Eigen::Matrix<double, D, D>& cov_cholesky, numerical_events& events) {
  if constexpr (D == 1) {
    // Scalar case: the familiar precision-weighted average, written without dividing by a possibly zero variance.
    const double v = s(0, 0), ww = w(0);
    const double total = v + ww;
    mean(0) = m(0) + v / total * (z(0) - m(0));
    cov_cholesky(0, 0) = std::sqrt(v * ww / total);
  } else {
    Eigen::Matrix<double, D, D> a = s;
    a.diagonal() += w;
    Eigen::Matrix<double, D, D> l;
    robust_cholesky(a, l, events);
    const auto tri = l.template triangularView<Eigen::Lower>();
    const Eigen::Matrix<double, D, D> b = tri.solve(s);  // L^{-1} S
    mean = m + b.transpose() * tri.solve(z - m);
    Eigen::Matrix<double, D, D> cov = s - b.transpose() * b;
    cov = 0.5 * (cov + cov.transpose()).eval();
    robust_cholesky(cov, cov_cholesky, events);
  }
}

}  // namespace privpost
