// privpost/families/regression/covariate_moments.hpp
// covariate_moments: second and fourth non-central moments of a design row x~ = (c, x), what Gibbs-SS for regression
// needs of the covariates (001 Sec. 3.4.1): in closed form for x ~ N(mu, Sigma) by Isserlis/Wick, or by Monte Carlo from
// any sampler the user provides (Gibbs-SS-Prior).
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <random>
#include <vector>

#include "privpost/core/errors.hpp"
#include "privpost/families/regression/regression_layout.hpp"

namespace privpost {

/// E[x~_a x~_b] and E[x~_a x~_b x~_c x~_d] for a design row of p columns.
struct covariate_moments {
  /// Columns p of the design row.
  int p = 0;
  /// E[x~_a x~_b], p x p.
  Eigen::MatrixXd m2;
  std::vector<double> m4;  ///< p^4 entries, index ((a p + b) p + c) p + d

  /// E[x~_a x~_b x~_c x~_d].
  double fourth(int a, int b, int c, int d) const { return m4[static_cast<std::size_t>(((a * p + b) * p + c) * p + d)]; }
};

/// Moments of x~ = (c, x) (or x) for x ~ N(mu, Sigma), by Isserlis/Wick for non-central normals:
/// E[x_a x_b x_c x_d] = m_a m_b m_c m_d + the six m m S terms + S_ab S_cd + S_ac S_bd + S_ad S_bc, with the intercept as a
/// coordinate of mean c and variance 0. Written into `out`, reusing its storage and the scratch's (no allocation once
/// sized).
/// Scratch storage of normal_covariate_moments: the mean and covariance of x~.
struct normal_moments_scratch {
  /// The mean of x~.
  Eigen::VectorXd m;
  /// The covariance of x~.
  Eigen::MatrixXd s;
};

inline void normal_covariate_moments(const regression_layout& layout, const Eigen::VectorXd& mu, const Eigen::MatrixXd& sigma,
                                     covariate_moments& out, normal_moments_scratch& scratch) {
  check_size_match("normal_covariate_moments", "mu", mu.size(), "covariates", layout.covariates());
  check_size_match("normal_covariate_moments", "Sigma rows", sigma.rows(), "covariates", layout.covariates());
  check_size_match("normal_covariate_moments", "Sigma cols", sigma.cols(), "covariates", layout.covariates());
  const int p = layout.columns();
  Eigen::VectorXd& m = scratch.m;
  Eigen::MatrixXd& s = scratch.s;
  if (m.size() != p) {
    m.resize(p);
    s.resize(p, p);
  }
  s.setZero();
  if (layout.intercept()) m(0) = layout.intercept_value();
  m.tail(layout.covariates()) = mu;
  s.bottomRightCorner(layout.covariates(), layout.covariates()) = sigma;
  out.p = p;
  if (out.m2.rows() != p || out.m2.cols() != p) out.m2.resize(p, p);
  for (int b = 0; b < p; ++b)
    for (int a = 0; a < p; ++a) out.m2(a, b) = s(a, b) + m(a) * m(b);
  const auto p4 = static_cast<std::size_t>(p) * p * p * p;
  if (out.m4.size() != p4) out.m4.resize(p4);
  for (int a = 0; a < p; ++a)
    for (int b = 0; b < p; ++b)
      for (int c = 0; c < p; ++c)
        for (int d = 0; d < p; ++d) {
          const double v = m(a) * m(b) * m(c) * m(d) + m(a) * m(b) * s(c, d) + m(a) * m(c) * s(b, d) + m(a) * m(d) * s(b, c) +
                           m(b) * m(c) * s(a, d) + m(b) * m(d) * s(a, c) + m(c) * m(d) * s(a, b) + s(a, b) * s(c, d) +
                           s(a, c) * s(b, d) + s(a, d) * s(b, c);
          out.m4[static_cast<std::size_t>(((a * p + b) * p + c) * p + d)] = v;
        }
}

/// normal_covariate_moments() into `out` with temporary scratch storage.
inline void normal_covariate_moments(const regression_layout& layout, const Eigen::VectorXd& mu, const Eigen::MatrixXd& sigma,
                                     covariate_moments& out) {
  normal_moments_scratch scratch;
  normal_covariate_moments(layout, mu, sigma, out, scratch);
}

/// normal_covariate_moments() returning a new value.
inline covariate_moments normal_covariate_moments(const regression_layout& layout, const Eigen::VectorXd& mu,
                                                  const Eigen::MatrixXd& sigma) {
  covariate_moments out;
  normal_covariate_moments(layout, mu, sigma, out);
  return out;
}

/// Moments of x~ estimated from `draws` covariate vectors x = sample(g) (Eigen::VectorXd of size d), with a fixed seed.
template <class Sampler>
covariate_moments monte_carlo_covariate_moments(const regression_layout& layout, Sampler sample, int draws, std::uint64_t seed) {
  if (draws < 2) throw_invalid("monte_carlo_covariate_moments", "draws", draws, "an integer >= 2");
  const int p = layout.columns();
  covariate_moments out;
  out.p = p;
  out.m2 = Eigen::MatrixXd::Zero(p, p);
  out.m4.assign(static_cast<std::size_t>(p) * p * p * p, 0.0);
  std::mt19937_64 g(seed);
  for (int i = 0; i < draws; ++i) {
    const Eigen::VectorXd x = sample(g);
    const Eigen::VectorXd r = layout.design_row(x);
    out.m2 += r * r.transpose();
    for (int a = 0; a < p; ++a)
      for (int b = 0; b < p; ++b)
        for (int c = 0; c < p; ++c) {
          const double abc = r(a) * r(b) * r(c);
          for (int d = 0; d < p; ++d) out.m4[static_cast<std::size_t>(((a * p + b) * p + c) * p + d)] += abc * r(d);
        }
  }
  out.m2 /= draws;
  for (double& v : out.m4) v /= draws;
  return out;
}

}  // namespace privpost
