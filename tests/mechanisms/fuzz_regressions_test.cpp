// The findings of the libFuzzer harnesses (fuzz/), each kept as a unit test of its fix:
//  1. a denormal delta overflowed 1.25 / delta in the Gaussian calibrations: an infinite sigma (mechanisms_fuzz);
//  2. a denormal sensitivity gave sigma^2 = 0 and a NaN log-likelihood; a NaN release gave a NaN log-likelihood
//     (mechanisms_fuzz);
//  3. Beta draws with denormal shapes were NaN (both log-gamma draws -infinity) and Gamma priors whose shape / rate
//     overflows a double drew infinite rates (samplers_fuzz, through conjugate_sampler and gibbs_ss);
//  4. the release record reader accepted epsilon = 0 (release_record_fuzz; tested with the tools, bad_epsilon.json);
//  5. a Gaussian release at sigma near 1e154 had log-likelihood -infinity: (z - s)^2 overflowed before the division by
//     sigma^2 (mechanisms_fuzz, after its contract grew to "a release's own log-likelihood is finite");
//  6. the naive regression posterior of n = 3e-319 records under an inverse-gamma shape of 8e-320 drew sigma^2 =
//     infinity, and theta infinite and NaN with it (models_fuzz, through conjugate_sampler over linear_regression_model):
//     draw_inverse_gamma now refuses a draw beyond the largest double;
//  7. the naive MLE of tables y / N near 5e306 (N = 3.8e-307) reached tree_bp with NaN log-potentials: project_simplex
//     left such a table unchanged, its entries absorbing the total (models_fuzz); the projection now runs on v - max v
//     (tested in tests/core/simplex_projection_test.cpp);
//  8. ops_binomial let Boost's evaluation_error out of ibeta_inv (root finder over 200 iterations) at a = 3e-5,
//     b = 7e-156 (models_fuzz), and (9) drew NaN in a release build, and failed a Boost assertion in a debug build, at
//     a = 3e-5, b = 7e-24: a tempered shape below 1 is now drawn by an exact rejection sampler (tested against the
//     restricted beta in adversarial_baselines_test.cpp), and Boost's errors elsewhere become std::domain_error.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>

#include "privpost/core/random/beta.hpp"
#include "privpost/families/binomial.hpp"
#include "privpost/families/exponential.hpp"
#include "privpost/families/poisson.hpp"
#include "privpost/families/regression/covariate_models.hpp"
#include "privpost/families/regression/linear_regression_model.hpp"
#include "privpost/mechanisms/gaussian.hpp"
#include "privpost/mechanisms/laplace.hpp"
#include "privpost/samplers/conjugate.hpp"
#include "privpost/samplers/ops.hpp"

using namespace privpost;

TEST_CASE("fuzz finding: a denormal delta gives a finite sigma", "[fuzz-regression]") {
  for (const double delta : {1.068696020885e-311, 5.7290746e-317, std::numeric_limits<double>::denorm_min()}) {
    INFO("delta " << delta);
    const auto c = gaussian_mechanism::classic(1.0, 0.5, delta);
    CHECK(std::isfinite(c.sigma()));
    CHECK(c.sigma() == Approx(std::sqrt(2.0 * (std::log(1.25) - std::log(delta))) / 0.5).epsilon(1e-14));
    const auto a = gaussian_mechanism::analytic(1.0, 0.5, delta);
    CHECK(std::isfinite(a.sigma()));
    CHECK(a.sigma() > 0.0);
  }
}

TEST_CASE("fuzz finding: tiny noise scales are refused, NaN releases have no likelihood", "[fuzz-regression]") {
  CHECK_THROWS_WITH(gaussian_mechanism::analytic(4.83136001686973e-310, 3.0519411666318774e-05, 5.7290746e-317),
                    Catch::Contains("sigma"));
  CHECK_THROWS_WITH(laplace_mechanism(4.8e-310, 1.0), Catch::Contains("l1_sensitivity / epsilon"));
  const Eigen::VectorXd s = Eigen::VectorXd::Constant(1, 3.0), nan = Eigen::VectorXd::Constant(1, std::nan(""));
  CHECK_THROWS_WITH(laplace_mechanism(1.0, 0.5).log_likelihood(nan, s), Catch::Contains("z[0]"));
  CHECK_THROWS_WITH(laplace_mechanism(1.0, 0.5).log_likelihood(s, nan), Catch::Contains("s[0]"));
  CHECK_THROWS_WITH(gaussian_mechanism::classic(1.0, 0.5, 1e-6).log_likelihood(nan, s), Catch::Contains("z[0]"));
  CHECK(std::isfinite(laplace_mechanism(1.0, 0.5).log_likelihood(s, s)));
}

TEST_CASE("fuzz finding: Beta draws with denormal shapes, Gamma priors that overflow", "[fuzz-regression]") {
  std::mt19937_64 g(3);
  // Beta(a, b) with denormal a, b: 0 or 1, with P(1) = a / (a + b) = 1/4 (20000 draws: sd 0.003).
  double ones = 0.0;
  for (int i = 0; i < 20000; ++i) {
    const double x = draw_beta(g, 2e-317, 6e-317);
    REQUIRE((x == 0.0 || x == 1.0));
    ones += x;
  }
  CHECK(ones / 20000 == Approx(0.25).margin(0.015));
  // The fuzzer's input: conjugate_sampler on a denormal prior, release and n gives finite draws.
  Eigen::VectorXd z(1);
  z << -2.3534373737440588e-185;
  conjugate_sampler naive(beta_prior(2.070238e-317, 2.076815e-317), z, 2.0734754e-317, g);
  for (int i = 0; i < 100; ++i) {
    naive.step(g);
    REQUIRE(std::isfinite(naive.parameter()));
  }
  // A rate Gamma(5.6e199, rate 5.6e-308) overflows a double: refused by name, not an infinite lambda.
  CHECK_THROWS_WITH(poisson_gamma_prior(5.605787536612992e+199, 5.563170357775549e-308).draw(g),
                    Catch::Contains("lambda") && Catch::Contains("overflowed"));
  CHECK_THROWS_WITH(exponential_gamma_prior(5.6e199, 5.6e-308).draw(g), Catch::Contains("lambda"));
  // An exponential rate that underflows to 0 (shape 1e-300) is refused too; a Poisson rate of 0 is a valid law.
  bool refused = false;
  for (int i = 0; i < 50 && !refused; ++i) {
    try {
      const double lambda = exponential_gamma_prior(1e-300, 1.0).draw(g);
      REQUIRE(lambda > 0.0);
    } catch (const std::domain_error&) {
      refused = true;
    }
  }
  CHECK(refused);
}

TEST_CASE("fuzz finding: a release's own log-likelihood is finite at huge noise scales", "[fuzz-regression]") {
  std::mt19937_64 g(5);
  const auto m = gaussian_mechanism::analytic(3e153, 1.0, 1e-5);  // sigma 1.1e154: sigma^2 is finite, 3 residuals^2 not
  const Eigen::VectorXd s = Eigen::VectorXd::Constant(3, -2.0);   // (a huge s would swallow the noise in rounding)
  for (int i = 0; i < 100; ++i) {
    const Eigen::VectorXd z = m.release(s, g);
    REQUIRE(z.allFinite());
    const double l = m.log_likelihood(z, s);
    INFO("sigma " << m.sigma() << ", log-likelihood " << l);
    REQUIRE(std::isfinite(l));
  }
}

TEST_CASE("fuzz finding: an inverse-gamma variance that overflows is refused, not infinite", "[fuzz-regression]") {
  // The fuzzer's input (models_fuzz case 11): z denormal, n = 3.17467e-319, prior precision 2.2e-310 I, shape 8.1e-320.
  const regression_layout layout(1, true);
  const nig_regression_prior prior(Eigen::Vector2d::Zero(), 2.22724678300663e-310 * Eigen::Matrix2d::Identity(), 8.1047e-320,
                                   1.0);
  const auto moments = normal_covariate_moments(layout, Eigen::VectorXd::Zero(1), Eigen::MatrixXd::Identity(1, 1));
  Eigen::VectorXd z(5);
  z << 4.345847379897e-311, 1.9893716864e-314, 1.01508435e-315, 4.345847379897e-311, 1.9893716864e-314;
  std::mt19937_64 g(7);
  bool refused = false;
  try {
    conjugate_sampler naive(linear_regression_model(layout, fixed_covariates(moments)), prior, z, 3.17467e-319, g);
    for (int i = 0; i < 3; ++i) {
      naive.step(g);
      REQUIRE(naive.parameter_vector().allFinite());
    }
  } catch (const std::domain_error& e) {
    refused = true;
    CHECK_THAT(e.what(), Catch::Contains("draw_inverse_gamma") && Catch::Contains("overflowed"));
  }
  CHECK(refused);
  // One record under the same prior: shape 0.5 + 8e-320, finite draws.
  conjugate_sampler one(linear_regression_model(layout, fixed_covariates(moments)), prior, z, 1.0, g);
  for (int i = 0; i < 100; ++i) {
    one.step(g);
    REQUIRE(one.parameter_vector().allFinite());
  }
}

TEST_CASE("fuzz finding: OPS at a tempered shape far below 1 draws inside [a0, 1 - a0]", "[fuzz-regression]") {
  // The fuzzer's inputs (models_fuzz case 9): Boost's evaluation_error (a = 3e-5, b = 7e-156), NaN draws (a = 3e-5,
  // b = 7e-24).
  ops_options options;
  options.draws = 5;
  std::mt19937_64 g(7);
  options.epsilon = 1.0000000000036517;
  const Eigen::VectorXd x =
      ops_binomial(beta_prior(3.051757818184385e-05, 2.87e-322), 7.986301603e-315, 1.4916681462400625e-154, options, g);
  options.epsilon = 0.0004767775535583496;
  const Eigen::VectorXd y = ops_binomial(beta_prior(3.0988805434283087e-05, 7.2249714738787e-310), 0.0004767922794117613,
                                         0.0004767922794117647, options, g);
  for (const Eigen::VectorXd& d : {x, y}) {
    REQUIRE(d.allFinite());
    CHECK(d.minCoeff() >= options.a0);
    CHECK(d.maxCoeff() <= 1.0 - options.a0);
  }
}
