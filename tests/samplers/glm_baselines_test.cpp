// Tests of the DP-GLM baselines (docs/design-glm.md Sec. 4.2): the record-level models (samplers/glm/glm_record_model.hpp,
// logistic and Poisson): their hand gradients against sixth-order central differences (d = 1..4, points near r = +-6,
// relative error < 1e-7), the concept's positive and negative cases, the Poisson record simulation's mean count, and
// bad input; the PASS-GLM closed form (samplers/glm/pass_glm.hpp): Chebyshev coefficients against the spec's table,
// stationarity of the quadratic posterior with the sums taken from the records, draws, the PSD projection, bad input.
// Its calibration and the large-epsilon agreement with the moment model are in glm_baseline_calibration_test.cpp.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <optional>
#include <random>

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>

#include "privpost/core/random/normal.hpp"
#include "privpost/families/glm/glm_statistic.hpp"
#include "privpost/samplers/glm/logistic_record_model.hpp"
#include "privpost/samplers/glm/pass_glm.hpp"
#include "privpost/samplers/glm/poisson_record_model.hpp"

using namespace privpost;

static_assert(differentiable_model<logistic_record_model>);

namespace {
// The hand gradient of a record-level model against sixth-order central differences at ten random points (one near the
// truncation boundary ||theta||^2 = s_max, ||v|| = 3, one near v = 0 inside the transform's series branch), relative
// error < 1e-7.
template <class Model>
void check_record_gradient(Model& m, std::mt19937_64& g, int dim, const char* label) {
  REQUIRE(m.dimension() == dim);
  for (int rep = 0; rep < 10; ++rep) {
    Eigen::VectorXd u(dim), dir(dim), grad(dim), gr(dim);
    for (int i = 0; i < dim; ++i) {
      u(i) = draw_normal(g);
      dir(i) = draw_normal(g);
    }
    if (rep == 0) u *= 3.0 / u.norm();  // near the truncation boundary of ||theta||
    if (rep == 1) u *= 0.005 / u.norm();
    dir.normalize();
    const double lp = m.log_density_gradient(u, grad);
    REQUIRE(std::isfinite(lp));
    const double h = 1e-3;
    auto f = [&](double t) { return m.log_density_gradient(u + t * dir, gr); };
    const double fd = (-f(-3 * h) + 9 * f(-2 * h) - 45 * f(-h) + 45 * f(h) - 9 * f(2 * h) + f(3 * h)) / (60 * h);
    INFO(label << " dimension " << dim << ", rep " << rep << ": analytic " << grad.dot(dir) << ", finite difference " << fd);
    CHECK(std::abs(grad.dot(dir) - fd) < 1e-7 * std::max(1.0, std::abs(fd)));
  }
}

// A likelihood without the derivative in eta: not a glm_record_likelihood.
struct no_derivative_likelihood {
  static constexpr const char* name = "no_derivative";
  static double admit(double y) { return y; }
  static double log_likelihood(double eta, double y) { return eta * y; }
};
}  // namespace

static_assert(glm_record_likelihood<logistic_record_likelihood>);
static_assert(glm_record_likelihood<poisson_record_likelihood>);
static_assert(!glm_record_likelihood<no_derivative_likelihood>);
static_assert(!glm_record_likelihood<int>);
static_assert(differentiable_model<poisson_record_model>);

TEST_CASE("record-level logistic model: gradient against finite differences", "[glm][gradient][baseline]") {
  std::mt19937_64 g(21);
  for (int d = 1; d <= 4; ++d) {
    const glm_parameters truth = draw_glm_prior(g, d, glm_prior{9.0, 1.0, 2.0});
    const logistic_records rec = simulate_logistic_records(g, truth, 50);
    logistic_record_model m(rec.x, rec.y, 9.0);
    check_record_gradient(m, g, d, "logistic");
    // theta of the parameter vector lies inside the truncation ball.
    const Eigen::VectorXd u = Eigen::VectorXd::Constant(d, 5.0);
    CHECK(m.parameter_vector(u).squaredNorm() < 9.0);
  }
}

TEST_CASE("record-level Poisson model: gradient against finite differences, records from the model's story",
          "[glm][gradient][baseline]") {
  std::mt19937_64 g(22);
  for (int d = 1; d <= 3; ++d) {
    for (const bool intercept : {false, true}) {
      const glm_prior prior{4.0, 0.5, 2.0, 0.5};
      const glm_model_options design{intercept ? std::optional<double>(1.0) : std::nullopt, intercept};
      const glm_parameters truth = draw_glm_prior(g, d, prior, design);
      const glm_records rec = simulate_poisson_records(g, truth, 60, design.intercept);
      REQUIRE(rec.x.rows() == 60);
      REQUIRE(rec.x.cols() == d);
      CHECK((rec.y.array() >= 0.0).all());
      CHECK((rec.y.array() == rec.y.array().floor()).all());
      Eigen::MatrixXd xa(60, d + (intercept ? 1 : 0));
      if (intercept)
        xa << Eigen::VectorXd::Ones(60), rec.x;
      else
        xa = rec.x;
      poisson_record_model m(xa, rec.y, prior.s_max);
      check_record_gradient(m, g, static_cast<int>(xa.cols()), "poisson");
    }
  }
}

TEST_CASE("simulated Poisson records follow the model: mean count against E exp(theta~' x~)", "[glm][baseline]") {
  // x ~ N(mu, Sigma) gives E[y] = exp(theta_0 c + theta' mu + theta' Sigma theta / 2).
  std::mt19937_64 g(23);
  const glm_parameters truth{(Eigen::VectorXd(3) << 0.4, 0.5, -0.3).finished(),
                             (Eigen::MatrixXd(2, 2) << 0.3, 0.1, 0.1, 0.2).finished(),
                             (Eigen::VectorXd(2) << 0.2, -0.1).finished()};
  const Eigen::Index n = 200000;
  const glm_records rec = simulate_poisson_records(g, truth, n, 1.0);
  const double expected =
      std::exp(0.4 + truth.theta.tail(2).dot(truth.mean) + 0.5 * truth.theta.tail(2).dot(truth.sigma * truth.theta.tail(2)));
  const double mean = rec.y.mean();
  const double var = (rec.y.array() - mean).square().mean();
  INFO("mean count " << mean << ", expected " << expected << ", standard error " << std::sqrt(var / n));
  CHECK(std::abs(mean - expected) < 4.0 * std::sqrt(var / static_cast<double>(n)));
  CHECK(std::abs(rec.x.col(0).mean() - 0.2) < 4.0 * std::sqrt(0.3 / static_cast<double>(n)));
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
  Eigen::VectorXd u = Eigen::VectorXd::Zero(2), grad;
  CHECK(std::isfinite(m.log_density_gradient(u, grad)));  // theta = 0 is inside the support
  u(0) = std::numeric_limits<double>::infinity();
  CHECK(m.log_density_gradient(u, grad) == -std::numeric_limits<double>::infinity());
  CHECK(m.failures() == 1);
  CHECK(grad.allFinite());
  CHECK_THROWS_WITH(m.log_density_gradient(Eigen::VectorXd::Zero(3), grad), Catch::Contains("size of u"));
  CHECK_THROWS_WITH(m.parameter_vector(Eigen::VectorXd::Zero(1)), Catch::Contains("size of u"));
  std::mt19937_64 g(1);
  const glm_parameters not_pd{Eigen::VectorXd::Zero(2), -Eigen::MatrixXd::Identity(2, 2)};
  CHECK_THROWS_AS(simulate_logistic_records(g, not_pd, 5), std::domain_error);
  CHECK_THROWS_AS(simulate_logistic_records(g, glm_parameters{Eigen::VectorXd::Zero(2), Eigen::MatrixXd::Identity(2, 2)}, 0),
                  std::invalid_argument);
}

TEST_CASE("record-level Poisson model and its simulation reject bad arguments", "[glm][errors][baseline]") {
  const Eigen::MatrixXd x = Eigen::MatrixXd::Ones(3, 2);
  const Eigen::VectorXd y = (Eigen::VectorXd(3) << 0.0, 2.0, 7.0).finished();
  CHECK_NOTHROW(poisson_record_model(x, y));
  for (const double bad : {-1.0, 1.5, std::numeric_limits<double>::infinity(), std::nan("")}) {
    Eigen::VectorXd y2 = y;
    y2(1) = bad;
    CHECK_THROWS_WITH(poisson_record_model(x, y2), Catch::Contains("response") && Catch::Contains("integer >= 0"));
  }
  CHECK_THROWS_AS(poisson_record_model(x, Eigen::VectorXd::Ones(2)), std::invalid_argument);
  CHECK_THROWS_AS(poisson_record_model(x, y, -1.0), std::invalid_argument);
  // A linear predictor so large that exp overflows: -infinity and a counted failure, never NaN.
  poisson_record_model m(1e6 * x, y, 9.0);
  Eigen::VectorXd u = Eigen::VectorXd::Constant(2, 2.0), grad;
  CHECK(m.log_density_gradient(u, grad) == -std::numeric_limits<double>::infinity());
  CHECK(m.failures() == 1);
  CHECK(grad.allFinite());
  std::mt19937_64 g(1);
  const glm_parameters id{Eigen::VectorXd::Zero(2), Eigen::MatrixXd::Identity(2, 2)};
  CHECK_THROWS_AS(simulate_poisson_records(g, id, 0), std::invalid_argument);
  CHECK_THROWS_WITH(simulate_poisson_records(g, id, 5, 1.0), Catch::Contains("theta"));  // needs d + 1 coefficients
  CHECK_THROWS_AS(simulate_poisson_records(g, glm_parameters{Eigen::VectorXd::Zero(2), -Eigen::MatrixXd::Identity(2, 2)}, 5),
                  std::domain_error);
  const glm_parameters huge{(Eigen::VectorXd(2) << 40.0, 0.0).finished(), Eigen::MatrixXd::Identity(2, 2)};
  CHECK_THROWS_AS(simulate_poisson_records(g, huge, 50), std::domain_error);
}

TEST_CASE("PASS-GLM Chebyshev coefficients match the spec's table", "[glm][baseline][pass-glm]") {
  // docs/design-glm.md Sec. 1.1 (derived there independently): R_s -> (b0, b1, b2), 6 significant digits.
  const double table[3][4] = {
      {1.0, -0.693748, 0.5, -0.120096}, {2.0, -0.700929, 0.5, -0.108240}, {4.0, -0.761866, 0.5, -0.081668}};
  for (const auto& row : table) {
    const auto b = pass_glm_chebyshev(row[0]);
    INFO("R_s " << row[0] << ": " << b[0] << ", " << b[1] << ", " << b[2]);
    CHECK(b[0] == Approx(row[1]).margin(1e-6));
    CHECK(b[1] == Approx(row[2]).margin(1e-12));
    CHECK(b[2] == Approx(row[3]).margin(1e-6));
  }
  CHECK_THROWS_AS(pass_glm_chebyshev(0.0), std::invalid_argument);
  CHECK_THROWS_AS(pass_glm_chebyshev(std::nan("")), std::invalid_argument);
}

TEST_CASE("PASS-GLM closed-form posterior", "[glm][baseline][pass-glm]") {
  std::mt19937_64 g(51);
  const int d = 3;
  const glm_parameters truth = draw_glm_prior(g, d, glm_prior{9.0, 0.5, 2.0});
  const logistic_records rec = simulate_logistic_records(g, truth, 500);
  const Eigen::VectorXd s = glm_statistic::logistic(d, 1e6).sum(rec.x, rec.y);
  const pass_glm_posterior post(s, d, 3.0);
  // Stationarity of the quadratic log posterior b1 theta^T s_yx + b2 theta^T S theta - |theta|^2 / 2, with S and
  // s_yx summed from the records here rather than read back from the release layout.
  const auto b = pass_glm_chebyshev(3.0);
  const Eigen::MatrixXd sxx = rec.x.transpose() * rec.x;
  const Eigen::VectorXd syx = rec.x.transpose() * rec.y;
  const Eigen::MatrixXd precision = Eigen::MatrixXd::Identity(d, d) - 2.0 * b[2] * sxx;
  CHECK((precision * post.mean() - b[1] * syx).norm() < 1e-9 * syx.norm());
  CHECK((precision * post.covariance() - Eigen::MatrixXd::Identity(d, d)).norm() < 1e-9);
  // Draws: mean and covariance within 5 standard errors.
  const Eigen::MatrixXd x = post.draws(g, 100000);
  const Eigen::VectorXd m = x.colwise().mean().transpose();
  for (int j = 0; j < d; ++j) {
    const double se = std::sqrt(post.covariance()(j, j) / 100000.0);
    CHECK(std::abs(m(j) - post.mean()(j)) < 5.0 * se);
    const double var = (x.col(j).array() - m(j)).square().mean();
    CHECK(std::abs(var - post.covariance()(j, j)) < 5.0 * post.covariance()(j, j) * std::sqrt(2.0 / 100000.0));
  }
  // A noisy release whose t2 block is not PSD: projected, the posterior stays proper.
  Eigen::VectorXd z = s;
  z(d) = -50.0;   // x1*x1 negative
  z(2 * d) = 40;  // sqrt2*x1*x2
  const pass_glm_posterior noisy(z, d, 3.0);
  CHECK(noisy.gram().selfadjointView<Eigen::Lower>().eigenvalues().minCoeff() > -1e-9);
  CHECK(noisy.covariance().llt().info() == Eigen::Success);
  CHECK(noisy.mean().allFinite());
  // Bad input.
  CHECK_THROWS_AS(pass_glm_posterior(s.head(5), d, 3.0), std::invalid_argument);
  z(0) = std::nan("");
  CHECK_THROWS_AS(pass_glm_posterior(z, d, 3.0), std::invalid_argument);
  CHECK_THROWS_AS(pass_glm_posterior(s, d, -1.0), std::invalid_argument);
  CHECK_THROWS_AS(pass_glm_posterior(s, 0, 3.0), std::invalid_argument);
  CHECK_THROWS_AS(post.draws(g, 0), std::invalid_argument);
}
