// Tests of privpost/diagnostics/calibration.hpp. Properties:
//  1. a perfect uniform grid has D = 1/(2n) and p ~ 1; a squared grid is rejected;
//  2. the Kolmogorov survival function matches its tabulated critical values (1.3581 -> 0.05, 1.6276 -> 0.01,
//     1.9495 -> 0.001) and is continuous where the two series meet;
//  3. posterior_quantile counts ties half; coverage counts quantiles inside the central band;
//  4. the two-sample KS statistic equals a brute-force sup over every sample point (ties included), is 0 for equal
//     and 1 for separated samples, and its p-value separates a shift of 0.3 sd from none at n = 2000;
//  5. bad input throws.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "privpost/diagnostics/calibration.hpp"

using namespace privpost;

TEST_CASE("KS on a perfect uniform grid and on a distorted one", "[calibration]") {
  const int n = 400;
  std::vector<double> grid(n), squared(n);
  for (int i = 0; i < n; ++i) {
    grid[i] = (i + 0.5) / n;
    squared[i] = grid[i] * grid[i];
  }
  const auto r = ks_uniform(grid);
  CHECK(r.statistic == Approx(0.5 / n));
  CHECK(r.p_value > 0.999);
  const auto s = ks_uniform(squared);
  CHECK(s.statistic == Approx(0.25).margin(0.01));
  CHECK(s.p_value < 1e-10);
}

TEST_CASE("Kolmogorov survival function: critical values and continuity", "[calibration]") {
  CHECK(kolmogorov_survival(1.3581) == Approx(0.05).margin(2e-4));
  CHECK(kolmogorov_survival(1.6276) == Approx(0.01).margin(1e-4));
  CHECK(kolmogorov_survival(1.9495) == Approx(0.001).margin(1e-5));
  CHECK(kolmogorov_survival(1.18 - 1e-12) == Approx(kolmogorov_survival(1.18)).epsilon(1e-10));
  CHECK(kolmogorov_survival(0.1) == Approx(1.0));
  CHECK(kolmogorov_survival(0.0) == 1.0);
}

TEST_CASE("posterior_quantile and coverage", "[calibration]") {
  Eigen::VectorXd draws(4);
  draws << 1.0, 2.0, 2.0, 3.0;
  CHECK(posterior_quantile(2.0, draws) == 0.5);
  CHECK(posterior_quantile(0.0, draws) == 0.0);
  CHECK(posterior_quantile(5.0, draws) == 1.0);
  const std::vector<double> q = {0.01, 0.3, 0.5, 0.7, 0.97};
  CHECK(coverage(q, 0.5) == 0.6);
  CHECK(coverage(q, 0.9) == 0.6);
  const auto ci = central_interval(Eigen::VectorXd::LinSpaced(101, 0.0, 100.0), 0.9);
  CHECK(ci.lower == Approx(5.0));
  CHECK(ci.upper == Approx(95.0));
}

TEST_CASE("two-sample KS statistic and p-value", "[calibration]") {
  // Brute force: the largest |F_a(x) - F_b(x)| over every point of either sample (the sup is attained there).
  auto brute = [](const std::vector<double>& a, const std::vector<double>& b) {
    auto ecdf = [](const std::vector<double>& s, double x) {
      return static_cast<double>(std::count_if(s.begin(), s.end(), [x](double v) { return v <= x; })) / s.size();
    };
    double d = 0.0;
    for (const auto* s : {&a, &b})
      for (double x : *s) d = std::max(d, std::abs(ecdf(a, x) - ecdf(b, x)));
    return d;
  };
  std::mt19937_64 g(4);
  std::normal_distribution<double> normal;
  for (int rep = 0; rep < 20; ++rep) {
    std::vector<double> a(5 + rep), b(3 + 2 * rep);
    // Rounded to a coarse grid so that ties within and across the samples occur.
    for (double& x : a) x = std::round(4.0 * normal(g)) / 4.0;
    for (double& x : b) x = std::round(4.0 * (normal(g) + 0.2 * rep)) / 4.0;
    CHECK(ks_two_sample(a, b).statistic == Approx(brute(a, b)).epsilon(1e-15));
  }
  const std::vector<double> x = {1.0, 2.0, 2.0, 3.0}, far = {5.0, 6.0};
  CHECK(ks_two_sample(x, x).statistic == 0.0);
  CHECK(ks_two_sample(x, x).p_value == 1.0);
  CHECK(ks_two_sample(x, far).statistic == 1.0);
  std::vector<double> a(2000), b(2000), c(2000);
  for (int i = 0; i < 2000; ++i) {
    a[i] = normal(g);
    b[i] = normal(g);
    c[i] = normal(g) + 0.3;
  }
  INFO("same law: D " << ks_two_sample(a, b).statistic << ", shifted: D " << ks_two_sample(a, c).statistic);
  CHECK(ks_two_sample(a, b).p_value > 0.001);
  CHECK(ks_two_sample(a, c).p_value < 1e-6);
}

TEST_CASE("calibration bad input", "[calibration][errors]") {
  const std::vector<double> empty;
  CHECK_THROWS_AS(ks_uniform(empty), std::invalid_argument);
  const std::vector<double> outside = {0.5, 1.5};
  CHECK_THROWS_AS(ks_uniform(outside), std::invalid_argument);
  const std::vector<double> one = {0.5}, with_nan = {0.5, std::nan("")};
  CHECK_THROWS_AS(ks_two_sample(empty, one), std::invalid_argument);
  CHECK_THROWS_AS(ks_two_sample(one, empty), std::invalid_argument);
  CHECK_THROWS_AS(ks_two_sample(one, with_nan), std::invalid_argument);
  CHECK_THROWS_AS(posterior_quantile(std::nan(""), Eigen::VectorXd::Zero(3)), std::invalid_argument);
  CHECK_THROWS_AS(posterior_quantile(0.0, Eigen::VectorXd()), std::invalid_argument);
  const std::vector<double> q = {0.5};
  CHECK_THROWS_AS(coverage(q, 1.0), std::invalid_argument);
  CHECK_THROWS_AS(central_interval(Eigen::VectorXd::Zero(3), 0.0), std::invalid_argument);
}
