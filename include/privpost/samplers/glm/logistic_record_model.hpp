// privpost/samplers/glm/logistic_record_model.hpp
// logistic_record_model: the non-private baseline of the logistic DP-GLM (docs/design-glm.md Sec. 4.2, "nonprivate"), the
// exact logistic-regression posterior on the records (glm_record_model with the logistic likelihood), and record
// simulation.
#pragma once

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <cmath>
#include <cstdint>
#include <limits>

#include "privpost/core/errors.hpp"
#include "privpost/core/random/multivariate_normal.hpp"
#include "privpost/core/random/uniform.hpp"
#include "privpost/samplers/glm/glm_prior.hpp"
#include "privpost/samplers/glm/glm_record_model.hpp"

namespace privpost {

/// The logistic record likelihood: y in {-1, +1} (0 read as -1, the release side's mapping),
/// log p(y | eta) = log logistic(y eta) = -softplus(-y eta), d/d eta = y logistic(-y eta).
struct logistic_record_likelihood {
  /// Name in error messages.
  static constexpr const char* name = "logistic_record_model";
  /// The response as the likelihood reads it: 1 stays 1, 0 and -1 become -1; std::invalid_argument otherwise.
  static double admit(double y) {
    if (y == 1.0) return 1.0;
    if (y == -1.0 || y == 0.0) return -1.0;
    throw_invalid(name, "response", y, "0 or -1 (negative), 1 (positive)");
  }
  /// log p(y | eta), with its derivative in d_eta.
  static double log_likelihood(double eta, double y, double& d_eta) {
    const double t = y * eta;
    d_eta = y / (1.0 + std::exp(t));
    return t > 0.0 ? -std::log1p(std::exp(-t)) : t - std::log1p(std::exp(t));
  }
};

/// The exact logistic-regression posterior of theta given records (rows of x) and responses y in {-1, +1}
/// (glm_record_model; dimension d + 1, parameter_vector(u) = theta).
using logistic_record_model = glm_record_model<logistic_record_likelihood>;

/// Records of the logistic GLM: rows of x and responses y in {-1, +1}.
using logistic_records = glm_records;

/// n records simulated at the true parameters: x ~ N(0, Sigma) (no clipping: bounding records is the release side's
/// job, glm_statistic), y = +1 with probability logistic(theta^T x), else -1. For tests, studies and examples.
template <random_engine G>
logistic_records simulate_logistic_records(G& g, const glm_parameters& truth, Eigen::Index n) {
  constexpr const char* f = "simulate_logistic_records";
  if (n < 1) throw_invalid(f, "number of records", static_cast<double>(n), "at least 1");
  const Eigen::Index d = truth.theta.size();
  check_size_match(f, "Sigma", truth.sigma.rows(), "d", d);
  const Eigen::LLT<Eigen::MatrixXd> llt(truth.sigma);
  if (llt.info() != Eigen::Success) throw_domain(f, "Sigma positive definite", 0.0, "a positive definite covariance");
  const Eigen::MatrixXd l = llt.matrixL();
  logistic_records out{Eigen::MatrixXd(n, d), Eigen::VectorXd(n)};
  const Eigen::VectorXd zero = Eigen::VectorXd::Zero(d);
  Eigen::VectorXd x(d);
  for (Eigen::Index i = 0; i < n; ++i) {
    draw_multivariate_normal(g, zero, l, x);
    out.x.row(i) = x.transpose();
    out.y(i) = draw_uniform(g) < 1.0 / (1.0 + std::exp(-truth.theta.dot(x))) ? 1.0 : -1.0;
  }
  return out;
}

}  // namespace privpost
