// privpost/samplers/glm/glm_prior.hpp
// The DP-GLM priors (Kulkarni et al. 2021, Sec. 4.1; spec glm.md Sec. 3.4): glm_prior, draws of (theta, Sigma), and
// glm_coefficient_transform, the coefficients' unconstrained parametrisation with its log density, Jacobian and reverse
// pass, shared by the noise-aware moment model and the record-level (non-private) model.
#pragma once

#include <Eigen/Core>
#include <boost/math/special_functions/gamma.hpp>
#include <cmath>
#include <optional>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/random/lkj.hpp"
#include "privpost/core/random/normal.hpp"
#include "privpost/core/random/uniform.hpp"

namespace privpost {

/// The paper's priors (Sec. 4.1; spec Sec. 3.4): theta = sqrt(rho) p / ||p|| with p ~ N(0, I) and rho ~ chi^2(d)
/// truncated to (0, s_max) (a declared public constant: the paper's data-dependent choice is not DP, E7), covariate
/// scales tau_j ~ half-normal(tau_scale), correlation Omega ~ LKJ(lkj_eta), Sigma = diag(tau) Omega diag(tau). With an
/// intercept the same coefficient prior holds for (theta_0, theta) in dimension d + 1; with a covariate mean (spec
/// Sec. 3.7, beyond the paper) mu_x ~ N(0, mean_scale^2 I).
struct glm_prior {
  double s_max = 9.0;
  double tau_scale = 2.5;
  double lkj_eta = 2.0;
  double mean_scale = 1.0;
};

/// Which covariate model and record layout (spec glm.md Sec. 3.7): an intercept column of public constant c (the
/// release's glm_statistic::logistic(d, R, c)) and whether the covariates have a mean mu_x to infer (otherwise they
/// are modelled as zero-mean, the paper's model, E14). Real data need both.
struct glm_model_options {
  std::optional<double> intercept;
  bool covariate_mean = false;
};

/// A draw of the GLM parameters from glm_prior: coefficients (theta_0 first with an intercept), the covariate
/// covariance and the covariate mean (empty means zero).
struct glm_parameters {
  Eigen::VectorXd theta;
  Eigen::MatrixXd sigma;
  Eigen::VectorXd mean = {};
};

/// Draws theta from the coefficient prior: N(0, I_d) conditioned on ||theta||^2 < s_max.
template <random_engine G>
Eigen::VectorXd draw_glm_coefficients(G& g, int d, double s_max) {
  if (d < 1) throw_invalid("draw_glm_coefficients", "d", d, "an integer >= 1");
  check_positive_finite("draw_glm_coefficients", "s_max", s_max);
  Eigen::VectorXd p(d);
  for (int i = 0; i < d; ++i) p(i) = draw_normal(g);
  const double a = 0.5 * d;
  const double rho = 2.0 * boost::math::gamma_p_inv(a, draw_uniform(g) * boost::math::gamma_p(a, 0.5 * s_max));
  return std::sqrt(rho) * p / p.norm();
}

/// Draws theta, Sigma and (with options.covariate_mean) mu_x from the prior, for simulation-based calibration and test
/// data; theta has d + 1 entries (theta_0 first) with an intercept.
template <random_engine G>
glm_parameters draw_glm_prior(G& g, int d, const glm_prior& prior, const glm_model_options& options = {}) {
  if (d < 1) throw_invalid("draw_glm_prior", "d", d, "an integer >= 1");
  check_positive_finite("draw_glm_prior", "tau_scale", prior.tau_scale);
  if (options.covariate_mean) check_positive_finite("draw_glm_prior", "mean_scale", prior.mean_scale);
  const int p = d + (options.intercept ? 1 : 0);
  glm_parameters out{draw_glm_coefficients(g, p, prior.s_max), Eigen::MatrixXd(d, d), Eigen::VectorXd::Zero(d)};
  Eigen::VectorXd tau(d);
  for (int i = 0; i < d; ++i) tau(i) = std::abs(draw_normal(g)) * prior.tau_scale;
  Eigen::MatrixXd l(d, d);
  draw_lkj_cholesky(g, prior.lkj_eta, l);
  out.sigma = tau.asDiagonal() * (l * l.transpose()) * tau.asDiagonal();
  if (options.covariate_mean)
    for (int i = 0; i < d; ++i) out.mean(i) = prior.mean_scale * draw_normal(g);
  return out;
}

/// The coefficients on the unconstrained (p in R^d, r in R): rho = s_max logistic(r), theta = sqrt(rho) p / ||p||, so
/// that theta ~ N(0, I) conditioned on ||theta||^2 < s_max when p ~ N(0, I) and rho ~ chi^2(d) truncated to (0, s_max).
/// forward() gives theta and the log density of (p, r) with the Jacobian of r (up to a constant); backward() turns the
/// gradient of a function of theta into the gradient in (p, r) and adds the prior's own. Allocates nothing.
class glm_coefficient_transform {
 public:
  explicit glm_coefficient_transform(double s_max) : s_max_(s_max) {
    check_positive_finite("glm_coefficient_transform", "s_max", s_max);
  }

  double s_max() const noexcept { return s_max_; }

  /// theta at (p, r) and the log prior density of (p, r); false (theta unset) when p = 0 or a value is not finite.
  bool forward(const Eigen::Ref<const Eigen::VectorXd>& p, double r, Eigen::VectorXd& theta, double& log_density) {
    pn_ = p.norm();
    if (!(pn_ > 0.0) || !std::isfinite(pn_) || !std::isfinite(r)) return false;
    sig_r_ = 1.0 / (1.0 + std::exp(-r));
    rho_ = s_max_ * sig_r_;
    if (!(rho_ > 0.0)) return false;
    sqrt_rho_ = std::sqrt(rho_);
    theta = (sqrt_rho_ / pn_) * p;
    const double d = static_cast<double>(p.size());
    const double log_sig_r = -std::log1p(std::exp(-r)), log_sig_mr = -std::log1p(std::exp(r));
    log_density =
        -0.5 * p.squaredNorm() + (0.5 * d - 1.0) * std::log(rho_) - 0.5 * rho_ + std::log(s_max_) + log_sig_r + log_sig_mr;
    return std::isfinite(log_density);
  }

  /// Gradient in (p, r) of log_density + f(theta), given theta_bar = df/dtheta at the last forward() point.
  void backward(const Eigen::Ref<const Eigen::VectorXd>& p, const Eigen::VectorXd& theta_bar, Eigen::Ref<Eigen::VectorXd> grad_p,
                double& grad_r) const {
    const double d = static_cast<double>(p.size());
    const double ph_dot = p.dot(theta_bar) / pn_;  // p_hat . theta_bar
    grad_p = (sqrt_rho_ / pn_) * (theta_bar - (ph_dot / pn_) * p) - p;
    const double rho_bar = ph_dot / (2.0 * sqrt_rho_) + (0.5 * d - 1.0) / rho_ - 0.5;
    grad_r = rho_bar * rho_ * (1.0 - sig_r_) + 1.0 - 2.0 * sig_r_;
  }

  /// theta at (p, r) alone (for parameter vectors).
  static Eigen::VectorXd coefficients(const Eigen::Ref<const Eigen::VectorXd>& p, double r, double s_max) {
    const double rho = s_max / (1.0 + std::exp(-r));
    return std::sqrt(rho) * p / p.norm();
  }

 private:
  double s_max_;
  double pn_ = 0.0, sqrt_rho_ = 0.0, rho_ = 0.0, sig_r_ = 0.0;
};

}  // namespace privpost
