// privpost/inference/synthetic_regression.hpp
// Synthetic linear-regression records from the noise-aware posterior predictive, and the least-squares fit an analyst
// applies to each set (privpost/inference/synthetic.hpp has the combining rules).
//
// A synthetic record needs covariates as well as a response, so a posterior draw must carry the covariate law with the
// regression parameter: Gibbs-SS-Update keeps (mu_x, Sigma_x) as its nuisance block, drawn each sweep from their
// normal-inverse-Wishart conditional given the latent statistic s. Recorded after a whole sweep, (theta, sigma^2, mu_x,
// Sigma_x) is one state of that chain, so its kept draws are draws of the joint posterior given the release (the
// covariate block and (theta, sigma^2) are conditionally independent given s, 001 Fig. 2b-c, but not independent given
// the release alone: drawing them from separate sweeps would lose that dependence). with_covariate_law records them.
//
//     auto chain = with_covariate_law(gibbs_ss(linear_regression_model(layout, hierarchical_normal_covariates(layout, h, g)),
//                                              prior, mechanism, z, n, g));
//     ... infer, synthetic_parameter_draws(result.draws, 20) ...
//     const auto p = regression_synthetic_parameter::from_vector(layout, draw);
//     const Eigen::MatrixXd records = synthetic_regression_records(layout, p, 10 * n, g);   // columns x_1..x_d, y
//     const auto fit = least_squares(layout, records);                                      // coefficients, covariance
#pragma once

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/interval.hpp"
#include "privpost/core/numerical_events.hpp"
#include "privpost/core/random/normal.hpp"
#include "privpost/families/regression/regression_layout.hpp"

namespace privpost {

/// One joint posterior draw of linear regression with its covariate law: y = theta^T x~ + N(0, variance),
/// x ~ N(mean, covariance).
struct regression_synthetic_parameter {
  Eigen::VectorXd theta;       ///< the coefficients (p = columns of the design)
  double variance = 1.0;       ///< sigma^2
  Eigen::VectorXd mean;        ///< mu_x (d)
  Eigen::MatrixXd covariance;  ///< Sigma_x (d x d)

  /// The length of the vector with_covariate_law records for layout: p + 1 + d + d (d + 1) / 2.
  static Eigen::Index vector_size(const regression_layout& layout) noexcept {
    const Eigen::Index d = layout.covariates();
    return layout.columns() + 1 + d + d * (d + 1) / 2;
  }

  /// The parameter from a recorded vector (theta, sigma^2, mu_x, Sigma_x's lower triangle column by column).
  /// std::invalid_argument on another length, a value that is not finite, sigma^2 <= 0, or a covariance that is not
  /// positive definite.
  static regression_synthetic_parameter from_vector(const regression_layout& layout, const Eigen::VectorXd& v) {
    constexpr const char* who = "regression_synthetic_parameter::from_vector";
    check_size_match(who, "vector", v.size(), "p + 1 + d + d(d + 1)/2", vector_size(layout));
    for (Eigen::Index i = 0; i < v.size(); ++i) check_finite(who, "entry " + std::to_string(i), v(i));
    const int p = layout.columns(), d = layout.covariates();
    regression_synthetic_parameter out;
    out.theta = v.head(p);
    out.variance = v(p);
    check_positive_finite(who, "sigma^2", out.variance);
    out.mean = v.segment(p + 1, d);
    out.covariance.resize(d, d);
    Eigen::Index k = p + 1 + d;
    for (int j = 0; j < d; ++j)
      for (int i = j; i < d; ++i) out.covariance(i, j) = out.covariance(j, i) = v(k++);
    if (Eigen::LLT<Eigen::MatrixXd>(out.covariance).info() != Eigen::Success)
      throw std::invalid_argument(std::string(who) + ": the covariance Sigma_x is not positive definite");
    return out;
  }
};

/// A Gibbs-SS chain of linear_regression_model with hierarchical_normal_covariates whose draws carry the covariate law:
/// parameter_vector() is (theta, sigma^2, mu_x, Sigma_x's lower triangle column by column), read after the whole sweep
/// (file comment: a state of the chain, so a joint posterior draw). Everything else is the wrapped chain's.
template <covariate_law_chain Chain>
class with_covariate_law {
 public:
  /// Takes the chain over.
  explicit with_covariate_law(Chain chain) : chain_(std::move(chain)) {}

  /// One sweep of the chain.
  template <random_engine G>
  void step(G& g) {
    chain_.step(g);
  }
  /// (theta, sigma^2, mu_x, vech Sigma_x) of the chain's current state.
  Eigen::VectorXd parameter_vector() const {
    const Eigen::VectorXd head = chain_.parameter_vector();
    const auto& cov = chain_.model().covariates();
    const Eigen::Index d = cov.mean().size();
    Eigen::VectorXd v(head.size() + d + d * (d + 1) / 2);
    v.head(head.size()) = head;
    v.segment(head.size(), d) = cov.mean();
    Eigen::Index k = head.size() + d;
    for (Eigen::Index j = 0; j < d; ++j)
      for (Eigen::Index i = j; i < d; ++i) v(k++) = cov.covariance()(i, j);
    return v;
  }
  /// The chain's numerical events.
  const numerical_events& events() const noexcept { return chain_.events(); }
  /// The wrapped chain.
  const Chain& chain() const noexcept { return chain_; }

 private:
  Chain chain_;
};

/// `records` synthetic records (1 to 1e9) of the model with parameter p: a matrix of records rows and d + 1 columns
/// (x_1..x_d, y), x ~ N(p.mean, p.covariance), y = p.theta^T x~ + N(0, p.variance). std::invalid_argument on sizes that
/// do not match layout, or a record count outside [1, 1e9].
template <random_engine G>
Eigen::MatrixXd synthetic_regression_records(const regression_layout& layout, const regression_synthetic_parameter& p,
                                             std::int64_t records, G& g) {
  constexpr const char* who = "synthetic_regression_records";
  if (records < 1 || records > 1'000'000'000)
    throw_invalid(who, "records", static_cast<double>(records), "an integer in [1, 1e9]");
  const int d = layout.covariates(), cols = layout.columns();
  check_size_match(who, "theta", p.theta.size(), "design columns", cols);
  check_size_match(who, "mean", p.mean.size(), "covariates", d);
  check_size_match(who, "covariance rows", p.covariance.rows(), "covariates", d);
  check_size_match(who, "covariance columns", p.covariance.cols(), "covariates", d);
  check_positive_finite(who, "sigma^2", p.variance);
  const Eigen::LLT<Eigen::MatrixXd> llt(p.covariance);
  if (llt.info() != Eigen::Success)
    throw std::invalid_argument(std::string(who) + ": the covariance Sigma_x is not positive definite");
  const Eigen::MatrixXd l = llt.matrixL();
  // Column by column: the standard normals of each covariate in one contiguous pass, then x = mu + e L^T for all
  // records in one triangular product, then y = theta~^T x~ + sd e.
  Eigen::MatrixXd out(records, d + 1);
  for (int i = 0; i <= d; ++i)
    for (std::int64_t r = 0; r < records; ++r) out(r, i) = draw_normal(g);
  out.leftCols(d) = (out.leftCols(d) * l.transpose().triangularView<Eigen::Upper>()).eval();
  out.leftCols(d).rowwise() += p.mean.transpose();
  const double base = layout.intercept() ? p.theta(0) * layout.intercept_value() : 0.0;
  out.col(d) = (out.leftCols(d) * p.theta.tail(d)).array() + base + std::sqrt(p.variance) * out.col(d).array();
  return out;
}

/// Clamps every record (rows of x_1..x_d, y) into the declared box, as a release clamps records before its statistic:
/// covariate j into covariate_bounds[j], y into response_bounds. std::invalid_argument when the box has another number
/// of covariates than the records.
inline void clamp_regression_records(Eigen::MatrixXd& records, const std::vector<interval>& covariate_bounds,
                                     interval response_bounds) {
  check_size_match("clamp_regression_records", "covariate bounds", static_cast<Eigen::Index>(covariate_bounds.size()),
                   "covariate columns", records.cols() - 1);
  for (Eigen::Index j = 0; j + 1 < records.cols(); ++j) {
    const interval& b = covariate_bounds[static_cast<std::size_t>(j)];
    records.col(j) = records.col(j).cwiseMax(b.lo).cwiseMin(b.hi);
  }
  records.col(records.cols() - 1) = records.col(records.cols() - 1).cwiseMax(response_bounds.lo).cwiseMin(response_bounds.hi);
}

/// Ordinary least squares on records (rows of x_1..x_d, y) with layout's design.
struct least_squares_fit {
  Eigen::VectorXd coefficients;    ///< theta-hat = (X^T X)^-1 X^T y
  Eigen::MatrixXd covariance;      ///< its estimated covariance, s^2 (X^T X)^-1
  double residual_variance = 0.0;  ///< s^2 = RSS / (N - p)
};

/// The least-squares fit of layout's model to records (rows of x_1..x_d, y: synthetic_regression_records' columns).
/// std::invalid_argument on another column count or fewer records than p + 1; std::domain_error when X^T X is singular
/// (a constant covariate, for instance) or a value is not finite.
inline least_squares_fit least_squares(const regression_layout& layout, const Eigen::MatrixXd& records) {
  constexpr const char* who = "least_squares";
  const int d = layout.covariates(), p = layout.columns(), off = layout.intercept() ? 1 : 0;
  check_size_match(who, "record columns", records.cols(), "d + 1", d + 1);
  if (records.rows() <= p)
    throw_invalid(who, "records", static_cast<double>(records.rows()), "more than the " + std::to_string(p) + " design columns");
  // One pass over the records: the (p + 1) x (p + 1) Gram matrix of u = (x~, y).
  Eigen::MatrixXd gram = Eigen::MatrixXd::Zero(p + 1, p + 1);
  Eigen::VectorXd u(p + 1);
  for (Eigen::Index r = 0; r < records.rows(); ++r) {
    if (layout.intercept()) u(0) = layout.intercept_value();
    for (int i = 0; i < d; ++i) u(off + i) = records(r, i);
    u(p) = records(r, d);
    gram.selfadjointView<Eigen::Lower>().rankUpdate(u);
  }
  gram = gram.selfadjointView<Eigen::Lower>();
  if (!gram.allFinite()) throw std::domain_error(std::string(who) + ": a record holds a value that is not finite");
  const Eigen::MatrixXd xtx = gram.topLeftCorner(p, p);
  const Eigen::LLT<Eigen::MatrixXd> llt(xtx);
  // A relative pivot test as well: LLT succeeds on a numerically singular X^T X and would return huge coefficients.
  const double scale = xtx.diagonal().maxCoeff();
  if (llt.info() != Eigen::Success || !(scale > 0.0) || llt.matrixLLT().diagonal().cwiseAbs2().minCoeff() <= 1e-12 * scale)
    throw std::domain_error(std::string(who) + ": X^T X is singular (a covariate constant or collinear in the records)");
  least_squares_fit fit;
  fit.coefficients = llt.solve(gram.col(p).head(p));
  const double rss = gram(p, p) - fit.coefficients.dot(gram.col(p).head(p));
  fit.residual_variance = std::max(rss, 0.0) / static_cast<double>(records.rows() - p);
  fit.covariance = fit.residual_variance * llt.solve(Eigen::MatrixXd::Identity(p, p));
  return fit;
}

}  // namespace privpost
