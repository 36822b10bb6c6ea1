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
  /// Coefficients theta.
  Eigen::VectorXd theta;
  /// Noise variance sigma^2.
  double variance = 1.0;
};

/// Normal-inverse-gamma prior of linear regression: sigma^2 ~ InverseGamma(a, b), theta | sigma^2 ~ N(mu, sigma^2 Lambda^-1).
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
    mu_lambda_mu_ = mu_.dot(lambda_ * mu_);
  }

  /// Prior mean of theta.
  const Eigen::VectorXd& mu() const noexcept { return mu_; }
  /// Prior precision matrix Lambda.
  const Eigen::MatrixXd& lambda() const noexcept { return lambda_; }
  /// Shape a.
  double a() const noexcept { return a_; }
  /// Scale b.
  double b() const noexcept { return b_; }
  /// Length of theta.
  Eigen::Index dimension() const noexcept { return mu_.size(); }

  /// Conjugate update (001 Eq. 1) with xtx = X^T X (symmetric), xty = X^T y, yty = y^T y of n records. Requires
  /// [X y]^T [X y] to be positive semidefinite (samplers project onto that set first); b_n is then >= b.
  nig_regression_prior update(const Eigen::MatrixXd& xtx, const Eigen::VectorXd& xty, double yty, double n) const {
    nig_regression_prior out = *this;  // a distinct object of the right sizes
    update(xtx, xty, yty, n, out);
    return out;
  }

  /// The same update written into `out` (an NIG prior of the same dimension, e.g. the previous posterior), reusing its
  /// storage: allocates nothing. Lambda_n = X^T X + Lambda_0 = L L^T, r = X^T y + Lambda_0 mu_0, mu_n = Lambda_n^{-1} r,
  /// b_n = b_0 + (y^T y + mu_0^T Lambda_0 mu_0 - |L^{-1} r|^2) / 2 (as mu_n^T Lambda_n mu_n = r^T Lambda_n^{-1} r).
  template <class Xtx, class Xty>
  void update(const Eigen::MatrixBase<Xtx>& xtx, const Eigen::MatrixBase<Xty>& xty, double yty, double n,
              nig_regression_prior& out) const {
    if (&out == this) {  // the update reads this prior while it writes out
      out = update(xtx.derived(), xty.derived(), yty, n);
      return;
    }
    check_size_match("nig_regression_prior::update", "X^T y", xty.size(), "dimension", dimension());
    check_size_match("nig_regression_prior::update", "X^T X rows", xtx.rows(), "dimension", dimension());
    check_size_match("nig_regression_prior::update", "posterior dimension", out.dimension(), "dimension", dimension());
    if (!(n > 0.0 && std::isfinite(n))) throw_invalid("nig_regression_prior::update", "n", n, "a finite number > 0");
    out.lambda_ = xtx;
    out.lambda_ += lambda_;
    out.llt_.compute(out.lambda_);
    if (out.llt_.info() != Eigen::Success)
      throw std::domain_error("nig_regression_prior::update: X^T X + Lambda_0 is not positive definite");
    out.mu_.noalias() = lambda_ * mu_;
    out.mu_ += xty;
    out.llt_.matrixL().solveInPlace(out.mu_);        // L^{-1} r
    const double mu_n_quad = out.mu_.squaredNorm();  // mu_n^T Lambda_n mu_n
    const double quad = yty + mu_lambda_mu_ - mu_n_quad;
    out.llt_.matrixU().solveInPlace(out.mu_);  // L^{-T} L^{-1} r = mu_n
    out.mu_lambda_mu_ = mu_n_quad;
    // quad >= 0 exactly when [X y]^T [X y] is PSD; rounding may leave it a hair below.
    out.a_ = a_ + 0.5 * n;
    out.b_ = b_ + 0.5 * std::max(quad, 0.0);
  }

  /// sigma^2 ~ InverseGamma(a, b), theta = mu + sigma L^{-T} e with Lambda = L L^T.
  template <random_engine G>
  regression_parameter draw(G& g) const {
    regression_parameter p;
    draw(g, p);
    return p;
  }

  /// The same draw into `p`, reusing its storage (allocates nothing once p.theta has the dimension).
  template <random_engine G>
  void draw(G& g, regression_parameter& p) const {
    p.variance = draw_inverse_gamma(g, a_, b_);
    if (p.theta.size() != dimension()) p.theta.resize(dimension());
    for (Eigen::Index i = 0; i < p.theta.size(); ++i) p.theta(i) = draw_normal(g);
    llt_.matrixU().solveInPlace(p.theta);
    p.theta *= std::sqrt(p.variance);
    p.theta += mu_;
  }

 private:
  Eigen::VectorXd mu_;
  Eigen::MatrixXd lambda_;
  double a_, b_;
  Eigen::LLT<Eigen::MatrixXd> llt_;
  double mu_lambda_mu_ = 0.0;  // mu^T Lambda mu
};

}  // namespace privpost
