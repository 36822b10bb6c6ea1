// privpost/inference/synthetic_glm.hpp
// Synthetic logistic and Poisson regression records from the noise-aware DP-GLM posterior (privpost/inference/
// synthetic.hpp has the combining rules).
//
// The moment-matched GLM model (samplers/glm/glm_moment_model.hpp) infers the covariate law with the coefficients:
// x ~ N(mu_x, diag(tau) Omega diag(tau)) (mu_x = 0 without a covariate mean), and its parameter_vector is (theta~, tau,
// Omega_ij for i > j in row order, mu_x), so each posterior draw determines a record law. A record is drawn as the
// release saw records: x from the covariate law, then moved into the release's public bounds (each coordinate clamped to
// the declared box, or the vector scaled onto the ball of the declared radius), then y given that x: logistic
// P(y = +1 | x) = 1 / (1 + exp(-theta~^T x~)) with y in {-1, +1}, Poisson y ~ Poisson(exp(theta~^T x~)) clamped to the
// declared largest count. (The model's moments ignore the clamping, as the release's statistic does not; drawing y given
// the clamped x keeps the fitted regression's own link exact on the records.)
//
//     const auto p = glm_synthetic_parameter::from_vector(d, intercept, covariate_mean, draw);
//     const Eigen::MatrixXd records = synthetic_glm_records(glm_kind::logistic, p, limits, 10 * n, g);  // x_1..x_d, y
//     const auto fit = logistic_fit(records, 1.0);   // the analyst's estimator on a set: coefficients, covariance
#pragma once

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/random/normal.hpp"
#include "privpost/core/random/poisson.hpp"
#include "privpost/core/random/uniform.hpp"
#include "privpost/families/glm/glm_statistic.hpp"

namespace privpost {

/// One posterior draw of the DP-GLM model with its covariate law: linear predictor theta~^T x~ (x~ = (c, x) with an
/// intercept), x ~ N(mean, diag(scales) correlation diag(scales)).
struct glm_synthetic_parameter {
  Eigen::VectorXd coefficients;  ///< theta~ (P = d, or d + 1 with the intercept's coefficient first)
  Eigen::VectorXd scales;        ///< tau (d), the covariates' sds
  Eigen::MatrixXd correlation;   ///< Omega (d x d)
  Eigen::VectorXd mean;          ///< mu_x (d; zeros for a model without a covariate mean)
  /// The intercept column's public constant c; none without an intercept.
  std::optional<double> intercept;

  /// The length of glm_moment_model's parameter_vector: P + d + d (d - 1) / 2 (+ d with a covariate mean).
  static Eigen::Index vector_size(int d, bool intercept, bool covariate_mean) noexcept {
    const Eigen::Index dd = d;
    return dd + (intercept ? 1 : 0) + dd + dd * (dd - 1) / 2 + (covariate_mean ? dd : 0);
  }

  /// The parameter from a draw of glm_moment_model's parameter_vector for d covariates, an intercept of constant c (none:
  /// no intercept) and with or without a covariate mean. std::invalid_argument on d < 1, another length, a value that is
  /// not finite, a scale <= 0, or a correlation matrix that is not positive definite.
  static glm_synthetic_parameter from_vector(int d, std::optional<double> intercept, bool covariate_mean,
                                             const Eigen::VectorXd& v) {
    constexpr const char* who = "glm_synthetic_parameter::from_vector";
    if (d < 1) throw_invalid(who, "d", d, "an integer >= 1");
    if (intercept) check_positive_finite(who, "intercept constant", *intercept);
    check_size_match(who, "vector", v.size(), "P + d + d(d - 1)/2 (+ d)", vector_size(d, intercept.has_value(), covariate_mean));
    for (Eigen::Index i = 0; i < v.size(); ++i) check_finite(who, "entry " + std::to_string(i), v(i));
    const int p = d + (intercept ? 1 : 0);
    glm_synthetic_parameter out;
    out.intercept = intercept;
    out.coefficients = v.head(p);
    out.scales = v.segment(p, d);
    for (int j = 0; j < d; ++j) check_positive_finite(who, "tau_" + std::to_string(j + 1), out.scales(j));
    out.correlation = Eigen::MatrixXd::Identity(d, d);
    Eigen::Index k = p + d;
    for (int i = 1; i < d; ++i)
      for (int j = 0; j < i; ++j) out.correlation(i, j) = out.correlation(j, i) = v(k++);
    if (Eigen::LLT<Eigen::MatrixXd>(out.correlation).info() != Eigen::Success)
      throw std::invalid_argument(std::string(who) + ": the correlation matrix Omega is not positive definite");
    out.mean = covariate_mean ? Eigen::VectorXd(v.tail(d)) : Eigen::VectorXd::Zero(d);
    return out;
  }
};

/// The public bounds a release put on its records (infinity: none).
struct glm_record_limits {
  double coordinate = std::numeric_limits<double>::infinity();  ///< every covariate clamped into [-coordinate, coordinate]
  double radius = std::numeric_limits<double>::infinity();      ///< x scaled onto the ball of this radius when longer
  double count = std::numeric_limits<double>::infinity();       ///< Poisson counts clamped to [0, count]
};

/// `records` synthetic records (1 to 1e9) of the GLM `kind` at parameter p, moved into `limits` as a release moves
/// records (file comment): a matrix of records rows and d + 1 columns (x_1..x_d, y), y in {-1, +1} (logistic) or a
/// count (Poisson). std::invalid_argument on inconsistent sizes, limits <= 0 or a record count outside [1, 1e9];
/// std::domain_error when a Poisson rate exp(theta~^T x~) exceeds 1e12 (a draw far outside what a release of counts
/// supports).
template <random_engine G>
Eigen::MatrixXd synthetic_glm_records(glm_kind kind, const glm_synthetic_parameter& p, const glm_record_limits& limits,
                                      std::int64_t records, G& g) {
  constexpr const char* who = "synthetic_glm_records";
  if (records < 1 || records > 1'000'000'000)
    throw_invalid(who, "records", static_cast<double>(records), "an integer in [1, 1e9]");
  const Eigen::Index d = p.scales.size();
  const int off = p.intercept ? 1 : 0;
  check_size_match(who, "coefficients", p.coefficients.size(), "d (+ 1 with an intercept)", d + off);
  check_size_match(who, "mean", p.mean.size(), "d", d);
  check_size_match(who, "correlation rows", p.correlation.rows(), "d", d);
  check_size_match(who, "correlation columns", p.correlation.cols(), "d", d);
  if (!(limits.coordinate > 0.0)) throw_invalid(who, "coordinate limit", limits.coordinate, "a number > 0 (or infinity)");
  if (!(limits.radius > 0.0)) throw_invalid(who, "radius", limits.radius, "a number > 0 (or infinity)");
  if (!(limits.count >= 0.0)) throw_invalid(who, "count limit", limits.count, "a number >= 0 (or infinity)");
  const Eigen::LLT<Eigen::MatrixXd> llt(p.correlation);
  if (llt.info() != Eigen::Success)
    throw std::invalid_argument(std::string(who) + ": the correlation matrix Omega is not positive definite");
  // Cholesky factor of the covariance diag(tau) Omega diag(tau): diag(tau) L.
  const Eigen::MatrixXd l = p.scales.asDiagonal() * Eigen::MatrixXd(llt.matrixL());
  const double base = p.intercept ? p.coefficients(0) * *p.intercept : 0.0;
  // The covariates of all records first (standard normals column by column, then x = mu + e (diag(tau) L)^T in one
  // triangular product), then each record moved into the limits and its response drawn.
  Eigen::MatrixXd out(records, d + 1);
  for (Eigen::Index i = 0; i < d; ++i)
    for (std::int64_t r = 0; r < records; ++r) out(r, i) = draw_normal(g);
  out.leftCols(d) = (out.leftCols(d) * l.transpose().triangularView<Eigen::Upper>()).eval();
  out.leftCols(d).rowwise() += p.mean.transpose();
  const bool clamp = std::isfinite(limits.coordinate), ball = std::isfinite(limits.radius);
  if (clamp) out.leftCols(d) = out.leftCols(d).cwiseMax(-limits.coordinate).cwiseMin(limits.coordinate);
  if (ball) {
    for (std::int64_t r = 0; r < records; ++r) {
      const double norm = out.row(r).head(d).norm();
      if (norm > limits.radius) out.row(r).head(d) *= limits.radius / norm;
    }
  }
  out.col(d) = out.leftCols(d) * p.coefficients.tail(d);
  for (std::int64_t r = 0; r < records; ++r) {
    const double eta = base + out(r, d);
    if (kind == glm_kind::logistic) {
      // P(y = +1) = 1 / (1 + exp(-eta)), in the form that does not overflow for eta of either sign.
      const double prob = eta >= 0.0 ? 1.0 / (1.0 + std::exp(-eta)) : std::exp(eta) / (1.0 + std::exp(eta));
      out(r, d) = draw_uniform(g) < prob ? 1.0 : -1.0;
    } else {
      const double rate = std::exp(eta);
      if (!(rate <= 1e12))
        throw_domain(who, "Poisson rate exp(theta~^T x~)", rate, "a number <= 1e12 (the draw's coefficients are implausible)");
      out(r, d) = std::min(draw_poisson(g, rate), limits.count);
    }
  }
  return out;
}

/// The maximum-likelihood fit of logistic regression to records, with its covariance estimate.
struct logistic_fit_result {
  Eigen::VectorXd coefficients;  ///< theta~-hat (the intercept's coefficient first when there is one)
  Eigen::MatrixXd covariance;    ///< the inverse of the observed information X~^T W X~ at the estimate
  int iterations = 0;            ///< Newton (IRLS) iterations taken
};

/// Logistic regression by Newton's method (iteratively reweighted least squares) on records (rows x_1..x_d, y with
/// y in {-1, +1} or {0, 1}: synthetic_glm_records' columns), with an intercept column of constant c when given: the
/// estimator an analyst applies to each synthetic set. At most 100 iterations, each a step of (X~^T W X~)^-1 X~^T (t - p);
/// converged when no coefficient moves by more than 1e-10 (1 + |theta_j|). std::invalid_argument on fewer records than
/// coefficients + 1 or a response other than those values; std::domain_error when the information matrix is singular
/// or the iterations do not converge (separable records: the estimate does not exist).
inline logistic_fit_result logistic_fit(const Eigen::MatrixXd& records, std::optional<double> intercept) {
  constexpr const char* who = "logistic_fit";
  constexpr int max_iterations = 100;
  const Eigen::Index d = records.cols() - 1, n = records.rows();
  if (d < 1) throw_invalid(who, "record columns", static_cast<double>(records.cols()), "at least 2 (x_1..x_d, y)");
  if (intercept) check_positive_finite(who, "intercept constant", *intercept);
  const Eigen::Index p = d + (intercept ? 1 : 0);
  if (n <= p) throw_invalid(who, "records", static_cast<double>(n), "more than the " + std::to_string(p) + " coefficients");
  Eigen::MatrixXd x(n, p);
  Eigen::VectorXd t(n);
  if (intercept) x.col(0).setConstant(*intercept);
  x.rightCols(d) = records.leftCols(d);
  if (!x.allFinite()) throw std::domain_error(std::string(who) + ": a covariate is not finite");
  for (Eigen::Index i = 0; i < n; ++i) {
    const double y = records(i, d);
    if (!(y == 1.0 || y == -1.0 || y == 0.0)) throw_invalid(who, "response " + std::to_string(i + 1), y, "-1 or +1 (or 0 or 1)");
    t(i) = y > 0.0 ? 1.0 : 0.0;
  }
  logistic_fit_result fit;
  fit.coefficients = Eigen::VectorXd::Zero(p);
  Eigen::VectorXd prob(n), weight(n);
  Eigen::MatrixXd info(p, p);
  Eigen::LLT<Eigen::MatrixXd> llt;
  for (int it = 1; it <= max_iterations; ++it) {
    const Eigen::VectorXd eta = x * fit.coefficients;
    for (Eigen::Index i = 0; i < n; ++i) {
      prob(i) = eta(i) >= 0.0 ? 1.0 / (1.0 + std::exp(-eta(i))) : std::exp(eta(i)) / (1.0 + std::exp(eta(i)));
      weight(i) = prob(i) * (1.0 - prob(i));
    }
    info.noalias() = x.transpose() * weight.asDiagonal() * x;
    llt.compute(info);
    const double scale = info.diagonal().maxCoeff();
    if (llt.info() != Eigen::Success || !(scale > 0.0) || llt.matrixLLT().diagonal().cwiseAbs2().minCoeff() <= 1e-14 * scale)
      throw std::domain_error(std::string(who) +
                              ": the information matrix is singular (a constant or collinear covariate, or separable records)");
    const Eigen::VectorXd step = llt.solve(x.transpose() * (t - prob));
    fit.coefficients += step;
    fit.iterations = it;
    if ((step.array().abs() <= 1e-10 * (1.0 + fit.coefficients.array().abs())).all()) {
      fit.covariance = llt.solve(Eigen::MatrixXd::Identity(p, p));
      return fit;
    }
  }
  throw std::domain_error(std::string(who) + ": no convergence in " + std::to_string(max_iterations) +
                          " Newton iterations (separable records: the maximum-likelihood estimate does not exist)");
}

}  // namespace privpost
