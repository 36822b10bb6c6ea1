// Tests of privpost/inference/convergence_check.hpp and infer_until. Properties:
//  1. independent, well-mixed chains: no warning; shifted chains: an R-hat warning naming the parameter; strongly
//     autocorrelated chains: an ESS warning; constant draws: a warning that the chain did not move;
//  2. numerical repairs above 1% of sweeps warn, at or below do not;
//  3. infer_until on a slowly mixing AR(1) sampler extends the chains until R-hat <= 1.01 and ESS >= the target (the
//     target holds for the returned posterior, and more than one round was needed); with too small a max_sweeps it
//     stops there and says the target was not reached; the draws of the first round equal infer's (to 1e-12);
//     a target that judges only the leading parameters stops when they hold, however slowly the others mix;
//  4. bad criteria and targets throw.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "privpost/core/random/normal.hpp"
#include "privpost/inference/convergence_check.hpp"
#include "privpost/inference/infer.hpp"

using namespace privpost;

namespace {
// An AR(1) chain x' = phi x + sqrt(1 - phi^2) e with stationary N(0, 1), started at x0.
struct ar1_sampler {
  double phi, x;
  void step(std::mt19937_64& g) { x = phi * x + std::sqrt(1.0 - phi * phi) * draw_normal(g); }
  Eigen::VectorXd parameter_vector() const { return Eigen::VectorXd::Constant(1, x); }
  numerical_events events() const { return {}; }
};

// Two coordinates: the first independent draws, the second a sticky AR(1) (phi 0.999: an ESS near 2 per 4000 draws).
struct mixed_sampler {
  double x = 0.0, y = 0.0;
  void step(std::mt19937_64& g) {
    x = draw_normal(g);
    y = 0.999 * y + std::sqrt(1.0 - 0.999 * 0.999) * draw_normal(g);
  }
  Eigen::VectorXd parameter_vector() const { return Eigen::Vector2d(x, y); }
  numerical_events events() const { return {}; }
};

posterior chains_of(double phi, int draws, std::uint64_t seed, double shift_last = 0.0) {
  std::mt19937_64 g(seed);
  std::vector<Eigen::MatrixXd> chains;
  for (int c = 0; c < 4; ++c) {
    ar1_sampler s{phi, draw_normal(g)};
    Eigen::MatrixXd m(draws, 1);
    for (int i = 0; i < draws; ++i) {
      s.step(g);
      m(i, 0) = s.x + (c == 3 ? shift_last : 0.0);
    }
    chains.push_back(m);
  }
  return posterior(chains);
}
}  // namespace

TEST_CASE("convergence warnings: silent on good chains, plain words on bad ones", "[convergence]") {
  CHECK(convergence_warnings(chains_of(0.0, 1000, 1)).empty());
  CHECK(converged(chains_of(0.0, 1000, 1)));
  const auto shifted = convergence_warnings(chains_of(0.0, 1000, 2, 1.0), {}, {"mu"});
  REQUIRE(!shifted.empty());
  CHECK(shifted.front().find("mu: R-hat") == 0);
  const auto sticky = convergence_warnings(chains_of(0.995, 1000, 3));
  bool ess_warning = false;
  for (const auto& w : sticky) ess_warning = ess_warning || w.find("effective sample size") != std::string::npos;
  CHECK(ess_warning);
  const posterior constant(std::vector<Eigen::MatrixXd>(2, Eigen::MatrixXd::Constant(10, 1, 0.5)));
  REQUIRE(convergence_warnings(constant).size() == 1);
  CHECK(convergence_warnings(constant).front().find("did not move") != std::string::npos);
}

TEST_CASE("convergence warnings: numerical repairs above 1% of sweeps", "[convergence]") {
  const posterior p = chains_of(0.0, 1000, 4);
  numerical_events e;
  e.projections = 40;  // 40 of 4000 sweeps = 1%: not above
  CHECK(convergence_warnings(p, e, 4000).empty());
  e.jitter = 1;  // 41 of 4000
  REQUIRE(convergence_warnings(p, e, 4000).size() == 1);
  CHECK(convergence_warnings(p, e, 4000).front().find("numerical repairs in 1.0% of sweeps") == 0);
  e.rejected_draws = 100000;  // retries are not repairs
  CHECK(convergence_warnings(p, e, 4000).size() == 1);
}

TEST_CASE("infer_until extends the chains until the target holds", "[convergence][infer]") {
  inference_options o;
  o.chains = 4;
  o.burnin = 100;
  o.draws = 200;
  o.seed = 11;
  auto make = [](std::mt19937_64& g) { return ar1_sampler{0.95, 5.0 * draw_normal(g)}; };
  convergence_target t;
  t.min_ess = 400.0;
  const auto r = infer_until(make, o, t);
  INFO("rounds " << r.rounds << ", sweeps per chain " << r.sweeps_per_chain << ", ESS " << r.result.draws.ess_bulk() << ", R-hat "
                 << r.result.draws.rhat());
  CHECK(r.reached);
  CHECK(r.rounds > 1);
  CHECK(r.result.draws.rhat() <= 1.01);
  CHECK(r.result.draws.ess_bulk() >= 400.0);
  CHECK(r.result.draws.ess_tail() >= 400.0);
  CHECK(r.sweeps_per_chain == 100 + r.result.draws.draws_per_chain());
  CHECK(r.result.sweeps == 4 * r.sweeps_per_chain);
  // The first round is what infer draws with the same options (to rounding: clang -O3 compiles the two loops'
  // arithmetic differently and differs in the last bit, 1e-15).
  const auto plain = infer(make, o);
  for (int c = 0; c < 4; ++c)
    CHECK((r.result.draws.chains()[c].topRows(200) - plain.draws.chains()[c]).cwiseAbs().maxCoeff() < 1e-12);
  // A ceiling below what the target needs: stops there and says so.
  t.max_sweeps = 700;
  const auto capped = infer_until(make, o, t);
  CHECK(!capped.reached);
  CHECK(capped.sweeps_per_chain <= 700);
}

TEST_CASE("infer_until judges only the leading parameters when asked", "[convergence][infer]") {
  inference_options o;
  o.chains = 4;
  o.burnin = 0;
  o.draws = 400;
  o.seed = 12;
  auto make = [](std::mt19937_64&) { return mixed_sampler{}; };
  convergence_target t;
  t.min_ess = 400.0;
  t.max_sweeps = 3200;  // at most 4 rounds: 400 draws a chain, then 400, 800 and 1600 more
  t.judged = 1;
  const auto leading = infer_until(make, o, t);
  CHECK(leading.reached);
  CHECK(leading.rounds == 1);
  CHECK(leading.result.draws.dimension() == 2);  // the carried parameter is kept
  t.judged = 0;                                  // every parameter: the sticky one does not reach the target within the cap
  const auto every = infer_until(make, o, t);
  CHECK(!every.reached);
  CHECK(every.rounds == 4);
}

TEST_CASE("convergence check and infer_until: bad input", "[convergence][errors]") {
  const posterior p = chains_of(0.0, 100, 5);
  convergence_criteria c;
  c.max_rhat = 0.9;
  CHECK_THROWS_AS(convergence_warnings(p, c), std::invalid_argument);
  c = {};
  c.min_ess_per_chain = std::nan("");
  CHECK_THROWS_AS(convergence_warnings(p, c), std::invalid_argument);
  CHECK_THROWS_AS(convergence_warnings(p, numerical_events{}, 0), std::invalid_argument);
  CHECK_THROWS_AS(convergence_warnings(p, {}, {"a", "b"}), std::invalid_argument);
  inference_options o;
  o.draws = 10;
  auto make = [](std::mt19937_64&) { return ar1_sampler{0.5, 0.0}; };
  convergence_target t;
  t.max_sweeps = 10;  // below burnin + draws
  CHECK_THROWS_AS(infer_until(make, o, t), std::invalid_argument);
  t = {};
  t.min_ess = -1.0;
  CHECK_THROWS_AS(infer_until(make, o, t), std::invalid_argument);
  t = {};
  t.judged = -1;
  CHECK_THROWS_AS(infer_until(make, o, t), std::invalid_argument);
  t.judged = 2;  // the sampler has one parameter
  CHECK_THROWS_WITH(infer_until(make, o, t), Catch::Contains("judged is 2"));
}
