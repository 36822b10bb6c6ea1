// privpost/samplers/glm/glm_prior.hpp
// The DP-GLM priors (Kulkarni et al. 2021, Sec. 4.1; docs/design-glm.md Sec. 3.4): glm_prior, draws of (theta, Sigma), and
// glm_coefficient_transform, the coefficients' unconstrained parametrisation with its log density, Jacobian and reverse
// pass, shared by the noise-aware moment model and the record-level (non-private) model.
#pragma once

#include <Eigen/Core>
#include <boost/math/special_functions/gamma.hpp>
#include <cmath>
#include <numbers>
#include <optional>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/random/lkj.hpp"
#include "privpost/core/random/normal.hpp"
#include "privpost/core/random/uniform.hpp"

namespace privpost {

/// The paper's priors (Sec. 4.1; docs/design-glm.md Sec. 3.4): theta = sqrt(rho) p / ||p|| with p ~ N(0, I) and rho ~ chi^2(d)
/// truncated to (0, s_max) (a declared public constant: the paper's data-dependent choice is not DP, E7), covariate
/// scales tau_j ~ half-normal(tau_scale), correlation Omega ~ LKJ(lkj_eta), Sigma = diag(tau) Omega diag(tau). With an
/// intercept the same coefficient prior holds for (theta_0, theta) in dimension d + 1; with a covariate mean (docs/design-glm.md
/// Sec. 3.7, beyond the paper) mu_x ~ N(0, mean_scale^2 I).
struct glm_prior {
  /// The bound s_max on ||theta||^2, a declared public constant.
  double s_max = 9.0;
  /// Scale of the half-normal prior of the covariate scales tau_j.
  double tau_scale = 2.5;
  /// Shape eta of the LKJ prior of the covariate correlation.
  double lkj_eta = 2.0;
  /// Scale of the normal prior of the covariate mean.
  double mean_scale = 1.0;
};

/// Which covariate model and record layout (docs/design-glm.md Sec. 3.7): an intercept column of public constant c (the
/// release's glm_statistic::logistic(d, R, c)) and whether the covariates have a mean mu_x to infer (otherwise they
/// are modelled as zero-mean, the paper's model, E14). Real data need both.
struct glm_model_options {
  /// The intercept column's public constant c; none without an intercept.
  std::optional<double> intercept;
  /// Whether the covariates have a mean mu_x to infer.
  bool covariate_mean = false;
};

/// A draw of the GLM parameters from glm_prior: coefficients (theta_0 first with an intercept), the covariate
/// covariance and the covariate mean (empty means zero).
struct glm_parameters {
  /// The coefficients (theta_0 first with an intercept).
  Eigen::VectorXd theta;
  /// The covariate covariance Sigma.
  Eigen::MatrixXd sigma;
  /// The covariate mean (empty: zero).
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

/// The coefficients on an unconstrained v in R^P: the radial map theta = sqrt(s_max) tanh(||v||) v / ||v|| (theta = 0
/// at v = 0), a smooth bijection of R^P onto the open ball ||theta||^2 < s_max. With the log density of v
///     -||theta||^2 / 2 + log sech^2(r) + (P - 1) log(tanh(r) / r),   r = ||v||   (the last two: log |det dtheta/dv|,
/// up to a constant), theta ~ N(0, I) conditioned on ||theta||^2 < s_max: the paper's prior (p ~ N(0, I), rho ~
/// chi^2(P) truncated to (0, s_max), theta = sqrt(rho) p / ||p||, docs/design-glm.md Sec. 3.4) on other coordinates.
/// Why not the paper's (p, r): its ||p|| is a nuisance coordinate with a N(0, I) prior that scales the posterior's
/// tight directions in p by a factor that varies about threefold (a mild funnel), and costs one dimension. On the
/// benchmark's d = 6 logistic posterior (benchmarks/glm_bench.cpp) this map halved NUTS's leapfrog steps per draw
/// (tree depth 4 instead of 5 at a larger adapted step size). forward() gives theta and the log density of v (up to a
/// constant); backward() turns the gradient of a function of theta into the gradient in v and adds the prior's own.
/// Near v = 0 the ratios use their Taylor series (below r = 0.02, truncation error < 1e-15). Allocates nothing.
class glm_coefficient_transform {
 public:
  /// The transform for the bound s_max; std::invalid_argument unless it is finite and > 0.
  explicit glm_coefficient_transform(double s_max) : s_max_(s_max) {
    check_positive_finite("glm_coefficient_transform", "s_max", s_max);
  }

  /// The bound s_max.
  double s_max() const noexcept { return s_max_; }

  /// theta at v and the log prior density of v; false (theta unset) when v is not finite.
  bool forward(const Eigen::Ref<const Eigen::VectorXd>& v, Eigen::VectorXd& theta, double& log_density) {
    const double r = v.norm();
    if (!std::isfinite(r)) return false;
    const double pm1 = static_cast<double>(v.size()) - 1.0;
    const double t = std::tanh(r);
    const double e = std::exp(-2.0 * r);
    // sech^2 r and its log without cancellation or overflow at any r >= 0.
    const double sech2 = 4.0 * e / ((1.0 + e) * (1.0 + e));
    const double log_sech2 = 2.0 * (std::numbers::ln2 - r - std::log1p(e));
    ratio_ = tanh_ratio(r);
    double log_ratio = 0.0;  // log(tanh(r) / r)
    double djac = 0.0;       // (2 / sinh(2r) - 1 / r) / r
    if (r < series_cut) {
      const double r2 = r * r;
      log_ratio = r2 * (-1.0 / 3.0 + r2 * (7.0 / 90.0 + r2 * (-62.0 / 2835.0)));
      // (r sech^2 r - tanh r) / r^3 and (2 / sinh(2r) - 1 / r) / r.
      dratio_ = -2.0 / 3.0 + r2 * (8.0 / 15.0 + r2 * (-34.0 / 105.0 + r2 * (496.0 / 2835.0)));
      djac = -2.0 / 3.0 + r2 * (14.0 / 45.0 + r2 * (-124.0 / 945.0 + r2 * (254.0 / 4725.0)));
    } else {
      log_ratio = std::log(t) - std::log(r);
      dratio_ = (r * sech2 - t) / (r * r * r);
      djac = (2.0 / std::sinh(2.0 * r) - 1.0 / r) / r;  // sinh overflows to inf past r ~ 355: 2 / inf = 0
    }
    const double s = std::sqrt(s_max_);
    theta = (s * ratio_) * v;
    log_density = -0.5 * s_max_ * t * t + log_sech2 + pm1 * log_ratio;
    // The prior's radial derivative over r: d/dr [-s_max t^2 / 2 + log sech^2 r + (P - 1) log(t / r)] / r.
    radial_ = -s_max_ * ratio_ * sech2 - 2.0 * ratio_ + pm1 * djac;
    return std::isfinite(log_density);
  }

  /// Gradient in v of log_density + f(theta), given theta_bar = df/dtheta at the last forward() point:
  /// dtheta/dv = h(r) I + (h'(r) / r) v v', h(r) = sqrt(s_max) tanh(r) / r.
  void backward(const Eigen::Ref<const Eigen::VectorXd>& v, const Eigen::VectorXd& theta_bar,
                Eigen::Ref<Eigen::VectorXd> grad_v) const {
    const double s = std::sqrt(s_max_);
    grad_v = (s * ratio_) * theta_bar + (s * dratio_ * v.dot(theta_bar) + radial_) * v;
  }

  /// theta at v alone (for parameter vectors).
  static Eigen::VectorXd coefficients(const Eigen::Ref<const Eigen::VectorXd>& v, double s_max) {
    return (std::sqrt(s_max) * tanh_ratio(v.norm())) * v;
  }

  /// A random start near theta = 0 for NUTS: every v_i uniform on [-c, c], c = radius / (2 sqrt(P)), so ||v|| <=
  /// radius / 2 and ||theta|| <= sqrt(s_max) tanh(radius / 2) (0.76 sqrt(s_max) at Stan's radius 2). Stan's uniform
  /// [-radius, radius] would start most chains near the boundary ||theta||^2 = s_max, where the map is flattest.
  template <random_engine G>
  static void initial_point(G& g, double radius, Eigen::Ref<Eigen::VectorXd> v) {
    const double c = radius / (2.0 * std::sqrt(static_cast<double>(v.size())));
    for (Eigen::Index i = 0; i < v.size(); ++i) v(i) = c * (2.0 * draw_uniform(g) - 1.0);
  }

  /// Below this ||v|| the ratios use their series.
  static constexpr double series_cut = 0.02;

 private:
  /// tanh(r) / r for r >= 0 (its Taylor series below series_cut).
  static double tanh_ratio(double r) noexcept {
    if (r >= series_cut) return std::tanh(r) / r;
    const double r2 = r * r;
    return 1.0 + r2 * (-1.0 / 3.0 + r2 * (2.0 / 15.0 + r2 * (-17.0 / 315.0)));
  }

  double s_max_;
  // At the last forward() point: tanh(r) / r, (r sech^2 r - tanh r) / r^3 and the prior's radial derivative over r.
  double ratio_ = 1.0, dratio_ = 0.0, radial_ = 0.0;
};

}  // namespace privpost
