// Calibration of the DP-GLM record-level baseline and its agreement with the moment model (docs/design-glm.md Sec. 4.2,
// 4.4 item 3, 5.7 G); in the calibration executable (excluded from the sanitizer runs: minutes at -O1):
//  1. simulation-based calibration of NUTS on the record-level model (d = 2, N = 50, M = 300; the project's pass rule:
//     KS p > 0.001 and 50% / 90% coverage within 3.5 binomial sd, tests/support/calibration_checks.hpp);
//  2. large-epsilon agreement (docs/design-glm.md Sec. 4.4 item 3): the moment model on the exact sums without noise
//     ("nonprivate_clt") against the exact record-level posterior, d = 3, N = 2000, theta = (0.5, -0.3, 0.2),
//     Sigma = 0.25 Omega: per coordinate |mean difference| < 0.3 sd, sd ratio in [0.8, 1.25], two-sample KS < 0.1
//     (the spec's proposed thresholds; the measured values are printed on failure and in the issue note);
//  3. the same for Poisson: d = 2 with an intercept and a covariate mean, N = 2000, theta~ = (0.3, 0.5, -0.4).
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <span>
#include <vector>

#include "privpost/core/random/lkj.hpp"
#include "privpost/diagnostics/calibration.hpp"
#include "privpost/families/glm/glm_statistic.hpp"
#include "privpost/inference/calibration_study.hpp"
#include "privpost/inference/infer.hpp"
#include "privpost/samplers/glm/logistic_moment_model.hpp"
#include "privpost/samplers/glm/logistic_record_model.hpp"
#include "privpost/samplers/glm/poisson_moment_model.hpp"
#include "privpost/samplers/glm/poisson_record_model.hpp"
#include "privpost/samplers/nuts.hpp"
#include "support/calibration_checks.hpp"

using namespace privpost;

namespace {
// The spec's agreement thresholds (Sec. 4.4 item 3) on the first `coordinates` parameters of two posteriors: R-hat
// < 1.01 for both, |mean difference| < 0.3 sd of the records' posterior, sd ratio in [0.8, 1.25], two-sample KS < 0.1.
void check_agreement(const inference_result& clt, const inference_result& exact, int coordinates, const char* label) {
  for (int j = 0; j < coordinates; ++j) {
    const Eigen::VectorXd a = clt.draws.draws(j), b = exact.draws.draws(j);
    const double ks =
        ks_two_sample(std::span<const double>(a.data(), a.size()), std::span<const double>(b.data(), b.size())).statistic;
    const double sd_ratio = clt.draws.sd(j) / exact.draws.sd(j);
    const double mean_gap = std::abs(clt.draws.mean(j) - exact.draws.mean(j)) / exact.draws.sd(j);
    INFO(label << "[" << j << "]: moment model " << clt.draws.mean(j) << " +- " << clt.draws.sd(j) << ", records "
               << exact.draws.mean(j) << " +- " << exact.draws.sd(j) << "; |mean gap| / sd " << mean_gap << ", sd ratio "
               << sd_ratio << ", KS " << ks << "; R-hat " << clt.draws.rhat(j) << ", " << exact.draws.rhat(j));
    CHECK(clt.draws.rhat(j) < 1.01);
    CHECK(exact.draws.rhat(j) < 1.01);
    CHECK(mean_gap < 0.3);
    CHECK(sd_ratio > 0.8);
    CHECK(sd_ratio < 1.25);
    CHECK(ks < 0.1);
  }
}
}  // namespace

TEST_CASE("NUTS on the record-level logistic model is calibrated", "[glm][calibration][baseline]") {
  std::mt19937_64 g(31);
  const int d = 2, n = 50, trials = 300, kept = 100, thin = 3;
  const glm_prior prior{9.0, 1.0, 2.0};
  nuts_options opt;
  opt.warmup = 300;
  calibration_accumulator acc(0);
  std::uint64_t divergences = 0;
  for (int t = 0; t < trials; ++t) {
    const glm_parameters truth = draw_glm_prior(g, d, prior);
    const logistic_records rec = simulate_logistic_records(g, truth, n);
    nuts_sampler<logistic_record_model> sampler(logistic_record_model(rec.x, rec.y, prior.s_max), opt, g);
    for (int i = 0; i < opt.warmup; ++i) sampler.step(g);
    Eigen::MatrixXd draws(kept, d);
    for (int i = 0; i < kept * thin; ++i) {
      sampler.step(g);
      if (i % thin == thin - 1) draws.row(i / thin) = sampler.parameter_vector().transpose();
    }
    divergences += sampler.events().divergences;
    acc.add(std::vector<method_draws>{method_draws{"nonprivate", truth.theta, draws, 0.0}});
  }
  for (const calibration_row& r : acc.report()) {
    INFO("theta[" << r.parameter << "]: KS " << r.ks << " (p " << r.ks_pvalue << "), coverage 50% " << r.coverage50 << ", 90% "
                  << r.coverage90 << "; divergences " << divergences);
    test::check_calibrated(r);
  }
}

TEST_CASE("large-epsilon agreement: the moment model on exact sums matches the record-level posterior",
          "[glm][baseline][agreement]") {
  std::mt19937_64 g(41);
  const int d = 3;
  const Eigen::Index n = 2000;
  Eigen::MatrixXd l(d, d);
  draw_lkj_cholesky(g, 2.0, l);
  const glm_parameters truth{(Eigen::VectorXd(3) << 0.5, -0.3, 0.2).finished(), 0.25 * l * l.transpose()};
  const logistic_records rec = simulate_logistic_records(g, truth, n);
  // The sums of the release statistic with a radius no record reaches: exact, unclipped, no noise.
  const Eigen::VectorXd s = glm_statistic::logistic(d, 1e6).sum(rec.x, rec.y);
  const glm_prior prior{9.0, 2.5, 2.0};
  nuts_options opt;
  inference_options iopt;
  iopt.chains = 4;
  iopt.burnin = opt.warmup;
  iopt.draws = 1000;
  iopt.seed = 5;
  const auto clt = infer(
      [&](std::mt19937_64& cg) {
        return nuts_sampler<logistic_moment_model<>>(logistic_moment_model<>(s, static_cast<double>(n), 0.0, d, prior), opt, cg);
      },
      iopt);
  const auto exact = infer(
      [&](std::mt19937_64& cg) {
        return nuts_sampler<logistic_record_model>(logistic_record_model(rec.x, rec.y, prior.s_max), opt, cg);
      },
      iopt);
  check_agreement(clt, exact, d, "theta");
}

TEST_CASE("large-epsilon agreement, Poisson: the moment model on exact sums matches the record-level posterior",
          "[glm][baseline][agreement]") {
  // d = 2 covariates with an intercept (c = 1) and a covariate mean, N = 2000 records from the model's story
  // (x ~ N(mu_x, Sigma), y ~ Poisson(exp(theta~' x~))): the moment model on the exact, unclamped sums without noise
  // against the exact record-level posterior of theta~ given (x, y). Same thresholds as the logistic case.
  std::mt19937_64 g(43);
  const int d = 2;
  const Eigen::Index n = 2000;
  const glm_parameters truth{(Eigen::VectorXd(3) << 0.3, 0.5, -0.4).finished(),
                             (Eigen::MatrixXd(2, 2) << 0.25, 0.05, 0.05, 0.16).finished(),
                             (Eigen::VectorXd(2) << 0.2, -0.1).finished()};
  const glm_records rec = simulate_poisson_records(g, truth, n, 1.0);
  // Radius and count bound no record reaches: the sums are exact.
  const Eigen::VectorXd s = glm_statistic::poisson(d, 1e6, 1e6, 1.0).sum(rec.x, rec.y);
  Eigen::MatrixXd xa(n, d + 1);
  xa << Eigen::VectorXd::Ones(n), rec.x;
  const glm_prior prior{9.0, 1.0, 2.0, 1.0};
  const glm_model_options design{1.0, true};
  nuts_options opt;
  inference_options iopt;
  iopt.chains = 4;
  iopt.burnin = opt.warmup;
  iopt.draws = 1000;
  iopt.seed = 7;
  const auto clt = infer(
      [&](std::mt19937_64& cg) {
        return nuts_sampler<poisson_moment_model>(poisson_moment_model(s, static_cast<double>(n), 0.0, d, prior, design), opt,
                                                  cg);
      },
      iopt);
  const auto exact = infer(
      [&](std::mt19937_64& cg) {
        return nuts_sampler<poisson_record_model>(poisson_record_model(xa, rec.y, prior.s_max), opt, cg);
      },
      iopt);
  check_agreement(clt, exact, d + 1, "theta~");
}
