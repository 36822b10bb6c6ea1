// Tests of privpost/diagnostics/convergence.hpp. Properties:
//  1. an AR(1) chain with coefficient phi has ESS N (1 - phi) / (1 + phi): ess_mean and ess_bulk within 15% at
//     4 x 5000 draws, for phi = 0.5 and phi = -0.3 (antithetic);
//  2. independent chains from one distribution: R-hat < 1.01 and bulk/tail ESS near the draw count;
//  3. chains with different locations or scales: R-hat > 1.1 (the folded R-hat catches the scale difference);
//  4. bad input (too few draws, non-finite draws) throws; constant draws give NaN, as documented.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "privpost/core/random/normal.hpp"
#include "privpost/diagnostics/convergence.hpp"

using namespace privpost;

namespace {
Eigen::MatrixXd ar1(double phi, Eigen::Index n, Eigen::Index chains, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  Eigen::MatrixXd x(n, chains);
  const double innovation = std::sqrt(1.0 - phi * phi);
  for (Eigen::Index c = 0; c < chains; ++c) {
    double v = draw_normal(g);
    for (Eigen::Index i = 0; i < n; ++i) {
      v = phi * v + innovation * draw_normal(g);
      x(i, c) = v;
    }
  }
  return x;
}
}  // namespace

TEST_CASE("ESS of AR(1) chains matches N (1 - phi) / (1 + phi)", "[convergence]") {
  for (double phi : {0.5, -0.3}) {
    INFO("phi " << phi);
    const Eigen::MatrixXd x = ar1(phi, 5000, 4, 401);
    const double expected = 20000.0 * (1.0 - phi) / (1.0 + phi);
    CHECK(ess_mean(x) == Approx(expected).epsilon(0.15));
    CHECK(ess_bulk(x) == Approx(expected).epsilon(0.15));
  }
}

TEST_CASE("independent chains: R-hat near 1 and ESS near the draw count", "[convergence]") {
  const Eigen::MatrixXd x = ar1(0.0, 1000, 4, 402);
  CHECK(rhat(x) < 1.01);
  CHECK(ess_bulk(x) > 3000.0);
  CHECK(ess_tail(x) > 2500.0);
}

TEST_CASE("R-hat flags chains that disagree in location or scale", "[convergence]") {
  Eigen::MatrixXd x = ar1(0.0, 1000, 4, 403);
  Eigen::MatrixXd shifted = x;
  shifted.col(0).array() += 2.0;
  CHECK(rhat(shifted) > 1.1);
  Eigen::MatrixXd scaled = x;
  scaled.col(0) *= 4.0;
  CHECK(rhat(scaled) > 1.1);
}

TEST_CASE("convergence bad input", "[convergence][errors]") {
  CHECK_THROWS_AS(rhat(Eigen::MatrixXd::Zero(3, 2)), std::invalid_argument);
  Eigen::MatrixXd bad = Eigen::MatrixXd::Zero(10, 2);
  bad(3, 1) = std::nan("");
  CHECK_THROWS_AS(ess_bulk(bad), std::invalid_argument);
  CHECK(std::isnan(rhat(Eigen::MatrixXd::Ones(10, 2))));
}
