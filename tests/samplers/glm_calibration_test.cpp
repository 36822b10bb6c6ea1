// Simulation-based calibration of the noise-aware logistic DP-GLM sampler (logistic_moment_model under nuts_sampler;
// docs/design-glm.md Sec. 5.7 F.1-F.2). Each trial draws theta and Sigma from the prior, the released sums from the
// model's normal approximation s ~ N(N mu, N V) and z = s + N(0, sigma^2 I) with sigma of the analytic Gaussian
// mechanism at (epsilon, delta = 1e-5, Delta = sqrt(4.5)) (R = 1, Corollary 3.4), then runs NUTS and records the
// posterior quantile of every true theta_j and tau_j. Pass rule as every calibration test here
// (tests/support/calibration_checks.hpp): KS p > 0.001 and 50% / 90% coverage within 3.5 binomial standard deviations.
// The naive method (the same model with sigma = 0: noise ignored) is the negative control, rejected where the noise
// dominates (N = 100, epsilon = 0.1: sigma = 65 against sampling noise of about sqrt(N Sigma_jj) = 2 to 10).
// A third test draws the sums from simulated records rather than from the model's approximation (spec F.3); a fourth
// runs the model with an intercept column and a covariate mean (docs/design-glm.md Sec. 3.7).
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "privpost/core/random/normal.hpp"
#include "privpost/diagnostics/calibration.hpp"
#include "privpost/families/glm/glm_statistic.hpp"
#include "privpost/inference/calibration_study.hpp"
#include "privpost/mechanisms/analytic_gaussian.hpp"
#include "privpost/mechanisms/laplace.hpp"
#include "privpost/samplers/glm/glm_collapsed_gibbs.hpp"
#include "privpost/samplers/glm/logistic_moment_model.hpp"
#include "privpost/samplers/glm/logistic_record_model.hpp"
#include "privpost/samplers/glm/poisson_moment_model.hpp"
#include "privpost/samplers/nuts.hpp"
#include "support/calibration_checks.hpp"

using namespace privpost;

namespace {

struct glm_sbc_setting {
  int d = 2;
  double n = 100.0;
  double epsilon = 0.1;
  glm_prior prior{9.0, 2.5, 2.0};
  int trials = 300;
  int naive_trials = 100;  // the negative control fails by far (KS p ~ 1e-20 at M = 300): fewer trials suffice
  std::uint64_t seed = 1;
  // Record-level simulation (spec F.3): the sums of N simulated records x ~ N(0, Sigma), unclipped, with y from the
  // exact logistic model, instead of a draw from the model's own normal approximation. Tests the CLT approximation.
  bool records = false;
  // Intercept column and covariate mean (docs/design-glm.md Sec. 3.7); the release's sensitivity follows the intercept.
  glm_model_options options{};
  // Poisson regression (poisson_moment_model) instead of logistic; the sensitivity is that of counts clamped to y_bound.
  bool poisson = false;
  double y_bound = 5.0;
  // Laplace noise at scale l1_sensitivity / epsilon instead of the analytic Gaussian; the noise-aware method is then
  // glm_collapsed_gibbs (NUTS given the latent noise variances, s, w), the naive one the same model with no noise.
  bool laplace = false;
  // NUTS's metric: dense (the tools' default) or diagonal (Stan's).
  bool dense_metric = true;
  // 100 draws kept from every thin-th transition after the warm-up.
  int thin = 4;
};

// Runs the trials into a calibration_accumulator: methods "noise-aware" (every trial) and "naive" (the first
// naive_trials), parameters (theta, tau).
template <class Model>
calibration_accumulator run_glm_sbc_with(const glm_sbc_setting& s, std::uint64_t& divergences) {
  std::mt19937_64 g(s.seed);
  const int d = s.d;
  const auto statistic = s.poisson ? glm_statistic::poisson(d, 1.0, s.y_bound, s.options.intercept)
                                   : glm_statistic::logistic(d, 1.0, s.options.intercept);
  // R = 1: Delta = sqrt(4.5) without an intercept (Corollary 3.4), Lemma 3.3 with the intercept's inner products.
  const double sigma = analytic_gaussian_sigma(s.epsilon, 1e-5, statistic.l2_sensitivity());
  const laplace_mechanism laplace(statistic.l1_sensitivity(), s.epsilon);
  if (s.records && (s.options.intercept || s.options.covariate_mean || s.poisson || s.laplace))
    throw std::invalid_argument("run_glm_sbc: record-level simulation is logistic, zero-mean, without intercept");
  calibration_accumulator acc(0);
  nuts_options opt;
  opt.warmup = 400;
  opt.dense_metric = s.dense_metric;
  opt.curvature_start = true;  // as the tools run the GLMs
  const int kept = 100, thin = s.thin;
  const Model simulator(Eigen::VectorXd::Zero(statistic.size()), s.n, s.laplace ? 0.0 : sigma, d, s.prior, s.options);
  const int p = simulator.coefficients();
  const int nm = s.options.covariate_mean ? d : 0;
  for (int t = 0; t < s.trials; ++t) {
    const glm_parameters truth = draw_glm_prior(g, d, s.prior, s.options);
    Eigen::VectorXd z;
    if (s.records) {
      const logistic_records rec = simulate_logistic_records(g, truth, static_cast<Eigen::Index>(s.n));
      z = glm_statistic::logistic(d, 1e6).sum(rec.x, rec.y);  // a radius no record reaches: no clipping
      for (Eigen::Index i = 0; i < z.size(); ++i) z(i) += sigma * draw_normal(g);
    } else {
      z = simulate_glm_release(simulator, truth, g);
      if (s.laplace) z = laplace.release(z, g);
    }
    // (theta~, tau, mu_x): the coefficients (theta_0 first with an intercept), the scales and the covariate mean.
    Eigen::VectorXd truth_vector(p + d + nm);
    truth_vector << truth.theta, truth.sigma.diagonal().array().sqrt().matrix(), truth.mean.head(nm);
    auto run = [&](const std::string& method, auto& sampler) {
      for (int i = 0; i < opt.warmup; ++i) sampler.step(g);
      Eigen::MatrixXd draws(kept, p + d + nm);
      for (int i = 0; i < kept * thin; ++i) {
        sampler.step(g);
        if (i % thin == thin - 1) {
          const Eigen::VectorXd pv = sampler.parameter_vector();
          draws.row(i / thin) << pv.head(p + d).transpose(), pv.tail(nm).transpose();
        }
      }
      divergences += sampler.events().divergences;
      return method_draws{method, truth_vector, draws, 0.0};
    };
    std::vector<method_draws> trial;
    if (s.laplace) {
      glm_collapsed_gibbs<typename Model::map_type, laplace_mechanism> sampler(z, s.n, laplace, d, s.prior, s.options, opt, g);
      trial.push_back(run("noise-aware", sampler));
    } else {
      nuts_sampler<Model> sampler(Model(z, s.n, sigma, d, s.prior, s.options), opt, g);
      trial.push_back(run("noise-aware", sampler));
    }
    if (t < s.naive_trials) {
      nuts_sampler<Model> sampler(Model(z, s.n, 0.0, d, s.prior, s.options), opt, g);
      trial.push_back(run("naive", sampler));
    }
    acc.add(trial);
  }
  return acc;
}

calibration_accumulator run_glm_sbc(const glm_sbc_setting& s, std::uint64_t& divergences) {
  return s.poisson ? run_glm_sbc_with<poisson_moment_model>(s, divergences)
                   : run_glm_sbc_with<logistic_moment_model<>>(s, divergences);
}

// Every noise-aware row calibrated (the shared rule), and the naive control miscalibrated on at least one of the first
// naive_parameters coordinates (the coefficients).
void check_calibrated_and_naive_rejected(const glm_sbc_setting& s, int naive_parameters) {
  std::uint64_t divergences = 0;
  const auto acc = run_glm_sbc(s, divergences);
  bool naive_rejected = false;
  for (const calibration_row& r : acc.report()) {
    UNSCOPED_INFO(r.method << "[" << r.parameter << "]: KS " << r.ks << " (p " << r.ks_pvalue << "), coverage 50% "
                           << r.coverage50 << ", 90% " << r.coverage90 << ", M = " << r.trials);
    if (r.method == "noise-aware") test::check_calibrated(r);
    if (r.method == "naive" && r.parameter < naive_parameters && test::miscalibrated(r)) naive_rejected = true;
  }
  INFO("divergences " << divergences);
  CHECK(naive_rejected);
}

// The Poisson SBC setting: d covariates, intercept c = 1 and covariate mean, N = 200, epsilon = 1, R_y = 5, prior
// ||theta~||^2 < 4, tau ~ half-normal(0.5), mu_x ~ N(0, 0.5^2); M = 200 (naive 100).
glm_sbc_setting poisson_setting(int d, std::uint64_t seed) {
  glm_sbc_setting s;
  s.poisson = true;
  s.d = d;
  s.n = 200.0;
  s.epsilon = 1.0;
  s.prior = glm_prior{4.0, 0.5, 2.0, 0.5};
  s.options = glm_model_options{1.0, true};
  s.trials = 200;
  s.naive_trials = 100;
  s.seed = seed;
  return s;
}

}  // namespace

TEST_CASE("noise-aware logistic DP-GLM is calibrated where noise dominates; naive is not (d = 2, N = 100, eps = 0.1)",
          "[glm][calibration][glm-calibration-small]") {
  glm_sbc_setting s;
  check_calibrated_and_naive_rejected(s, s.d);
}

TEST_CASE("noise-aware logistic DP-GLM under Laplace noise (collapsed Gibbs) is calibrated; naive is not (d = 2)",
          "[glm][calibration][glm-calibration-laplace]") {
  // The small setting (d = 2, N = 100, epsilon = 0.1) with Laplace noise at scale
  // b = Delta_1 / epsilon (glm_statistic::l1_sensitivity, 4.74 at R = 1: b = 47, noise sd 67 per entry) and
  // glm_collapsed_gibbs as the noise-aware method.
  glm_sbc_setting s;
  s.laplace = true;
  s.seed = 51;
  check_calibrated_and_naive_rejected(s, s.d);
}

TEST_CASE("noise-aware logistic DP-GLM with an intercept and a covariate mean is calibrated; naive is not (d = 2)",
          "[glm][calibration][glm-calibration-design]") {
  // Spec Sec. 3.7 (the model real data need): x ~ N(mu_x, Sigma), an intercept column c = 1, so the release has
  // P + P(P+1)/2 - 1 = 8 entries (P = 3) and Delta from Lemma 3.3 with inner products in [c^2 - R^2, c^2 + R^2].
  // N = 200, epsilon = 0.3; prior: ||theta~||^2 < 9, tau ~ half-normal(1), mu_x ~ N(0, 0.5^2). Parameters checked:
  // theta_0, theta_1, theta_2, tau_1, tau_2, mu_1, mu_2; the naive control (sigma = 0) on the coefficients.
  glm_sbc_setting s;
  s.d = 2;
  s.n = 200.0;
  s.epsilon = 0.3;
  s.prior = glm_prior{9.0, 1.0, 2.0, 0.5};
  s.options = glm_model_options{1.0, true};
  s.trials = 200;
  s.naive_trials = 100;
  s.seed = 31;
  check_calibrated_and_naive_rejected(s, 3);
}

TEST_CASE("noise-aware logistic DP-GLM with an intercept and a covariate mean is calibrated; naive is not (d = 3)",
          "[glm][calibration][glm-calibration-design3]") {
  // As the d = 2 design test, at d = 3 (P = 4, 13 released entries): theta_0..theta_3, tau_1..tau_3, mu_1..mu_3.
  // About a minute on one core; slow-labelled (the coverage preset runs it).
  glm_sbc_setting s;
  s.d = 3;
  s.n = 200.0;
  s.epsilon = 0.3;
  s.prior = glm_prior{9.0, 1.0, 2.0, 0.5};
  s.options = glm_model_options{1.0, true};
  s.trials = 200;
  s.naive_trials = 40;  // rejected by its coverage on theta_0..theta_3 at M = 40 (tolerance 0.17 at 90%)
  s.seed = 37;
  check_calibrated_and_naive_rejected(s, 4);
}

TEST_CASE("noise-aware Poisson DP-GLM with an intercept and a covariate mean is calibrated; naive is not (d = 2)",
          "[glm][calibration][glm-calibration-poisson]") {
  // The release [x; t2(x); y x~; y t2(x)] (11 entries at d = 2 with the intercept), Delta of docs/design-glm.md Sec. 2.3 at
  // sqrt(c^2 + R^2) = sqrt(2) and R_y = 5, epsilon = 1: sigma about 38 per entry against sampling noise of
  // sqrt(N V) ~ 5-30 at N = 200. Prior: ||theta~||^2 < 4 (counts up to about e^2 per record), tau ~ half-normal(0.5),
  // mu_x ~ N(0, 0.5^2). Parameters: theta_0..theta_2, tau_1, tau_2, mu_1, mu_2.
  check_calibrated_and_naive_rejected(poisson_setting(2, 41), 3);
}

TEST_CASE("noise-aware Poisson DP-GLM under Laplace noise (collapsed Gibbs) is calibrated; naive is not (d = 1)",
          "[glm][calibration][glm-calibration-poisson-laplace]") {
  // With the Poisson map: the Poisson setting at d = 1 (intercept, covariate mean; 5 released entries),
  // Laplace noise at b = Delta_1 / epsilon (glm_statistic::l1_sensitivity at R = 1, R_y = 5). Parameters theta_0,
  // theta_1, tau_1, mu_1. About 30 s; slow-labelled. Measured over seeds 53-55 (M = 200 each): KS p >= 0.014, 90%
  // coverage 0.85-0.94; the Gaussian release at d = 1 gives the same spread (theta_1 90% coverage 0.83-0.92 over seeds
  // 53, 54), the effect of empirical quantiles from 100 autocorrelated draws.
  glm_sbc_setting s = poisson_setting(1, 53);
  s.laplace = true;
  check_calibrated_and_naive_rejected(s, 2);
}

TEST_CASE("noise-aware Poisson DP-GLM at d = 3 with an intercept and a covariate mean is calibrated; naive is not",
          "[glm][calibration][glm-calibration-poisson3]") {
  // The d = 2 setting at d = 3: 19 released entries, epsilon = 1, N = 200, M = 200. Slow-labelled, about 1.5 minutes
  // on one core. The naive control on 40 trials: at M = 100 its 90% coverage was 0.08-0.57 on every coordinate (KS p
  // 1e-5 to 1e-71), against a tolerance of 0.17 at M = 40. Thin 2 (the 100 kept draws from 200 transitions), which
  // saves a quarter of the longest coverage study's time: at thin 4 this seed gave 90% coverage 0.85-0.935 (mean 0.892)
  // and KS p >= 0.11 over the 10 parameters, at thin 2 0.845-0.935 (mean 0.893) and p >= 0.07.
  glm_sbc_setting s = poisson_setting(3, 43);
  s.naive_trials = 40;
  s.thin = 2;
  check_calibrated_and_naive_rejected(s, 4);
}

TEST_CASE("noise-aware logistic DP-GLM is calibrated across d, N, epsilon and the tau prior scale",
          "[glm][calibration][glm-calibration-grid]") {
  // Part of the spec's grid (Sec. 5.7 F.1), sized for the coverage run: d = 1 with the paper's tau scale where noise
  // dominates, d = 3 with a small-q prior where sampling noise and privacy noise are comparable.
  std::vector<glm_sbc_setting> settings(2);
  settings[0].d = 1;
  settings[0].n = 1000.0;
  settings[0].epsilon = 0.1;
  settings[0].seed = 11;
  settings[1].d = 3;
  settings[1].n = 1000.0;
  settings[1].epsilon = 1.0;
  settings[1].prior.tau_scale = 0.5;
  settings[1].seed = 12;
  for (glm_sbc_setting& s : settings) {
    s.naive_trials = 0;
    std::uint64_t divergences = 0;
    const auto acc = run_glm_sbc(s, divergences);
    for (const calibration_row& r : acc.report()) {
      INFO("d " << s.d << ", N " << s.n << ", epsilon " << s.epsilon << ", tau scale " << s.prior.tau_scale << ": " << r.method
                << "[" << r.parameter << "] KS " << r.ks << " (p " << r.ks_pvalue << "), coverage 50% " << r.coverage50
                << ", 90% " << r.coverage90 << "; divergences " << divergences);
      test::check_calibrated(r);
    }
  }
}

TEST_CASE("noise-aware logistic DP-GLM on record-level simulations: the CLT approximation at N = 100 and 1000",
          "[glm][calibration][glm-calibration-records]") {
  // Spec Sec. 5.7 F.3: the released sums come from simulated records, so the model's normal approximation of their
  // law is now an approximation. Small-q prior (tau scale 0.5, s_max 4), d = 2, epsilon = 1. Gated at N = 1000 only
  // (the spec's rule: the CLT needs the records); N = 100 is reported in the log (run with -s) and in the issue note.
  for (const double n : {100.0, 1000.0}) {
    glm_sbc_setting s;
    s.d = 2;
    s.n = n;
    s.epsilon = 1.0;
    s.prior = glm_prior{4.0, 0.5, 2.0};
    s.records = true;
    s.naive_trials = 0;
    s.seed = n == 100.0 ? 21 : 22;
    std::uint64_t divergences = 0;
    const auto acc = run_glm_sbc(s, divergences);
    for (const calibration_row& r : acc.report()) {
      std::ostringstream row;
      row << "records, N " << n << ": " << r.method << "[" << r.parameter << "] KS " << r.ks << " (p " << r.ks_pvalue
          << "), coverage 50% " << r.coverage50 << ", 90% " << r.coverage90 << "; divergences " << divergences;
      if (n == 1000.0) {
        INFO(row.str());
        test::check_calibrated(r);
      } else {
        WARN(row.str());  // reported, not gated
      }
    }
  }
}
