// privpost/families/glm/poisson_moments.hpp
// Per-record mean mu and covariance V of the Poisson DP-GLM statistic [x; t2(x); y x~; y t2(x~)] under x ~ N(mu_x,
// Sigma), y | x ~ Poisson(exp(eta)), eta = theta~' x~ (Kulkarni et al. 2021, Sec. 3.3.2; the paper's supplement with
// its calculation is not available, E16). Exact, by exponential tilting (docs/design-glm.md Sec. 3.3): with m = theta~' nu,
// w = Sigma~ theta~ and q = theta~' Sigma~ theta~,
//   E[f(x)] = E_{N(nu, Sigma~)}[f],   E[f(x) y] = e^{m + q/2} E_{N(nu + w, Sigma~)}[f],
//   E[f(x) y^2] = e^{m + q/2} E_{N(nu + w, Sigma~)}[f] + e^{2m + 2q} E_{N(nu + 2w, Sigma~)}[f],
// and the Gaussian moments of monomials of degree <= 4 by Stein's recursion (Isserlis' theorem with a mean).
// With the adjoint of <A, mu> + <G, V> for hand-derived gradients (docs/design-glm.md Sec. 3.5). The Poisson DP-GLM's noise-aware
// model (samplers/glm/poisson_moment_model.hpp) is built on them.
#pragma once

#include <Eigen/Core>
#include <array>
#include <cmath>
#include <vector>

#include "privpost/core/errors.hpp"

namespace privpost {

/// The entries of the Poisson statistic over the augmented covariates x~ (x, or (c, x) with an intercept column of
/// public constant c at index 0), in glm_statistic::poisson(d, R, R_y[, c][, y_t2]) order: x (without the constant c),
/// t2(x) (squares first, then cross terms in row order, scale 1 or sqrt(2)), y x~, and, when y_t2, y t2(x). The t2
/// blocks leave out every pair with the intercept (multiples of the x and y x~ entries; see glm_statistic).
class poisson_moment_layout {
 public:
  /// One entry of the statistic: y times 1, x~_i or x~_i x~_j, and its scale.
  struct entry {
    int count;  ///< 1 (x~_i) or 2 (x~_j x~_k)
    /// The augmented index i (j: see below).
    int i, j;  ///< the augmented indices (j unused when count is 1)
    /// The entry's scale factor in the statistic.
    double scale;
    int y;  ///< 0 or 1: the power of y
  };
  /// The indices of the product of entries a and b's covariate monomials (a's, then b's) into idx; returns how many.
  static int product_indices(const entry& a, const entry& b, int (&idx)[4]) noexcept {
    idx[0] = a.i;
    idx[1] = a.j;
    int k = a.count;
    idx[k++] = b.i;
    if (b.count == 2) idx[k++] = b.j;
    return k;
  }

  /// The layout for d covariates, with an intercept column when intercept and the y t^2 entries when y_t2; std::invalid_argument
  /// unless d is in [1, 1000].
  explicit poisson_moment_layout(int d, bool intercept = false, bool y_t2 = true)
      : d_(d), p_(d + (intercept ? 1 : 0)), intercept_(intercept), y_t2_(y_t2) {
    if (d < 1 || d > 1000) throw_invalid("poisson_moment_layout", "d", d, "an integer in [1, 1000]");
    const int first = intercept ? 1 : 0;
    for (int i = first; i < p_; ++i) entries_.push_back({1, i, -1, 1.0, 0});
    auto t2 = [&](int y) {
      for (int j = first; j < p_; ++j) entries_.push_back({2, j, j, 1.0, y});
      for (int j = first; j < p_; ++j)
        for (int k = j + 1; k < p_; ++k) entries_.push_back({2, j, k, std::sqrt(2.0), y});
    };
    t2(0);
    for (int i = 0; i < p_; ++i) entries_.push_back({1, i, -1, 1.0, 1});
    if (y_t2) t2(1);
  }

  int d() const noexcept { return d_; }          ///< covariates
  int augmented() const noexcept { return p_; }  ///< P: d, plus 1 with an intercept
  /// Whether index 0 is the intercept column.
  bool has_intercept() const noexcept { return intercept_; }
  /// Whether the statistic includes the y t^2 entries.
  bool includes_y_t2() const noexcept { return y_t2_; }
  /// Number of entries of the statistic.
  Eigen::Index size() const noexcept { return static_cast<Eigen::Index>(entries_.size()); }
  /// The entries, in statistic order.
  const std::vector<entry>& entries() const noexcept { return entries_; }

 private:
  int d_, p_;
  bool intercept_, y_t2_;
  std::vector<entry> entries_;
};

namespace detail {
// E[x_{idx[0]} ... x_{idx[k-1]}] for x ~ N(m, s), k <= 4, by Isserlis' theorem written out (the sum over the ways to
// pair some factors into covariances and take the means of the rest). Written out rather than by Stein's recursion
// E[x_a R] = m_a E[R] + sum_b s_ab E[R / x_b], which the tests keep as the reference: the recursion's calls and index
// copies made this function half the cost of the Poisson gradient (benchmarks/glm_bench.cpp poisson_glm_gradient).
inline double gaussian_monomial_moment(const Eigen::VectorXd& m, const Eigen::MatrixXd& s, const int* idx, int k) {
  switch (k) {
    case 0:
      return 1.0;
    case 1:
      return m(idx[0]);
    case 2:
      return m(idx[0]) * m(idx[1]) + s(idx[0], idx[1]);
    case 3: {
      const int a = idx[0], b = idx[1], c = idx[2];
      return m(a) * m(b) * m(c) + m(a) * s(b, c) + m(b) * s(a, c) + m(c) * s(a, b);
    }
    default: {
      const int a = idx[0], b = idx[1], c = idx[2], d = idx[3];
      const double ma = m(a), mb = m(b), mc = m(c), md = m(d);
      const double sab = s(a, b), sac = s(a, c), sad = s(a, d), sbc = s(b, c), sbd = s(b, d), scd = s(c, d);
      return ma * mb * mc * md + ma * mb * scd + ma * mc * sbd + ma * md * sbc + mb * mc * sad + mb * md * sac + mc * md * sab +
             sab * scd + sac * sbd + sad * sbc;
    }
  }
}
// Adds coef * dM/dm to m_bar and coef * dM/dSigma (symmetric: 1/2 E[d^2 f / dx_a dx_b] at (a, b)) to s_bar, for
// M = E[x_{idx[0]} ... x_{idx[k-1]}] under N(m, s): dM/dm_a = E[df/dx_a], dM/dSigma_ab = E[d^2 f / dx_a dx_b] / 2.
inline void gaussian_monomial_moment_adjoint(const Eigen::VectorXd& m, const Eigen::MatrixXd& s, const int* idx, int k,
                                             double coef, Eigen::VectorXd& m_bar, Eigen::MatrixXd& s_bar) {
  std::array<int, 4> rest{};
  for (int t = 0; t < k; ++t) {
    int c = 0;
    for (int u = 0; u < k; ++u)
      if (u != t) rest[static_cast<std::size_t>(c++)] = idx[u];
    m_bar(idx[t]) += coef * gaussian_monomial_moment(m, s, rest.data(), k - 1);
    for (int u = t + 1; u < k; ++u) {
      int e = 0;
      for (int v = 0; v < k; ++v)
        if (v != t && v != u) rest[static_cast<std::size_t>(e++)] = idx[v];
      const double half = 0.5 * coef * gaussian_monomial_moment(m, s, rest.data(), k - 2);
      s_bar(idx[t], idx[u]) += half;
      s_bar(idx[u], idx[t]) += half;
    }
  }
}
}  // namespace detail

/// The largest q = theta~' Sigma~ theta~ (and 2m + 2q) for which poisson_moments evaluates: e^{2m + 2q} must stay far
/// from overflow (docs/design-glm.md Sec. 3.3, "Guard").
inline constexpr double poisson_moment_q_limit = 300.0;

/// Workspace of poisson_moments and poisson_moments_adjoint for one layout (the tilted means, the means, the
/// adjoints), so that a sampler evaluates them without heap allocation: one per model copy.
struct poisson_moment_workspace {
  /// Sizes every buffer for layout.
  explicit poisson_moment_workspace(const poisson_moment_layout& layout)
      : w(layout.augmented()),
        m1(layout.augmented()),
        m2(layout.augmented()),
        mu(layout.size()),
        a_eff(layout.size()),
        m0_bar(layout.augmented()),
        m1_bar(layout.augmented()),
        m2_bar(layout.augmented()),
        mt(layout.augmented()),
        s_bar(layout.augmented(), layout.augmented()) {}
  /// @{
  /// Scratch storage of the moments and their adjoint, sized by the constructor; contents between calls are unspecified.
  Eigen::VectorXd w, m1, m2, mu, a_eff, m0_bar, m1_bar, m2_bar, mt;
  Eigen::MatrixXd s_bar;
  /// @}
};

namespace detail {
// The tilting quantities at (nu, theta~, Sigma~): w = Sigma~ theta~, m = theta~' nu, q = theta~' w, the factors
// a1 = e^{m + q/2}, a2 = e^{2m + 2q} and the tilted means m1 = nu + w, m2 = nu + 2w (these three in the workspace);
// ok is false past the guard.
struct poisson_tilt {
  double m = 0.0, q = 0.0, a1 = 0.0, a2 = 0.0;
  bool ok = false;

  poisson_tilt(const Eigen::VectorXd& nu, const Eigen::VectorXd& theta, const Eigen::MatrixXd& sigma,
               poisson_moment_workspace& ws) {
    ws.w.noalias() = sigma * theta;
    m = theta.dot(nu);
    q = theta.dot(ws.w);
    ok = std::isfinite(m) && std::isfinite(q) && q <= poisson_moment_q_limit && 2.0 * m + 2.0 * q <= 2.0 * poisson_moment_q_limit;
    if (!ok) return;
    a1 = std::exp(m + 0.5 * q);
    a2 = std::exp(2.0 * m + 2.0 * q);
    ws.m1 = nu + ws.w;
    ws.m2 = nu + 2.0 * ws.w;
  }
};

// mu_r = S_r E[x^idx_r y^y_r] for every entry (y^0 under N(nu, Sigma~), y^1 tilted); mu has size D.
inline void poisson_means(const poisson_moment_layout& layout, const poisson_tilt& t, const poisson_moment_workspace& ws,
                          const Eigen::VectorXd& nu, const Eigen::MatrixXd& sigma, Eigen::VectorXd& mu) {
  const auto& e = layout.entries();
  for (Eigen::Index r = 0; r < layout.size(); ++r) {
    const auto& er = e[static_cast<std::size_t>(r)];
    const int idx[2] = {er.i, er.j};
    mu(r) = er.scale * (er.y == 0 ? gaussian_monomial_moment(nu, sigma, idx, er.count)
                                  : t.a1 * gaussian_monomial_moment(ws.m1, sigma, idx, er.count));
  }
}
}  // namespace detail

/// mu (size D) and V (D x D) of one record's Poisson statistic for x~ ~ N(nu, Sigma~) (nu = (c, mu_x) with an
/// intercept, Sigma~ with a zero intercept row and column) and coefficients theta~ (size P). Returns false, leaving mu
/// and V unspecified, when q > poisson_moment_q_limit or 2m + 2q > 2 poisson_moment_q_limit (the tilting factor
/// e^{2m + 2q} would come near overflow) or either is not finite; a density returns -infinity then. Throws
/// std::invalid_argument on mismatched sizes.
inline bool poisson_moments(const poisson_moment_layout& layout, const Eigen::VectorXd& nu, const Eigen::VectorXd& theta,
                            const Eigen::MatrixXd& sigma, Eigen::VectorXd& mu, Eigen::MatrixXd& v, poisson_moment_workspace& ws) {
  constexpr const char* f = "poisson_moments";
  const Eigen::Index p = layout.augmented();
  check_size_match(f, "nu", nu.size(), "P", p);
  check_size_match(f, "theta", theta.size(), "P", p);
  check_square_size(f, "Sigma", sigma, "P", p);
  const detail::poisson_tilt t(nu, theta, sigma, ws);
  if (!t.ok) return false;
  auto moment = [&](const int* idx, int k, int y) {
    if (y == 0) return detail::gaussian_monomial_moment(nu, sigma, idx, k);
    const double e1 = t.a1 * detail::gaussian_monomial_moment(ws.m1, sigma, idx, k);
    if (y == 1) return e1;
    return e1 + t.a2 * detail::gaussian_monomial_moment(ws.m2, sigma, idx, k);
  };
  const auto& e = layout.entries();
  const Eigen::Index dd = layout.size();
  mu.resize(dd);  // no-op at the right size
  detail::poisson_means(layout, t, ws, nu, sigma, mu);
  v.resize(dd, dd);
  for (Eigen::Index r = 0; r < dd; ++r) {
    const auto& a = e[static_cast<std::size_t>(r)];
    for (Eigen::Index c = r; c < dd; ++c) {
      const auto& b = e[static_cast<std::size_t>(c)];
      int idx[4];
      const int k = poisson_moment_layout::product_indices(a, b, idx);
      v(r, c) = a.scale * b.scale * moment(idx, k, a.y + b.y) - mu(r) * mu(c);
      v(c, r) = v(r, c);
    }
  }
  return true;
}

/// poisson_moments with its own workspace (allocates; for simulation and tests).
inline bool poisson_moments(const poisson_moment_layout& layout, const Eigen::VectorXd& nu, const Eigen::VectorXd& theta,
                            const Eigen::MatrixXd& sigma, Eigen::VectorXd& mu, Eigen::MatrixXd& v) {
  poisson_moment_workspace ws(layout);
  return poisson_moments(layout, nu, theta, sigma, mu, v, ws);
}

/// The adjoint of F = <a, mu> + sum over ordered (r, c) of g(r, c) V(r, c) at (nu, theta~, Sigma~): adds dF/dnu to
/// nu_bar, dF/dtheta to theta_bar and the symmetric dF/dSigma to sigma_bar (dF = sum over ordered (a, b) of
/// sigma_bar(a, b) dSigma(a, b) for every symmetric dSigma; a caller sums sigma_bar(a, b) dSigma(a, b) / dphi over both
/// positions, as for logistic_moments_adjoint). Returns false, adding nothing, where poisson_moments does. Allocates
/// nothing: the temporaries are in the workspace.
inline bool poisson_moments_adjoint(const poisson_moment_layout& layout, const Eigen::VectorXd& nu, const Eigen::VectorXd& theta,
                                    const Eigen::MatrixXd& sigma, const Eigen::VectorXd& a, const Eigen::MatrixXd& g,
                                    Eigen::VectorXd& nu_bar, Eigen::VectorXd& theta_bar, Eigen::MatrixXd& sigma_bar,
                                    poisson_moment_workspace& ws) {
  constexpr const char* f = "poisson_moments_adjoint";
  const Eigen::Index p = layout.augmented(), dd = layout.size();
  check_size_match(f, "a", a.size(), "D", dd);
  check_square_size(f, "g", g, "D", dd);
  check_size_match(f, "nu_bar", nu_bar.size(), "P", p);
  check_size_match(f, "theta_bar", theta_bar.size(), "P", p);
  check_square_size(f, "sigma_bar", sigma_bar, "P", p);
  const detail::poisson_tilt t(nu, theta, sigma, ws);
  if (!t.ok) return false;
  const double a1 = t.a1, a2 = t.a2;
  const Eigen::VectorXd &w = ws.w, &m1 = ws.m1, &m2 = ws.m2;
  const auto& e = layout.entries();
  Eigen::VectorXd& mu = ws.mu;  // the means alone (V is not needed)
  detail::poisson_means(layout, t, ws, nu, sigma, mu);
  Eigen::VectorXd &m0_bar = ws.m0_bar, &m1_bar = ws.m1_bar, &m2_bar = ws.m2_bar;
  m0_bar.setZero();
  m1_bar.setZero();
  m2_bar.setZero();
  Eigen::MatrixXd& s_bar = ws.s_bar;
  s_bar.setZero();
  double a1_bar = 0.0, a2_bar = 0.0;
  // One term coef * E[x^idx y^y] of F: its derivatives in the tilting factors, the three means and Sigma.
  auto term = [&](const int* idx, int k, int y, double coef) {
    if (coef == 0.0) return;
    if (y == 0) {
      detail::gaussian_monomial_moment_adjoint(nu, sigma, idx, k, coef, m0_bar, s_bar);
      return;
    }
    a1_bar += coef * detail::gaussian_monomial_moment(m1, sigma, idx, k);
    detail::gaussian_monomial_moment_adjoint(m1, sigma, idx, k, coef * a1, m1_bar, s_bar);
    if (y == 2) {
      a2_bar += coef * detail::gaussian_monomial_moment(m2, sigma, idx, k);
      detail::gaussian_monomial_moment_adjoint(m2, sigma, idx, k, coef * a2, m2_bar, s_bar);
    }
  };
  // V(r, c) = S_r S_c E[...] - mu_r mu_c: the mu_r mu_c part moves into the weights of mu. E[...] is symmetric in
  // (r, c): each unordered pair once, with weight g(r, c) + g(c, r).
  Eigen::VectorXd& a_eff = ws.a_eff;
  a_eff = a;
  a_eff.noalias() -= g * mu;
  a_eff.noalias() -= g.transpose() * mu;
  for (Eigen::Index r = 0; r < dd; ++r) {
    const auto& er = e[static_cast<std::size_t>(r)];
    const int idx[2] = {er.i, er.j};
    term(idx, er.count, er.y, a_eff(r) * er.scale);
    for (Eigen::Index c = r; c < dd; ++c) {
      const auto& ec = e[static_cast<std::size_t>(c)];
      int both[4];
      const int k = poisson_moment_layout::product_indices(er, ec, both);
      term(both, k, er.y + ec.y, (c == r ? g(r, r) : g(r, c) + g(c, r)) * er.scale * ec.scale);
    }
  }
  // Chain rule through m = theta' nu, q = theta' Sigma theta, a1 = e^{m + q/2}, a2 = e^{2m + 2q}, m1 = nu + Sigma theta,
  // m2 = nu + 2 Sigma theta.
  const double s1 = a1_bar * a1, s2 = a2_bar * a2;
  nu_bar += m0_bar + m1_bar + m2_bar + (s1 + 2.0 * s2) * theta;
  Eigen::VectorXd& mt = ws.mt;
  mt = m1_bar + 2.0 * m2_bar;
  theta_bar += (s1 + 2.0 * s2) * nu + (s1 + 4.0 * s2) * w;
  theta_bar.noalias() += sigma * mt;
  const double c2 = 0.5 * s1 + 2.0 * s2;
  for (Eigen::Index j = 0; j < p; ++j)
    for (Eigen::Index i = 0; i < p; ++i)
      sigma_bar(i, j) += s_bar(i, j) + c2 * theta(i) * theta(j) + 0.5 * (mt(i) * theta(j) + theta(i) * mt(j));
  return true;
}

/// poisson_moments_adjoint with its own workspace (allocates; for tests).
inline bool poisson_moments_adjoint(const poisson_moment_layout& layout, const Eigen::VectorXd& nu, const Eigen::VectorXd& theta,
                                    const Eigen::MatrixXd& sigma, const Eigen::VectorXd& a, const Eigen::MatrixXd& g,
                                    Eigen::VectorXd& nu_bar, Eigen::VectorXd& theta_bar, Eigen::MatrixXd& sigma_bar) {
  poisson_moment_workspace ws(layout);
  return poisson_moments_adjoint(layout, nu, theta, sigma, a, g, nu_bar, theta_bar, sigma_bar, ws);
}

}  // namespace privpost
