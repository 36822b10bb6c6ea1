// privpost-calibrate, DP-GLM (docs/design-glm.md Sec. 5.7 F.1): logistic or Poisson regression on d covariates plus
// an intercept column (c = 1) and a covariate mean. Per trial theta~ ~ N(0, I) truncated to ||theta~||^2 < s_max,
// tau_j ~ half-normal, Omega ~ LKJ(2), mu_x ~ N(0, 0.5^2 I), the released sums drawn from the model's normal
// approximation s ~ N(N mu, N V) plus the analytic Gaussian mechanism's noise at (epsilon, delta) for the exact
// sensitivity at R = 1 with the intercept (logistic: Lemma 3.3; Poisson: docs/design-glm.md Sec. 2.3 with counts bounded by R_y =
// 5). Priors: logistic s_max 9, tau_scale 1 (the paper's coefficients); Poisson s_max 4, tau_scale 0.5 (rates up to about e^2 per
// record: the counts stay well inside R_y). Methods: noise-aware (the moment model under NUTS, exact link or exact tilted
// moments, warm-up = --burnin) and naive (the same model with the noise ignored). Parameters: theta_0..theta_d, tau_1..tau_d,
// mu_1..mu_d. --mechanism laplace: Laplace noise at glm_statistic::l1_sensitivity / epsilon instead, the noise-aware method then
// glm_collapsed_gibbs (NUTS given the noise's latent variances). NUTS's metric: --metric, dense by default as in privpost-infer.
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <privpost/families/glm/glm_statistic.hpp>
#include <privpost/mechanisms/analytic_gaussian.hpp>
#include <privpost/mechanisms/laplace.hpp>
#include <privpost/samplers/glm/glm_collapsed_gibbs.hpp>
#include <privpost/samplers/glm/logistic_moment_model.hpp>
#include <privpost/samplers/glm/poisson_moment_model.hpp>
#include <privpost/samplers/nuts.hpp>

#include "calibrate.hpp"
#include "glm_tool.hpp"

namespace privpost::tools::calibrate {

namespace {
struct glm_trial {
  Eigen::VectorXd truth;  ///< (theta~, tau, mu_x)
  Eigen::VectorXd z;      ///< the release
};

// The study of the GLM model M (glm_tool.hpp): its moment model, prior and count bound.
template <class M>
int run_glm_study(const cli_options& o, const study_settings& settings) {
  using Model = typename M::study_model;
  const int d = o.dim;
  const glm_prior prior = M::study_prior;
  const glm_model_options design{1.0, true};
  const auto statistic = M::statistic(d, 1.0, M::study_y_bound, design.intercept);
  const bool laplace = o.mechanism == "laplace";
  const double sigma = laplace ? 0.0 : analytic_gaussian_sigma(o.epsilon, o.delta, statistic.l2_sensitivity());
  const laplace_mechanism laplace_noise(statistic.l1_sensitivity(), o.epsilon);
  const double n = settings.n;
  const Model simulator(Eigen::VectorXd::Zero(statistic.size()), n, sigma, d, prior, design);
  const int p = simulator.coefficients();
  nuts_options nuts;
  nuts.dense_metric = o.metric == "dense";
  nuts.curvature_start = true;  // the GLM models start near the bulk (moment start): see nuts_options
  // The recorded columns (theta~, tau, mu_x) of a chain's parameter vectors (the correlations left out).
  auto recorded = [=](const Eigen::MatrixXd& all) {
    Eigen::MatrixXd out(all.rows(), p + 2 * d);
    out << all.leftCols(p + d), all.rightCols(d);
    return out;
  };
  auto method = [=](double model_sigma) {
    return [=](const glm_trial& t, std::mt19937_64& g) {
      return recorded(single_chain(
          [&](std::mt19937_64& e) { return nuts_sampler<Model>(Model(t.z, n, model_sigma, d, prior, design), nuts, e); },
          settings.burnin, settings.draws, g, settings.thin));
    };
  };
  // Under Laplace noise the noise-aware method is the partially collapsed Gibbs sampler (docs/design-glm.md Sec. 5.10).
  auto collapsed = [=](const glm_trial& t, std::mt19937_64& g) {
    using sampler = glm_collapsed_gibbs<typename Model::map_type, laplace_mechanism>;
    return recorded(single_chain([&](std::mt19937_64& e) { return sampler(t.z, n, laplace_noise, d, prior, design, nuts, e); },
                                 settings.burnin, settings.draws, g, settings.thin));
  };
  std::vector<named_method<glm_trial>> available{{"noise-aware", method(sigma)}, {"naive", method(0.0)}};
  if (laplace) available.front() = {"noise-aware", collapsed};
  auto simulate = [=](std::mt19937_64& g) {
    const glm_parameters truth = draw_glm_prior(g, d, prior, design);
    glm_trial t;
    t.truth.resize(p + 2 * d);
    t.truth << truth.theta, truth.sigma.diagonal().array().sqrt().matrix(), truth.mean;
    t.z = simulate_glm_release(simulator, truth, g);  // with sigma = 0 under Laplace: the sums alone
    if (laplace) t.z = laplace_noise.release(t.z, g);
    return t;
  };
  const simulation_study study(simulate, select_methods(available, settings.methods, "privpost-calibrate"));
  std::cerr << "privpost-calibrate: " << M::study_title << " DP-GLM, " << d
            << " covariate(s) + intercept (c = 1) and covariate mean, ";
  if (laplace)
    std::cerr << "Laplace noise scale " << laplace_noise.scale() << " (L1 sensitivity " << statistic.l1_sensitivity()
              << ", glm_statistic::l1_sensitivity at R = 1" << M::study_l1_note << "; noise-aware: collapsed Gibbs)";
  else
    std::cerr << "Gaussian noise sigma " << sigma << " (L2 sensitivity " << statistic.l2_sensitivity() << ", " << M::study_l2_note
              << ")";
  std::cerr << "; NUTS with a " << (nuts.dense_metric ? "dense" : "diagonal") << " metric; prior s_max " << prior.s_max
            << ", tau_scale " << prior.tau_scale << "; sums from the model's normal approximation; parameters theta_0..theta_"
            << d << ", tau_1..tau_" << d << ", mu_1..mu_" << d << "\n";
  return run(study, o);
}
}  // namespace

int run_glm_model(const cli_options& o, const study_settings& settings) {
  if (o.dim < 1 || o.dim > 10)
    throw std::invalid_argument("--dim is " + std::to_string(o.dim) + "; accepted: 1 to 10 covariates");
  if (o.mechanism != "gaussian" && o.mechanism != "laplace")
    throw std::invalid_argument("--mechanism " + o.mechanism + "; accepted: gaussian, laplace");
  detail::check_study_settings("privpost-calibrate", settings, {.collapsed = true, .shift = true});
  return privpost::tools::visit_glm(o.model, [&]<class M>(std::type_identity<M>) { return run_glm_study<M>(o, settings); });
}

}  // namespace privpost::tools::calibrate
