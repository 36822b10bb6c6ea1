// privpost/families/glm/logistic_moments.hpp
// Per-record mean mu and covariance V of the logistic statistic [y x~; t2(x~)] under x ~ N(mu_x, Sigma), y | x logistic
// with linear predictor eta = theta~' x~ (Kulkarni et al. 2021, Sec. 3.2 for zero-mean covariates without intercept;
// docs/design-glm.md Sec. 3.2 for the compact form from Stein's lemma and Sec. 3.7 for the intercept and covariate mean), and
// the adjoint of <A, mu> + <G, V> for hand-derived gradients (docs/design-glm.md Sec. 3.5, step 2).
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <utility>
#include <vector>

#include "privpost/core/errors.hpp"
#include "privpost/families/glm/logistic_link.hpp"

namespace privpost {

/// The entries of the logistic statistic as the moment formulas see them, over the augmented covariates x~ (x, or
/// (c, x) with an intercept column of public constant c at index 0): p = d (+ 1) entries y x~_i, then one per pair
/// (j, k) of x~ (squares first, then cross terms in row order) with scale 1 or sqrt(2), without the intercept's
/// constant square c^2 (its sum N c^2 is public and not released). Matches glm_statistic::logistic(d, R[, c]).
class logistic_moment_layout {
 public:
  /// The layout for d covariates, with an intercept column when intercept; std::invalid_argument unless d is in [1, 1000].
  explicit logistic_moment_layout(int d, bool intercept = false) : d_(d), p_(d + (intercept ? 1 : 0)), intercept_(intercept) {
    if (d < 1 || d > 1000) throw_invalid("logistic_moment_layout", "d", d, "an integer in [1, 1000]");
    for (int j = intercept ? 1 : 0; j < p_; ++j) pairs_.push_back({j, j, 1.0});
    for (int j = 0; j < p_; ++j)
      for (int k = j + 1; k < p_; ++k) pairs_.push_back({j, k, std::sqrt(2.0)});
  }
  /// One pair (j, k) of augmented covariates and its scale (1 for a square, sqrt(2) for a cross term).
  struct pair_entry {
    /// @{
    /// The pair's indices j <= k and scale.
    int j, k;
    double scale;
    /// @}
  };
  int d() const noexcept { return d_; }          ///< covariates
  int augmented() const noexcept { return p_; }  ///< p: d, plus 1 with an intercept
  /// Whether index 0 is the intercept column.
  bool has_intercept() const noexcept { return intercept_; }
  /// Number of entries of the statistic.
  Eigen::Index size() const noexcept { return p_ + static_cast<Eigen::Index>(pairs_.size()); }
  /// The pair entries, in statistic order after the p linear ones.
  const std::vector<pair_entry>& pairs() const noexcept { return pairs_; }

 private:
  int d_, p_;
  bool intercept_;
  std::vector<pair_entry> pairs_;
};

/// Workspace of the moment map for one layout: E = Sigma + nu nu' (the second moments of x~) and its adjoint, the
/// products pi_r = S_jk nu_j nu_k per pair and theirs, and the adjoint of the (y x~, t2) block. One per model copy.
struct logistic_moment_workspace {
  /// Sizes every buffer for layout.
  explicit logistic_moment_workspace(const logistic_moment_layout& layout)
      : e(layout.augmented(), layout.augmented()),
        e_bar(layout.augmented(), layout.augmented()),
        pi(static_cast<Eigen::Index>(layout.pairs().size())),
        pi_bar(static_cast<Eigen::Index>(layout.pairs().size())),
        mu_bar(layout.augmented()),
        scratch(layout.augmented()),
        b(layout.augmented(), static_cast<Eigen::Index>(layout.pairs().size())),
        bt_nu(static_cast<Eigen::Index>(layout.pairs().size())),
        bt_w(static_cast<Eigen::Index>(layout.pairs().size())),
        et_b(layout.augmented(), static_cast<Eigen::Index>(layout.pairs().size())),
        st_b(layout.augmented(), static_cast<Eigen::Index>(layout.pairs().size())) {}
  /// E = Sigma + nu nu^T, the raw second moment of x~ ~ N(nu, Sigma), into e.
  const Eigen::MatrixXd& raw_second_moment(const Eigen::VectorXd& nu, const Eigen::MatrixXd& sigma) {
    e = sigma;
    e.noalias() += nu * nu.transpose();
    return e;
  }
  /// @{
  /// Scratch storage of the moments and their adjoint, sized by the constructor; contents between calls are unspecified.
  Eigen::MatrixXd e, e_bar;
  Eigen::VectorXd pi, pi_bar, mu_bar, scratch;
  Eigen::MatrixXd b;
  Eigen::VectorXd bt_nu, bt_w;
  Eigen::MatrixXd et_b, st_b;
  /// @}
};

/// mu and V (per record) of the layout's entries u_i = y x~_i and v_r = S_r x~_j x~_k (pair r = (j, k)), with
/// nu = E[x~] (c first with an intercept), Sigma~ = Cov(x~) (zero row and column for the intercept), w = Sigma~ theta~,
/// E = Sigma~ + nu nu' and the link functionals k at (m_eta, q) = (theta~' nu, theta~' Sigma~ theta~). From Stein's
/// lemma on x~ - nu (E[(x_i - nu_i) f(x)] = sum_l Sigma_il E[d_l f(x)], docs/design-glm.md Sec. 3.2, 3.7):
///   mu(u_i) = kappa0 nu_i + kappa1 w_i,   mu(v_r) = S_r E_jk,   V(u_i, u_l) = E_il - mu(u_i) mu(u_l)   (y^2 = 1),
///   V(u_i, v_r) = S_r [kappa1 (E_ij w_k + E_ik w_j) + kappa0 (Sigma_ik nu_j + Sigma_ij nu_k)
///                      + kappa2 (nu_i w_j w_k + w_i nu_j w_k + w_i w_j nu_k) + kappa3 w_i w_j w_k],
///   V(v_r, v_c) = S_r S_c Cov(x_j x_k, x_l x_m) = S_r S_c (E_jl E_km + E_jm E_kl) - 2 pi_r pi_c,  pi_r = S_r nu_j nu_k.
/// With nu = 0 (kappa_0 = kappa_2 = 0 at m_eta = 0) these are the paper's zero-mean formulas. mu and V must have the
/// layout's size; nothing is allocated (ws must be built for this layout).
inline void logistic_moments(const logistic_moment_layout& layout, const Eigen::VectorXd& nu, const Eigen::VectorXd& w,
                             const Eigen::MatrixXd& sigma, const link_functionals& k, Eigen::VectorXd& mu, Eigen::MatrixXd& v,
                             logistic_moment_workspace& ws) {
  const int p = layout.augmented();
  const auto& pairs = layout.pairs();
  const Eigen::Index np = static_cast<Eigen::Index>(pairs.size());
  const Eigen::MatrixXd& e = ws.raw_second_moment(nu, sigma);
  mu.head(p) = k[0] * nu + k[1] * w;
  for (Eigen::Index r = 0; r < np; ++r) {
    mu(p + r) = pairs[r].scale * e(pairs[r].j, pairs[r].k);
    ws.pi(r) = pairs[r].scale * nu(pairs[r].j) * nu(pairs[r].k);
  }
  v.topLeftCorner(p, p) = e;
  v.topLeftCorner(p, p).noalias() -= mu.head(p) * mu.head(p).transpose();
  for (Eigen::Index r = 0; r < np; ++r) {
    const int j = pairs[r].j, kk = pairs[r].k;
    const double sc = pairs[r].scale;
    // Column r of the (u, v) block: a combination of columns of E and Sigma and of nu and w.
    auto col = v.col(p + r).head(p);
    col = (sc * k[1] * w(kk)) * e.col(j) + (sc * k[1] * w(j)) * e.col(kk) + (sc * k[0] * nu(j)) * sigma.col(kk) +
          (sc * k[0] * nu(kk)) * sigma.col(j) + (sc * k[2] * w(j) * w(kk)) * nu +
          (sc * (k[2] * (nu(j) * w(kk) + nu(kk) * w(j)) + k[3] * w(j) * w(kk))) * w;
    v.row(p + r).head(p) = col.transpose();
  }
  for (Eigen::Index c = 0; c < np; ++c) {
    const int l = pairs[c].j, m = pairs[c].k;
    for (Eigen::Index r = c; r < np; ++r) {
      const int j = pairs[r].j, kk = pairs[r].k;
      const double value =
          pairs[r].scale * pairs[c].scale * (e(j, l) * e(kk, m) + e(j, m) * e(kk, l)) - 2.0 * ws.pi(r) * ws.pi(c);
      v(p + r, p + c) = value;
      v(p + c, p + r) = value;
    }
  }
}

/// As above with a workspace allocated on the spot (for occasional use; samplers keep a workspace).
inline void logistic_moments(const logistic_moment_layout& layout, const Eigen::VectorXd& nu, const Eigen::VectorXd& w,
                             const Eigen::MatrixXd& sigma, const link_functionals& k, Eigen::VectorXd& mu, Eigen::MatrixXd& v) {
  logistic_moment_workspace ws(layout);
  logistic_moments(layout, nu, w, sigma, k, mu, v, ws);
}

/// The adjoint of F = <a, mu> + sum over ordered (e, f) of g(e, f) V(e, f): adds dF/dnu to nu_bar, dF/dw to w_bar,
/// dF/dSigma to sigma_bar (every read of Sigma_ab counted at (a, b), so callers add both positions of a symmetric
/// Sigma) and dF/dkappa_j to k_bar[j], j = 0..3. g is typically symmetric (the adjoint of a Gaussian log density).
/// Column operations throughout (no per-entry scatter but E_bar's); nothing is allocated (ws built for this layout).
inline void logistic_moments_adjoint(const logistic_moment_layout& layout, const Eigen::VectorXd& nu, const Eigen::VectorXd& w,
                                     const Eigen::MatrixXd& sigma, const link_functionals& k, const Eigen::VectorXd& a,
                                     const Eigen::MatrixXd& g, Eigen::VectorXd& nu_bar, Eigen::VectorXd& w_bar,
                                     Eigen::MatrixXd& sigma_bar, link_functionals& k_bar, logistic_moment_workspace& ws) {
  const int p = layout.augmented();
  const auto& pairs = layout.pairs();
  const Eigen::Index np = static_cast<Eigen::Index>(pairs.size());
  const Eigen::MatrixXd& e = ws.raw_second_moment(nu, sigma);
  auto& e_bar = ws.e_bar;
  e_bar.setZero();

  // mu(u) = kappa0 nu + kappa1 w and V(u, u) = E - mu_u mu_u': their bar mu_bar = a_u - (G_uu + G_uu') mu_u.
  ws.mu_bar = k[0] * nu + k[1] * w;  // mu_u, turned into its bar below
  const auto guu = g.topLeftCorner(p, p);
  e_bar += guu;
  ws.scratch.noalias() = guu * ws.mu_bar;
  ws.scratch.noalias() += guu.transpose() * ws.mu_bar;
  ws.mu_bar = a.head(p) - ws.scratch;
  nu_bar += k[0] * ws.mu_bar;
  w_bar += k[1] * ws.mu_bar;
  k_bar[0] += ws.mu_bar.dot(nu);
  k_bar[1] += ws.mu_bar.dot(w);
  for (Eigen::Index r = 0; r < np; ++r) e_bar(pairs[r].j, pairs[r].k) += a(p + r) * pairs[r].scale;

  // The (u, v) block: B_ir = S_r (G(i, p + r) + G(p + r, i)), both positions holding the same formula.
  for (Eigen::Index r = 0; r < np; ++r) ws.b.col(r) = pairs[r].scale * (g.col(p + r).head(p) + g.row(p + r).head(p).transpose());
  ws.et_b.noalias() = e.transpose() * ws.b;      // (E' B)_jr = sum_i E_ij B_ir
  ws.st_b.noalias() = sigma.transpose() * ws.b;  // (Sigma' B)_jr
  ws.bt_nu.noalias() = ws.b.transpose() * nu;
  ws.bt_w.noalias() = ws.b.transpose() * w;
  for (Eigen::Index r = 0; r < np; ++r) {
    const int j = pairs[r].j, kk = pairs[r].k;
    const auto br = ws.b.col(r);
    const double wj = w(j), wk = w(kk), nj = nu(j), nk = nu(kk);
    const double ej = ws.et_b(j, r), ek = ws.et_b(kk, r), sj = ws.st_b(j, r), sk = ws.st_b(kk, r);
    const double bn = ws.bt_nu(r), bw = ws.bt_w(r);
    // kappa1 (E_ij w_k + E_ik w_j)
    e_bar.col(j) += (k[1] * wk) * br;
    e_bar.col(kk) += (k[1] * wj) * br;
    w_bar(kk) += k[1] * ej;
    w_bar(j) += k[1] * ek;
    k_bar[1] += ej * wk + ek * wj;
    // kappa0 (Sigma_ik nu_j + Sigma_ij nu_k)
    sigma_bar.col(kk) += (k[0] * nj) * br;
    sigma_bar.col(j) += (k[0] * nk) * br;
    nu_bar(j) += k[0] * sk;
    nu_bar(kk) += k[0] * sj;
    k_bar[0] += sk * nj + sj * nk;
    // kappa2 (nu_i w_j w_k + w_i (nu_j w_k + w_j nu_k))
    nu_bar += (k[2] * wj * wk) * br;
    w_bar += (k[2] * (nj * wk + wj * nk)) * br;
    nu_bar(j) += k[2] * bw * wk;
    nu_bar(kk) += k[2] * bw * wj;
    w_bar(j) += k[2] * (bn * wk + bw * nk);
    w_bar(kk) += k[2] * (bn * wj + bw * nj);
    k_bar[2] += bn * wj * wk + bw * (nj * wk + wj * nk);
    // kappa3 w_i w_j w_k
    w_bar += (k[3] * wj * wk) * br;
    w_bar(j) += k[3] * bw * wk;
    w_bar(kk) += k[3] * bw * wj;
    k_bar[3] += bw * wj * wk;
  }

  // The (v, v) block through E and pi.
  for (Eigen::Index r = 0; r < np; ++r) ws.pi(r) = pairs[r].scale * nu(pairs[r].j) * nu(pairs[r].k);
  ws.pi_bar.noalias() = -2.0 * g.bottomRightCorner(np, np) * ws.pi;  // two products: a sum times a vector would allocate
  ws.pi_bar.noalias() -= 2.0 * g.bottomRightCorner(np, np).transpose() * ws.pi;
  // V(v_r, v_c) = V(v_c, v_r): each unordered pair once, with the sum of both positions' adjoints.
  for (Eigen::Index c = 0; c < np; ++c) {
    const int l = pairs[c].j, m = pairs[c].k;
    const double gcc = g(p + c, p + c) * pairs[c].scale * pairs[c].scale;
    e_bar(l, l) += gcc * e(m, m);
    e_bar(m, m) += gcc * e(l, l);
    e_bar(l, m) += gcc * e(m, l);
    e_bar(m, l) += gcc * e(l, m);
    for (Eigen::Index r = c + 1; r < np; ++r) {
      const int j = pairs[r].j, kk = pairs[r].k;
      const double b = (g(p + r, p + c) + g(p + c, p + r)) * pairs[r].scale * pairs[c].scale;
      e_bar(j, l) += b * e(kk, m);
      e_bar(kk, m) += b * e(j, l);
      e_bar(j, m) += b * e(kk, l);
      e_bar(kk, l) += b * e(j, m);
    }
  }
  for (Eigen::Index r = 0; r < np; ++r) {
    const double b = ws.pi_bar(r) * pairs[r].scale;
    nu_bar(pairs[r].j) += b * nu(pairs[r].k);
    nu_bar(pairs[r].k) += b * nu(pairs[r].j);
  }
  // E = Sigma + nu nu'.
  sigma_bar += e_bar;
  nu_bar.noalias() += e_bar * nu;
  nu_bar.noalias() += e_bar.transpose() * nu;
}

/// As above with a workspace allocated on the spot (for occasional use; samplers keep a workspace).
inline void logistic_moments_adjoint(const logistic_moment_layout& layout, const Eigen::VectorXd& nu, const Eigen::VectorXd& w,
                                     const Eigen::MatrixXd& sigma, const link_functionals& k, const Eigen::VectorXd& a,
                                     const Eigen::MatrixXd& g, Eigen::VectorXd& nu_bar, Eigen::VectorXd& w_bar,
                                     Eigen::MatrixXd& sigma_bar, link_functionals& k_bar) {
  logistic_moment_workspace ws(layout);
  logistic_moments_adjoint(layout, nu, w, sigma, k, a, g, nu_bar, w_bar, sigma_bar, k_bar, ws);
}

}  // namespace privpost
