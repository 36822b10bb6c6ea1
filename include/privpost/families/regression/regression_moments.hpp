// privpost/families/regression/regression_moments.hpp
// regression_statistic_moments: mean and covariance of one record's t(x, y) = unique entries of u u^T, u = (x~, y),
// y = theta^T x~ + e, e ~ N(0, sigma^2), given the covariates' second and fourth moments (001 Eqs. 2-3; dissertation
// App. C), for any number of covariates, on the unique entries only (so the covariance is not made singular by duplicates).
#pragma once

#include <Eigen/Core>
#include <array>
#include <vector>

#include "privpost/core/errors.hpp"
#include "privpost/families/regression/covariate_moments.hpp"
#include "privpost/families/regression/regression_layout.hpp"

namespace privpost {

namespace detail {

// E[prod of u over the index list] for up to four indices, where index p is y. The y's expand as theta^T x~ + e; odd
// powers of e vanish, E[e^2] = sigma^2, E[e^4] = 3 sigma^4. t1..t4 hold the theta-contractions of the x~ moments.
struct regression_contractions {
  int p = 0;
  double s2 = 0.0;           // sigma^2
  Eigen::VectorXd m2_theta;  // sum_k theta_k m2(a, k)
  double m2_tt = 0.0;        // theta^T m2 theta
  std::vector<double> m4_t;  // sum_k theta_k m4(a, b, c, k): p^3
  Eigen::MatrixXd m4_tt;     // sum_kl theta_k theta_l m4(a, b, k, l)
  Eigen::VectorXd m4_ttt;    // sum_klm ... m4(a, k, l, m)
  double m4_tttt = 0.0;

  regression_contractions() = default;
  regression_contractions(const covariate_moments& cm, const Eigen::VectorXd& theta, double sigma2) {
    compute(cm, theta, sigma2);
  }

  /// Recomputes the contractions for (theta, sigma^2), reusing the storage (no allocation once sized for p).
  void compute(const covariate_moments& cm, const Eigen::VectorXd& theta, double sigma2) {
    p = cm.p;
    s2 = sigma2;
    const auto pp = static_cast<std::size_t>(p);
    if (m2_theta.size() != p) {
      m2_theta.resize(p);
      m4_tt.resize(p, p);
      m4_ttt.resize(p);
    }
    if (m4_t.size() != pp * pp * pp) m4_t.assign(pp * pp * pp, 0.0);
    m2_theta.noalias() = cm.m2 * theta;
    m2_tt = theta.dot(m2_theta);
    m4_tt.setZero();
    for (int a = 0; a < p; ++a)
      for (int b = 0; b < p; ++b)
        for (int c = 0; c < p; ++c) {
          double v = 0.0;
          for (int k = 0; k < p; ++k) v += theta(k) * cm.fourth(a, b, c, k);
          m4_t[static_cast<std::size_t>((a * p + b) * p + c)] = v;
          m4_tt(a, b) += theta(c) * v;
        }
    m4_ttt.noalias() = m4_tt * theta;
    m4_tttt = theta.dot(m4_ttt);
  }

  double t3(int a, int b, int c) const { return m4_t[static_cast<std::size_t>((a * p + b) * p + c)]; }
};

// E[u_i u_j] with i <= j.
inline double second_moment(const covariate_moments& cm, const regression_contractions& t, int i, int j) {
  const int y = cm.p;
  if (j < y) return cm.m2(i, j);
  if (i < y) return t.m2_theta(i);
  return t.m2_tt + t.s2;
}

// E[u_a u_b u_c u_d]: sort x-indices first; r = number of y's.
inline double fourth_moment(const covariate_moments& cm, const regression_contractions& t, std::array<int, 4> idx) {
  const int y = cm.p;
  std::array<int, 4> x{};
  int nx = 0;
  for (int v : idx)
    if (v < y) x[static_cast<std::size_t>(nx++)] = v;
  const double s2 = t.s2;
  switch (4 - nx) {  // number of y's
    case 0:
      return cm.fourth(x[0], x[1], x[2], x[3]);
    case 1:
      return t.t3(x[0], x[1], x[2]);
    case 2:
      return t.m4_tt(x[0], x[1]) + s2 * cm.m2(x[0], x[1]);
    case 3:
      return t.m4_ttt(x[0]) + 3.0 * s2 * t.m2_theta(x[0]);
    default:
      return t.m4_tttt + 6.0 * s2 * t.m2_tt + 3.0 * s2 * s2;
  }
}

}  // namespace detail

/// Writes E[t] and Cov[t] (layout.size() entries) of one record given (theta, sigma^2) and the covariates' moments;
/// `work` is reused storage (mean, cov and work preallocated: no allocation).
inline void regression_statistic_moments(const regression_layout& layout, const Eigen::VectorXd& theta, double sigma2,
                                         const covariate_moments& cm, Eigen::VectorXd& mean, Eigen::MatrixXd& cov,
                                         detail::regression_contractions& work) {
  check_size_match("regression_statistic_moments", "theta", theta.size(), "design columns", layout.columns());
  check_size_match("regression_statistic_moments", "moment columns", cm.p, "design columns", layout.columns());
  work.compute(cm, theta, sigma2);
  const detail::regression_contractions& t = work;
  const int n = layout.size();
  if (mean.size() != n) mean.resize(n);
  if (cov.rows() != n || cov.cols() != n) cov.resize(n, n);
  for (int k = 0; k < n; ++k) mean(k) = detail::second_moment(cm, t, layout.pair(k).first, layout.pair(k).second);
  for (int k = 0; k < n; ++k) {
    const auto [a, b] = layout.pair(k);
    for (int l = k; l < n; ++l) {
      const auto [c, d] = layout.pair(l);
      cov(k, l) = cov(l, k) = detail::fourth_moment(cm, t, {a, b, c, d}) - mean(k) * mean(l);
    }
  }
}

/// regression_statistic_moments with its own (temporary) storage.
inline void regression_statistic_moments(const regression_layout& layout, const Eigen::VectorXd& theta, double sigma2,
                                         const covariate_moments& cm, Eigen::VectorXd& mean, Eigen::MatrixXd& cov) {
  detail::regression_contractions work;
  regression_statistic_moments(layout, theta, sigma2, cm, mean, cov, work);
}

}  // namespace privpost
