// No hangs, no NaN, for the estimators and baselines that are not Markov chains over a release:
// the OPS baseline (ops_binomial: a release mechanism reading the exact count), CGM-EM and the naive MLE (iterative
// estimators run by fit()), the non-private GLM record models under NUTS and the PASS-GLM closed form. Each case must
// either throw a documented exception (std::invalid_argument or std::domain_error, with a message) or give finite
// results, within 5 seconds. Inputs: released tables and statistics of 1e300, -1e300, 1e15, -1e15, 0 and the largest
// finite double; N = 1 and 1e12; priors and settings at the edge of validity; covariates up to 1e300 and Poisson
// counts up to 1e15 for the record models.
#include <catch2/catch.hpp>

#include <algorithm>
#include <boost/math/distributions/normal.hpp>
#include <boost/math/special_functions/beta.hpp>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "privpost/families/binomial.hpp"
#include "privpost/families/graphical/brute_force.hpp"
#include "privpost/families/graphical/contingency_tables.hpp"
#include "privpost/families/graphical/junction_tree.hpp"
#include "privpost/families/graphical/pairwise_graph.hpp"
#include "privpost/families/graphical/tree_bp.hpp"
#include "privpost/inference/fit.hpp"
#include "privpost/samplers/cgm/cgm_em.hpp"
#include "privpost/samplers/cgm/cgm_noise.hpp"
#include "privpost/samplers/cgm/naive_mle.hpp"
#include "privpost/samplers/glm/logistic_record_model.hpp"
#include "privpost/samplers/glm/pass_glm.hpp"
#include "privpost/samplers/glm/poisson_record_model.hpp"
#include "privpost/samplers/nuts.hpp"
#include "privpost/samplers/ops.hpp"
#include "support/adversarial.hpp"
#include "support/statistical.hpp"

using namespace privpost;

namespace {

constexpr double largest = std::numeric_limits<double>::max();
const std::vector<double> hostile_values = {1e300, -1e300, 1e15, -1e15, 0.0, largest, -largest};

using tally = privpost::test::adversarial_tally;

// fit() for at most 200 iterations; the estimate and, when the estimator has them, its counts must be finite.
template <class Estimator>
void fit_finite(Estimator& estimator) {
  fit_options options;
  options.max_iterations = 200;
  const fit_result r = fit(estimator, options);
  INFO("iterations " << r.iterations << ", theta " << r.parameter.transpose());
  REQUIRE(r.parameter.allFinite());
  if constexpr (requires { estimator.counts(); }) REQUIRE(estimator.counts().allFinite());
}

// 20 NUTS transitions of a record model (10 of warm-up); the parameter must stay finite.
template <class Model>
void nuts_finite(Model model) {
  nuts_options options;
  options.warmup = 10;
  options.max_depth = 6;
  std::mt19937_64 g(17);
  nuts_sampler<Model> chain(std::move(model), options, g);
  for (int i = 0; i < 20; ++i) {
    chain.step(g);
    const Eigen::VectorXd theta = chain.parameter_vector();
    INFO("transition " << i << ": theta " << theta.transpose());
    REQUIRE(theta.allFinite());
  }
}

}  // namespace

TEST_CASE("adversarial input: the OPS baseline", "[adversarial][errors][ops]") {
  tally t;
  const std::vector<double> counts = {1.0, 1e12, 1e300, largest};
  for (const auto& prior : {beta_prior(1.0, 1.0), beta_prior(1e-8, 1e-8), beta_prior(1e8, 1.0), beta_prior(1.0, 1e300)}) {
    for (const double n : counts) {
      for (const double s : {0.0, n, 0.5 * n, 1e300, -1e300, -1.0}) {
        for (const double epsilon : {1.0, 1e-300, 1e300}) {
          INFO("prior (" << prior.a() << ", " << prior.b() << "), s " << s << ", n " << n << ", epsilon " << epsilon);
          ops_options options;
          options.epsilon = epsilon;
          options.draws = 20;
          test::run_adversarial(
              [&] {
                std::mt19937_64 g(3);
                const Eigen::VectorXd draws = ops_binomial(prior, s, n, options, g);
                REQUIRE(draws.size() == 20);
                REQUIRE(draws.allFinite());
                // Every draw lies in the restricted support [a0, 1 - a0], where the log-likelihood is bounded.
                CHECK(draws.minCoeff() >= options.a0);
                CHECK(draws.maxCoeff() <= 1.0 - options.a0);
              },
              t);
        }
      }
    }
  }
  INFO("finite " << t.finite << ", refused " << t.refused);
  CHECK(t.finite > 0);
  CHECK(t.refused > 0);
}

TEST_CASE("OPS on both sides of ops_exact_limit: standardised draws fit N(0, 1)", "[ops][draws]") {
  // Beta(1, 1) prior, s = 0.3 n, tau = 1 / (2 log 9) per draw (epsilon = draws): a + b = 1 + 2 + tau n, at half the limit
  // (the exact inverse-CDF branch) and at four times it (the normal approximation). The tempered mean 0.3 lies 4e6 sd
  // and more inside [0.1, 0.9], so the restriction is immaterial and (x - mean) / sd is N(0, 1) to within the beta's
  // skewness (< 1e-6) in both branches; KS at the level of support/statistical.hpp on 5000 draws (the exact branch's
  // inverse CDF costs 0.6 ms a draw here), with power against a 0.2 sd shift.
  const double tau = 1.0 / (2.0 * std::log(9.0));
  const boost::math::normal standard;
  for (const double multiple : {0.5, 4.0}) {
    INFO("a + b at " << multiple << " ops_exact_limit");
    const double n = multiple * ops_exact_limit / tau, s = 0.3 * n;
    const double a = 1.0 + tau * s, b = 1.0 + tau * (n - s);
    const double mean = a / (a + b), sd = std::sqrt(mean * (b / (a + b)) / (a + b + 1.0));
    ops_options options;
    options.draws = 5000;
    options.epsilon = options.draws;
    std::mt19937_64 g(23);
    const Eigen::VectorXd x = ops_binomial(beta_prior(1.0, 1.0), s, n, options, g);
    std::vector<double> z(x.size());
    for (Eigen::Index i = 0; i < x.size(); ++i) z[static_cast<std::size_t>(i)] = (x(i) - mean) / sd;
    test::require_fits(z, [&](double v) { return boost::math::cdf(standard, v); });
    test::require_rejects(z, [&](double v) { return boost::math::cdf(standard, v - 0.2); });
  }
}

TEST_CASE("OPS with a tempered shape below 1: the rejection sampler fits the restricted beta", "[ops][draws]") {
  // Prior Beta(a, b), s = 0 of n = 1e-300 records: the tempered shapes are a and b to double precision. The restricted
  // CDF (I_x - I_lo) / (I_hi - I_lo) by Boost's ibeta, which is accurate at these moderate shapes; KS by the rule of
  // support/statistical.hpp, with power against the swapped shapes Beta(b, a) where they differ by more than 0.1.
  struct shapes {
    double a, b, a0;
  };
  for (const shapes c : {shapes{0.5, 0.3, 0.1}, shapes{3.0, 0.2, 0.1}, shapes{0.01, 5.0, 0.1}, shapes{0.3, 0.3, 0.1},
                         shapes{0.05, 0.7, 0.01}, shapes{2e-3, 1e-6, 0.2}}) {
    INFO("a " << c.a << ", b " << c.b << ", a0 " << c.a0);
    ops_options options;
    options.draws = static_cast<int>(test::ks_draws);
    options.a0 = c.a0;
    std::mt19937_64 g(29);
    const Eigen::VectorXd x = ops_binomial(beta_prior(c.a, c.b), 0.0, 1e-300, options, g);
    const std::vector<double> xs(x.data(), x.data() + x.size());
    const double lo = c.a0, hi = 1.0 - c.a0;
    auto restricted = [&](double a, double b) {
      const double p_lo = boost::math::ibeta(a, b, lo), p_hi = boost::math::ibeta(a, b, hi);
      return [=](double v) { return (boost::math::ibeta(a, b, std::clamp(v, lo, hi)) - p_lo) / (p_hi - p_lo); };
    };
    test::require_fits(xs, restricted(c.a, c.b));
    // Both shapes far below 1 give nearly the law 1 / (x (1 - x)) either way round: no power to ask for there.
    if (std::abs(c.a - c.b) > 0.1) test::require_rejects(xs, restricted(c.b, c.a));
  }
  // The fuzzer's inputs that broke Boost (NaN draws in a release build, a failed assertion in a debug build).
  ops_options options;
  options.draws = 200;
  std::mt19937_64 g(31);
  for (const auto& [prior, s, n] :
       {std::tuple{beta_prior(3.0988805434283087e-05, 7.2249714738787e-310), 0.0004767922794117613, 0.0004767922794117647},
        std::tuple{beta_prior(3.051757818184385e-05, 2.87e-322), 7.986301603e-315, 1.4916681462400625e-154}}) {
    const Eigen::VectorXd x = ops_binomial(prior, s, n, options, g);
    REQUIRE(x.allFinite());
    CHECK(x.minCoeff() >= options.a0);
    CHECK(x.maxCoeff() <= 1.0 - options.a0);
  }
  // a0 below 1e-4 with a shape below 1 is refused by name.
  options.a0 = 1e-5;
  CHECK_THROWS_WITH(ops_binomial(beta_prior(0.5, 0.5), 0.0, 1.0, options, g), Catch::Contains("a0"));
}

TEST_CASE("adversarial releases: CGM-EM and the naive MLE", "[adversarial][errors][cgm]") {
  tally t;
  const pairwise_graph chain = chain_graph(3, 2);
  const pairwise_graph cycle = kth_order_chain_graph(3, 2, 2);  // a triangle: junction tree back end
  const Eigen::Index cells = table_layout(chain).released_size();
  const Eigen::Index cycle_cells = table_layout(cycle).released_size();
  for (const double yv : hostile_values) {
    for (const double n : {1.0, 1e12}) {
      INFO("y " << yv << ", N " << n);
      const Eigen::VectorXd y = Eigen::VectorXd::Constant(cells, yv);
      const Eigen::VectorXd y_cycle = Eigen::VectorXd::Constant(cycle_cells, yv);
      test::run_adversarial(
          [&] {
            cgm_em<tree_bp, cgm_evidence> em(chain, y, n, cgm_evidence::laplace(2.0), tree_bp(chain));
            fit_finite(em);
          },
          t);
      test::run_adversarial(
          [&] {
            cgm_em<tree_bp, cgm_evidence> em(chain, y, n, cgm_evidence::gaussian(3.0), tree_bp(chain));
            fit_finite(em);
          },
          t);
      test::run_adversarial(
          [&] {
            cgm_em_options literal;
            literal.pseudo_count = 0.0;  // the text's Algorithm 2
            cgm_em<tree_bp, cgm_evidence> em(chain, y, n, cgm_evidence::laplace(2.0), tree_bp(chain), literal);
            fit_finite(em);
          },
          t);
      test::run_adversarial(
          [&] {
            cgm_em_options nlbp;
            nlbp.method = estep_method::nlbp;
            cgm_em<tree_bp, cgm_evidence> em(chain, y, n, cgm_evidence::laplace(2.0), tree_bp(chain), nlbp);
            fit_finite(em);
          },
          t);
      test::run_adversarial(
          [&] {
            cgm_em<junction_tree, cgm_evidence> em(cycle, y_cycle, n, cgm_evidence::laplace(2.0), junction_tree(cycle));
            fit_finite(em);
          },
          t);
      test::run_adversarial(
          [&] {
            naive_mle<tree_bp> naive(chain, y, n, tree_bp(chain));
            fit_finite(naive);
          },
          t);
      test::run_adversarial(
          [&] {
            naive_mle_options raw;
            raw.targets = naive_targets::raw;
            naive_mle<tree_bp> naive(chain, y, n, tree_bp(chain), raw);
            fit_finite(naive);
          },
          t);
    }
  }
  // Noise scales at the edge of validity.
  const Eigen::VectorXd y = Eigen::VectorXd::Constant(cells, 25.0);
  for (const double scale : {1e-300, 1e300, largest}) {
    INFO("noise scale " << scale);
    test::run_adversarial(
        [&] {
          cgm_em<tree_bp, cgm_evidence> em(chain, y, 100.0, cgm_evidence::laplace(scale), tree_bp(chain));
          fit_finite(em);
        },
        t);
    test::run_adversarial(
        [&] {
          cgm_em<tree_bp, cgm_evidence> em(chain, y, 100.0, cgm_evidence::gaussian(scale), tree_bp(chain));
          fit_finite(em);
        },
        t);
  }
  INFO("finite " << t.finite << ", refused " << t.refused);
  CHECK(t.finite > 0);
}

TEST_CASE("adversarial records: the non-private GLM record models under NUTS", "[adversarial][errors][glm]") {
  tally t;
  for (const double xv : {1e300, -1e300, 1e15, 0.0, largest}) {
    for (const Eigen::Index rows : {Eigen::Index(1), Eigen::Index(50)}) {
      INFO("covariates " << xv << ", records " << rows);
      Eigen::MatrixXd x(rows, 2);
      x.col(0).setOnes();
      x.col(1).setConstant(xv);
      Eigen::VectorXd y01(rows), counts(rows);
      for (Eigen::Index i = 0; i < rows; ++i) {
        y01(i) = static_cast<double>(i % 2);
        counts(i) = i % 2 == 0 ? 0.0 : 1e15;
      }
      for (const double s_max : {1e-8, 9.0, 1e300}) {
        test::run_adversarial([&] { nuts_finite(logistic_record_model(x, y01, s_max)); }, t);
        test::run_adversarial([&] { nuts_finite(poisson_record_model(x, counts, s_max)); }, t);
      }
    }
  }
  INFO("finite " << t.finite << ", refused " << t.refused);
  CHECK(t.finite > 0);
}

TEST_CASE("adversarial releases: the PASS-GLM closed form", "[adversarial][errors][glm][pass-glm]") {
  tally t;
  const int d = 2;
  for (const double zv : hostile_values) {
    for (const double radius : {1e-8, 3.0, 1e300}) {
      INFO("z " << zv << ", Chebyshev radius " << radius);
      test::run_adversarial(
          [&] {
            const pass_glm_posterior post(Eigen::VectorXd::Constant(d + d * (d + 1) / 2, zv), d, radius);
            REQUIRE(post.mean().allFinite());
            REQUIRE(post.covariance().allFinite());
            std::mt19937_64 g(5);
            REQUIRE(post.draws(g, 10).allFinite());
          },
          t);
    }
  }
  INFO("finite " << t.finite << ", refused " << t.refused);
  CHECK(t.finite > 0);
}
