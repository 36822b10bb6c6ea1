// privpost/samplers/glm/poisson_record_model.hpp
// poisson_record_model: the non-private baseline of the Poisson DP-GLM (docs/design-glm.md Sec. 4.2, "nonprivate"), the exact
// Poisson-regression posterior on the records (glm_record_model with the Poisson likelihood, log link), and record
// simulation from the noise-aware model's generative story (x ~ N(mu_x, Sigma), y ~ Poisson(exp(theta~' x~))).
#pragma once

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <cmath>
#include <optional>

#include "privpost/core/errors.hpp"
#include "privpost/core/random/multivariate_normal.hpp"
#include "privpost/core/random/poisson.hpp"
#include "privpost/samplers/glm/glm_prior.hpp"
#include "privpost/samplers/glm/glm_record_model.hpp"

namespace privpost {

/// The Poisson record likelihood with the log link: y an integer >= 0, log p(y | eta) = y eta - e^eta (up to
/// -log y!, constant in theta), d/d eta = y - e^eta. Counts are read as recorded (no clamp: the reference posterior is
/// that of the true records, not of the release's clamped ones).
struct poisson_record_likelihood {
  /// Name in error messages.
  static constexpr const char* name = "poisson_record_model";
  /// The response as the likelihood reads it; std::invalid_argument unless it is an integer >= 0.
  static double admit(double y) {
    if (!(std::isfinite(y) && y >= 0.0 && y == std::floor(y))) throw_invalid(name, "response", y, "an integer >= 0");
    return y;
  }
  /// log p(y | eta) up to -log y!, with its derivative in d_eta.
  static double log_likelihood(double eta, double y, double& d_eta) {
    const double mean = std::exp(eta);
    d_eta = y - mean;
    return y * eta - mean;
  }
};

/// The exact Poisson-regression posterior of theta given records (rows of x; with an intercept, a column of its
/// constant c first) and counts y (glm_record_model: dimension columns + 1, parameter_vector(u) = theta).
using poisson_record_model = glm_record_model<poisson_record_likelihood>;

/// n Poisson records at the true parameters of the noise-aware model: x ~ N(mu_x, Sigma) (mu_x = truth.mean, zero when
/// empty; no clipping: bounding records is the release side's job, glm_statistic), y ~ Poisson(exp(theta~' x~)) with
/// x~ = (c, x) when intercept holds c (then truth.theta = (theta_0, theta), size d + 1), else x~ = x. Rows of the
/// result's x are the d covariates (without the intercept column). Throws std::domain_error when a rate exceeds
/// draw_poisson's 1e12.
template <random_engine G>
glm_records simulate_poisson_records(G& g, const glm_parameters& truth, Eigen::Index n,
                                     std::optional<double> intercept = std::nullopt) {
  constexpr const char* f = "simulate_poisson_records";
  if (n < 1) throw_invalid(f, "number of records", static_cast<double>(n), "at least 1");
  const Eigen::Index d = truth.sigma.rows();
  if (d < 1 || truth.sigma.cols() != d) throw_invalid(f, "Sigma rows", static_cast<double>(d), "a square matrix, d >= 1");
  const Eigen::Index o = intercept ? 1 : 0;
  check_size_match(f, "theta", truth.theta.size(), "d (+ 1 with an intercept)", d + o);
  if (truth.mean.size() != 0) check_size_match(f, "mean", truth.mean.size(), "d", d);
  if (intercept) check_positive_finite(f, "intercept constant", *intercept);
  const Eigen::LLT<Eigen::MatrixXd> llt(truth.sigma);
  if (llt.info() != Eigen::Success) throw_domain(f, "Sigma positive definite", 0.0, "a positive definite covariance");
  const Eigen::MatrixXd l = llt.matrixL();
  glm_records out{Eigen::MatrixXd(n, d), Eigen::VectorXd(n)};
  const Eigen::VectorXd centre = truth.mean.size() != 0 ? truth.mean : Eigen::VectorXd::Zero(d);
  Eigen::VectorXd x(d);
  for (Eigen::Index i = 0; i < n; ++i) {
    draw_multivariate_normal(g, centre, l, x);
    out.x.row(i) = x.transpose();
    const double eta = truth.theta.tail(d).dot(x) + (intercept ? truth.theta(0) * *intercept : 0.0);
    const double rate = std::exp(eta);
    if (!(rate <= 1e12)) throw_domain(f, "Poisson rate exp(theta~' x~)", rate, "at most 1e12");
    out.y(i) = draw_poisson(g, rate);
  }
  return out;
}

}  // namespace privpost
