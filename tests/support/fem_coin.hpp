// Test support: the coin of Williams & McSherry (2010) Sec. 3.2 (docs/histogram-measurements.md B.6-1, B.7): Bernoulli
// records, candidates z = 0.1 .. 0.9 (index j is 0.1 (j + 1)), scores from the likelihood ln p(x | z) either clamped
// into [-1, 0] (the paper's recipe) or rescaled by ln 10 into [-1, -0.046] (spec B.5), and the exact marginal
// likelihood p(z | theta) = sum_k Bin(k; n, theta) softmax_z(kappa u(k)), u_z(k) = k l(z, 1) + (n - k) l(z, 0), which
// depends on the records only through k.
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <cstddef>

#include "privpost/core/math/log_sum_exp.hpp"
#include "privpost/mechanisms/factored_exponential.hpp"

namespace privpost::test {

inline double coin_candidate(std::size_t j) { return 0.1 * static_cast<double>(j + 1); }

/// ln p(x | z_j) clamped into [-1, 0].
struct clamped_coin_score {
  double operator()(std::size_t j, const double& x) const {
    const double p = coin_candidate(j);
    return std::max(-1.0, std::log(x > 0.5 ? p : 1.0 - p));
  }
};
/// ln p(x | z_j) / ln 10, in [-1, -0.046].
struct rescaled_coin_score {
  double operator()(std::size_t j, const double& x) const {
    const double p = coin_candidate(j);
    return std::log(x > 0.5 ? p : 1.0 - p) / std::log(10.0);
  }
};

/// The mechanism with exponent kappa on the declared range [-1, 0] (Delta_u = 1, epsilon = 2 kappa).
template <class Score>
factored_exponential_mechanism<double, Score> coin_mechanism(double kappa) {
  return factored_exponential_mechanism<double, Score>(9, Score{}, interval(-1.0, 0.0), 2.0 * kappa);
}

/// log p(z | k) for every candidate z, at k successes of n.
template <class Score>
Eigen::VectorXd coin_log_release(const factored_exponential_mechanism<double, Score>& m, int k, int n) {
  Eigen::VectorXd u(9);
  for (std::size_t j = 0; j < 9; ++j) u(static_cast<Eigen::Index>(j)) = k * m.score(j, 1.0) + (n - k) * m.score(j, 0.0);
  const Eigen::VectorXd a = m.exponent() * u;
  return (a.array() - detail::log_sum_exp(a)).matrix();
}

/// log p(z | k) for k = 0..n (rows) and every candidate (columns).
template <class Score>
Eigen::MatrixXd coin_log_release_table(const factored_exponential_mechanism<double, Score>& m, int n) {
  Eigen::MatrixXd t(n + 1, 9);
  for (int k = 0; k <= n; ++k) t.row(k) = coin_log_release(m, k, n).transpose();
  return t;
}

/// p(z | theta) exactly: sum_k Bin(k; n, theta) p(z | k), from the table of log p(z | k) (n = rows - 1).
inline double coin_marginal(const Eigen::MatrixXd& log_release, std::size_t z, double theta) {
  const int n = static_cast<int>(log_release.rows()) - 1;
  double p = 0.0;
  for (int k = 0; k <= n; ++k) {
    const double log_binom = std::lgamma(n + 1.0) - std::lgamma(k + 1.0) - std::lgamma(n - k + 1.0) + k * std::log(theta) +
                             (n - k) * std::log1p(-theta);
    p += std::exp(log_binom + log_release(k, static_cast<Eigen::Index>(z)));
  }
  return p;
}

}  // namespace privpost::test
