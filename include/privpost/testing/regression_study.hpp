// privpost/testing/regression_study.hpp
// regression_study: simulation-based calibration trials for Bayesian linear regression under SSP (001 Sec. 4.2): theta,
// sigma^2 from the NIG prior; covariates from the hierarchical normal (NIW) model or from a fixed normal covariate prior;
// y = theta^T x~ + e; a release of [X^T X, X^T y, y^T y] with sensitivity from declared bounds on x and y (the data are not
// truncated, as in the paper); then the posterior of each method.
#pragma once

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <cmath>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/interval.hpp"
#include "privpost/core/random/multivariate_normal.hpp"
#include "privpost/core/random/normal.hpp"
#include "privpost/core/random/wishart.hpp"
#include "privpost/families/regression/covariate_models.hpp"
#include "privpost/families/regression/covariate_moments.hpp"
#include "privpost/families/regression/linear_regression_model.hpp"
#include "privpost/families/regression/noisy_moments.hpp"
#include "privpost/families/regression/normal_inverse_gamma_regression.hpp"
#include "privpost/families/regression/regression_layout.hpp"
#include "privpost/inference/calibration_study.hpp"
#include "privpost/samplers/conjugate.hpp"
#include "privpost/samplers/gibbs_ss.hpp"
#include "privpost/testing/family_study.hpp"

namespace privpost {

/// How the covariates of a trial are drawn and which Gibbs-SS variant ("gibbs") models them.
enum class covariate_scenario {
  hierarchical,  ///< (mu_x, Sigma_x) ~ NIW per trial, x ~ N(mu_x, Sigma_x); method gibbs = Gibbs-SS-Update
  fixed          ///< x ~ N(0, E[Sigma_x]) for every trial; method gibbs = Gibbs-SS-Prior with those moments in closed form
};
// Method "noisy" (either scenario) is Gibbs-SS-Noisy: half the budget on the statistic, half on the covariates' fourth
// sample moments, whose noisy values it uses as fixed moments (no inference over their noise, as in the paper).

/// One simulated regression trial: the truth, the exact statistic and the releases every method may use.
struct regression_trial {
  Eigen::VectorXd truth;      ///< (theta, sigma^2)
  Eigen::VectorXd s;          ///< the exact statistic (private)
  Eigen::VectorXd z;          ///< the release with the whole budget
  Eigen::VectorXd z_half;     ///< Gibbs-SS-Noisy: the statistic with half the budget
  Eigen::VectorXd z_moments;  ///< Gibbs-SS-Noisy: the covariates' fourth sample moments with the other half
  /// The number of records.
  double n = 0.0;
};

/// Simulation-based calibration trials for Bayesian linear regression under SSP (file comment): NIG prior, a covariate scenario,
/// a release with sensitivity from declared bounds, and the methods' posteriors.
template <scale_mixture_noise Mechanism>
class regression_study : public study_methods<regression_trial> {
 public:
  /// The trial type.
  using trial_type = regression_trial;

  /// make_mechanism(l1, l2, share) builds a mechanism with `share` of the budget (1, or 1/2 for each of Gibbs-SS-Noisy's
  /// two releases) from an interval sensitivity over the declared bounds.
  template <class MakeMechanism>
  requires std::is_invocable_r_v<Mechanism, const MakeMechanism&, double, double, double> regression_study(
      const regression_layout& layout, const nig_regression_prior& prior, const niw_hyperprior& covariate_prior,
      covariate_scenario scenario, const std::vector<interval>& covariate_bounds, interval response_bounds,
      MakeMechanism make_mechanism, study_settings settings)
      : study_methods<trial_type>("regression_study"),
        layout_(layout),
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
    detail::check_study_settings("regression_study", settings_, {.collapsed = false});
    const int d = layout_.covariates();
    fixed_cov_ = covariate_prior_.psi / (covariate_prior_.nu - d - 1.0);
    if (!(covariate_prior_.nu > d + 1.0))
      throw_invalid("regression_study", "nu", covariate_prior_.nu, "a number > d + 1 (finite mean)");
    fixed_moments_ = normal_covariate_moments(layout_, Eigen::VectorXd::Zero(d), fixed_cov_);
    this->set_methods(select_methods(standard_methods(), settings_.methods, "regression_study"));
  }

  /// The L1 sensitivity of the statistic from the declared bounds.
  double l1_sensitivity() const noexcept { return sensitivity_.first; }
  /// Its L2 sensitivity.
  double l2_sensitivity() const noexcept { return sensitivity_.second; }

  /// The truth, the covariates and responses, and the three releases (deterministic given g).
  trial_type simulate(std::mt19937_64& g) const {
    const int d = layout_.covariates();
    const regression_parameter truth = prior_.draw(g);
    Eigen::VectorXd mu = Eigen::VectorXd::Zero(d);
    Eigen::MatrixXd sigma = fixed_cov_;
    if (scenario_ == covariate_scenario::hierarchical) {
      sigma = draw_inverse_wishart(g, covariate_prior_.nu, covariate_prior_.psi);
      mu = draw_multivariate_normal(g, covariate_prior_.m,
                                    Eigen::MatrixXd(Eigen::LLT<Eigen::MatrixXd>(sigma / covariate_prior_.kappa).matrixL()));
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
    trial_type t;
    t.z = mechanism_.release(s, g);
    // Gibbs-SS-Noisy's two releases, each with half of the budget (001 Sec. 3.4.4).
    t.z_half = half_mechanism_.release(s, g);
    t.z_moments = moment_mechanism_.release(moments_.sample_moments(xs), g);
    t.truth.resize(truth.theta.size() + 1);
    t.truth << truth.theta, truth.variance;
    t.s = std::move(s);
    t.n = settings_.n;
    return t;
  }

  /// One trial: the truth, the data, the releases, and every method's draws.
  std::vector<method_draws> trial(std::mt19937_64& g) const { return this->run_on(simulate(g), g); }

  /// gibbs (Gibbs-SS-Update in the hierarchical scenario, Gibbs-SS-Prior in the fixed one), noisy (Gibbs-SS-Noisy on the
  /// half-budget releases), naive (the conjugate update on the release), nonprivate (on the exact statistic).
  std::vector<named_method<trial_type>> standard_methods() const {
    const regression_layout layout = layout_;
    const nig_regression_prior prior = prior_;
    const niw_hyperprior covariate_prior = covariate_prior_;
    const Mechanism mechanism = mechanism_, half = half_mechanism_;
    const moment_release_layout moments = moments_;
    const covariate_moments fixed = fixed_moments_;
    const study_settings st = settings_;
    named_method<trial_type> gibbs;
    if (scenario_ == covariate_scenario::hierarchical) {
      gibbs = {"gibbs", [=](const trial_type& t, std::mt19937_64& g) {
                 return single_chain(
                     [&](auto& cg) {
                       return gibbs_ss(
                           linear_regression_model(layout, hierarchical_normal_covariates(layout, covariate_prior, cg)), prior,
                           mechanism, t.z, t.n, cg);
                     },
                     st.burnin, st.draws, g, st.thin);
               }};
    } else {
      gibbs = {"gibbs", [=](const trial_type& t, std::mt19937_64& g) {
                 return single_chain(
                     [&](auto& cg) {
                       return gibbs_ss(linear_regression_model(layout, fixed_covariates(fixed)), prior, mechanism, t.z, t.n, cg);
                     },
                     st.burnin, st.draws, g, st.thin);
               }};
    }
    return {gibbs,
            {"noisy",
             [=](const trial_type& t, std::mt19937_64& g) {
               return single_chain(
                   [&](auto& cg) {
                     return gibbs_ss(linear_regression_model(layout, fixed_covariates(moments.moments_from_release(t.z_moments))),
                                     prior, half, t.z_half, t.n, cg);
                   },
                   st.burnin, st.draws, g, st.thin);
             }},
            {"naive",
             [=](const trial_type& t, std::mt19937_64& g) {
               return single_chain(
                   [&](auto& cg) { return conjugate_sampler(linear_regression_statistic(layout), prior, t.z, t.n, cg); }, 0,
                   st.draws, g);
             }},
            {"nonprivate", [=](const trial_type& t, std::mt19937_64& g) {
               return single_chain(
                   [&](auto& cg) { return conjugate_sampler(linear_regression_statistic(layout), prior, t.s, t.n, cg); }, 0,
                   st.draws, g);
             }}};
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
