// privpost-calibrate, logistic regression (DP-GLM; issue #10, spec glm.md Sec. 5.7 F.1): d covariates plus an
// intercept column (c = 1) and a covariate mean; per trial theta~ ~ N(0, I) with ||theta~||^2 < 9, tau_j ~
// half-normal(1), Omega ~ LKJ(2), mu_x ~ N(0, 0.5^2 I), the released sums drawn from the model's normal approximation
// s ~ N(N mu, N V) plus the analytic Gaussian mechanism's noise at (epsilon, delta) for the Lemma 3.3 sensitivity at
// R = 1 with the intercept. Methods: noise-aware (logistic_moment_model under NUTS, exact link, warm-up = --burnin) and
// naive (the same model with the noise ignored). Parameters: theta_0..theta_d, tau_1..tau_d, mu_1..mu_d.
#include <stdexcept>
#include <string>
#include <vector>

#include <privpost/families/glm/glm_statistic.hpp>
#include <privpost/mechanisms/analytic_gaussian.hpp>
#include <privpost/samplers/glm/logistic_moment_model.hpp>
#include <privpost/samplers/nuts.hpp>

#include "calibrate.hpp"

namespace privpost::tools::calibrate {

namespace {
struct glm_trial {
  Eigen::VectorXd truth;  ///< (theta~, tau, mu_x)
  Eigen::VectorXd z;      ///< the release
};
}  // namespace

int run_glm_model(const cli_options& o, const study_settings& settings) {
  if (o.dim < 1 || o.dim > 10)
    throw std::invalid_argument("--dim is " + std::to_string(o.dim) + "; accepted: 1 to 10 covariates");
  if (o.mechanism != "gaussian")
    throw std::invalid_argument("--mechanism " + o.mechanism +
                                ": the logistic model is calibrated under the Gaussian mechanism only (the Laplace sampler "
                                "of issue #10 item 4 is not implemented yet)");
  detail::check_study_settings("privpost-calibrate", settings);
  const int d = o.dim;
  const glm_prior prior{9.0, 1.0, 2.0, 0.5};
  const glm_model_options design{1.0, true};
  const auto statistic = glm_statistic::logistic(d, 1.0, design.intercept);
  const double sigma = analytic_gaussian_sigma(o.epsilon, o.delta, statistic.l2_sensitivity());
  const double n = settings.n;
  const logistic_moment_model<> simulator(Eigen::VectorXd::Zero(statistic.size()), n, sigma, d, prior, design);
  const int p = simulator.coefficients();
  nuts_options nuts;
  nuts.warmup = settings.burnin;
  auto method = [=](double model_sigma) {
    return [=](const glm_trial& t, std::mt19937_64& g) {
      const Eigen::MatrixXd all = single_chain(
          [&](std::mt19937_64& e) {
            return nuts_sampler<logistic_moment_model<>>(logistic_moment_model<>(t.z, n, model_sigma, d, prior, design), nuts, e);
          },
          settings.burnin, settings.draws, g, settings.thin);
      Eigen::MatrixXd out(all.rows(), p + 2 * d);
      out << all.leftCols(p + d), all.rightCols(d);
      return out;
    };
  };
  const std::vector<named_method<glm_trial>> available{{"noise-aware", method(sigma)}, {"naive", method(0.0)}};
  auto simulate = [=](std::mt19937_64& g) {
    const glm_parameters truth = draw_glm_prior(g, d, prior, design);
    glm_trial t;
    t.truth.resize(p + 2 * d);
    t.truth << truth.theta, truth.sigma.diagonal().array().sqrt().matrix(), truth.mean;
    t.z = simulate_glm_release(simulator, truth, g);
    return t;
  };
  const simulation_study study(simulate, select_methods(available, settings.methods, "privpost-calibrate"));
  std::cerr << "privpost-calibrate: logistic DP-GLM, " << d << " covariate(s) + intercept (c = 1) and covariate mean, "
            << "Gaussian noise sigma " << sigma << " (L2 sensitivity " << statistic.l2_sensitivity()
            << ", Lemma 3.3 at R = 1); sums from the model's normal approximation; parameters theta_0..theta_" << d
            << ", tau_1..tau_" << d << ", mu_1..mu_" << d << "\n";
  return run(study, o);
}

}  // namespace privpost::tools::calibrate
