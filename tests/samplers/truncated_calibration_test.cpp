// Simulation-based calibration of Gibbs-SS for unbounded statistics with a truncated release (dissertation Sec. 4.3,
// Fig. 4.2 for the exponential model). Bounds: the central 95% interval (q = 0.05) of the prior predictive of one record,
// fixed for the study; records outside are dropped; Laplace noise with the interval-arithmetic sensitivity.
// Rule: at n in {100, 1000} and epsilon in {0.1, 1}, for exponential, Poisson, normal with known
// variance and normal-inverse-gamma, over M = 1500 trials (500 burn-in sweeps, 1000 draws kept from 3000 sweeps, thin 3),
// Gibbs-SS is not rejected by KS at level 0.001 and its 50% and 90% coverages are within 3.5 binomial standard deviations
// of nominal (3.5 sd: 0.045 and 0.027 at M = 1500; tests/support/calibration_checks.hpp says why and what it detects).
// Before the truncated moments were corrected these studies found 90% coverage of 0.83-0.85 at n = 1000 (Poisson, normal): the
// chain started from a prior draw could settle in a spurious mode (samplers/gibbs_ss_truncated.hpp explains it). The non-private
// posterior must pass the same rule. One CTest test per family and n (label "slow"). Negative control: the "cheating" naive is
// rejected at n = 1000, epsilon = 0.1 for the normal model.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <numbers>
#include <random>
#include <sstream>
#include <vector>

#include "privpost/families/exponential.hpp"
#include "privpost/families/normal.hpp"
#include "privpost/families/normal_known_variance.hpp"
#include "privpost/families/poisson.hpp"
#include "privpost/mechanisms/gaussian.hpp"
#include "privpost/mechanisms/laplace.hpp"
#include "privpost/testing/truncated_study.hpp"
#include "support/calibration_checks.hpp"

using namespace privpost;

// A namespace of its own: privpost_test_samplers compiles this file in one translation unit with the other sampler
// tests, whose helpers have the same names.
namespace truncated_calibration {
namespace {
constexpr int trials = 300;            // the negative control and the Gaussian-mechanism variant
constexpr int coverage_trials = 1500;  // the coverage studies: detects a 0.04 shortfall of 90% coverage
constexpr double level = 1e-3;

study_settings settings(double n) {
  study_settings s;
  s.n = n;
  s.burnin = 500;
  s.draws = 1000;
  s.thin = 3;
  s.methods = {"gibbs", "naive", "nonprivate"};
  return s;
}

template <class Prior>
std::vector<calibration_row> laplace_study(const Prior& prior, double n, double eps, std::uint64_t seed, int m = trials,
                                           std::vector<std::string> methods = {"gibbs", "naive", "nonprivate"}) {
  study_settings s = settings(n);
  s.methods = std::move(methods);
  const truncated_family_study<Prior, laplace_mechanism> study(
      prior, 0.05, [&](double l1, double) { return laplace_mechanism(l1, eps); }, s);
  return run_calibration(study, {m, seed, 0}).report();
}

template <class Prior>
void require_gibbs_calibrated(const char* name, const Prior& prior, double n, std::uint64_t seed) {
  for (double eps : {0.1, 1.0}) {
    const auto rows =
        laplace_study(prior, n, eps, seed + static_cast<std::uint64_t>(n + 10 * eps), coverage_trials, {"gibbs", "nonprivate"});
    for (const auto& r : rows) {
      INFO(name << ", n = " << n << ", epsilon = " << eps);
      test::check_calibrated(r);
    }
  }
}
}  // namespace

TEST_CASE("truncated exponential Gibbs-SS is calibrated at n = 100", "[calibration][truncated][coverage-exponential]") {
  require_gibbs_calibrated("exponential", exponential_gamma_prior(20.0, 20.0), 100.0, 100);
}
TEST_CASE("truncated exponential Gibbs-SS is calibrated at n = 1000", "[calibration][truncated][coverage-exponential]") {
  require_gibbs_calibrated("exponential", exponential_gamma_prior(20.0, 20.0), 1000.0, 100);
}

TEST_CASE("truncated Poisson Gibbs-SS is calibrated at n = 100", "[calibration][truncated][coverage-poisson]") {
  require_gibbs_calibrated("poisson", poisson_gamma_prior(10.0, 2.0), 100.0, 200);
}
TEST_CASE("truncated Poisson Gibbs-SS is calibrated at n = 1000", "[calibration][truncated][coverage-poisson]") {
  require_gibbs_calibrated("poisson", poisson_gamma_prior(10.0, 2.0), 1000.0, 200);
}

TEST_CASE("truncated normal (known variance) Gibbs-SS is calibrated at n = 100",
          "[calibration][truncated][coverage-normal-known-var]") {
  require_gibbs_calibrated("normal-known-var", normal_mean_prior(0.0, 1.0, 1.0), 100.0, 300);
}
TEST_CASE("truncated normal (known variance) Gibbs-SS is calibrated at n = 1000",
          "[calibration][truncated][coverage-normal-known-var]") {
  require_gibbs_calibrated("normal-known-var", normal_mean_prior(0.0, 1.0, 1.0), 1000.0, 300);
}

TEST_CASE("truncated normal (normal-inverse-gamma) Gibbs-SS is calibrated at n = 100",
          "[calibration][truncated][coverage-normal]") {
  require_gibbs_calibrated("normal", normal_inverse_gamma_prior(0.0, 1.0, 10.0, 10.0), 100.0, 400);
}
TEST_CASE("truncated normal (normal-inverse-gamma) Gibbs-SS is calibrated at n = 1000",
          "[calibration][truncated][coverage-normal]") {
  require_gibbs_calibrated("normal", normal_inverse_gamma_prior(0.0, 1.0, 10.0, 10.0), 1000.0, 400);
}

TEST_CASE("truncated normal-known-var: no chain settles in the spurious mode", "[truncated][modes]") {
  // z = 0.8 of n = 1000 records, bounds [-2.77, 2.77]: the posterior sits at mu ~ 0. Before the truncated moments were corrected
  // the chains of seeds 9, 26, 29, 55 and 57 started from prior draws beyond the peak of the centre mean (mu0 = 3.6, 2.2, 2.6,
  // -2.3, 2.0), walked to |mu| ~ 5.5 (almost every record dropped) and stayed there.
  const normal_mean_prior prior(0.0, 1.0, 1.0);
  const auto [a, b] = prior_predictive_bounds(prior, 0.05);
  const laplace_mechanism m(std::max(b, 0.0) - std::min(a, 0.0), 1.0);
  Eigen::VectorXd z(1);
  z << 0.8;
  for (std::uint64_t seed = 1; seed <= 60; ++seed) {
    std::mt19937_64 g(seed);
    gibbs_ss_truncated chain(prior, m, z, 1000.0, a, b, g);
    double mean = 0.0;
    for (int i = 0; i < 1000; ++i) chain.step(g);
    for (int i = 0; i < 1000; ++i) {
      chain.step(g);
      mean += chain.parameter().mean / 1000.0;
    }
    INFO("seed " << seed << ": posterior mean " << mean << ", jumps " << chain.collapsed_accepted() << "/"
                 << chain.collapsed_proposals());
    CHECK(std::abs(mean) < 0.2);
    CHECK(chain.collapsed_accepted() > 0);
  }
}

// The posterior density of mu, up to a constant, on a grid, under the model Gibbs-SS samples with its records
// integrated out: mu ~ N(0, prior_sd^2), the centre sum of n records of N(mu, 1) inside [a, b] normal with its exact
// mean and variance (the CLT), the release that sum plus Laplace noise of scale `scale`. The Laplace-normal convolution
// by the trapezoid rule over the sum's mean +- 10 sd.
std::vector<double> truncated_normal_mean_posterior(const std::vector<double>& grid, double z, double n, double a, double b,
                                                    double scale, double prior_sd) {
  const double root2pi = std::sqrt(2.0 * std::numbers::pi);
  auto phi = [&](double x) { return std::exp(-0.5 * x * x) / root2pi; };
  auto cdf = [](double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); };
  std::vector<double> density;
  for (const double mu : grid) {
    const double q = cdf(b - mu) - cdf(a - mu);
    const double m1 = mu * q + phi(a - mu) - phi(b - mu);
    const double m2 = (mu * mu + 1.0) * q + (mu + a) * phi(a - mu) - (mu + b) * phi(b - mu);
    const double mean = n * m1, sd = std::sqrt(std::max(n * (m2 - m1 * m1), 1e-300));
    constexpr int steps = 2000;
    const double h = 20.0 * sd / steps;
    double likelihood = 0.0;
    for (int i = 0; i <= steps; ++i) {
      const double s = mean - 10.0 * sd + i * h;
      const double w = (i == 0 || i == steps) ? 0.5 : 1.0;
      likelihood += w * h * phi((s - mean) / sd) / sd * std::exp(-std::abs(z - s) / scale) / (2.0 * scale);
    }
    density.push_back(std::exp(-0.5 * (mu / prior_sd) * (mu / prior_sd)) * likelihood);
  }
  return density;
}

TEST_CASE("truncated normal-known-var: two modes of comparable mass are both sampled, in proportion", "[truncated][modes]") {
  // n = 400 records of N(mu, 1), released as the sum of those inside [-1, 1] plus Laplace noise of scale 2 (sensitivity
  // 2, epsilon 1): z = 10, prior mu ~ N(0, 2^2). A small centre sum is explained by mu near 0 (the records inside, their
  // sum near 0) and by mu near 2.7 (most records dropped): the posterior has two modes with a valley between them far
  // below either peak. Gibbs-SS crosses it by its prior-proposal move (samplers/gibbs_ss_truncated.hpp): with the move
  // the chains' share of draws beyond the valley matches the quadrature's mass there; without it (set_collapsed_moves(0),
  // the negative control) no chain crosses.
  const double n = 400.0, a = -1.0, b = 1.0, z_value = 10.0, prior_sd = 2.0;
  const laplace_mechanism m(b - a, 1.0);
  std::vector<double> grid;
  for (int i = 0; i <= 6000; ++i) grid.push_back(-4.0 + 0.002 * i);
  const std::vector<double> density = truncated_normal_mean_posterior(grid, z_value, n, a, b, m.scale(), prior_sd);
  // The modes (the highest point on each side of mu = 1.2) and the valley between them.
  std::size_t low = 0, high = 0;
  for (std::size_t i = 0; i < grid.size(); ++i) {
    if (grid[i] < 1.2 && density[i] > density[low]) low = i;
    if (grid[i] >= 1.2 && density[i] > density[high]) high = i;
  }
  std::size_t valley = low;
  for (std::size_t i = low; i <= high; ++i)
    if (density[i] < density[valley]) valley = i;
  double total = 0.0, beyond = 0.0;
  for (std::size_t i = 0; i < grid.size(); ++i) {
    total += density[i];
    if (i > valley) beyond += density[i];
  }
  const double p_beyond = beyond / total, cut = grid[valley];
  INFO("modes at " << grid[low] << " and " << grid[high] << ", valley at " << cut << " (density "
                   << density[valley] / std::max(density[low], density[high]) << " of the peak), mass beyond " << p_beyond);
  REQUIRE(p_beyond > 0.3);
  REQUIRE(p_beyond < 0.8);
  REQUIRE(density[valley] < 1e-3 * std::max(density[low], density[high]));

  const normal_mean_prior prior(0.0, prior_sd, 1.0);
  Eigen::VectorXd z(1);
  z << z_value;
  constexpr int chains = 8, burnin = 1000, sweeps = 10000;
  auto run = [&](int moves, std::vector<double>& shares, std::vector<int>& crossings) {
    for (int c = 0; c < chains; ++c) {
      std::mt19937_64 g(100 + c);
      gibbs_ss_truncated chain(prior, m, z, n, a, b, g);
      chain.set_collapsed_moves(moves);
      for (int i = 0; i < burnin; ++i) chain.step(g);
      int inside = 0, crossed = 0;
      bool was = chain.parameter().mean > cut;
      for (int i = 0; i < sweeps; ++i) {
        chain.step(g);
        const bool is = chain.parameter().mean > cut;
        inside += is ? 1 : 0;
        crossed += is != was ? 1 : 0;
        was = is;
      }
      shares.push_back(static_cast<double>(inside) / sweeps);
      crossings.push_back(crossed);
    }
  };
  std::vector<double> shares, control_shares;
  std::vector<int> crossings, control_crossings;
  run(1, shares, crossings);
  run(0, control_shares, control_crossings);
  double mean = 0.0, var = 0.0;
  for (double x : shares) mean += x / chains;
  for (double x : shares) var += (x - mean) * (x - mean) / (chains - 1);
  const double se = std::sqrt(var / chains);
  std::ostringstream per_chain;
  for (int c = 0; c < chains; ++c)
    per_chain << " [" << shares[static_cast<std::size_t>(c)] << ", " << crossings[static_cast<std::size_t>(c)]
              << " crossings; without the move " << control_shares[static_cast<std::size_t>(c)] << ", "
              << control_crossings[static_cast<std::size_t>(c)] << "]";
  INFO("share beyond the valley " << mean << " (se " << se << " over " << chains << " chains):" << per_chain.str());
  for (int x : crossings) CHECK(x >= 20);
  // Four standard errors of the chains' mean share (t with 7 degrees of freedom: two-sided p ~ 0.005), plus 0.02 for
  // the difference between this marginal and Gibbs-SS's target (its conditionals of theta given the total and of the
  // sums given theta are the CLT model's only approximately).
  CHECK(std::abs(mean - p_beyond) <= 4.0 * se + 0.02);
  for (int x : control_crossings) CHECK(x == 0);
}

TEST_CASE("truncated normal: the cheating naive is rejected at n = 1000, epsilon = 0.1",
          "[calibration][truncated][naive-controls]") {
  const auto rows = laplace_study(normal_inverse_gamma_prior(0.0, 1.0, 10.0, 10.0), 1000.0, 0.1, 500);
  for (const auto& r : rows) {
    INFO(r.method << "[" << r.parameter << "] KS " << r.ks << " (p " << r.ks_pvalue << ")");
    if (r.method == "naive") CHECK(test::miscalibrated(r));
    if (r.method == "naive") CHECK(r.ks_pvalue < level);
  }
}

TEST_CASE("truncated exponential Gibbs-SS is calibrated with the Gaussian mechanism", "[calibration][truncated][gaussian]") {
  const truncated_family_study<exponential_gamma_prior, gaussian_mechanism> study(
      exponential_gamma_prior(20.0, 20.0), 0.05, [](double, double l2) { return gaussian_mechanism::analytic(l2, 0.1, 1e-5); },
      settings(100));
  // Sensitivity from the bounds: t(x) = x on [a, b] with dropping, so the L2 (= L1) range is [0, b].
  CHECK(study.statistic().l2_sensitivity() == Approx(study.upper()));
  const auto rows = run_calibration(study, {trials, 600, 0}).report();
  for (const auto& r : rows) {
    INFO(r.method << " KS " << r.ks << " (p " << r.ks_pvalue << ")");
    if (r.method == "gibbs") test::check_calibrated(r);
  }
}

TEST_CASE("truncated studies: bad input", "[truncated][errors]") {
  CHECK_THROWS_AS(prior_predictive_bounds(exponential_gamma_prior(2.0, 2.0), 0.0), std::invalid_argument);
  CHECK_THROWS_AS(prior_predictive_bounds(exponential_gamma_prior(2.0, 2.0), 1.0), std::invalid_argument);
  std::mt19937_64 g(1);
  Eigen::VectorXd z(1);
  z << 10.0;
  const laplace_mechanism m(1.0, 1.0);
  CHECK_THROWS_AS(gibbs_ss_truncated(exponential_gamma_prior(2.0, 2.0), m, z, 100.0, 3.0, 1.0, g), std::invalid_argument);
  CHECK_THROWS_AS(gibbs_ss_truncated(exponential_gamma_prior(2.0, 2.0), m, z, 0.0, 0.0, 1.0, g), std::invalid_argument);
  Eigen::VectorXd z2(2);
  z2 << 1.0, 2.0;
  CHECK_THROWS_AS(gibbs_ss_truncated(exponential_gamma_prior(2.0, 2.0), m, z2, 10.0, 0.0, 1.0, g), std::invalid_argument);
}

}  // namespace truncated_calibration
