// privpost-calibrate, linear regression (001 Sec. 4.2): theta, sigma^2 ~ NIG(0, Lambda_0 = diag(19 / 0.5), 20, 0.5);
// covariates x ~ N(mu_x, Sigma_x) with (mu_x, Sigma_x) ~ NIW(0, 1, I, 50) (--moments update or noisy) or x ~ N(0, I/(49 - d))
// (--moments prior); an intercept; sensitivity from declared bounds [-1, 1] on x and y, data not truncated (as the paper).
#include <stdexcept>
#include <string>
#include <vector>

#include <privpost/mechanisms/gaussian.hpp>
#include <privpost/mechanisms/laplace.hpp>
#include <privpost/testing/regression_study.hpp>

#include "calibrate.hpp"

namespace privpost::tools::calibrate {

namespace {
template <class Make>
int run_regression_with(const cli_options& o, study_settings settings, Make make) {
  const int d = o.dim;
  const regression_layout layout(d, true);
  const int p = layout.columns();
  const nig_regression_prior prior(Eigen::VectorXd::Zero(p), Eigen::MatrixXd::Identity(p, p) * (19.0 / 0.5), 20.0, 0.5);
  const niw_hyperprior covariates{Eigen::VectorXd::Zero(d), 1.0, Eigen::MatrixXd::Identity(d, d), 50.0};
  const auto scenario = o.moments == "prior" ? covariate_scenario::fixed : covariate_scenario::hierarchical;
  if (o.moments == "noisy")
    for (auto& m : settings.methods)
      if (m == "gibbs") m = "noisy";
  const std::vector<interval> bounds(static_cast<std::size_t>(d), interval(-1.0, 1.0));
  const regression_study<tool_mechanism> study(layout, prior, covariates, scenario, bounds, interval(-1.0, 1.0), make, settings);
  std::cerr << "privpost-calibrate: linear regression, " << d << " covariate(s) + intercept, Gibbs-SS-" << o.moments
            << ", sensitivity L1 " << study.l1_sensitivity() << " (paper's bound "
            << regression_paper_sensitivity(2.0, 2.0, static_cast<std::size_t>(p)) << "); parameters theta_0..theta_" << d
            << ", sigma^2\n";
  return run(study, o);
}
}  // namespace

int run_regression_model(const cli_options& o, const study_settings& settings) {
  if (o.dim < 1 || o.dim > 10)
    throw std::invalid_argument("--dim is " + std::to_string(o.dim) + "; accepted: 1 to 10 covariates");
  if (o.moments != "noisy" && o.moments != "prior" && o.moments != "update")
    throw std::invalid_argument("--moments is '" + o.moments + "'; accepted: noisy, prior, update");
  for (const auto& m : settings.methods)
    if (m == "ops") throw std::invalid_argument("--methods: ops is available for the binomial model only");
  const bool laplace = o.mechanism == "laplace";
  return run_regression_with(o, settings, [&](double l1, double l2, double share) {
    return laplace ? tool_mechanism(laplace_mechanism(l1, o.epsilon * share))
                   : tool_mechanism(gaussian_mechanism::analytic(l2, o.epsilon * share, o.delta * share));
  });
}

}  // namespace privpost::tools::calibrate
