// Tests of privpost/inference/infer.hpp (item 4). Properties:
//  1. infer runs with any uniform random bit generator (std::minstd_rand, and an engine without seed-sequence
//     construction), reproducibly from the seed, and different seeds give different chains;
//  2. a sampler with end_warmup() is told exactly once per chain, right after the burn-in sweeps (also with burn-in 0,
//     and in infer_until, where later rounds never call it again); a sampler without it still runs;
//  3. a sampler's per-draw diagnostics (reports_draw_diagnostics) are kept for the step of each kept draw, in infer and
//     infer_until; a sampler without them leaves inference_result::diagnostics empty; a wrong count is an error;
//  4. inference_options::stop: the chains stop before their next sweep; infer and infer_until return
//     the draws kept so far, each chain with a kept draw cut to the shortest, marked interrupted, with the sweeps
//     actually run; a stop during burn-in is interrupted_error; a stop from another thread ends a parallel run.
#include <catch2/catch.hpp>

#include <Eigen/Core>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "privpost/core/concepts.hpp"
#include "privpost/inference/infer.hpp"

using namespace privpost;

namespace {
// Records a uniform draw per step, and when end_warmup came.
struct recording_chain {
  double x = 0.0;
  std::int64_t steps = 0;
  std::int64_t warmup_ended_at = -1;
  int warmup_calls = 0;
  template <class G>
  void step(G& g) {
    x = std::uniform_real_distribution<double>(0.0, 1.0)(g);
    ++steps;
  }
  void end_warmup() {
    warmup_ended_at = steps;
    ++warmup_calls;
  }
  // The parameter reports the warm-up record, so the test reads it back from the draws.
  Eigen::VectorXd parameter_vector() const {
    Eigen::VectorXd v(3);
    v << x, static_cast<double>(warmup_ended_at), static_cast<double>(warmup_calls);
    return v;
  }
  numerical_events events() const { return {}; }
};

// A 64-bit xorshift engine seeded by one integer only (no seed-sequence constructor).
struct xorshift64 {
  using result_type = std::uint64_t;
  std::uint64_t state;
  explicit xorshift64(std::uint64_t seed) : state(seed == 0 ? 0x9E3779B97F4A7C15ull : seed) {}
  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return ~result_type{0}; }
  result_type operator()() {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  }
};
static_assert(random_engine<xorshift64>);

// Reports its step count as a diagnostic (and as its parameter), so the test can match each kept draw with its row;
// `wrong` reports two values for one name.
struct diagnosing_chain {
  std::int64_t steps = 0;
  bool wrong = false;
  template <class G>
  void step(G&) {
    ++steps;
  }
  Eigen::VectorXd parameter_vector() const { return Eigen::VectorXd::Constant(1, static_cast<double>(steps)); }
  numerical_events events() const { return {}; }
  static std::vector<std::string> draw_diagnostic_names() { return {"step__"}; }
  Eigen::VectorXd draw_diagnostics() const {
    return wrong ? Eigen::VectorXd::Zero(2) : Eigen::VectorXd::Constant(1, static_cast<double>(steps));
  }
};
static_assert(reports_draw_diagnostics<diagnosing_chain>);

// Counts every step of every chain in *swept and sets *stop after `after` of them; reports the step count of its own
// chain (as parameter and diagnostic) so that the test can see which draws were kept.
struct stopping_chain {
  std::atomic<bool>* stop;
  std::atomic<std::int64_t>* swept;
  std::int64_t after;
  std::int64_t steps = 0;
  template <class G>
  void step(G&) {
    ++steps;
    if (++*swept >= after) stop->store(true);
  }
  Eigen::VectorXd parameter_vector() const { return Eigen::VectorXd::Constant(1, static_cast<double>(steps)); }
  numerical_events events() const { return {}; }
  static std::vector<std::string> draw_diagnostic_names() { return {"step__"}; }
  Eigen::VectorXd draw_diagnostics() const { return parameter_vector(); }
};
static_assert(!reports_draw_diagnostics<recording_chain>);
static_assert(!std::constructible_from<xorshift64, std::seed_seq&>);
}  // namespace

TEMPLATE_TEST_CASE("infer with any engine is reproducible from the seed", "[infer]", std::mt19937_64, std::minstd_rand,
                   xorshift64) {
  inference_options o;
  o.chains = 2;
  o.burnin = 3;
  o.draws = 50;
  o.seed = 11;
  auto make = [](auto&) { return recording_chain{}; };
  const auto a = infer<TestType>(make, o);
  const auto b = infer<TestType>(make, o);
  CHECK(a.draws.chains().front().col(0) == b.draws.chains().front().col(0));
  CHECK(a.draws.chains().front().col(0) != a.draws.chains().back().col(0));  // chains get different streams
  o.seed = 12;
  const auto c = infer<TestType>(make, o);
  CHECK(a.draws.chains().front().col(0) != c.draws.chains().front().col(0));
}

TEST_CASE("end_warmup is called once, right after the burn-in", "[infer]") {
  auto make = [](auto&) { return recording_chain{}; };
  for (int burnin : {0, 1, 7}) {
    inference_options o;
    o.chains = 2;
    o.burnin = burnin;
    o.draws = 5;
    o.thin = 2;
    const auto r = infer(make, o);
    for (const auto& chain : r.draws.chains()) {
      CHECK((chain.col(1).array() == burnin).all());  // every kept draw saw warm-up end after `burnin` steps
      CHECK((chain.col(2).array() == 1.0).all());     // exactly once
    }
  }
  inference_options o;
  o.chains = 2;
  o.burnin = 4;
  o.draws = 8;
  const auto r = infer_until(make, o, convergence_target{1.0, 1e9, 100});  // unreachable: extends to max_sweeps
  CHECK(r.rounds > 1);
  for (const auto& chain : r.result.draws.chains()) {
    CHECK((chain.col(1).array() == 4.0).all());
    CHECK((chain.col(2).array() == 1.0).all());
  }
}

TEST_CASE("per-draw diagnostics are kept for the step of each kept draw", "[infer]") {
  inference_options o;
  o.chains = 3;
  o.burnin = 5;
  o.draws = 7;
  o.thin = 3;
  auto check = [](const inference_result& r, Eigen::Index rows) {
    REQUIRE(r.diagnostic_names == std::vector<std::string>{"step__"});
    REQUIRE(r.diagnostics.size() == 3);
    for (std::size_t c = 0; c < 3; ++c) {
      REQUIRE(r.diagnostics[c].rows() == rows);
      REQUIRE(r.diagnostics[c].cols() == 1);
      CHECK(r.diagnostics[c].col(0) == r.draws.chains()[c].col(0));
      for (Eigen::Index i = 0; i < rows; ++i) CHECK(r.diagnostics[c](i, 0) == 5.0 + 3.0 * static_cast<double>(i + 1));
    }
  };
  for (const bool parallel : {false, true}) {
    o.parallel = parallel;
    check(infer([](auto&) { return diagnosing_chain{}; }, o), 7);
    const auto e = infer_until([](auto&) { return diagnosing_chain{}; }, o, convergence_target{1.0, 1e9, 5 + 3 * 7 * 4});
    CHECK(e.rounds == 3);  // 7, then 14, then 28 draws per chain
    check(e.result, 28);
  }
  const auto plain = infer([](auto&) { return recording_chain{}; }, o);
  CHECK(plain.diagnostic_names.empty());
  CHECK(plain.diagnostics.empty());
  CHECK_THROWS_WITH(infer(
                        [](auto&) {
                          return diagnosing_chain{0, true};
                        },
                        o),
                    Catch::Contains("draw_diagnostics() returned 2 values for 1 draw_diagnostic_names()"));
}

TEST_CASE("rhat_target_for_rounds caps infer_until at that many rounds", "[infer]") {
  inference_options o;
  o.chains = 2;
  o.burnin = 5;
  o.draws = 7;
  o.thin = 3;
  const convergence_target t = rhat_target_for_rounds(o, 3);
  CHECK(t.max_rhat == 1.01);
  CHECK(t.min_ess == 0.0);
  CHECK(t.max_sweeps == 5 + 7 * 4 * 3);  // the third round ends with 28 draws a chain
  CHECK(rhat_target_for_rounds(o, 1, 1.05).max_sweeps == 5 + 7 * 3);
  CHECK(rhat_target_for_rounds(o, 1, 1.05).max_rhat == 1.05);
  // A chain whose draws only grow (its step count) never reaches R-hat <= 1.01: the rounds allowed are all run.
  for (const int rounds : {1, 2, 3}) {
    const auto e = infer_until([](auto&) { return diagnosing_chain{}; }, o, rhat_target_for_rounds(o, rounds));
    CHECK_FALSE(e.reached);
    CHECK(e.rounds == rounds);
    CHECK(e.sweeps_per_chain == rhat_target_for_rounds(o, rounds).max_sweeps);
  }
  CHECK_THROWS_WITH(rhat_target_for_rounds(o, 0), Catch::Contains("rounds") && Catch::Contains("[1, 30]"));
  CHECK_THROWS_WITH(rhat_target_for_rounds(o, 31), Catch::Contains("[1, 30]"));
  CHECK_THROWS_WITH(rhat_target_for_rounds(o, 2, 0.99), Catch::Contains("max_rhat") && Catch::Contains(">= 1"));
  CHECK_THROWS_AS(rhat_target_for_rounds(o, 2, std::nan("")), std::invalid_argument);
  o.draws = 3;  // infer_until needs 4 draws a chain
  CHECK_THROWS_WITH(rhat_target_for_rounds(o, 2), Catch::Contains("draws"));
  o.draws = 1 << 30;
  o.thin = 1 << 30;
  CHECK(rhat_target_for_rounds(o, 1).max_sweeps == 5 + (std::int64_t{1} << 60));
  CHECK_THROWS_WITH(rhat_target_for_rounds(o, 4), Catch::Contains("64 bits"));  // 2^30 * 2^3 * 2^30 = 2^63
}

TEST_CASE("a stop flag ends the run with the draws kept so far", "[infer]") {
  std::atomic<bool> stop{false};
  std::atomic<std::int64_t> swept{0};
  inference_options o;
  o.chains = 3;
  o.burnin = 5;
  o.draws = 10;
  o.stop = &stop;
  auto run = [&](std::int64_t after) {
    stop = false;
    swept = 0;
    return infer([&](auto&) { return stopping_chain{&stop, &swept, after}; }, o);
  };
  // Sequential chains of 15 sweeps: after 24, chain 1 has kept 4 draws (its sweeps 6-9) and chain 2 none.
  const auto r = run(24);
  CHECK(r.interrupted);
  CHECK(r.sweeps == 24);
  REQUIRE(r.draws.num_chains() == 2);
  REQUIRE(r.draws.draws_per_chain() == 4);
  for (const auto& c : r.draws.chains()) CHECK(c.col(0) == Eigen::Vector4d(6, 7, 8, 9));
  REQUIRE(r.diagnostics.size() == 2);
  for (const auto& d : r.diagnostics) CHECK(d.col(0) == Eigen::Vector4d(6, 7, 8, 9));
  // Uninterrupted: all 45 sweeps; a stop in the first chain's burn-in leaves nothing.
  const auto full = run(1000);
  CHECK_FALSE(full.interrupted);
  CHECK(full.sweeps == 45);
  CHECK(full.draws.num_chains() == 3);
  CHECK_THROWS_AS(run(3), interrupted_error);
  CHECK_THROWS_WITH(run(3), Catch::Contains("before any chain kept a draw"));

  // infer_until: the first round (15 sweeps a chain) completes, the second (10 more each) stops after 45 + 13:
  // chain 0 has 10 + 3 draws, chains 1 and 2 their 10.
  stop = false;
  swept = 0;
  const auto e = infer_until([&](auto&) { return stopping_chain{&stop, &swept, 58}; }, o, convergence_target{1.0, 1e9, 1000});
  CHECK(e.result.interrupted);
  CHECK_FALSE(e.reached);
  CHECK(e.result.sweeps == 58);
  REQUIRE(e.result.draws.num_chains() == 3);
  CHECK(e.result.draws.draws_per_chain() == 10);
  CHECK(e.result.diagnostics.at(2).rows() == 10);

  // Parallel chains, stopped by another thread: equal lengths, fewer sweeps than planned.
  std::atomic<bool> later{false};
  std::atomic<std::int64_t> never{0};
  o.parallel = true;
  o.burnin = 0;
  o.draws = 1'000'000;
  o.thin = 100;  // 10^8 sweeps a chain planned; the stop comes after 50 ms
  o.stop = &later;
  std::jthread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    later = true;
  });
  const auto p = infer([&](auto&) { return stopping_chain{&later, &never, std::int64_t{1} << 62}; }, o);
  CHECK(p.interrupted);
  CHECK(p.sweeps < 300'000'000);
  REQUIRE(p.draws.num_chains() >= 1);
  Eigen::VectorXd expected(p.draws.draws_per_chain());
  for (Eigen::Index i = 0; i < expected.size(); ++i) expected(i) = 100.0 * static_cast<double>(i + 1);
  for (const auto& c : p.draws.chains()) CHECK(c.col(0) == expected);
}
