// privpost/families/glm/logistic_moments.hpp
// Per-record mean mu and covariance V of the logistic statistic [y x; t2(x)] under x ~ N(0, Sigma), y | x logistic
// (Kulkarni et al. 2021, Sec. 3.2, in the compact form of spec glm.md Sec. 3.2 from Stein's lemma), and the adjoint of
// <A, mu> + <G, V> for hand-derived gradients (spec Sec. 3.5, step 2). Zero-mean covariates, no intercept.
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <utility>
#include <vector>

#include "privpost/core/errors.hpp"
#include "privpost/families/glm/logistic_link.hpp"

namespace privpost {

/// The entries of the logistic statistic as the moment formulas see them: d entries y x_i, then one per pair (j, k)
/// (squares first, then cross terms in row order) with scale 1 or sqrt(2). Matches glm_statistic::logistic(d, R).
class logistic_moment_layout {
 public:
  explicit logistic_moment_layout(int d) : d_(d) {
    if (d < 1 || d > 1000) throw_invalid("logistic_moment_layout", "d", d, "an integer in [1, 1000]");
    for (int j = 0; j < d; ++j) pairs_.push_back({j, j, 1.0});
    for (int j = 0; j < d; ++j)
      for (int k = j + 1; k < d; ++k) pairs_.push_back({j, k, std::sqrt(2.0)});
  }
  struct pair_entry {
    int j, k;
    double scale;
  };
  int d() const noexcept { return d_; }
  Eigen::Index size() const noexcept { return d_ + static_cast<Eigen::Index>(pairs_.size()); }
  const std::vector<pair_entry>& pairs() const noexcept { return pairs_; }

 private:
  int d_;
  std::vector<pair_entry> pairs_;
};

/// mu and V (per record) at w = Sigma theta and the link functionals k (kappa_1 = k[1], kappa_3 = k[3]):
///   mu(y x_i) = kappa_1 w_i,  mu(v_jk) = S_jk Sigma_jk,  V(y x_i, y x_l) = Sigma_il - kappa_1^2 w_i w_l,
///   V(y x_i, v_jk) = S_jk [kappa_1 (Sigma_ij w_k + Sigma_ik w_j) + kappa_3 w_i w_j w_k],
///   V(v_jk, v_lm) = S_jk S_lm (Sigma_jl Sigma_km + Sigma_jm Sigma_kl).
/// mu and V must have the layout's size; nothing is allocated.
inline void logistic_moments(const logistic_moment_layout& layout, const Eigen::VectorXd& w, const Eigen::MatrixXd& sigma,
                             const link_functionals& k, Eigen::VectorXd& mu, Eigen::MatrixXd& v) {
  const int d = layout.d();
  const auto& pairs = layout.pairs();
  const Eigen::Index np = static_cast<Eigen::Index>(pairs.size());
  const double k1 = k[1], k3 = k[3];
  for (int i = 0; i < d; ++i) mu(i) = k1 * w(i);
  for (Eigen::Index p = 0; p < np; ++p) mu(d + p) = pairs[p].scale * sigma(pairs[p].j, pairs[p].k);
  for (int i = 0; i < d; ++i)
    for (int l = 0; l < d; ++l) v(i, l) = sigma(i, l) - k1 * k1 * w(i) * w(l);
  for (int i = 0; i < d; ++i) {
    for (Eigen::Index p = 0; p < np; ++p) {
      const int j = pairs[p].j, kk = pairs[p].k;
      const double value = pairs[p].scale * (k1 * (sigma(i, j) * w(kk) + sigma(i, kk) * w(j)) + k3 * w(i) * w(j) * w(kk));
      v(i, d + p) = value;
      v(d + p, i) = value;
    }
  }
  for (Eigen::Index p = 0; p < np; ++p) {
    for (Eigen::Index r = 0; r < np; ++r) {
      const int j = pairs[p].j, kk = pairs[p].k, l = pairs[r].j, m = pairs[r].k;
      v(d + p, d + r) = pairs[p].scale * pairs[r].scale * (sigma(j, l) * sigma(kk, m) + sigma(j, m) * sigma(kk, l));
    }
  }
}

/// The adjoint of F = <a, mu> + sum over ordered (e, f) of g(e, f) V(e, f): adds dF/dw to w_bar, dF/dSigma to
/// sigma_bar (every read of Sigma_ab counted at (a, b), so callers add both positions of a symmetric Sigma), dF/dkappa_1
/// and dF/dkappa_3 to k_bar[1] and k_bar[3]. g is typically symmetric (the adjoint of a Gaussian log density).
inline void logistic_moments_adjoint(const logistic_moment_layout& layout, const Eigen::VectorXd& w, const Eigen::MatrixXd& sigma,
                                     const link_functionals& k, const Eigen::VectorXd& a, const Eigen::MatrixXd& g,
                                     Eigen::VectorXd& w_bar, Eigen::MatrixXd& sigma_bar, link_functionals& k_bar) {
  const int d = layout.d();
  const auto& pairs = layout.pairs();
  const Eigen::Index np = static_cast<Eigen::Index>(pairs.size());
  const double k1 = k[1], k3 = k[3];
  for (int i = 0; i < d; ++i) {
    k_bar[1] += a(i) * w(i);
    w_bar(i) += a(i) * k1;
  }
  for (Eigen::Index p = 0; p < np; ++p) sigma_bar(pairs[p].j, pairs[p].k) += a(d + p) * pairs[p].scale;
  for (int i = 0; i < d; ++i) {
    for (int l = 0; l < d; ++l) {
      const double gil = g(i, l);
      sigma_bar(i, l) += gil;
      k_bar[1] -= 2.0 * k1 * w(i) * w(l) * gil;
      w_bar(i) -= k1 * k1 * w(l) * gil;
      w_bar(l) -= k1 * k1 * w(i) * gil;
    }
  }
  for (int i = 0; i < d; ++i) {
    for (Eigen::Index p = 0; p < np; ++p) {
      const int j = pairs[p].j, kk = pairs[p].k;
      // Both positions (i, d + p) and (d + p, i) hold the same formula.
      const double gs = (g(i, d + p) + g(d + p, i)) * pairs[p].scale;
      k_bar[1] += gs * (sigma(i, j) * w(kk) + sigma(i, kk) * w(j));
      k_bar[3] += gs * w(i) * w(j) * w(kk);
      sigma_bar(i, j) += gs * k1 * w(kk);
      sigma_bar(i, kk) += gs * k1 * w(j);
      w_bar(kk) += gs * (k1 * sigma(i, j) + k3 * w(i) * w(j));
      w_bar(j) += gs * (k1 * sigma(i, kk) + k3 * w(i) * w(kk));
      w_bar(i) += gs * k3 * w(j) * w(kk);
    }
  }
  for (Eigen::Index p = 0; p < np; ++p) {
    for (Eigen::Index r = 0; r < np; ++r) {
      const int j = pairs[p].j, kk = pairs[p].k, l = pairs[r].j, m = pairs[r].k;
      const double gs = g(d + p, d + r) * pairs[p].scale * pairs[r].scale;
      sigma_bar(j, l) += gs * sigma(kk, m);
      sigma_bar(kk, m) += gs * sigma(j, l);
      sigma_bar(j, m) += gs * sigma(kk, l);
      sigma_bar(kk, l) += gs * sigma(j, m);
    }
  }
}

}  // namespace privpost
