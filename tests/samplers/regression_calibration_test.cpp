// Simulation-based calibration of Gibbs-SS for linear regression (001 Sec. 4.2; issue #4 acceptance).
// Data as in 001: theta, sigma^2 ~ NIG(0, Lambda_0 = diag(19 / 0.5), 20, 0.5) (the paper's "diag(.5/(20-1))" read as the
// prior covariance scale of theta given sigma^2, which keeps 95% of y within [-1, 1] as the paper states);
// Gibbs-SS-Update: (mu_x, Sigma_x) ~ NIW(0, 1, I, 50) per trial; Gibbs-SS-Prior: x ~ N(0, I / (50 - d - 1)) with those
// moments in closed form. Release: Laplace at epsilon = 0.1, sensitivity from declared bounds [-1, 1] on x and y by the
// interval rule, data not truncated (as the paper). M = 200 trials, 1000 burn-in sweeps, 1000 draws from 5000 (thin 5).
// Rule: Gibbs-SS not rejected by KS at level 0.001 for every coordinate (theta_0..theta_d, sigma^2), d in {1, 2} plus an
// intercept, n in {10, 100, 1000}; naive rejected at n = 10; 95% coverage pooled over coordinates within 0.03 of 0.95.
#include <catch2/catch.hpp>

#include <cmath>

#include "privpost/mechanisms/laplace.hpp"
#include "privpost/testing/regression_study.hpp"

using namespace privpost;

namespace {
constexpr int trials = 200;
constexpr double level = 1e-3;

void run(covariate_scenario scenario, int d, double n, std::uint64_t seed) {
  const regression_layout layout(d, true);
  const int p = layout.columns();
  const nig_regression_prior prior(Eigen::VectorXd::Zero(p), Eigen::MatrixXd::Identity(p, p) * (19.0 / 0.5), 20.0, 0.5);
  const niw_hyperprior covariates{Eigen::VectorXd::Zero(d), 1.0, Eigen::MatrixXd::Identity(d, d), 50.0};
  study_settings s;
  s.n = n;
  s.burnin = 1000;
  s.draws = 1000;
  s.thin = 5;
  s.methods = {"gibbs", "naive", "nonprivate"};
  const std::vector<interval> bounds(static_cast<std::size_t>(d), interval(-1.0, 1.0));
  const regression_study<laplace_mechanism> study(
      layout, prior, covariates, scenario, bounds, interval(-1.0, 1.0),
      [](double l1, double, double share) { return laplace_mechanism(l1, 0.1 * share); }, s);
  const auto acc = run_calibration(study, {trials, seed, 0});
  double covered = 0.0;
  bool naive_rejected = false;
  for (const auto& r : acc.report()) {
    INFO((scenario == covariate_scenario::hierarchical ? "Gibbs-SS-Update" : "Gibbs-SS-Prior")
         << ", d = " << d << ", n = " << n << ": " << r.method << "[" << r.parameter << "] KS " << r.ks << " (p " << r.ks_pvalue
         << "), 90% coverage " << r.coverage90);
    if (r.method == "gibbs") {
      CHECK(r.ks_pvalue > level);
      covered += coverage(acc.quantiles("gibbs", r.parameter), 0.95);
    }
    if (r.method == "naive" && r.ks_pvalue < level) naive_rejected = true;
  }
  const double pooled = covered / (p + 1);
  INFO("pooled 95% coverage " << pooled);
  CHECK(std::abs(pooled - 0.95) <= 0.03);
  if (n == 10) CHECK(naive_rejected);
}
}  // namespace

TEST_CASE("Gibbs-SS-Update is calibrated (d = 1, 2 plus intercept; n = 10, 100, 1000; epsilon = 0.1)",
          "[calibration][regression][regression-update]") {
  for (int d : {1, 2})
    for (double n : {10.0, 100.0, 1000.0})
      run(covariate_scenario::hierarchical, d, n, 700 + static_cast<std::uint64_t>(10 * d + n));
}

TEST_CASE("Gibbs-SS-Prior is calibrated (d = 1, 2 plus intercept; n = 10, 100, 1000; epsilon = 0.1)",
          "[calibration][regression][regression-prior]") {
  for (int d : {1, 2})
    for (double n : {10.0, 100.0, 1000.0}) run(covariate_scenario::fixed, d, n, 900 + static_cast<std::uint64_t>(10 * d + n));
}
