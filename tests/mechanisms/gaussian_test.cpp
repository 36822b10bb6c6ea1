// Tests of privpost/mechanisms/gaussian.hpp and analytic_gaussian.hpp. Properties:
//  1. golden values of the analytic calibration (Balle & Wang 2018) to 1e-9 relative;
//  2. delta(sigma) <= delta always, and sigma is tight (one part in 1e12 less violates delta);
//  3. sigma decreases in epsilon and in delta, and never exceeds the classic sigma where that applies;
//  4. large epsilon does not overflow; tiny epsilon gives a finite sigma;
//  5. release noise fits N(0, sigma^2) (KS, n = 20000) and the test rejects 0.8 sigma; log_likelihood = log(pdf);
//  6. one test per bad input (epsilon, delta, sensitivity, the classic formula at epsilon >= 1).
#include <catch2/catch.hpp>

#include <boost/math/distributions/normal.hpp>
#include <cmath>
#include <limits>
#include <random>

#include "privpost/mechanisms/gaussian.hpp"
#include "support/statistical.hpp"

using namespace privpost;
namespace bm = boost::math;

TEST_CASE("analytic Gaussian: golden values", "[gaussian]") {
  const double s1 = analytic_gaussian_sigma(std::log(3.0), 1e-5, 1.0);
  const double s2 = analytic_gaussian_sigma(1.0, 1e-5, 1.0);
  CHECK(std::abs(s1 / 3.42466239791 - 1.0) < 1e-9);
  CHECK(std::abs(s2 / 3.73063163482 - 1.0) < 1e-9);
  // Sensitivity scales sigma linearly.
  CHECK(analytic_gaussian_sigma(1.0, 1e-5, 2.5) == Approx(2.5 * s2).epsilon(1e-12));
}

TEST_CASE("analytic Gaussian: delta(sigma) <= delta and sigma is tight", "[gaussian]") {
  for (double eps : {1e-3, 0.1, 0.5, 1.0, 3.0, 10.0, 50.0}) {
    for (double delta : {1e-12, 1e-8, 1e-5, 1e-2, 0.3}) {
      INFO("epsilon " << eps << ", delta " << delta);
      const double sigma = analytic_gaussian_sigma(eps, delta, 1.0);
      REQUIRE(std::isfinite(sigma));
      REQUIRE(analytic_gaussian_delta(sigma, eps, 1.0) <= delta);
      REQUIRE(analytic_gaussian_delta(sigma * (1.0 - 1e-12), eps, 1.0) > delta);
    }
  }
}

TEST_CASE("analytic Gaussian: monotone in epsilon and delta, never above classic", "[gaussian]") {
  double previous = std::numeric_limits<double>::infinity();
  for (double eps = 0.01; eps < 20.0; eps *= 1.5) {
    const double sigma = analytic_gaussian_sigma(eps, 1e-6, 1.0);
    REQUIRE(sigma < previous);
    previous = sigma;
    if (eps < 1.0) REQUIRE(sigma <= classic_gaussian_sigma(eps, 1e-6, 1.0));
  }
  previous = std::numeric_limits<double>::infinity();
  for (double delta = 1e-15; delta < 0.9; delta *= 3.0) {
    const double sigma = analytic_gaussian_sigma(0.5, delta, 1.0);
    REQUIRE(sigma < previous);
    previous = sigma;
  }
}

TEST_CASE("analytic Gaussian: extreme epsilon", "[gaussian]") {
  const double big = analytic_gaussian_sigma(700.0, 1e-10, 1.0);
  REQUIRE((std::isfinite(big) && big > 0.0));
  REQUIRE(analytic_gaussian_delta(big, 700.0, 1.0) <= 1e-10);
  // As epsilon -> 0 the mechanism stays delta-DP with sigma ~ D / (2 Phi^{-1}((1 + delta) / 2)) ~ 4e4 D: finite.
  const double small = analytic_gaussian_sigma(1e-12, 1e-5, 1.0);
  REQUIRE((std::isfinite(small) && small > 1e4));
  REQUIRE(analytic_gaussian_delta(small, 1e-12, 1.0) <= 1e-5);
}

TEST_CASE("Gaussian release noise fits N(0, sigma^2); log_likelihood is log(pdf)", "[gaussian]") {
  const auto m = gaussian_mechanism::analytic(2.0, 0.8, 1e-6);
  CHECK(m.calibration() == gaussian_calibration::analytic);
  CHECK(m.budget() == privacy_budget{0.8, 1e-6});
  std::mt19937_64 g(201);
  Eigen::VectorXd s(1);
  s << 5.0;
  const double sigma = m.sigma();
  const auto noise = test::sample(test::ks_draws, [&] { return m.release(s, g)(0) - 5.0; });
  test::require_fits(noise, [&](double x) { return bm::cdf(bm::normal_distribution<>(0.0, sigma), x); });
  test::require_rejects(noise, [&](double x) { return bm::cdf(bm::normal_distribution<>(0.0, 0.8 * sigma), x); });
  Eigen::VectorXd z(2), t(2);
  z << 1.0, -3.0;
  t << 0.0, 2.0;
  const double expected = std::log(bm::pdf(bm::normal_distribution<>(0.0, sigma), 1.0)) +
                          std::log(bm::pdf(bm::normal_distribution<>(2.0, sigma), -3.0));
  CHECK(m.log_likelihood(z, t) == Approx(expected).epsilon(1e-13));
  CHECK(m.draw_variance(g) == sigma * sigma);
  CHECK(m.redraw_variance(123.0, g) == sigma * sigma);
  const auto c = gaussian_mechanism::classic(1.0, 0.5, 1e-5);
  CHECK(c.sigma() == Approx(std::sqrt(2.0 * std::log(1.25e5)) / 0.5));
}

TEST_CASE("Gaussian bad input: epsilon", "[gaussian][errors]") {
  const double inf = std::numeric_limits<double>::infinity();
  for (double eps : {std::nan(""), inf, 0.0, -0.5, 0x1.0p-52}) {
    INFO("epsilon " << eps);
    CHECK_THROWS_AS(gaussian_mechanism::analytic(1.0, eps, 1e-5), std::invalid_argument);
    CHECK_THROWS_AS(analytic_gaussian_sigma(eps, 1e-5, 1.0), std::invalid_argument);
  }
  CHECK_THROWS_WITH(gaussian_mechanism::analytic(1.0, -0.5, 1e-5), Catch::Contains("epsilon is -0.5"));
}

TEST_CASE("Gaussian bad input: delta", "[gaussian][errors]") {
  for (double delta : {std::nan(""), -1e-9, 1.0, 1.5, 0.0}) {
    INFO("delta " << delta);
    CHECK_THROWS_AS(gaussian_mechanism::analytic(1.0, 0.5, delta), std::invalid_argument);
    CHECK_THROWS_AS(gaussian_mechanism::classic(1.0, 0.5, delta), std::invalid_argument);
  }
  CHECK_THROWS_WITH(gaussian_mechanism::analytic(1.0, 0.5, 0.0), Catch::Contains("delta is 0") && Catch::Contains("(0, 1)"));
}

TEST_CASE("Gaussian bad input: sensitivity", "[gaussian][errors]") {
  for (double d : {std::nan(""), std::numeric_limits<double>::infinity(), 0.0, -0.0, -1.0}) {
    INFO("sensitivity " << d);
    CHECK_THROWS_AS(gaussian_mechanism::analytic(d, 0.5, 1e-5), std::invalid_argument);
    CHECK_THROWS_AS(gaussian_mechanism::classic(d, 0.5, 1e-5), std::invalid_argument);
  }
}

TEST_CASE("Gaussian bad input: the classic formula at epsilon >= 1", "[gaussian][errors]") {
  CHECK_THROWS_AS(gaussian_mechanism::classic(1.0, 1.0, 1e-5), std::domain_error);
  CHECK_THROWS_AS(gaussian_mechanism::classic(1.0, 2.0, 1e-5), std::domain_error);
  CHECK_THROWS_WITH(classic_gaussian_sigma(1.0, 1e-5, 1.0), Catch::Contains("epsilon is 1") && Catch::Contains("analytic"));
  CHECK_NOTHROW(gaussian_mechanism::analytic(1.0, 2.0, 1e-5));
}

TEST_CASE("Gaussian bad input: statistics and sizes", "[gaussian][errors]") {
  const auto m = gaussian_mechanism::analytic(1.0, 1.0, 1e-5);
  std::mt19937_64 g(1);
  Eigen::VectorXd s(2);
  s << 1.0, std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_AS(m.release(s, g), std::invalid_argument);
  Eigen::VectorXd a(2), b(3);
  a.setZero();
  b.setZero();
  CHECK_THROWS_AS(m.log_likelihood(a, b), std::invalid_argument);
}

TEST_CASE("published(sigma): the noise of someone else's release, for inference only", "[gaussian][published]") {
  // An analyst knows the published sd, not the owner's sensitivity and budget: the density is the Gaussian's with
  // that sd, and nothing can be released with it.
  const auto m = gaussian_mechanism::published(0.5);
  const auto same = gaussian_mechanism::analytic(1.0, 1.0, 1e-5);
  const auto reference = gaussian_mechanism::published(same.sigma());
  const Eigen::VectorXd z = Eigen::Vector2d(0.3, -1.2), s = Eigen::Vector2d(0.1, 0.4);
  CHECK(m.sigma() == 0.5);
  CHECK(m.calibration() == gaussian_calibration::published);
  CHECK(reference.log_likelihood(z, s) == same.log_likelihood(z, s));
  CHECK(std::isinf(m.budget().epsilon));
  CHECK(std::isinf(m.l2_sensitivity()));
  CHECK(std::isinf(m.zcdp_rho()));
  std::mt19937_64 g(1);
  CHECK_THROWS_WITH(m.release(s, g), Catch::Contains("published noise scale") && Catch::Contains("inference"));
  CHECK_THROWS_AS(m.release(s), std::logic_error);
  CHECK_THROWS_WITH(gaussian_mechanism::published(0.0), Catch::Contains("sigma"));
  CHECK_THROWS_AS(gaussian_mechanism::published(std::nan("")), std::invalid_argument);
  CHECK_THROWS_AS(gaussian_mechanism::published(1e-200), std::invalid_argument);  // sigma^2 underflows
}
