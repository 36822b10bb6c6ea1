// Tests of privpost/inference/synthetic_regression.hpp: synthetic regression records from the noise-aware posterior.
//  1. Coverage: the combined 50% and 90% intervals of the slope and the intercept from m = 20 synthetic sets (least
//     squares on each, the fully synthetic rules) cover the true coefficients at their nominal rates over M = 400
//     simulated releases, within the library's coverage tolerance (tests/support/calibration_checks.hpp: 3.5 binomial
//     sd, 0.088 at 50% and 0.053 at 90%); one synthetic set analysed as if it were the data (least squares' own normal
//     interval) under-covers beyond it (the negative control).
//  2. The generator and the fit on known parameters: moments of the records, the least-squares covariance, clamping,
//     the recorded vector's layout; bad input by name.
//  3. The GLM generator (privpost/inference/synthetic_glm.hpp): covariate moments, the response's law given x
//     (logistic and Poisson), the release's bounds (box, ball, largest count), the parameter vector's layout, the
//     logistic fit on its records, bad input.
#include <catch2/catch.hpp>

#include <Eigen/Core>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include "privpost/families/regression/covariate_models.hpp"
#include "privpost/families/regression/linear_regression_model.hpp"
#include "privpost/inference/calibration_study.hpp"
#include "privpost/inference/synthetic.hpp"
#include "privpost/inference/synthetic_glm.hpp"
#include "privpost/inference/synthetic_regression.hpp"
#include "privpost/mechanisms/laplace.hpp"
#include "privpost/samplers/gibbs_ss.hpp"
#include "privpost/testing/regression_study.hpp"
#include "support/calibration_checks.hpp"

using namespace privpost;

TEST_CASE("combined synthetic regression intervals cover; one set analysed as real does not", "[synthetic][synthetic-coverage]") {
  // y = theta_0 + theta_1 x + e, (theta, sigma^2) ~ NIG(0, I, 3, 1), (mu_x, Sigma_x) ~ NIW(0, 1, 0.75, 5) (so
  // E Sigma_x = 0.25), n = 100 records, [X^T X, X^T y, y^T y] released with Laplace noise at epsilon 1, sensitivity
  // from the declared bounds [-1, 1] on x and y (regression_study: the data are not truncated, as in 001). The prior is
  // weak on purpose: it is worth about 4 records on the slope, so the posterior is wide against one synthetic set of
  // N = 10 n records, and analysing that set as real must under-cover. Posterior: Gibbs-SS-Update (300 + 1000 sweeps,
  // thin 2) with its covariate law recorded; m = 20 sets from draws spread over the chain.
  constexpr int trials = 400, sets = 20;
  constexpr double n = 100.0, epsilon = 1.0, records = 10.0 * n;
  const regression_layout layout(1, true);
  const nig_regression_prior prior(Eigen::VectorXd::Zero(2), Eigen::MatrixXd::Identity(2, 2), 3.0, 1.0);
  const niw_hyperprior h{Eigen::VectorXd::Zero(1), 1.0, Eigen::MatrixXd::Constant(1, 1, 0.75), 5.0};
  study_settings settings;
  settings.n = n;
  const auto make = [](double l1, double, double share) { return laplace_mechanism(l1, epsilon * share); };
  const regression_study<laplace_mechanism> study(layout, prior, h, covariate_scenario::hierarchical, {interval(-1.0, 1.0)},
                                                  interval(-1.0, 1.0), make, settings);
  const laplace_mechanism mechanism = make(study.l1_sensitivity(), 0.0, 1.0);
  std::mt19937_64 g(20261203);
  int combined50[2] = {0, 0}, combined90[2] = {0, 0}, single50[2] = {0, 0}, single90[2] = {0, 0}, fallbacks = 0;
  const double z50 = 0.6744897501960817, z90 = 1.6448536269514722;  // standard normal quantiles 0.75 and 0.95
  for (int t = 0; t < trials; ++t) {
    const regression_trial trial = study.simulate(g);
    const Eigen::MatrixXd draws = single_chain(
        [&](std::mt19937_64& cg) {
          return with_covariate_law(gibbs_ss(linear_regression_model(layout, hierarchical_normal_covariates(layout, h, cg)),
                                             prior, mechanism, trial.z, trial.n, cg));
        },
        300, 1000, g, 2);
    REQUIRE(draws.cols() == regression_synthetic_parameter::vector_size(layout));
    std::vector<double> q[2], u[2];
    for (const auto& v : synthetic_parameter_draws(posterior({draws}), sets)) {
      const auto p = regression_synthetic_parameter::from_vector(layout, v);
      const auto fit = least_squares(layout, synthetic_regression_records(layout, p, static_cast<std::int64_t>(records), g));
      for (int k = 0; k < 2; ++k) {
        q[k].push_back(fit.coefficients(k));
        u[k].push_back(fit.covariance(k, k));
      }
    }
    for (int k = 0; k < 2; ++k) {
      const double truth = trial.truth(k);
      const auto c = combine_fully_synthetic(q[k], u[k], records, n);
      fallbacks += c.fallback;
      combined50[k] += c.central_interval(0.5).contains(truth);
      combined90[k] += c.central_interval(0.9).contains(truth);
      single50[k] += std::abs(q[k][0] - truth) <= z50 * std::sqrt(u[k][0]);
      single90[k] += std::abs(q[k][0] - truth) <= z90 * std::sqrt(u[k][0]);
    }
  }
  for (int k = 0; k < 2; ++k) {
    const double c50 = combined50[k] / double(trials), c90 = combined90[k] / double(trials);
    const double s50 = single50[k] / double(trials), s90 = single90[k] / double(trials);
    INFO((k == 0 ? "intercept" : "slope") << ": combined coverage 50% " << c50 << ", 90% " << c90 << "; single set as real 50% "
                                          << s50 << ", 90% " << s90 << "; fallbacks " << fallbacks << " of " << 2 * trials);
    CHECK(std::abs(c50 - 0.5) <= test::coverage_tolerance(0.5, trials));
    CHECK(std::abs(c90 - 0.9) <= test::coverage_tolerance(0.9, trials));
    CHECK(0.9 - s90 > test::coverage_tolerance(0.9, trials));  // the negative control under-covers
    CHECK(0.5 - s50 > test::coverage_tolerance(0.5, trials));
  }
}

TEST_CASE("synthetic regression records follow their parameter; least squares recovers it", "[synthetic]") {
  const regression_layout layout(2, true);
  regression_synthetic_parameter p;
  p.theta = Eigen::Vector3d(0.5, -1.0, 2.0);
  p.variance = 0.25;
  p.mean = Eigen::Vector2d(1.0, -2.0);
  p.covariance.resize(2, 2);
  p.covariance << 1.0, 0.3, 0.3, 0.5;
  std::mt19937_64 g(11);
  constexpr std::int64_t n = 200000;
  const Eigen::MatrixXd r = synthetic_regression_records(layout, p, n, g);
  REQUIRE(r.rows() == n);
  REQUIRE(r.cols() == 3);
  const Eigen::Vector2d mean = r.leftCols(2).colwise().mean().transpose();
  const Eigen::MatrixXd centred = r.leftCols(2).rowwise() - mean.transpose();
  const Eigen::MatrixXd cov = centred.transpose() * centred / double(n - 1);
  CHECK(mean(0) == Approx(1.0).margin(5.0 * std::sqrt(1.0 / n)));
  CHECK(mean(1) == Approx(-2.0).margin(5.0 * std::sqrt(0.5 / n)));
  CHECK(cov(0, 1) == Approx(0.3).margin(0.01));
  CHECK(cov(1, 1) == Approx(0.5).margin(0.01));
  const auto fit = least_squares(layout, r);
  // s^2 (X^T X)^-1: the slope's sd is about sigma / sqrt(n Var x) here.
  for (int k = 0; k < 3; ++k) CHECK(fit.coefficients(k) == Approx(p.theta(k)).margin(5.0 * std::sqrt(fit.covariance(k, k))));
  CHECK(fit.residual_variance == Approx(0.25).margin(0.005));
  CHECK(std::sqrt(fit.covariance(1, 1)) == Approx(0.5 / std::sqrt(n * (1.0 - 0.09 / 0.5))).epsilon(0.02));

  // The recorded vector's layout: (theta, sigma^2, mu_x, Sigma_x's lower triangle by column).
  Eigen::VectorXd v(regression_synthetic_parameter::vector_size(layout));
  REQUIRE(v.size() == 3 + 1 + 2 + 3);
  v << 0.5, -1.0, 2.0, 0.25, 1.0, -2.0, 1.0, 0.3, 0.5;
  const auto back = regression_synthetic_parameter::from_vector(layout, v);
  CHECK(back.theta == p.theta);
  CHECK(back.variance == p.variance);
  CHECK(back.mean == p.mean);
  CHECK(back.covariance == p.covariance);

  // Clamped into a declared box as a release clamps its records.
  Eigen::MatrixXd c = r.topRows(1000);
  clamp_regression_records(c, {interval(0.0, 1.5), interval(-2.5, -1.5)}, interval(-1.0, 1.0));
  CHECK(c.col(0).minCoeff() >= 0.0);
  CHECK(c.col(0).maxCoeff() <= 1.5);
  CHECK(c.col(1).minCoeff() >= -2.5);
  CHECK(c.col(1).maxCoeff() <= -1.5);
  CHECK(c.col(2).cwiseAbs().maxCoeff() <= 1.0);
  CHECK(c.col(0).minCoeff() == 0.0);  // some records were clamped, not only in range
}

TEST_CASE("synthetic regression records and least squares refuse bad input by name", "[synthetic]") {
  const regression_layout layout(1, true);
  std::mt19937_64 g(3);
  Eigen::VectorXd v(regression_synthetic_parameter::vector_size(layout));
  v << 0.0, 1.0, 0.5, 0.0, 1.0;
  CHECK_NOTHROW(regression_synthetic_parameter::from_vector(layout, v));
  CHECK_THROWS_WITH(regression_synthetic_parameter::from_vector(layout, v.head(4)), Catch::Contains("vector"));
  Eigen::VectorXd bad = v;
  bad(2) = 0.0;
  CHECK_THROWS_WITH(regression_synthetic_parameter::from_vector(layout, bad), Catch::Contains("sigma^2"));
  bad = v;
  bad(4) = -1.0;
  CHECK_THROWS_WITH(regression_synthetic_parameter::from_vector(layout, bad), Catch::Contains("positive definite"));
  bad = v;
  bad(1) = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_WITH(regression_synthetic_parameter::from_vector(layout, bad), Catch::Contains("entry 1"));
  const auto p = regression_synthetic_parameter::from_vector(layout, v);
  CHECK_THROWS_WITH(synthetic_regression_records(layout, p, 0, g), Catch::Contains("records"));
  CHECK_THROWS_AS(synthetic_regression_records(regression_layout(2, true), p, 10, g), std::invalid_argument);
  // Least squares: too few records, a constant covariate (singular X^T X), a value that is not finite.
  Eigen::MatrixXd two(2, 2);
  two << 0.0, 1.0, 1.0, 2.0;
  CHECK_THROWS_WITH(least_squares(layout, two), Catch::Contains("records"));
  Eigen::MatrixXd constant(5, 2);
  constant << 1, 0, 1, 1, 1, 2, 1, 3, 1, 4;
  CHECK_THROWS_WITH(least_squares(layout, constant), Catch::Contains("singular"));
  Eigen::MatrixXd inf = constant;
  inf(0, 0) = 0.0;
  inf(2, 1) = std::numeric_limits<double>::infinity();
  CHECK_THROWS_WITH(least_squares(layout, inf), Catch::Contains("not finite"));
  CHECK_THROWS_AS(least_squares(layout, Eigen::MatrixXd::Zero(5, 3)), std::invalid_argument);
  Eigen::MatrixXd r(3, 2);
  CHECK_THROWS_AS(clamp_regression_records(r, {}, interval(0.0, 1.0)), std::invalid_argument);
}

TEST_CASE("synthetic GLM records follow their parameter and the release's bounds", "[synthetic]") {
  // d = 2 with an intercept (c = 1) and a covariate mean: (theta~ (3), tau (2), Omega_21, mu_x (2)).
  Eigen::VectorXd v(glm_synthetic_parameter::vector_size(2, true, true));
  REQUIRE(v.size() == 3 + 2 + 1 + 2);
  v << -0.5, 1.0, -2.0, 0.5, 0.25, 0.6, 0.2, -0.1;
  const auto p = glm_synthetic_parameter::from_vector(2, 1.0, true, v);
  CHECK(p.coefficients == Eigen::Vector3d(-0.5, 1.0, -2.0));
  CHECK(p.correlation(1, 0) == 0.6);
  CHECK(p.mean == Eigen::Vector2d(0.2, -0.1));
  std::mt19937_64 g(17);
  constexpr std::int64_t n = 200000;
  const Eigen::MatrixXd r = synthetic_glm_records(glm_kind::logistic, p, {}, n, g);
  REQUIRE(r.cols() == 3);
  const Eigen::Vector2d mean = r.leftCols(2).colwise().mean().transpose();
  const Eigen::MatrixXd centred = r.leftCols(2).rowwise() - mean.transpose();
  const Eigen::MatrixXd cov = centred.transpose() * centred / double(n - 1);
  CHECK(mean(0) == Approx(0.2).margin(5.0 * 0.5 / std::sqrt(double(n))));
  CHECK(mean(1) == Approx(-0.1).margin(5.0 * 0.25 / std::sqrt(double(n))));
  CHECK(cov(1, 0) == Approx(0.6 * 0.5 * 0.25).margin(0.003));
  // The response given x: the mean of (y + 1) / 2 - sigmoid(eta) over the records is 0 up to Monte Carlo error.
  double residual = 0.0;
  CHECK((r.col(2).array() == 1.0 || r.col(2).array() == -1.0).all());
  for (Eigen::Index i = 0; i < n; ++i) {
    const double eta = -0.5 + r(i, 0) - 2.0 * r(i, 1);
    residual += 0.5 * (r(i, 2) + 1.0) - 1.0 / (1.0 + std::exp(-eta));
  }
  CHECK(std::abs(residual / n) < 5.0 * 0.5 / std::sqrt(double(n)));
  // The analyst's estimator recovers the coefficients within its own standard errors.
  const auto fit = logistic_fit(r, 1.0);
  for (int k = 0; k < 3; ++k)
    CHECK(fit.coefficients(k) == Approx(p.coefficients(k)).margin(5.0 * std::sqrt(fit.covariance(k, k))));
  CHECK(fit.iterations < 20);

  // Poisson, no intercept, no covariate mean, the release's box and largest count.
  Eigen::VectorXd w(glm_synthetic_parameter::vector_size(2, false, false));
  w << 1.0, 0.5, 1.0, 1.0, 0.0;
  const auto q = glm_synthetic_parameter::from_vector(2, std::nullopt, false, w);
  glm_record_limits box;
  box.coordinate = 1.0 / std::sqrt(2.0);
  box.count = 3.0;
  const Eigen::MatrixXd c = synthetic_glm_records(glm_kind::poisson, q, box, 20000, g);
  CHECK(c.leftCols(2).cwiseAbs().maxCoeff() <= box.coordinate);
  CHECK(c.leftCols(2).cwiseAbs().maxCoeff() == box.coordinate);  // some covariates were clamped
  CHECK(c.col(2).minCoeff() >= 0.0);
  CHECK(c.col(2).maxCoeff() == 3.0);
  const Eigen::MatrixXd u = synthetic_glm_records(glm_kind::poisson, q, {}, 100000, g);
  double poisson_residual = 0.0;
  for (Eigen::Index i = 0; i < u.rows(); ++i) poisson_residual += u(i, 2) - std::exp(u(i, 0) + 0.5 * u(i, 1));
  CHECK(std::abs(poisson_residual / u.rows()) < 0.05);
  glm_record_limits ball;
  ball.radius = 0.5;
  const Eigen::MatrixXd b = synthetic_glm_records(glm_kind::logistic, q, ball, 5000, g);
  CHECK(b.leftCols(2).rowwise().norm().maxCoeff() <= 0.5 + 1e-12);

  // Bad input by name.
  CHECK_THROWS_WITH(glm_synthetic_parameter::from_vector(2, 1.0, true, v.head(7)), Catch::Contains("vector"));
  Eigen::VectorXd bad = v;
  bad(3) = 0.0;
  CHECK_THROWS_WITH(glm_synthetic_parameter::from_vector(2, 1.0, true, bad), Catch::Contains("tau_1"));
  bad = v;
  bad(5) = 1.5;
  CHECK_THROWS_WITH(glm_synthetic_parameter::from_vector(2, 1.0, true, bad), Catch::Contains("positive definite"));
  CHECK_THROWS_AS(glm_synthetic_parameter::from_vector(0, 1.0, true, v), std::invalid_argument);
  CHECK_THROWS_WITH(synthetic_glm_records(glm_kind::logistic, p, {}, 0, g), Catch::Contains("records"));
  glm_record_limits none;
  none.radius = 0.0;
  CHECK_THROWS_WITH(synthetic_glm_records(glm_kind::logistic, p, none, 10, g), Catch::Contains("radius"));
  auto huge = q;
  huge.coefficients << 100.0, 0.0;
  CHECK_THROWS_WITH(synthetic_glm_records(glm_kind::poisson, huge, {}, 1000, g), Catch::Contains("Poisson rate"));
  // logistic_fit: separable records (y = sign of x), a response outside {-1, 0, 1, +1}, too few records.
  Eigen::MatrixXd separable(6, 2);
  separable << -3, -1, -2, -1, -1, -1, 1, 1, 2, 1, 3, 1;
  CHECK_THROWS_AS(logistic_fit(separable, 1.0), std::domain_error);
  Eigen::MatrixXd half = separable;
  half(2, 1) = 0.5;
  CHECK_THROWS_WITH(logistic_fit(half, 1.0), Catch::Contains("response 3"));
  CHECK_THROWS_WITH(logistic_fit(separable.topRows(2), 1.0), Catch::Contains("records"));
}
