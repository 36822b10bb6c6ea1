// Tests of the DP-GLM record-level baseline (samplers/glm/logistic_record_model.hpp; spec glm.md Sec. 4.2): the hand
// gradient against sixth-order central differences (d = 1..4, points near r = +-6, relative error < 1e-7) and bad input.
// Its calibration and the large-epsilon agreement with the moment model are in glm_baseline_calibration_test.cpp.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>

#include "privpost/core/random/normal.hpp"
#include "privpost/samplers/glm/logistic_record_model.hpp"

using namespace privpost;

static_assert(differentiable_model<logistic_record_model>);

TEST_CASE("record-level logistic model: gradient against finite differences", "[glm][gradient][baseline]") {
  std::mt19937_64 g(21);
  for (int d = 1; d <= 4; ++d) {
    const glm_parameters truth = draw_glm_prior(g, d, glm_prior{9.0, 1.0, 2.0});
    const logistic_records rec = simulate_logistic_records(g, truth, 50);
    logistic_record_model m(rec.x, rec.y, 9.0);
    REQUIRE(m.dimension() == d + 1);
    for (int rep = 0; rep < 10; ++rep) {
      Eigen::VectorXd u(d + 1), dir(d + 1), grad(d + 1), gr(d + 1);
      for (int i = 0; i <= d; ++i) {
        u(i) = draw_normal(g);
        dir(i) = draw_normal(g);
      }
      if (rep == 0) u(d) = 6.0;  // near the truncation boundary of rho
      if (rep == 1) u(d) = -6.0;
      dir.normalize();
      const double lp = m.log_density_gradient(u, grad);
      REQUIRE(std::isfinite(lp));
      const double h = 1e-3;
      auto f = [&](double t) { return m.log_density_gradient(u + t * dir, gr); };
      const double fd = (-f(-3 * h) + 9 * f(-2 * h) - 45 * f(-h) + 45 * f(h) - 9 * f(2 * h) + f(3 * h)) / (60 * h);
      INFO("d " << d << ", rep " << rep << ": analytic " << grad.dot(dir) << ", finite difference " << fd);
      CHECK(std::abs(grad.dot(dir) - fd) < 1e-7 * std::max(1.0, std::abs(fd)));
    }
    // theta of the parameter vector lies inside the truncation ball.
    Eigen::VectorXd u = Eigen::VectorXd::Ones(d + 1);
    CHECK(m.parameter_vector(u).squaredNorm() < 9.0);
  }
}

TEST_CASE("record-level logistic model rejects bad arguments", "[glm][errors][baseline]") {
  const Eigen::MatrixXd x = Eigen::MatrixXd::Ones(3, 2);
  const Eigen::VectorXd y = (Eigen::VectorXd(3) << 1.0, 0.0, -1.0).finished();
  CHECK_NOTHROW(logistic_record_model(x, y));
  CHECK_THROWS_AS(logistic_record_model(x, Eigen::VectorXd::Ones(2)), std::invalid_argument);
  CHECK_THROWS_AS(logistic_record_model(Eigen::MatrixXd(0, 2), Eigen::VectorXd(0)), std::invalid_argument);
  CHECK_THROWS_AS(logistic_record_model(Eigen::MatrixXd(3, 0), y), std::invalid_argument);
  CHECK_THROWS_AS(logistic_record_model(x, y, 0.0), std::invalid_argument);
  Eigen::VectorXd y2 = y;
  y2(1) = 2.0;
  CHECK_THROWS_WITH(logistic_record_model(x, y2), Catch::Contains("response"));
  Eigen::MatrixXd xn = x;
  xn(1, 1) = std::nan("");
  CHECK_THROWS_AS(logistic_record_model(xn, y), std::invalid_argument);
  logistic_record_model m(x, y);
  Eigen::VectorXd u = Eigen::VectorXd::Zero(3), grad;
  CHECK(m.log_density_gradient(u, grad) == -std::numeric_limits<double>::infinity());  // p = 0
  CHECK(m.failures() == 1);
  CHECK(grad.allFinite());
  std::mt19937_64 g(1);
  const glm_parameters not_pd{Eigen::VectorXd::Zero(2), -Eigen::MatrixXd::Identity(2, 2)};
  CHECK_THROWS_AS(simulate_logistic_records(g, not_pd, 5), std::domain_error);
  CHECK_THROWS_AS(simulate_logistic_records(g, glm_parameters{Eigen::VectorXd::Zero(2), Eigen::MatrixXd::Identity(2, 2)}, 0),
                  std::invalid_argument);
}
