// privpost/testing/regression_study.hpp
// regression_study: simulation-based calibration trials for Bayesian linear regression under SSP (001 Sec. 4.2): theta,
// sigma^2 from the NIG prior; covariates from the hierarchical normal (NIW) model or from a fixed normal covariate prior;
// y = theta^T x~ + e; a release of [X^T X, X^T y, y^T y] with sensitivity from declared bounds on x and y (the data are not
// truncated, as in the paper); then the posterior of each method.
#pragma once

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/interval.hpp"
#include "privpost/core/random/multivariate_normal.hpp"
#include "privpost/core/random/normal.hpp"
#include "privpost/core/random/wishart.hpp"
#include "privpost/families/regression/covariate_moments.hpp"
#include "privpost/families/regression/noisy_moments.hpp"
#include "privpost/families/regression/normal_inverse_gamma_regression.hpp"
#include "privpost/families/regression/regression_layout.hpp"
#include "privpost/inference/calibration_study.hpp"
#include "privpost/testing/family_study.hpp"
#include "privpost/families/regression/covariate_models.hpp"
#include "privpost/families/regression/linear_regression_model.hpp"
#include "privpost/samplers/conjugate.hpp"
#include "privpost/samplers/gibbs_ss.hpp"

namespace privpost {

/// How the covariates of a trial are drawn and which Gibbs-SS variant ("gibbs") models them.
enum class covariate_scenario {
  hierarchical,  ///< (mu_x, Sigma_x) ~ NIW per trial, x ~ N(mu_x, Sigma_x); method gibbs = Gibbs-SS-Update
  fixed          ///< x ~ N(0, E[Sigma_x]) for every trial; method gibbs = Gibbs-SS-Prior with those moments in closed form
};
// Method "noisy" (either scenario) is Gibbs-SS-Noisy: half the budget on the statistic, half on the covariates' fourth
// sample moments, whose noisy values it uses as fixed moments (no inference over their noise, as in the paper).

template <scale_mixture_noise Mechanism>
class regression_study {
 public:
  /// make_mechanism(l1, l2, share) builds a mechanism with `share` of the budget (1, or 1/2 for each of Gibbs-SS-Noisy's
  /// two releases) from an interval sensitivity over the declared bounds.
  template <class MakeMechanism>
  regression_study(const regression_layout& layout, const nig_regression_prior& prior, const niw_hyperprior& covariate_prior,
                   covariate_scenario scenario, const std::vector<interval>& covariate_bounds, interval response_bounds,
                   MakeMechanism make_mechanism, study_settings settings)
      : layout_(layout),
        prior_(prior),
        covariate_prior_(covariate_prior),
        scenario_(scenario),
        sensitivity_(layout.sensitivity(covariate_bounds, response_bounds)),
        mechanism_(make_mechanism(sensitivity_.first, sensitivity_.second, 1.0)),
        half_mechanism_(make_mechanism(sensitivity_.first, sensitivity_.second, 0.5)),
        moments_(layout),
        moment_mechanism_(std::apply([&](double l1, double l2) { return make_mechanism(l1, l2, 0.5); },
                                     moments_.sensitivity(covariate_bounds, settings.n))),
        settings_(std::move(settings)) {
    detail::check_study_settings("regression_study", settings_, false, true);
    const int d = layout_.covariates();
    fixed_cov_ = covariate_prior_.psi / (covariate_prior_.nu - d - 1.0);
    if (!(covariate_prior_.nu > d + 1.0)) throw_invalid("regression_study", "nu", covariate_prior_.nu, "a number > d + 1 (finite mean)");
    fixed_moments_ = normal_covariate_moments(layout_, Eigen::VectorXd::Zero(d), fixed_cov_);
  }

  double l1_sensitivity() const noexcept { return sensitivity_.first; }
  double l2_sensitivity() const noexcept { return sensitivity_.second; }

  template <random_engine G>
  std::vector<method_draws> trial(G& g) const {
    const int d = layout_.covariates();
    const regression_parameter truth = prior_.draw(g);
    Eigen::VectorXd mu = Eigen::VectorXd::Zero(d);
    Eigen::MatrixXd sigma = fixed_cov_;
    if (scenario_ == covariate_scenario::hierarchical) {
      sigma = draw_inverse_wishart(g, covariate_prior_.nu, covariate_prior_.psi);
      mu = draw_multivariate_normal(g, covariate_prior_.m, Eigen::MatrixXd(Eigen::LLT<Eigen::MatrixXd>(sigma / covariate_prior_.kappa).matrixL()));
    }
    const Eigen::MatrixXd l = Eigen::LLT<Eigen::MatrixXd>(sigma).matrixL();
    Eigen::VectorXd s = Eigen::VectorXd::Zero(layout_.size());
    const auto n_records = static_cast<long>(settings_.n);
    const double sd = std::sqrt(truth.variance);
    std::vector<Eigen::VectorXd> xs;
    xs.reserve(static_cast<std::size_t>(n_records));
    for (long i = 0; i < n_records; ++i) {
      xs.push_back(draw_multivariate_normal(g, mu, l));
      const double y = truth.theta.dot(layout_.design_row(xs.back())) + sd * draw_normal(g);
      s += layout_.record_statistic(xs.back(), y);
    }
    const Eigen::VectorXd z = mechanism_.release(s, g);
    // Gibbs-SS-Noisy's two releases, each with half of the budget (001 Sec. 3.4.4).
    const Eigen::VectorXd z_half = half_mechanism_.release(s, g);
    const Eigen::VectorXd z_moments = moment_mechanism_.release(moments_.sample_moments(xs), g);
    Eigen::VectorXd truth_vector(truth.theta.size() + 1);
    truth_vector << truth.theta, truth.variance;
    const double n = settings_.n;
    std::vector<method_draws> out;
    for (const auto& m : settings_.methods) {
      method_draws r{m, truth_vector, {}, 0.0};
      if (m == "gibbs") {
        if (scenario_ == covariate_scenario::hierarchical) {
          r.draws = timed([&] {
            return detail::single_chain([&](auto& cg) {
              return gibbs_ss(linear_regression_model(layout_, hierarchical_normal_covariates(layout_, covariate_prior_, cg)), prior_, mechanism_, z, n, cg);
            }, settings_.burnin, settings_.draws, g, settings_.thin);
          }, r.seconds);
        } else {
          r.draws = timed([&] {
            return detail::single_chain([&](auto& cg) {
              return gibbs_ss(linear_regression_model(layout_, fixed_covariates(fixed_moments_)), prior_, mechanism_, z, n, cg);
            }, settings_.burnin, settings_.draws, g, settings_.thin);
          }, r.seconds);
        }
      } else if (m == "noisy") {
        r.draws = timed([&] {
          return detail::single_chain([&](auto& cg) {
            return gibbs_ss(linear_regression_model(layout_, fixed_covariates(moments_.moments_from_release(z_moments))), prior_,
                            half_mechanism_, z_half, n, cg);
          }, settings_.burnin, settings_.draws, g, settings_.thin);
        }, r.seconds);
      } else if (m == "naive" || m == "nonprivate") {
        const Eigen::VectorXd& stat = (m == "naive") ? z : s;
        r.draws = timed([&] {
          return detail::single_chain([&](auto& cg) { return conjugate_sampler(linear_regression_statistic(layout_), prior_, stat, n, cg); }, 0,
                                      settings_.draws, g);
        }, r.seconds);
      }
      out.push_back(std::move(r));
    }
    return out;
  }

 private:
  regression_layout layout_;
  nig_regression_prior prior_;
  niw_hyperprior covariate_prior_;
  covariate_scenario scenario_;
  std::pair<double, double> sensitivity_;
  Mechanism mechanism_;
  Mechanism half_mechanism_;
  moment_release_layout moments_;
  Mechanism moment_mechanism_;
  study_settings settings_;
  Eigen::MatrixXd fixed_cov_;
  covariate_moments fixed_moments_;
};

}  // namespace privpost
