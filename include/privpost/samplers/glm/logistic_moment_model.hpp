// privpost/samplers/glm/logistic_moment_model.hpp
// logistic_moment_model: the noise-aware DP-GLM posterior of logistic regression (Kulkarni et al. 2021, Sec. 3-4.1;
// docs/design-glm.md Sec. 3.1-3.6), glm_moment_model with the logistic moment map: the link's functionals kappa_0..5 at
// (m_eta, q) (exact_logistic_link by default, or the paper's taylor_logistic_link) and the closed-form moments of
// families/glm/logistic_moments.hpp.
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <limits>
#include <optional>

#include "privpost/core/errors.hpp"
#include "privpost/families/glm/logistic_link.hpp"
#include "privpost/families/glm/logistic_moments.hpp"
#include "privpost/samplers/glm/glm_moment_model.hpp"

namespace privpost {

/// The logistic moment map of glm_moment_model (glm_statistic::logistic(d, R[, c]) layout): mu and V through
/// w = Sigma~ theta~, m_eta = theta~' nu, q = theta~' w and the link's functionals; the adjoint through
/// d kappa_j / d m = kappa_(j+1), d kappa_j / d q = kappa_(j+2) / 2. Allocates nothing after construction.
template <class Link = exact_logistic_link>
class logistic_moment_map {
 public:
  /// glm_moment_model::initial_point starts the covariate parameters at the release's moment estimates.
  static constexpr bool moment_start = true;
  /// The map for d covariates, with an intercept column of this constant when given.
  logistic_moment_map(int d, std::optional<double> intercept)
      : layout_(d, intercept.has_value()), ws_(layout_), w_(layout_.augmented()), w_bar_(layout_.augmented()) {}

  /// Length of the statistic.
  Eigen::Index size() const noexcept { return layout_.size(); }
  /// p: d, plus 1 with an intercept.
  int augmented() const noexcept { return layout_.augmented(); }
  /// The statistic's layout.
  const logistic_moment_layout& layout() const noexcept { return layout_; }

  /// mu and V at (nu, theta~, Sigma~); false where |m_eta| or q exceeds 1e6 (or q < 0).
  bool forward(const Eigen::VectorXd& nu, const Eigen::VectorXd& theta, const Eigen::MatrixXd& sigma, Eigen::VectorXd& mu,
               Eigen::MatrixXd& v) {
    w_.noalias() = sigma * theta;
    q_ = theta.dot(w_);
    m_ = theta.dot(nu);
    if (!(q_ >= 0.0 && q_ <= 1e6) || !(std::abs(m_) <= 1e6)) return false;
    k_ = Link::functionals(m_, q_);
    logistic_moments(layout_, nu, w_, sigma, k_, mu, v, ws_);
    return true;
  }

  /// Estimates of E[x~] and E[x~ x~'] (augmented indices, P and P x P) from released sums z of n records, NaN where the
  /// release has no such entry: the t2 block gives E[x~_j x~_k] (divided by its sqrt(2) for j != k); E[x~] is never
  /// released (the y x~ block mixes in the response). For nuts_sampler's initial points (glm_moment_model).
  void released_covariate_moments(const Eigen::VectorXd& z, double n, Eigen::VectorXd& mean, Eigen::MatrixXd& second) const {
    const int p = layout_.augmented();
    mean.setConstant(p, std::numeric_limits<double>::quiet_NaN());
    second.setConstant(p, p, std::numeric_limits<double>::quiet_NaN());
    Eigen::Index r = p;
    for (const auto& e : layout_.pairs()) {
      second(e.j, e.k) = second(e.k, e.j) = z(r++) / (n * e.scale);
    }
  }

  /// At the last forward point (nu, theta~, Sigma~): sets nu_bar, theta_bar, sigma_bar to the gradient of
  /// <a, mu> + <g, V> (sigma_bar counted at every read of Sigma~_ab).
  void adjoint(const Eigen::VectorXd& nu, const Eigen::VectorXd& theta, const Eigen::MatrixXd& sigma, const Eigen::VectorXd& a,
               const Eigen::MatrixXd& g, Eigen::VectorXd& nu_bar, Eigen::VectorXd& theta_bar, Eigen::MatrixXd& sigma_bar) {
    nu_bar.setZero();
    w_bar_.setZero();
    sigma_bar.setZero();
    link_functionals k_bar{};
    logistic_moments_adjoint(layout_, nu, w_, sigma, k_, a, g, nu_bar, w_bar_, sigma_bar, k_bar, ws_);
    double m_bar = 0.0, q_bar = 0.0;
    for (std::size_t j = 0; j < 4; ++j) {
      m_bar += k_bar[j] * k_[j + 1];
      q_bar += 0.5 * k_bar[j] * k_[j + 2];
    }
    theta_bar.noalias() = sigma.transpose() * w_bar_;
    theta_bar += 2.0 * q_bar * w_ + m_bar * nu;
    sigma_bar.noalias() += w_bar_ * theta.transpose();
    sigma_bar.noalias() += q_bar * theta * theta.transpose();
    nu_bar += m_bar * theta;
  }

  /// mu and V at (nu, theta~, Sigma~), for simulation.
  void moments(const Eigen::VectorXd& nu, const Eigen::VectorXd& theta, const Eigen::MatrixXd& sigma, Eigen::VectorXd& mu,
               Eigen::MatrixXd& v) const {
    const Eigen::VectorXd w = sigma * theta;
    mu.resize(layout_.size());
    v.resize(layout_.size(), layout_.size());
    logistic_moments(layout_, nu, w, sigma, Link::functionals(theta.dot(nu), theta.dot(w)), mu, v);
  }

 private:
  logistic_moment_layout layout_;
  logistic_moment_workspace ws_;
  Eigen::VectorXd w_, w_bar_;
  double m_ = 0.0, q_ = 0.0;
  link_functionals k_{};
};

/// The noise-aware logistic DP-GLM posterior (see glm_moment_model): link exact_logistic_link (default) or
/// taylor_logistic_link.
template <class Link = exact_logistic_link>
using logistic_moment_model = glm_moment_model<logistic_moment_map<Link>>;

}  // namespace privpost
