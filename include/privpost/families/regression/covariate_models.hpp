// privpost/families/regression/covariate_models.hpp
// Where Gibbs-SS for regression gets the covariates' moments (001 Sec. 3.4.4): fixed_covariates (Gibbs-SS-Prior: moments of
// a covariate prior, closed form or Monte Carlo; or Gibbs-SS-Noisy: privately released moments) and
// hierarchical_normal_covariates (Gibbs-SS-Update: x ~ N(mu_x, Sigma_x), (mu_x, Sigma_x) ~ NIW, updated in the sampler).
#pragma once

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <cmath>
#include <stdexcept>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/random/normal.hpp"
#include "privpost/core/random/wishart.hpp"
#include "privpost/families/regression/covariate_moments.hpp"
#include "privpost/families/regression/regression_layout.hpp"

namespace privpost {

/// Covariate moments that stay fixed during sampling (no nuisance update).
class fixed_covariates {
 public:
  /// Fixed moments; std::invalid_argument unless p >= 1 and m2 is a finite p x p matrix.
  explicit fixed_covariates(covariate_moments moments) : moments_(std::move(moments)) {
    if (moments_.p < 1) throw_invalid("fixed_covariates", "moment columns p", moments_.p, "an integer >= 1");
    check_size_match("fixed_covariates", "m2 rows", moments_.m2.rows(), "p", moments_.p);
    check_finite("fixed_covariates", "m2", moments_.m2);
  }
  /// The fixed moments.
  const covariate_moments& moments() const noexcept { return moments_; }

 private:
  covariate_moments moments_;
};

/// Normal-inverse-Wishart hyperprior: Sigma ~ InverseWishart(nu, Psi), mu | Sigma ~ N(m, Sigma / kappa).
struct niw_hyperprior {
  /// Prior mean m of the covariate mean.
  Eigen::VectorXd m;
  /// Prior sample size kappa of the covariate mean.
  double kappa = 1.0;
  /// Scale matrix Psi of the inverse Wishart.
  Eigen::MatrixXd psi;
  /// Degrees of freedom nu of the inverse Wishart.
  double nu = 1.0;
};

/// x ~ N(mu_x, Sigma_x) with (mu_x, Sigma_x) ~ NIW, updated from the covariate block of the latent Gram matrix each
/// sweep (the reformulation of 001 Fig. 2b-c makes (mu_x, Sigma_x) and (theta, sigma^2) conditionally independent given s).
class hierarchical_normal_covariates {
 public:
  /// The model for layout (which needs its intercept column) with this hyperprior, starting from a draw of it by g;
  /// std::invalid_argument on a layout without an intercept, sizes other than d, kappa not finite and > 0, or nu <= d - 1.
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

  /// NIW posterior from the Gram matrix B of n records: sum x = B(0, 1..d) / c, sum x x^T = B(1..d, 1..d). Reuses the
  /// object's storage: allocates nothing after the first update.
  template <random_engine G>
  void update(const regression_layout& layout, const Eigen::MatrixXd& b, double n, G& g) {
    const int d = layout.covariates();
    const double c = layout.intercept_value();
    auto& w = work_;
    if (w.sum.size() != d) {
      w.sum.resize(d);
      w.mean.resize(d);
      w.mn.resize(d);
      w.diff.resize(d);
      w.scatter.resize(d, d);
      w.psin.resize(d, d);
    }
    for (int i = 0; i < d; ++i) w.sum(i) = b(0, 1 + i) / c;
    w.mean = w.sum / n;
    // scatter = sum x x^T - n mean mean^T, symmetrised; entry by entry (no temporaries).
    for (int j = 0; j < d; ++j)
      for (int i = 0; i < d; ++i) w.scatter(i, j) = b(1 + i, 1 + j) - (n * w.mean(i)) * w.mean(j);
    for (int j = 0; j < d; ++j)
      for (int i = j + 1; i < d; ++i) w.scatter(i, j) = w.scatter(j, i) = 0.5 * (w.scatter(i, j) + w.scatter(j, i));
    const double kn = prior_.kappa + n;
    w.mn = (prior_.kappa * prior_.m + w.sum) / kn;
    w.diff = w.mean - prior_.m;
    const double shrink = prior_.kappa * n / kn;
    for (int j = 0; j < d; ++j)
      for (int i = 0; i < d; ++i) w.psin(i, j) = prior_.psi(i, j) + w.scatter(i, j) + (shrink * w.diff(i)) * w.diff(j);
    draw_from(layout, w.mn, kn, w.psin, prior_.nu + n, g);
  }

  /// The current covariate moments.
  const covariate_moments& moments() const noexcept { return moments_; }
  /// The current covariate mean mu_x.
  const Eigen::VectorXd& mean() const noexcept { return mu_; }
  /// The current covariate covariance Sigma_x.
  const Eigen::MatrixXd& covariance() const noexcept { return sigma_; }

 private:
  // Sigma ~ InverseWishart(nu, psi), mu ~ N(m, Sigma / kappa), then the design row's moments; in the object's storage.
  template <random_engine G>
  void draw_from(const regression_layout& layout, const Eigen::VectorXd& m, double kappa, const Eigen::MatrixXd& psi, double nu,
                 G& g) {
    auto& w = work_;
    draw_inverse_wishart(g, nu, psi, sigma_, w.wishart);
    w.scaled = sigma_ / kappa;
    w.llt.compute(w.scaled);
    if (w.llt.info() != Eigen::Success)
      throw std::domain_error("hierarchical_normal_covariates: the drawn covariance is not positive definite");
    w.l = w.llt.matrixL();
    const Eigen::Index d = m.size();
    if (w.e.size() != d) w.e.resize(d);
    if (mu_.size() != d) mu_.resize(d);
    for (Eigen::Index i = 0; i < d; ++i) w.e(i) = draw_normal(g);
    mu_.noalias() = w.l.triangularView<Eigen::Lower>() * w.e;
    mu_ += m;
    normal_covariate_moments(layout, mu_, sigma_, moments_, w.moments);
  }

  // Storage of the update (per object; a chain owns its model and so its covariates).
  struct workspace {
    Eigen::VectorXd sum, mean, mn, diff, e;
    Eigen::MatrixXd scatter, psin, scaled, l;
    Eigen::LLT<Eigen::MatrixXd> llt;
    inverse_wishart_workspace wishart;
    normal_moments_scratch moments;

    workspace() = default;
    // Scratch storage: a copy starts empty, assignment keeps the target's storage (see cholesky_workspace).
    workspace(const workspace&) noexcept {}
    workspace& operator=(const workspace&) noexcept { return *this; }
  };

  niw_hyperprior prior_;
  Eigen::VectorXd mu_;
  Eigen::MatrixXd sigma_;
  covariate_moments moments_;
  workspace work_;
};

}  // namespace privpost
