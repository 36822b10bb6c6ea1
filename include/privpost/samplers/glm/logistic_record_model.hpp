// privpost/samplers/glm/logistic_record_model.hpp
// logistic_record_model: the non-private baseline of the DP-GLM study (spec glm.md Sec. 4.2, "nonprivate"): the exact
// logistic-regression posterior on the records, with the same coefficient prior as the noise-aware model, as a
// differentiable_model for nuts_sampler. It is the reference the private posteriors are compared with.
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

namespace privpost {

/// The exact logistic-regression posterior of theta given records (rows of x) and responses y in {-1, +1}:
/// log p(y | x, theta) = sum_n log logistic(y_n x_n^T theta), theta ~ N(0, I_d) conditioned on ||theta||^2 < s_max
/// (glm_prior::s_max; the covariate prior is irrelevant here: x is observed). Unconstrained u = (p, r) of
/// glm_coefficient_transform, dimension d + 1; parameter_vector(u) = theta. Responses 0 are read as -1 (the
/// release side's mapping). It sees the records, so it is a baseline, never something to publish.
/// Evaluation allocates nothing (workspaces sized at construction): one copy per chain.
class logistic_record_model {
 public:
  logistic_record_model(const Eigen::MatrixXd& x, const Eigen::VectorXd& y, double s_max = glm_prior{}.s_max)
      : x_(x), y_(y.size()), coef_(s_max) {
    constexpr const char* f = "logistic_record_model";
    if (x.cols() < 1) throw_invalid(f, "number of covariates", static_cast<double>(x.cols()), "at least 1");
    if (x.rows() < 1) throw_invalid(f, "number of records", static_cast<double>(x.rows()), "at least 1");
    check_size_match(f, "responses", y.size(), "records", x.rows());
    check_finite(f, "covariates", x);
    for (Eigen::Index i = 0; i < y.size(); ++i) {
      if (y(i) == 1.0) {
        y_(i) = 1.0;
      } else if (y(i) == -1.0 || y(i) == 0.0) {
        y_(i) = -1.0;
      } else {
        throw_invalid(f, "response", y(i), "0 or -1 (negative), 1 (positive)");
      }
    }
    eta_.setZero(x.rows());
    weight_.setZero(x.rows());
    theta_.setZero(x.cols());
    theta_bar_.setZero(x.cols());
  }

  /// d + 1.
  Eigen::Index dimension() const noexcept { return x_.cols() + 1; }
  int covariates() const noexcept { return static_cast<int>(x_.cols()); }
  double records() const noexcept { return static_cast<double>(x_.rows()); }
  /// Evaluations at a point outside the model's domain (-infinity returned).
  std::uint64_t failures() const noexcept { return failures_; }

  /// Log posterior density (up to a constant) and its gradient at u.
  double log_density_gradient(const Eigen::VectorXd& u, Eigen::VectorXd& grad) {
    const Eigen::Index d = x_.cols();
    double lp = 0.0;
    grad.resize(dimension());
    if (!u.allFinite() || !coef_.forward(u.head(d), u(d), theta_, lp)) return fail(grad);
    eta_.noalias() = x_ * theta_;
    for (Eigen::Index i = 0; i < eta_.size(); ++i) {
      const double t = y_(i) * eta_(i);
      // log logistic(t) = -softplus(-t); d/d eta = y logistic(-t).
      lp -= t > 0.0 ? std::log1p(std::exp(-t)) : -t + std::log1p(std::exp(t));
      weight_(i) = y_(i) / (1.0 + std::exp(t));
    }
    theta_bar_.noalias() = x_.transpose() * weight_;
    coef_.backward(u.head(d), theta_bar_, grad.head(d), grad(d));
    if (!std::isfinite(lp) || !grad.allFinite()) return fail(grad);
    return lp;
  }

  /// theta at u.
  Eigen::VectorXd parameter_vector(const Eigen::VectorXd& u) const {
    return glm_coefficient_transform::coefficients(u.head(x_.cols()), u(x_.cols()), coef_.s_max());
  }

 private:
  double fail(Eigen::VectorXd& grad) {
    ++failures_;
    grad.setZero(dimension());
    return -std::numeric_limits<double>::infinity();
  }

  Eigen::MatrixXd x_;
  Eigen::VectorXd y_;
  glm_coefficient_transform coef_;
  std::uint64_t failures_ = 0;
  Eigen::VectorXd eta_, weight_, theta_, theta_bar_;
};

/// Records of the logistic GLM: rows of x and responses y in {-1, +1}.
struct logistic_records {
  Eigen::MatrixXd x;
  Eigen::VectorXd y;
};

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
