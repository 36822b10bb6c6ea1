// Tests of privpost/inference/posterior.hpp: summaries of known draws (mean, sd, quantiles, intervals), layout of
// vector parameters across chains, diagnostics delegated per coordinate and their worst over a range, the Monte Carlo
// standard error of the mean, and bad input.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "privpost/inference/posterior.hpp"

using namespace privpost;

TEST_CASE("posterior summaries of known draws", "[posterior]") {
  Eigen::MatrixXd c0(5, 2), c1(5, 2);
  c0 << 1, 10, 2, 20, 3, 30, 4, 40, 5, 50;
  c1 << 6, 60, 7, 70, 8, 80, 9, 90, 10, 100;
  const posterior p({c0, c1});
  CHECK(p.num_chains() == 2);
  CHECK(p.draws_per_chain() == 5);
  CHECK(p.dimension() == 2);
  CHECK(p.mean() == 5.5);
  CHECK(p.mean(1) == 55.0);
  CHECK(p.sd() == Approx(3.0276503540974917));
  CHECK(p.quantile(0.5) == 5.5);
  CHECK(p.quantile(0.0, 1) == 10.0);
  const auto ci = p.interval(0.5);
  CHECK(ci.lower == Approx(3.25));
  CHECK(ci.upper == Approx(7.75));
  CHECK(p.chain_matrix(1)(4, 1) == 100.0);
  CHECK(p.draw_matrix().rows() == 10);
  CHECK(p.rhat() > 1.5);  // the two chains do not overlap at all
}

TEST_CASE("mcse_mean is sd / sqrt(ESS): sd / sqrt(N) for independent draws, larger for correlated ones", "[posterior]") {
  // Four chains of 2000 AR(1) draws x_t = phi x_{t-1} + sqrt(1 - phi^2) e_t (stationary N(0, 1)): the mean's standard
  // error is sqrt((1 + phi) / ((1 - phi) N)) with N = 8000; within 15% (the ESS tolerance of convergence_test.cpp).
  std::mt19937_64 g(2024);
  std::normal_distribution<double> e;
  for (const double phi : {0.0, 0.8}) {
    std::vector<Eigen::MatrixXd> chains;
    for (int c = 0; c < 4; ++c) {
      Eigen::MatrixXd m(2000, 1);
      double x = e(g);
      for (Eigen::Index t = 0; t < m.rows(); ++t) m(t, 0) = x = phi * x + std::sqrt(1.0 - phi * phi) * e(g);
      chains.push_back(m);
    }
    const posterior p(chains);
    const double expected = std::sqrt((1.0 + phi) / ((1.0 - phi) * 8000.0));
    CHECK(p.mcse_mean() == Approx(expected).epsilon(0.15));
    CHECK(p.mcse_mean() == Approx(p.sd() / std::sqrt(p.ess_mean())));
  }
}

TEST_CASE("max_rhat and min_ess_bulk: the worst coordinate of a range, undefined ones skipped", "[posterior]") {
  // Four chains of 200 draws, three coordinates: 0 independent N(0, 1); 1 the same with chain 3 shifted by 3 (R-hat far
  // above 1); 2 constant (R-hat and ESS undefined).
  std::mt19937_64 g(7);
  std::normal_distribution<double> e;
  std::vector<Eigen::MatrixXd> chains;
  for (int c = 0; c < 4; ++c) {
    Eigen::MatrixXd m(200, 3);
    for (Eigen::Index t = 0; t < m.rows(); ++t) m.row(t) << e(g), e(g) + (c == 3 ? 3.0 : 0.0), 1.0;
    chains.push_back(m);
  }
  const posterior p(chains);
  CHECK(std::isnan(p.rhat(2)));
  CHECK(p.max_rhat() == p.rhat(1));
  CHECK(p.rhat(1) > 1.2);
  CHECK(p.max_rhat(0, 1) == p.rhat(0));
  CHECK(p.min_ess_bulk() == std::min(p.ess_bulk(0), p.ess_bulk(1)));
  CHECK(p.min_ess_bulk(1, 3) == p.ess_bulk(1));
  CHECK(std::isnan(p.max_rhat(2, 3)));
  CHECK(std::isnan(p.min_ess_bulk(2)));
  CHECK_THROWS_WITH(p.max_rhat(0, 4), Catch::Contains("end of the coordinate range") && Catch::Contains("[1, 3]"));
  CHECK_THROWS_WITH(p.min_ess_bulk(2, 2), Catch::Contains("beginning of the coordinate range") && Catch::Contains("[0, 1]"));
  CHECK_THROWS_AS(p.max_rhat(-1), std::invalid_argument);
  CHECK_THROWS_AS(p.max_rhat(0, 0), std::invalid_argument);
}

TEST_CASE("posterior bad input", "[posterior][errors]") {
  CHECK_THROWS_AS(posterior(std::vector<Eigen::MatrixXd>{}), std::invalid_argument);
  CHECK_THROWS_AS(posterior({Eigen::MatrixXd::Zero(5, 1), Eigen::MatrixXd::Zero(4, 1)}), std::invalid_argument);
  Eigen::MatrixXd bad = Eigen::MatrixXd::Zero(5, 1);
  bad(2, 0) = std::nan("");
  CHECK_THROWS_AS(posterior({bad}), std::invalid_argument);
  const posterior p({Eigen::MatrixXd::Zero(5, 1)});
  CHECK_THROWS_AS(p.mean(1), std::invalid_argument);
}
