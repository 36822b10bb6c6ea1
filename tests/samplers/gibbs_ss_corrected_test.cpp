// Gibbs-SS with the Metropolis-Hastings-corrected sum draw, gibbs_ss_corrected
// (docs/exact-sums.md, "The corrected draw"):
//  1. its kernel: the sampler's own acceptance function against the closed form and detailed balance to 1e-12 (the
//     state is continuous, y in the sum's cell, so the spec's finite-kernel check pi K = pi becomes this); the chain
//     over (y, w) at fixed theta has the exact law of S | theta, z (chi-square, 10^6 draws);
//  2. the exact posterior of binomial n = 10 (the enumeration oracle of tests/support);
//  3. simulation-based calibration at n = 10, Laplace and Gaussian, with Gibbs-SS's rows printed;
//  4. large n: nearly every proposal is accepted, and the chain agrees with gibbs_ss at n = 1e6;
//  5. bad input;
//  6. Poisson (an unbounded support, the defensive proposal N(m, 9 v)): properties 1, 4 and 5 again; the n = 10
//     posterior against its oracle and calibration are in gibbs_ss_window_test.cpp, beside the window sampler's.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "privpost/families/binomial.hpp"
#include "privpost/families/multinomial.hpp"
#include "privpost/families/poisson.hpp"
#include "privpost/inference/infer.hpp"
#include "privpost/mechanisms/gaussian.hpp"
#include "privpost/mechanisms/laplace.hpp"
#include "privpost/samplers/gibbs_ss.hpp"
#include "privpost/samplers/gibbs_ss_corrected.hpp"
#include "privpost/samplers/gibbs_ss_exact.hpp"
#include "privpost/samplers/gibbs_ss_truncated.hpp"
#include "privpost/samplers/record_augmented.hpp"
#include "privpost/samplers/sampler_policy.hpp"
#include "privpost/testing/family_study.hpp"
#include "support/beta_mixture_oracle.hpp"
#include "support/calibration_checks.hpp"
#include "support/small_n_calibration.hpp"

using namespace privpost;

// The sampler's constraint: a finite_sum_family with its conjugate prior and a scale-mixture mechanism.
template <class P, class M>
concept corrected_sampler_for = requires {
  typename gibbs_ss_corrected<P, M>;
};
static_assert(corrected_sampler_for<beta_prior, laplace_mechanism>);
static_assert(corrected_sampler_for<beta_prior, gaussian_mechanism>);
static_assert(corrected_sampler_for<poisson_gamma_prior, laplace_mechanism>);  // an unbounded support
static_assert(corrected_sampler_for<poisson_gamma_prior, gaussian_mechanism>);
static_assert(!corrected_sampler_for<dirichlet_prior<3>, laplace_mechanism>);  // a vector statistic
static_assert(!corrected_sampler_for<beta_prior, double>);
static_assert(!corrected_sampler_for<double, laplace_mechanism>);

// Each kind's build rule (visit_sampler and its refusals ask the same one): the truncated release's record-level
// sampler needs a truncatable family (the binomial's records are bounded by the model: nothing is dropped).
static_assert(detail::builds_records_truncated<poisson_gamma_prior, laplace_mechanism>);
static_assert(detail::builds_records<beta_prior, laplace_mechanism> &&
              !detail::builds_records_truncated<beta_prior, laplace_mechanism>);
static_assert(detail::builds_exact<beta_prior, laplace_mechanism> &&
              !detail::builds_exact<poisson_gamma_prior, laplace_mechanism>);

TEST_CASE("gibbs_ss_corrected's sum update leaves the exact conditional invariant", "[corrected]") {
  std::mt19937_64 g(3);
  Eigen::VectorXd z(1);
  z << 1.7;
  gibbs_ss_corrected chain(beta_prior(1.0, 1.0), laplace_mechanism(1.0, 1.0), z, 3.0, g);
  // The acceptance function against the closed form, at several (theta, w) and 200 random pairs (y, y2) each: y's
  // target log pi(y) = log Binomial(round(y); 3, theta) - (z - round(y))^2 / (2 w) on [-1/2, 3.5]; the normal proposal's
  // log density -(y - m)^2 / (2 v) with (m, v) the product of N(3 theta, 3 theta (1 - theta)) and N(z, w). Then
  // pi(y) q(y2) min(1, alpha(y, y2)) = pi(y2) q(y) min(1, alpha(y2, y)) (detailed balance) to 1e-12 relative, for
  // both proposals (the uniform one's q is constant).
  const std::array<double, 4> choose = {1.0, 3.0, 3.0, 1.0};
  std::uniform_real_distribution<double> on(-0.5, 3.5);
  for (const double theta : {0.3, 0.02, 0.97}) {
    for (const double w : {0.05, 2.0, 400.0}) {
      const double var = 3.0 * theta * (1.0 - theta), v = 1.0 / (1.0 / var + 1.0 / w), m = v * (3.0 * theta / var + 1.7 / w);
      auto log_pi = [&](double y) {
        const double k = std::clamp(std::round(y), 0.0, 3.0);
        return std::log(choose[static_cast<std::size_t>(k)]) + k * std::log(theta) + (3.0 - k) * std::log1p(-theta) -
               0.5 * (1.7 - k) * (1.7 - k) / w;
      };
      auto log_q = [&](double y) { return -0.5 * (y - m) * (y - m) / v; };
      INFO("theta " << theta << ", w " << w);
      for (int i = 0; i < 200; ++i) {
        const double y = on(g), y2 = on(g);
        const double normal = chain.log_acceptance(theta, w, y, y2, false);
        const double uniform = chain.log_acceptance(theta, w, y, y2, true);
        const double expected_uniform = log_pi(y2) - log_pi(y);
        const double expected_normal = expected_uniform + log_q(y) - log_q(y2);
        REQUIRE(std::abs(uniform - expected_uniform) <= 1e-12 * std::max(1.0, std::abs(expected_uniform)));
        REQUIRE(std::abs(normal - expected_normal) <= 1e-12 * std::max(1.0, std::abs(expected_normal)));
        const double forward = log_pi(y) + log_q(y2) + std::min(0.0, normal);
        const double backward = log_pi(y2) + log_q(y) + std::min(0.0, chain.log_acceptance(theta, w, y2, y, false));
        REQUIRE(std::abs(forward - backward) <= 1e-12 * std::max(1.0, std::abs(forward)));
      }
      CHECK(chain.log_acceptance(theta, w, 1.0, 3.6, false) == -std::numeric_limits<double>::infinity());
    }
  }
  // The chain over (s, w) at theta = 0.3 (sum update, then w | z - s): S's law is Binomial(s; 3, 0.3) e^(-|z - s|)
  // normalised (the Laplace release with w integrated out). 10^6 sweeps; Pearson chi-square, 3 degrees of freedom,
  // p > 0.001 (critical value 16.27). Successive sweeps are dependent, so the statistic is compared after thinning by 5.
  const std::array<double, 4> binom = {0.343, 0.441, 0.189, 0.027};
  std::array<double, 4> expected{};
  double total = 0.0;
  for (int s = 0; s < 4; ++s) total += (expected[s] = binom[s] * std::exp(-std::abs(1.7 - s)));
  for (double& e : expected) e /= total;
  chain.set_state(0.3, 1.2, 1.0);
  constexpr int draws = 1000000;
  std::array<double, 4> counts{};
  for (int i = 0; i < draws; ++i) {
    for (int k = 0; k < 5; ++k) {
      chain.update_sum(g);
      chain.update_variance(g);
    }
    counts[static_cast<std::size_t>(chain.statistic())] += 1.0;
  }
  double chi2 = 0.0;
  for (int s = 0; s < 4; ++s) chi2 += std::pow(counts[s] - draws * expected[s], 2) / (draws * expected[s]);
  INFO("chi-square " << chi2 << ", acceptance " << chain.sum_acceptance());
  CHECK(chi2 < 16.27);
}

// Spec C.7-2's tolerances (support/beta_mixture_oracle.hpp): 4 chains x (1000 burn-in + 100000 kept), as for
// gibbs_ss_exact (at epsilon 0.1 theta and s move together; the latent w adds to it).
TEST_CASE("gibbs_ss_corrected matches the exact posterior at binomial n = 10", "[corrected][oracle-match]") {
  test::check_oracle_settings(
      100000, [](double eps, double zv) { return 41 + static_cast<std::uint64_t>(static_cast<std::int64_t>(eps * 10 + zv)); },
      [](double eps, const Eigen::VectorXd& z, std::mt19937_64& g) {
        return gibbs_ss_corrected(beta_prior(1.0, 1.0), laplace_mechanism(1.0, eps), z, 10.0, g);
      });
}

// Spec C.7-3 (support/small_n_calibration.hpp): binomial n = 10, M = 1000, Laplace at epsilon 0.1 and 1, Gaussian.
TEST_CASE("gibbs_ss_corrected is calibrated at binomial n = 10 (Laplace and Gaussian)", "[calibration][corrected][records-sbc]") {
  test::check_binomial_small_n_calibration("corrected", 6101);
}

// Where the CLT is good the correction costs little: the proposal is nearly the exact conditional. n = 10^6,
// epsilon 1: the posterior mean and sd agree with gibbs_ss's (4 chains each, 2000 kept draws; means within 4 combined
// Monte Carlo standard errors, sds within 10%), and most proposals are accepted.
namespace {
// gibbs_ss_corrected against gibbs_ss on one release (4 chains each, 500 burn-in + 2000 kept draws): means within 4
// combined Monte Carlo standard errors, sds within 10%, no numerical events.
template <class Prior, class Mechanism>
void check_agrees_with_gibbs_ss(const Prior& prior, const Mechanism& mech, double zv, double n, std::uint64_t seed) {
  const Eigen::VectorXd z = Eigen::VectorXd::Constant(1, zv);
  inference_options o;
  o.chains = 4;
  o.burnin = 500;
  o.draws = 2000;
  o.seed = seed;
  const auto corrected = infer([&](std::mt19937_64& g) { return gibbs_ss_corrected(prior, mech, z, n, g); }, o);
  const auto plain = infer([&](std::mt19937_64& g) { return gibbs_ss(prior, mech, z, n, g); }, o);
  const double se = std::hypot(corrected.draws.sd(0) / std::sqrt(corrected.draws.ess_bulk(0)),
                               plain.draws.sd(0) / std::sqrt(plain.draws.ess_bulk(0)));
  INFO("corrected " << corrected.draws.mean(0) << " +- " << corrected.draws.sd(0) << "; gibbs_ss " << plain.draws.mean(0)
                    << " +- " << plain.draws.sd(0) << "; combined MCSE " << se);
  CHECK(std::abs(corrected.draws.mean(0) - plain.draws.mean(0)) <= 4.0 * se);
  CHECK(corrected.draws.sd(0) == Approx(plain.draws.sd(0)).epsilon(0.1));
  CHECK(corrected.events == numerical_events{});
}
}  // namespace

TEST_CASE("gibbs_ss_corrected at large n: agrees with gibbs_ss, most proposals accepted", "[corrected]") {
  Eigen::VectorXd z(1);
  z << 312345.6;
  const double n = 1e6;
  const beta_prior prior(1.0, 1.0);
  check_agrees_with_gibbs_ss(prior, laplace_mechanism(1.0, 1.0), z(0), n, 77);
  // Acceptance: at epsilon 1 the sum's conditional sd is the noise's, about 1.4, so the normal proposal's slope across
  // a cell (where y's target is flat) still costs acceptances: above 0.75 (0.82 measured); at epsilon 0.1 (sd about 14)
  // above 0.9 (the defensive 5% are almost all rejected at this n).
  for (const double eps : {1.0, 0.1}) {
    std::mt19937_64 g(5);
    gibbs_ss_corrected chain(prior, laplace_mechanism(1.0, eps), z, n, g);
    for (int i = 0; i < 2000; ++i) chain.step(g);
    INFO("epsilon " << eps << ": acceptance " << chain.sum_acceptance());
    CHECK(chain.sum_acceptance() > (eps == 1.0 ? 0.75 : 0.9));
    CHECK(std::floor(chain.statistic()) == chain.statistic());
  }
}

TEST_CASE("gibbs_ss_corrected: bad input and extreme releases", "[corrected][errors]") {
  std::mt19937_64 g(1);
  const laplace_mechanism mech(1.0, 1.0);
  Eigen::VectorXd one(1);
  one << 3.0;
  Eigen::VectorXd two(2);
  two << 1.0, 2.0;
  CHECK_THROWS_WITH(gibbs_ss_corrected(beta_prior(1.0, 1.0), mech, two, 10.0, g), Catch::Contains("release z"));
  Eigen::VectorXd nan(1);
  nan << std::nan("");
  CHECK_THROWS_AS(gibbs_ss_corrected(beta_prior(1.0, 1.0), mech, nan, 10.0, g), std::invalid_argument);
  CHECK_THROWS_WITH(gibbs_ss_corrected(beta_prior(1.0, 1.0), mech, one, 10.5, g), Catch::Contains("whole number"));
  CHECK_THROWS_AS(gibbs_ss_corrected(beta_prior(1.0, 1.0), mech, one, 0.0, g), std::invalid_argument);
  CHECK_THROWS_WITH(gibbs_ss_corrected(beta_prior(1.0, 1.0), mech, one, 2e12, g), Catch::Contains("1e12"));
  gibbs_ss_corrected chain(beta_prior(1.0, 1.0), mech, one, 10.0, g);
  CHECK_THROWS_WITH(chain.set_state(0.5, 10.6, 1.0), Catch::Contains("y") && Catch::Contains("[-1/2"));
  CHECK_THROWS_WITH(chain.set_state(0.5, std::nan(""), 1.0), Catch::Contains("y"));
  CHECK_THROWS_WITH(chain.set_state(0.5, 2.0, 0.0), Catch::Contains("w"));
  // Releases at the edge of what the mechanisms produce (49 Laplace scales outside the support, either side; within
  // 50 of the Gaussian's larger scale too) and theta on the boundary: the chain stays on the integer support and theta
  // stays finite. Farther out is refused (mechanisms/reachable.hpp).
  for (const double zv : {1e6, -1e6, 1e12})
    CHECK_THROWS_WITH(gibbs_ss_corrected(beta_prior(1.0, 1.0), mech, Eigen::VectorXd::Constant(1, zv), 10.0, g),
                      Catch::Contains("noise scales"));
  for (const double zv : {10.0 + 49.0, -49.0}) {
    Eigen::VectorXd far(1);
    far << zv;
    gibbs_ss_corrected a(beta_prior(1.0, 1.0), mech, far, 10.0, g);
    gibbs_ss_corrected b(beta_prior(1.0, 1.0), gaussian_mechanism::analytic(1.0, 1.0, 1e-5), far, 10.0, g);
    CHECK(a.statistic() == (zv > 0 ? 10.0 : 0.0));  // the support point nearest z
    for (int i = 0; i < 200; ++i) {
      a.step(g);
      b.step(g);
      for (const double s : {a.statistic(), b.statistic()}) {
        REQUIRE(s >= 0.0);
        REQUIRE(s <= 10.0);
        REQUIRE(std::floor(s) == s);
      }
      REQUIRE(std::isfinite(a.parameter()));
      REQUIRE(std::isfinite(b.parameter()));
    }
  }
  chain.set_state(0.0, 0.0, 1.0);
  for (int i = 0; i < 100; ++i) chain.update_sum(g);
  CHECK(chain.statistic() == 0.0);  // theta = 0: every other sum has probability zero
  chain.set_state(0.0, 4.0, 1.0);   // a state of probability zero moves to the only one of positive probability
  for (int i = 0; i < 1000 && chain.statistic() != 0.0; ++i) chain.update_sum(g);
  CHECK(chain.statistic() == 0.0);
}

// The default policy (samplers/sampler_policy.hpp): binomial enumerated up to n = 50 and corrected
// beyond; the multinomial record-level up to n = 2000, Gibbs-SS beyond; the unbounded (truncated) families Gibbs-SS;
// bad n refused.
TEST_CASE("default_sampler: exact where cheap, corrected or Gibbs-SS where n is large", "[corrected][policy]") {
  CHECK(default_sampler<binomial_family>(10.0) == sampler_kind::exact);
  CHECK(default_sampler<binomial_family>(50.0) == sampler_kind::exact);
  CHECK(default_sampler<binomial_family>(51.0) == sampler_kind::corrected);
  CHECK(default_sampler<binomial_family>(1e9) == sampler_kind::corrected);
  CHECK(default_sampler<multinomial_family<3>>(2000.0) == sampler_kind::records);
  CHECK(default_sampler<multinomial_family<3>>(2001.0) == sampler_kind::gibbs);
  CHECK(default_sampler<poisson_family>(10.0) == sampler_kind::gibbs);  // truncated releases: gibbs_ss_truncated
  CHECK(default_sampler<poisson_family>(1e5) == sampler_kind::gibbs);
  for (const auto kind : {sampler_kind::gibbs, sampler_kind::exact, sampler_kind::corrected, sampler_kind::records})
    CHECK(sampler_kind_from_string(to_string(kind)) == kind);
  CHECK_THROWS_WITH(sampler_kind_from_string("auto"), Catch::Contains("'auto' names no sampler; accepted: gibbs, exact"));
  CHECK(to_string(sampler_kind::exact) == "exact");
  CHECK(to_string(sampler_kind::corrected) == "corrected");
  CHECK(to_string(sampler_kind::records) == "records");
  CHECK(to_string(sampler_kind::gibbs) == "gibbs");
  CHECK_THROWS_WITH(default_sampler<binomial_family>(0.0), Catch::Contains("n"));
  CHECK_THROWS_AS(default_sampler<binomial_family>(std::nan("")), std::invalid_argument);
}

// visit_sampler builds the sampler a kind names: the factory it hands over makes the sampler a user writes by hand (the
// same type, the same chain draw for draw), a truncated release gets the truncated samplers, and a kind or a setting
// that does not apply is refused by name before the visitor runs.
TEST_CASE("visit_sampler: the sampler of each kind, the same chain as written by hand; refusals", "[corrected][policy]") {
  const beta_prior prior(2.0, 3.0);
  const laplace_mechanism mechanism(1.0, 0.5);
  const Eigen::VectorXd z = Eigen::VectorXd::Constant(1, 7.3);
  const double n = 20.0;
  inference_options io;
  io.chains = 1;
  io.burnin = 20;
  io.draws = 30;
  io.seed = 4;
  auto draws_of = [&](sampler_kind kind, const sampler_build& build) {
    return visit_sampler(kind, prior, mechanism, z, n, build, [&](auto make) { return infer(make, io).draws.chains()[0]; });
  };
  CHECK(draws_of(sampler_kind::exact, {}) ==
        infer([&](auto& g) { return gibbs_ss_exact(prior, mechanism, z, n, g); }, io).draws.chains()[0]);
  CHECK(draws_of(sampler_kind::corrected, {}) ==
        infer([&](auto& g) { return gibbs_ss_corrected(prior, mechanism, z, n, g); }, io).draws.chains()[0]);
  CHECK(draws_of(sampler_kind::records, {.init = record_init::consistent}) ==
        infer([&](auto& g) { return record_gibbs(prior, mechanism, z, n, g, record_init::consistent); }, io).draws.chains()[0]);
  const Eigen::MatrixXd collapsed = infer(
                                        [&](auto& g) {
                                          gibbs_ss chain(prior, mechanism, z, n, g);
                                          chain.set_collapsed_moves(2);
                                          return chain;
                                        },
                                        io)
                                        .draws.chains()[0];
  CHECK(draws_of(sampler_kind::gibbs, {.collapsed_moves = 2}) == collapsed);
  CHECK(draws_of(sampler_kind::gibbs, {}) != collapsed);  // the setting reaches the chain

  // A truncated release (records dropped outside [0, 6]): gibbs_ss_truncated and record_gibbs with the drop rule.
  const poisson_gamma_prior rate_prior(2.0, 0.5);
  const sampler_build dropped{.dropped_outside = interval(0.0, 6.0)};
  std::mt19937_64 g(1);
  CHECK(visit_sampler(sampler_kind::gibbs, rate_prior, mechanism, z, n, dropped, [&](auto make) {
    return std::is_same_v<decltype(make(g)), gibbs_ss_truncated<poisson_gamma_prior, laplace_mechanism>>;
  }));
  CHECK(visit_sampler(sampler_kind::records, rate_prior, mechanism, z, n, dropped, [&](auto make) {
    return std::is_same_v<decltype(make(g)),
                          record_gibbs<poisson_gamma_prior, laplace_mechanism, dropped_contribution<poisson_family>>>;
  }));

  // Refusals, each before the visitor runs.
  bool visited = false;
  auto refusal = [&](sampler_kind kind, const sampler_build& build, auto& p) {
    try {
      visit_sampler(kind, p, mechanism, z, n, build, [&](auto) { visited = true; });
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no refusal");
  };
  const dirichlet_prior<3> categories(Eigen::Vector3d::Ones());
  CHECK_THAT(refusal(sampler_kind::exact, {}, categories), Catch::Contains("sampler exact applies to a finite_sum_family only"));
  CHECK_THAT(refusal(sampler_kind::corrected, {}, categories),
             Catch::Contains("sampler corrected applies to an integer_sum_family"));
  CHECK_THAT(refusal(sampler_kind::exact, dropped, rate_prior), Catch::Contains("finite_sum_family"));
  CHECK_THAT(refusal(sampler_kind::corrected, dropped, rate_prior),
             Catch::Contains("sampler corrected applies to a release without truncation only"));
  CHECK_THAT(refusal(sampler_kind::gibbs, dropped, prior), Catch::Contains("only for a truncatable_family"));
  CHECK_THAT(refusal(sampler_kind::records, dropped, prior), Catch::Contains("only for a truncatable_family"));
  CHECK_THAT(refusal(sampler_kind::records, {.collapsed_moves = 1}, prior),
             Catch::Contains("sampler records takes no collapsed moves"));
  CHECK_THAT(refusal(sampler_kind::gibbs, {.collapsed_moves = 1, .dropped_outside = interval(0.0, 6.0)}, rate_prior),
             Catch::Contains("takes no collapsed moves"));
  CHECK_THAT(refusal(sampler_kind::gibbs, {.init = record_init::consistent}, prior), Catch::Contains("takes no record_init"));
  CHECK_THAT(refusal(sampler_kind::gibbs, {.collapsed_moves = -1}, prior), Catch::Contains("collapsed_moves is -1"));
  CHECK_FALSE(visited);
}

// The policy is for exponential families only: anything else is refused at compile time, not mapped to gibbs.
template <class F>
concept has_default_sampler = requires(double n) {
  default_sampler<F>(n);
};
static_assert(has_default_sampler<binomial_family>);
static_assert(has_default_sampler<poisson_family>);
static_assert(!has_default_sampler<double>);
static_assert(!has_default_sampler<beta_prior>);

// Property 6: Poisson, whose sum has no upper end. The acceptance function against the closed form and detailed balance
// (as for the binomial above), for the normal proposal and the defensive N(m, 9 v): n = 3, y's target
// log pi(y) = log Poisson(round(y); 3 lambda) - (z - round(y))^2 / (2 w) on [-1/2, infinity).
TEST_CASE("gibbs_ss_corrected on Poisson sums: the kernel against the closed form", "[corrected]") {
  std::mt19937_64 g(13);
  const double n = 3.0, z = 1.7;
  gibbs_ss_corrected chain(poisson_gamma_prior(2.0, 0.4), laplace_mechanism(1.0, 1.0), Eigen::VectorXd::Constant(1, z), n, g);
  CHECK(chain.statistic() == 2.0);  // the support point nearest z
  std::uniform_real_distribution<double> on(-0.5, 60.5);
  for (const double lambda : {0.3, 2.0, 15.0}) {
    for (const double w : {0.05, 2.0, 400.0}) {
      const double var = n * lambda, v = 1.0 / (1.0 / var + 1.0 / w), m = v * (n * lambda / var + z / w);
      auto log_pi = [&](double y) {
        const double k = std::max(std::round(y), 0.0);
        return k * std::log(n * lambda) - n * lambda - std::lgamma(k + 1.0) - 0.5 * (z - k) * (z - k) / w;
      };
      INFO("lambda " << lambda << ", w " << w);
      for (const bool defensive : {false, true}) {
        const double sd = std::sqrt(v) * (defensive ? 3.0 : 1.0);
        auto log_q = [&](double y) { return -0.5 * (y - m) * (y - m) / (sd * sd); };
        for (int i = 0; i < 200; ++i) {
          const double y = on(g), y2 = on(g);
          const double got = chain.log_acceptance(lambda, w, y, y2, defensive);
          const double expected = log_pi(y2) - log_pi(y) + log_q(y) - log_q(y2);
          REQUIRE(std::abs(got - expected) <= 1e-12 * std::max(1.0, std::abs(log_pi(y)) + std::abs(log_q(y2))));
          const double forward = log_pi(y) + log_q(y2) + std::min(0.0, got);
          const double backward = log_pi(y2) + log_q(y) + std::min(0.0, chain.log_acceptance(lambda, w, y2, y, defensive));
          REQUIRE(std::abs(forward - backward) <= 1e-12 * std::max(1.0, std::abs(forward)));
        }
      }
      CHECK(chain.log_acceptance(lambda, w, 1.0, -0.6, false) == -std::numeric_limits<double>::infinity());
      CHECK(chain.log_acceptance(lambda, w, 1.0, 1e12, true) == -std::numeric_limits<double>::infinity());  // past the cut
    }
  }
  // The chain over (s, w) at lambda = 1: S's law is Poisson(s; 3) e^(-|z - s|) normalised. 10^6 draws thinned by 5;
  // Pearson chi-square over s = 0..6 and s >= 7 pooled (7 degrees of freedom, p > 0.001: critical value 24.32).
  std::array<double, 8> expected{};
  double total = 0.0;
  for (int s = 0; s < 40; ++s) {
    const double p = std::exp(s * std::log(3.0) - 3.0 - std::lgamma(s + 1.0) - std::abs(z - s));
    expected[static_cast<std::size_t>(std::min(s, 7))] += p;
    total += p;
  }
  for (double& e : expected) e /= total;
  chain.set_state(1.0, 1.2, 1.0);
  constexpr int draws = 1000000;
  std::array<double, 8> counts{};
  for (int i = 0; i < draws; ++i) {
    for (int k = 0; k < 5; ++k) {
      chain.update_sum(g);
      chain.update_variance(g);
    }
    counts[static_cast<std::size_t>(std::min(chain.statistic(), 7.0))] += 1.0;
  }
  double chi2 = 0.0;
  for (std::size_t s = 0; s < 8; ++s) chi2 += std::pow(counts[s] - draws * expected[s], 2) / (draws * expected[s]);
  INFO("chi-square " << chi2 << ", acceptance " << chain.sum_acceptance());
  CHECK(chi2 < 24.32);
  CHECK(chain.events() == numerical_events{});
}

// Poisson at n = 10^6, lambda about 3: the posterior agrees with gibbs_ss's (the CLT is good here), most proposals are
// accepted, and the sum stays a whole number.
TEST_CASE("gibbs_ss_corrected on Poisson sums at large n: agrees with gibbs_ss", "[corrected]") {
  Eigen::VectorXd z(1);
  z << 3012345.6;
  const double n = 1e6;
  const poisson_gamma_prior prior(2.0, 0.4);
  const laplace_mechanism mech(1.0, 0.1);
  check_agrees_with_gibbs_ss(prior, mech, z(0), n, 78);
  std::mt19937_64 g(6);
  gibbs_ss_corrected chain(prior, mech, z, n, g);
  for (int i = 0; i < 2000; ++i) chain.step(g);
  INFO("acceptance " << chain.sum_acceptance());
  CHECK(chain.sum_acceptance() > 0.9);
  CHECK(std::floor(chain.statistic()) == chain.statistic());
}

TEST_CASE("gibbs_ss_corrected on Poisson sums: bad input, extreme releases and the cut", "[corrected][errors]") {
  std::mt19937_64 g(2);
  const poisson_gamma_prior prior(2.0, 0.4);
  const laplace_mechanism mech(1.0, 1.0);
  const Eigen::VectorXd one = Eigen::VectorXd::Constant(1, 3.0);
  CHECK_THROWS_WITH(gibbs_ss_corrected(prior, mech, one, 2e12, g), Catch::Contains("n") && Catch::Contains("1e12"));
  CHECK_THROWS_WITH(gibbs_ss_corrected(prior, mech, one, 10.5, g), Catch::Contains("whole number"));
  gibbs_ss_corrected chain(prior, mech, one, 10.0, g);
  CHECK_THROWS_WITH(chain.set_state(1.0, 1e12, 1.0), Catch::Contains("y") && Catch::Contains("1e12 - 1"));
  CHECK_THROWS_WITH(chain.set_state(1.0, -0.6, 1.0), Catch::Contains("y"));
  // Releases far below and above every plausible sum (below: at the edge of what the mechanism produces, 49 scales
  // under 0; -1e6 is refused): finite lambda, whole sums >= 0, nothing counted.
  CHECK_THROWS_WITH(gibbs_ss_corrected(prior, mech, Eigen::VectorXd::Constant(1, -1e6), 10.0, g),
                    Catch::Contains("z is -1000000") && Catch::Contains("noise scales"));
  for (const double zv : {-49.0, 1e7}) {
    gibbs_ss_corrected far(prior, mech, Eigen::VectorXd::Constant(1, zv), 10.0, g);
    for (int i = 0; i < 300; ++i) {
      far.step(g);
      REQUIRE(std::isfinite(far.parameter()));
      REQUIRE(far.statistic() >= 0.0);
      REQUIRE(std::floor(far.statistic()) == far.statistic());
    }
    CHECK(far.events() == numerical_events{});
    if (zv > 0) CHECK(far.statistic() == Approx(zv).margin(50.0));  // the release dominates n = 10 records
  }
  // A release beyond the cut (5e12): the sum is held at or below 1e12 - 1 and the cut is reported, not hidden.
  gibbs_ss_corrected cut(prior, mech, Eigen::VectorXd::Constant(1, 5e12), 10.0, g);
  CHECK(cut.statistic() == 1e12 - 1.0);
  for (int i = 0; i < 200; ++i) {
    cut.step(g);
    REQUIRE(cut.statistic() <= 1e12 - 1.0);
    REQUIRE(std::isfinite(cut.parameter()));
  }
  CHECK(cut.events().rejected_draws > 0);
}
