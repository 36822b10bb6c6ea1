// privpost/families/regression/covariate_models.hpp
// Where Gibbs-SS for regression gets the covariates' moments (001 Sec. 3.4.4): fixed_covariates (Gibbs-SS-Prior: moments of
// a covariate prior, closed form or Monte Carlo; or Gibbs-SS-Noisy: privately released moments) and
// hierarchical_normal_covariates (Gibbs-SS-Update: x ~ N(mu_x, Sigma_x), (mu_x, Sigma_x) ~ NIW, updated in the sampler).
#pragma once

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <cmath>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/random/multivariate_normal.hpp"
#include "privpost/core/random/wishart.hpp"
#include "privpost/families/regression/covariate_moments.hpp"
#include "privpost/families/regression/regression_layout.hpp"

namespace privpost {

/// Covariate moments that stay fixed during sampling (no nuisance update).
class fixed_covariates {
 public:
  explicit fixed_covariates(covariate_moments moments) : moments_(std::move(moments)) {
    if (moments_.p < 1) throw_invalid("fixed_covariates", "moment columns p", moments_.p, "an integer >= 1");
    check_size_match("fixed_covariates", "m2 rows", moments_.m2.rows(), "p", moments_.p);
    check_finite("fixed_covariates", "m2", moments_.m2);
  }
  const covariate_moments& moments() const noexcept { return moments_; }

 private:
  covariate_moments moments_;
};

/// Normal-inverse-Wishart hyperprior: Sigma ~ InverseWishart(nu, Psi), mu | Sigma ~ N(m, Sigma / kappa).
struct niw_hyperprior {
  Eigen::VectorXd m;
  double kappa = 1.0;
  Eigen::MatrixXd psi;
  double nu = 1.0;
};

/// x ~ N(mu_x, Sigma_x) with (mu_x, Sigma_x) ~ NIW, updated from the covariate block of the latent Gram matrix each
/// sweep (the reformulation of 001 Fig. 2b-c makes (mu_x, Sigma_x) and (theta, sigma^2) conditionally independent given s).
class hierarchical_normal_covariates {
 public:
  template <random_engine G>
  hierarchical_normal_covariates(const regression_layout& layout, niw_hyperprior prior, G& g) : prior_(std::move(prior)) {
    if (!layout.intercept())
      throw std::invalid_argument("hierarchical_normal_covariates: needs the intercept column (its row of X^T X holds sum x)");
    const auto d = layout.covariates();
    check_size_match("hierarchical_normal_covariates", "m", prior_.m.size(), "covariates", d);
    check_size_match("hierarchical_normal_covariates", "psi rows", prior_.psi.rows(), "covariates", d);
    check_positive_finite("hierarchical_normal_covariates", "kappa", prior_.kappa);
    if (!(prior_.nu > d - 1.0)) throw_invalid("hierarchical_normal_covariates", "nu", prior_.nu, "a number > d - 1");
    draw_from(layout, prior_.m, prior_.kappa, prior_.psi, prior_.nu, g);
  }

  /// NIW posterior from the Gram matrix B of n records: sum x = B(0, 1..d) / c, sum x x^T = B(1..d, 1..d).
  template <random_engine G>
  void update(const regression_layout& layout, const Eigen::MatrixXd& b, double n, G& g) {
    const int d = layout.covariates();
    const double c = layout.intercept_value();
    const Eigen::VectorXd sum = b.block(0, 1, 1, d).transpose() / c;
    const Eigen::MatrixXd sum_sq = b.block(1, 1, d, d);
    const Eigen::VectorXd mean = sum / n;
    Eigen::MatrixXd scatter = sum_sq - n * mean * mean.transpose();
    scatter = 0.5 * (scatter + scatter.transpose()).eval();
    const double kn = prior_.kappa + n;
    const Eigen::VectorXd mn = (prior_.kappa * prior_.m + sum) / kn;
    const Eigen::VectorXd diff = mean - prior_.m;
    Eigen::MatrixXd psin = prior_.psi + scatter + (prior_.kappa * n / kn) * diff * diff.transpose();
    draw_from(layout, mn, kn, psin, prior_.nu + n, g);
  }

  const covariate_moments& moments() const noexcept { return moments_; }
  const Eigen::VectorXd& mean() const noexcept { return mu_; }
  const Eigen::MatrixXd& covariance() const noexcept { return sigma_; }

 private:
  template <random_engine G>
  void draw_from(const regression_layout& layout, const Eigen::VectorXd& m, double kappa, const Eigen::MatrixXd& psi, double nu,
                 G& g) {
    sigma_ = draw_inverse_wishart(g, nu, psi);
    const Eigen::MatrixXd l = Eigen::LLT<Eigen::MatrixXd>(sigma_ / kappa).matrixL();
    mu_ = draw_multivariate_normal(g, m, l);
    moments_ = normal_covariate_moments(layout, mu_, sigma_);
  }

  niw_hyperprior prior_;
  Eigen::VectorXd mu_;
  Eigen::MatrixXd sigma_;
  covariate_moments moments_;
};

}  // namespace privpost
