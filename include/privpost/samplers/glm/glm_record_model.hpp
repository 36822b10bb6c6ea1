// privpost/samplers/glm/glm_record_model.hpp
// glm_record_model: the non-private baseline of the DP-GLM study (docs/design-glm.md Sec. 4.2, "nonprivate"): the exact GLM
// posterior on the records, with the same coefficient prior as the noise-aware model, as a differentiable_model for
// nuts_sampler. The GLM enters through a record likelihood (logistic_record_likelihood in logistic_record_model.hpp,
// poisson_record_likelihood in poisson_record_model.hpp). It is the reference the private posteriors are compared
// with: it sees the records, so it is a baseline, never something to publish.
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <limits>

#include "privpost/core/errors.hpp"
#include "privpost/samplers/glm/glm_prior.hpp"

namespace privpost {

/// Records of a GLM: rows of x are the covariates, y the responses.
struct glm_records {
  /// Covariates, one record per row.
  Eigen::MatrixXd x;
  /// Responses, one per record.
  Eigen::VectorXd y;
};

/// What glm_record_model needs of a GLM's record likelihood:
///
///     static constexpr const char* name;        // for error messages ("logistic_record_model")
///     static double admit(double y);            // the response as the likelihood reads it; throws
///                                               // std::invalid_argument naming the accepted values
///     static double log_likelihood(double eta, double y, double& d_eta);  // log p(y | eta) up to a constant in
///                                               // theta, and its derivative in the linear predictor eta
template <class L>
concept glm_record_likelihood = requires(double eta, double y, double& d_eta) {
  { L::name } -> std::convertible_to<const char*>;
  { L::admit(y) } -> std::same_as<double>;
  { L::log_likelihood(eta, y, d_eta) } -> std::same_as<double>;
};

/// The exact GLM posterior of theta given records (rows of x, the intercept column included when the model has one)
/// and responses y: log p(y | x, theta) = sum_n log p(y_n | x_n^T theta), theta ~ N(0, I) conditioned on
/// ||theta||^2 < s_max (glm_prior::s_max; the covariate prior is irrelevant here: x is observed). Unconstrained
/// u = the v of glm_coefficient_transform, dimension = columns; parameter_vector(u) = theta.
/// Evaluation allocates nothing (workspaces sized at construction): one copy per chain.
template <glm_record_likelihood Likelihood>
class glm_record_model {
 public:
  /// The record likelihood.
  using likelihood_type = Likelihood;

  /// The posterior of the exact records x (rows) and y with the prior bound s_max; std::invalid_argument on empty, mismatched or
  /// non-finite records or a response the likelihood does not admit.
  glm_record_model(const Eigen::MatrixXd& x, const Eigen::VectorXd& y, double s_max = glm_prior{}.s_max)
      : x_(x), y_(y.size()), coef_(s_max) {
    constexpr const char* f = Likelihood::name;
    if (x.cols() < 1) throw_invalid(f, "number of covariates", static_cast<double>(x.cols()), "at least 1");
    if (x.rows() < 1) throw_invalid(f, "number of records", static_cast<double>(x.rows()), "at least 1");
    check_size_match(f, "responses", y.size(), "records", x.rows());
    check_finite(f, "covariates", x);
    for (Eigen::Index i = 0; i < y.size(); ++i) y_(i) = Likelihood::admit(y(i));
    eta_.setZero(x.rows());
    weight_.setZero(x.rows());
    theta_.setZero(x.cols());
    theta_bar_.setZero(x.cols());
  }

  /// Columns of x.
  Eigen::Index dimension() const noexcept { return x_.cols(); }
  /// d.
  int covariates() const noexcept { return static_cast<int>(x_.cols()); }
  /// The number of records.
  double records() const noexcept { return static_cast<double>(x_.rows()); }
  /// Evaluations at a point outside the model's domain (-infinity returned).
  std::uint64_t failures() const noexcept { return failures_; }

  /// Log posterior density (up to a constant) and its gradient at u.
  double log_density_gradient(const Eigen::VectorXd& u, Eigen::VectorXd& grad) {
    const Eigen::Index d = x_.cols();
    double lp = 0.0;
    grad.resize(dimension());
    if (u.size() != d) throw_invalid(Likelihood::name, "size of u", static_cast<double>(u.size()), "dimension()");
    if (!u.allFinite() || !coef_.forward(u, theta_, lp)) return fail(grad);
    eta_.noalias() = x_ * theta_;
    for (Eigen::Index i = 0; i < eta_.size(); ++i) lp += Likelihood::log_likelihood(eta_(i), y_(i), weight_(i));
    theta_bar_.noalias() = x_.transpose() * weight_;
    coef_.backward(u, theta_bar_, grad);
    if (!std::isfinite(lp) || !grad.allFinite()) return fail(grad);
    return lp;
  }

  /// theta at u.
  Eigen::VectorXd parameter_vector(const Eigen::VectorXd& u) const {
    if (u.size() != x_.cols()) throw_invalid(Likelihood::name, "size of u", static_cast<double>(u.size()), "dimension()");
    return glm_coefficient_transform::coefficients(u, coef_.s_max());
  }

  /// The random initial point of nuts_sampler (initial_point_model): glm_coefficient_transform::initial_point.
  template <random_engine G>
  void initial_point(G& g, double radius, Eigen::VectorXd& u) const {
    u.resize(dimension());
    glm_coefficient_transform::initial_point(g, radius, u);
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

}  // namespace privpost
