// privpost/families/regression/normal_inverse_gamma_regression.hpp
// nig_regression_prior: the normal-inverse-gamma prior of Bayesian linear regression, sigma^2 ~ InverseGamma(a, b),
// theta | sigma^2 ~ N(mu, sigma^2 Lambda^{-1}), and its conjugate update on [X^T X, X^T y, y^T y] (001 Eq. 1), with
// Cholesky solves of Lambda_n (no explicit inverse).
#pragma once

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <string>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/random/gamma.hpp"
#include "privpost/core/random/normal.hpp"

namespace privpost {

/// A draw of the regression parameters.
struct regression_parameter {
  Eigen::VectorXd theta;
  double variance = 1.0;
};

class nig_regression_prior {
 public:
  /// mu: prior mean of theta; lambda: prior precision matrix (symmetric positive definite); a, b > 0.
  nig_regression_prior(Eigen::VectorXd mu, Eigen::MatrixXd lambda, double a, double b)
      : mu_(std::move(mu)), lambda_(std::move(lambda)), a_(a), b_(b) {
    check_size_match("nig_regression_prior", "mu", mu_.size(), "lambda rows", lambda_.rows());
    check_size_match("nig_regression_prior", "lambda rows", lambda_.rows(), "lambda cols", lambda_.cols());
    if (mu_.size() < 1) throw_invalid("nig_regression_prior", "dimension", 0.0, "at least 1");
    check_finite("nig_regression_prior", "mu", mu_);
    check_symmetric_positive_definite("nig_regression_prior", "lambda", lambda_);
    check_positive_finite("nig_regression_prior", "a", a);
    check_positive_finite("nig_regression_prior", "b", b);
    llt_.compute(lambda_);
    if (llt_.info() != Eigen::Success)
      throw_invalid("nig_regression_prior", "lambda's Cholesky factorisation", 0.0, "a positive definite matrix");
  }

  const Eigen::VectorXd& mu() const noexcept { return mu_; }
  const Eigen::MatrixXd& lambda() const noexcept { return lambda_; }
  double a() const noexcept { return a_; }
  double b() const noexcept { return b_; }
  Eigen::Index dimension() const noexcept { return mu_.size(); }

  /// Conjugate update (001 Eq. 1) with xtx = X^T X (symmetric), xty = X^T y, yty = y^T y of n records. Requires
  /// [X y]^T [X y] to be positive semidefinite (samplers project onto that set first); b_n is then >= b.
  nig_regression_prior update(const Eigen::MatrixXd& xtx, const Eigen::VectorXd& xty, double yty, double n) const {
    check_size_match("nig_regression_prior::update", "X^T y", xty.size(), "dimension", dimension());
    if (!(n > 0.0 && std::isfinite(n))) throw_invalid("nig_regression_prior::update", "n", n, "a finite number > 0");
    const Eigen::MatrixXd lambda_n = xtx + lambda_;
    const Eigen::LLT<Eigen::MatrixXd> llt(lambda_n);
    if (llt.info() != Eigen::Success)
      throw std::domain_error("nig_regression_prior::update: X^T X + Lambda_0 is not positive definite");
    const Eigen::VectorXd mu_n = llt.solve(xty + lambda_ * mu_);
    const double quad = yty + mu_.dot(lambda_ * mu_) - mu_n.dot(lambda_n * mu_n);
    // quad >= 0 exactly when [X y]^T [X y] is PSD; rounding may leave it a hair below.
    return nig_regression_prior(mu_n, lambda_n, a_ + 0.5 * n, b_ + 0.5 * std::max(quad, 0.0), llt);
  }

  /// sigma^2 ~ InverseGamma(a, b), theta = mu + sigma L^{-T} e with Lambda = L L^T.
  template <random_engine G>
  regression_parameter draw(G& g) const {
    regression_parameter p;
    p.variance = draw_inverse_gamma(g, a_, b_);
    Eigen::VectorXd e(dimension());
    for (Eigen::Index i = 0; i < e.size(); ++i) e(i) = draw_normal(g);
    p.theta = mu_ + std::sqrt(p.variance) * llt_.matrixU().solve(e);
    return p;
  }

 private:
  nig_regression_prior(Eigen::VectorXd mu, Eigen::MatrixXd lambda, double a, double b, const Eigen::LLT<Eigen::MatrixXd>& llt)
      : mu_(std::move(mu)), lambda_(std::move(lambda)), a_(a), b_(b), llt_(llt) {}

  Eigen::VectorXd mu_;
  Eigen::MatrixXd lambda_;
  double a_, b_;
  Eigen::LLT<Eigen::MatrixXd> llt_;
};

}  // namespace privpost
