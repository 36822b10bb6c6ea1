// privpost/samplers/glm/poisson_moment_model.hpp
// poisson_moment_model: the noise-aware DP-GLM posterior of Poisson regression (Kulkarni et al. 2021, Sec. 3.3.2, 4.1;
// docs/design-glm.md Sec. 3.3), glm_moment_model with the exact Poisson moments of families/glm/poisson_moments.hpp
// (exponential tilting; no link approximation) over the release [x; t2(x); y x~; y t2(x~)] of
// glm_statistic::poisson(d, R, R_y[, c]) with the y t2 block (the paper's release). The model's y is Poisson without
// the release's clamp at R_y: declare R_y well above the counts the prior allows.
#pragma once

#include <Eigen/Core>
#include <limits>
#include <optional>

#include "privpost/core/errors.hpp"
#include "privpost/families/glm/poisson_moments.hpp"
#include "privpost/samplers/glm/glm_moment_model.hpp"

namespace privpost {

/// The Poisson moment map of glm_moment_model. forward fails (the density is -infinity) where the tilting factor
/// e^{2 m + 2 q} nears overflow (poisson_moment_q_limit). forward and adjoint allocate nothing (a workspace sized at
/// construction: one map per model copy); moments, for simulation, allocates.
class poisson_moment_map {
 public:
  /// glm_moment_model starts NUTS at the release's covariate moments with small coefficients (initial_point).
  static constexpr bool moment_start = true;

  /// The map for d covariates, with an intercept column of this constant when given.
  poisson_moment_map(int d, std::optional<double> intercept) : layout_(d, intercept.has_value(), true), ws_(layout_) {}

  /// Length of the statistic.
  Eigen::Index size() const noexcept { return layout_.size(); }
  /// p: d, plus 1 with an intercept.
  int augmented() const noexcept { return layout_.augmented(); }
  /// The statistic's layout.
  const poisson_moment_layout& layout() const noexcept { return layout_; }

  /// mu and V at (nu, theta~, Sigma~); false where the moments would overflow (poisson_moment_q_limit).
  bool forward(const Eigen::VectorXd& nu, const Eigen::VectorXd& theta, const Eigen::MatrixXd& sigma, Eigen::VectorXd& mu,
               Eigen::MatrixXd& v) {
    return poisson_moments(layout_, nu, theta, sigma, mu, v, ws_);
  }

  /// Sets nu_bar, theta_bar, sigma_bar to the gradient of <a, mu> + <g, V> at (nu, theta~, Sigma~) (sigma_bar
  /// symmetric).
  void adjoint(const Eigen::VectorXd& nu, const Eigen::VectorXd& theta, const Eigen::MatrixXd& sigma, const Eigen::VectorXd& a,
               const Eigen::MatrixXd& g, Eigen::VectorXd& nu_bar, Eigen::VectorXd& theta_bar, Eigen::MatrixXd& sigma_bar) {
    nu_bar.setZero();
    theta_bar.setZero();
    sigma_bar.setZero();
    if (!poisson_moments_adjoint(layout_, nu, theta, sigma, a, g, nu_bar, theta_bar, sigma_bar, ws_))
      throw_domain("poisson_moment_map::adjoint", "q = theta' Sigma theta", theta.dot(sigma * theta),
                   "a point where the forward map succeeded");
  }

  /// Estimates of E[x~] and E[x~ x~'] (augmented indices, P and P x P) from released sums z of n records, NaN where the
  /// release has no such entry (the intercept's): the x block gives E[x_i], the t2 block E[x_j x_k]. For nuts_sampler's
  /// initial points (glm_moment_model).
  void released_covariate_moments(const Eigen::VectorXd& z, double n, Eigen::VectorXd& mean, Eigen::MatrixXd& second) const {
    const int p = layout_.augmented();
    mean.setConstant(p, std::numeric_limits<double>::quiet_NaN());
    second.setConstant(p, p, std::numeric_limits<double>::quiet_NaN());
    Eigen::Index r = 0;
    for (const auto& e : layout_.entries()) {
      const double v = z(r++) / (n * e.scale);
      if (e.y != 0) continue;
      if (e.count == 1)
        mean(e.i) = v;
      else
        second(e.i, e.j) = second(e.j, e.i) = v;
    }
  }

  /// mu and V for simulation; throws std::domain_error where the tilting factors would overflow.
  void moments(const Eigen::VectorXd& nu, const Eigen::VectorXd& theta, const Eigen::MatrixXd& sigma, Eigen::VectorXd& mu,
               Eigen::MatrixXd& v) const {
    if (!poisson_moments(layout_, nu, theta, sigma, mu, v))
      throw_domain("poisson_moment_map::moments", "q = theta' Sigma theta", theta.dot(sigma * theta),
                   "q <= 300 and 2 theta' nu + 2 q <= 600");
  }

 private:
  poisson_moment_layout layout_;
  poisson_moment_workspace ws_;
};

/// The noise-aware Poisson DP-GLM posterior (see glm_moment_model).
using poisson_moment_model = glm_moment_model<poisson_moment_map>;

}  // namespace privpost
