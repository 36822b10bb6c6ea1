// Simulation-based calibration of Gibbs-SS for linear regression (001 Sec. 4.2).
// Data as in 001: theta, sigma^2 ~ NIG(0, Lambda_0 = diag(19 / 0.5), 20, 0.5) (the paper's "diag(.5/(20-1))" read as the
// prior covariance scale of theta given sigma^2, which keeps 95% of y within [-1, 1] as the paper states);
// Gibbs-SS-Update: (mu_x, Sigma_x) ~ NIW(0, 1, I, 50) per trial; Gibbs-SS-Prior: x ~ N(0, I / (50 - d - 1)) with those
// moments in closed form. Release: Laplace at epsilon = 0.1, sensitivity from declared bounds [-1, 1] on x and y by the
// interval rule, data not truncated (as the paper). M = 200 trials, 1000 burn-in sweeps, 1000 draws from 5000 (thin 5).
// Rule: Gibbs-SS not rejected by KS at level 0.001 for every coordinate (theta_0..theta_d, sigma^2), d in {1, 2} plus an
// intercept, n in {10, 100, 1000}; naive rejected at n = 10; 95% coverage pooled over coordinates within 0.03 of 0.95.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "privpost/mechanisms/laplace.hpp"
#include "privpost/testing/regression_study.hpp"
#include "support/calibration_checks.hpp"

using namespace privpost;

namespace {
constexpr int trials = 200;
constexpr double level = 1e-3;

// 001's data model with d covariates plus an intercept, n records and a Laplace release at epsilon (whole budget; each
// of Gibbs-SS-Noisy's two releases gets half).
regression_study<laplace_mechanism> make_study(covariate_scenario scenario, int d, double n, double epsilon,
                                               std::vector<std::string> methods) {
  const regression_layout layout(d, true);
  const int p = layout.columns();
  const nig_regression_prior prior(Eigen::VectorXd::Zero(p), Eigen::MatrixXd::Identity(p, p) * (19.0 / 0.5), 20.0, 0.5);
  const niw_hyperprior covariates{Eigen::VectorXd::Zero(d), 1.0, Eigen::MatrixXd::Identity(d, d), 50.0};
  study_settings s;
  s.n = n;
  s.burnin = 1000;
  s.draws = 1000;
  s.thin = 5;
  s.methods = std::move(methods);
  const std::vector<interval> bounds(static_cast<std::size_t>(d), interval(-1.0, 1.0));
  return regression_study<laplace_mechanism>(
      layout, prior, covariates, scenario, bounds, interval(-1.0, 1.0),
      [epsilon](double l1, double, double share) { return laplace_mechanism(l1, epsilon * share); }, s);
}

void run(covariate_scenario scenario, int d, double n, std::uint64_t seed) {
  const int p = regression_layout(d, true).columns();
  const auto study = make_study(scenario, d, n, 0.1, {"gibbs", "naive", "nonprivate"});
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

// Gibbs-SS-Noisy (001 Sec. 3.4.4): the covariates' fourth sample moments are released with half the budget and used as
// fixed moments, with no inference over their noise. 001 (Sec. 4.2) reports "slight miscalibration" from that. Where the
// moments' noise is small (d = 1: n = 100 and 1000 at epsilon 0.1 and 1, n = 10 at epsilon 1; d = 2: n = 100 at
// epsilon 1) every coordinate passes the library's rule at M = 400 (tests/support/calibration_checks.hpp: KS p > 0.001,
// coverages within 3.5 binomial standard deviations; measured 90% coverage 0.875-0.93, KS p >= 0.24). At n = 10,
// epsilon = 0.1 it does not: the next test case. Negative control: the naive update (whole budget) fails the rule in
// every setting but n = 1000 at epsilon 1, where it is not asserted (001 finds naive asymptotically correct).
TEST_CASE("Gibbs-SS-Noisy is calibrated where its noisy moments are accurate (d = 1, 2 plus intercept)",
          "[calibration][regression][regression-noisy]") {
  struct setting {
    int d;
    double n, epsilon;
    bool naive_fails;
  };
  const std::vector<setting> settings{{1, 10.0, 1.0, true},   {1, 100.0, 0.1, true},   {1, 100.0, 1.0, true},
                                      {1, 1000.0, 0.1, true}, {1, 1000.0, 1.0, false}, {2, 100.0, 1.0, true}};
  std::uint64_t seed = 1100;
  for (const auto& st : settings) {
    const auto study = make_study(covariate_scenario::hierarchical, st.d, st.n, st.epsilon, {"noisy", "naive"});
    const auto report = run_calibration(study, {400, ++seed, 0}).report();
    INFO("d = " << st.d << ", n = " << st.n << ", epsilon = " << st.epsilon);
    bool naive_fails = false;
    for (int k = 0; k <= st.d + 1; ++k) {
      privpost::test::check_calibrated(privpost::test::row(report, "noisy", k));
      naive_fails = naive_fails || privpost::test::miscalibrated(privpost::test::row(report, "naive", k));
    }
    if (st.naive_fails) CHECK(naive_fails);
  }
}

// The limit of plugging in noisy moments, measured rather than hidden: at n = 10, epsilon = 0.1 the fourth moments
// (sensitivity w_x^4 per entry, on half the budget) are mostly noise and the slope's intervals are too narrow: 90%
// coverage 0.82-0.85 at M = 1000 (seeds 5, 6, 21 of privpost-calibrate) and 0.817 (KS p 4e-4) here at M = 1500, where
// the rule's 90% tolerance is 0.027. The test asserts that the rule rejects the slope, and that intercept (0.877) and
// variance (0.897) pass it. Gibbs-SS-Update (hierarchical covariates, no moment release) is calibrated there (above).
TEST_CASE("Gibbs-SS-Noisy under-covers the slope at n = 10, epsilon = 0.1 (001 Sec. 4.2's slight miscalibration)",
          "[calibration][regression][regression-noisy-limit]") {
  const auto study = make_study(covariate_scenario::hierarchical, 1, 10.0, 0.1, {"noisy"});
  const auto report = run_calibration(study, {1500, 1200, 0}).report();
  const auto& slope = privpost::test::row(report, "noisy", 1);
  INFO("slope: KS p " << slope.ks_pvalue << ", 90% coverage " << slope.coverage90);
  CHECK(privpost::test::miscalibrated(slope));
  CHECK(slope.coverage90 < 0.9);
  privpost::test::check_calibrated(privpost::test::row(report, "noisy", 0));
  privpost::test::check_calibrated(privpost::test::row(report, "noisy", 2));
}
