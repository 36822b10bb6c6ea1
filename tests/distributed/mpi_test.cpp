// The distributed layer under mpiexec (CTest runs this program on 1, 2 and 3 ranks): sharded statistics bit for bit
// the single-process statistic for shards of uneven sizes (one rank's shard empty on 3 ranks), a bad shard ending every
// rank with the failing rank's message, chains spread over ranks giving the single-process draws, and a record-level
// chain whose records are sharded over the ranks giving the one-process chain of the same K (the library's record
// models and a user's). Every rank runs
// every test case in the same order (the calls are collective), and every check is a CHECK: a REQUIRE that stopped
// one rank's test case would leave the others waiting in a collective call.
#define CATCH_CONFIG_RUNNER
#include <mpi.h>
#include <catch2/catch.hpp>

#include <Eigen/Core>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "privpost/core/random/beta.hpp"
#include "privpost/core/random/binomial.hpp"
#include "privpost/distributed/mpi.hpp"
#include "privpost/families/binomial.hpp"
#include "privpost/families/normal.hpp"
#include "privpost/inference/run.hpp"
#include "privpost/mechanisms/gaussian.hpp"
#include "privpost/mechanisms/laplace.hpp"
#include "privpost/samplers/record_augmented.hpp"
#include "support/histogram_fixtures.hpp"
#include "support/user_record_models.hpp"

using namespace privpost;

namespace mpi_test {

const auto normal_stat = [](const auto& x) { return std::array{x[0], x[0] * x[0]}; };

// The shard of rank r of s: contiguous, uneven (rank 0 takes a half, the next ranks halves of the rest; on three or
// more ranks the last but one is empty).
std::span<const std::array<double, 1>> shard_of(const std::vector<std::array<double, 1>>& all, int r, int s) {
  std::size_t begin = 0, length = all.size();
  for (int k = 0; k < r; ++k) {
    const std::size_t taken = (k == s - 2 && s >= 3) ? 0 : (length + 1) / 2;
    begin += taken;
    length -= taken;
  }
  const std::size_t take = r == s - 1 ? length : (r == s - 2 && s >= 3) ? 0 : (length + 1) / 2;
  return std::span<const std::array<double, 1>>(all).subspan(begin, take);
}

// A sampler whose parameter is a uniform draw per sweep: enough to see which engine, and which sweeps, made a draw.
struct uniform_chain {
  double x = 0.0;
  template <class G>
  void step(G& g) {
    x = std::uniform_real_distribution<double>(0.0, 1.0)(g);
  }
  Eigen::VectorXd parameter_vector() const { return Eigen::VectorXd::Constant(1, x); }
  numerical_events events() const { return {}; }
  static std::vector<std::string> draw_diagnostic_names() { return {"half__"}; }
  Eigen::VectorXd draw_diagnostics() const { return Eigen::VectorXd::Constant(1, x < 0.5 ? 0.0 : 1.0); }
};

// A beta-binomial study with exact posteriors: theta ~ Beta(2, 2), x ~ Binomial(20, theta); "exact" and "nonprivate"
// draw Beta(2 + x, 22 - x), "shifted" the same plus 0.05 (miscalibrated, so the report's numbers are not all alike).
struct coin_trial {
  Eigen::VectorXd truth;
  double successes = 0.0;
};
inline auto coin_study(int fail_at = -1) {
  auto simulate = [](std::mt19937_64& g) {
    const double theta = draw_beta(g, 2.0, 2.0);
    return coin_trial{Eigen::VectorXd::Constant(1, theta), static_cast<double>(draw_binomial(g, 20, theta))};
  };
  auto exact = [fail_at](double shift) {
    return [fail_at, shift](const coin_trial& t, std::mt19937_64& g) {
      if (fail_at >= 0 && t.successes >= fail_at) throw std::runtime_error("this trial fails on purpose");
      Eigen::MatrixXd draws(200, 1);
      for (Eigen::Index i = 0; i < 200; ++i) draws(i, 0) = draw_beta(g, 2.0 + t.successes, 22.0 - t.successes) + shift;
      return draws;
    };
  };
  return simulation_study(simulate, std::vector<named_method<coin_trial>>{
                                        {"nonprivate", exact(0.0)}, {"exact", exact(0.0)}, {"shifted", exact(0.05)}});
}

}  // namespace mpi_test

using namespace mpi_test;

TEST_CASE("sharded_statistic: the single-process statistic bit for bit, for any split", "[distributed]") {
  const MPI_Comm comm = MPI_COMM_WORLD;
  const int me = distributed::rank(comm), n = distributed::size(comm);
  std::mt19937_64 g(44);  // the same records on every rank; each reads only its shard
  std::uniform_real_distribution<double> u(-3.0, 5.0);
  std::vector<std::array<double, 1>> all(1001);
  for (auto& x : all) x[0] = u(g) * (g() % 7 == 0 ? 1e-9 : 1.0);
  for (auto policy : {out_of_bounds::clamp, out_of_bounds::drop}) {
    const bounded_statistic<1, decltype(normal_stat)> stat(normal_stat, {interval(-2.0, 4.0)}, policy);
    const auto whole = stat.compute(all);
    const auto sharded = distributed::sharded_statistic(comm, stat, shard_of(all, me, n));
    CHECK(sharded.statistic(0) == whole.statistic(0));
    CHECK(sharded.statistic(1) == whole.statistic(1));
    CHECK(sharded.records == all.size());
    CHECK(sharded.outside == whole.outside);
  }
}

TEST_CASE("allreduce of exact sums: every rank gets the total of all ranks' values", "[distributed]") {
  const MPI_Comm comm = MPI_COMM_WORLD;
  const int me = distributed::rank(comm), n = distributed::size(comm);
  std::vector<double> values;
  for (int k = 0; k < 300; ++k) values.push_back(std::ldexp(1.0 + k / 301.0, (k * 37) % 200 - 100) * (k % 3 == 0 ? -1 : 1));
  exact_sum whole;
  std::array<exact_sum, 2> mine{};
  for (std::size_t k = 0; k < values.size(); ++k) {
    whole.add(values[k]);
    if (static_cast<int>(k % static_cast<std::size_t>(n)) == me) {
      mine[0].add(values[k]);
      mine[1].add(-2.0 * values[k]);
    }
  }
  distributed::allreduce(comm, std::span<exact_sum>(mine));
  CHECK(mine[0].value() == whole.value());
  CHECK(mine[1].value() == -2.0 * whole.value());
  CHECK(distributed::allreduce(comm, std::uint64_t{3}) == 3u * static_cast<std::uint64_t>(n));
}

TEST_CASE("a bad shard ends every rank with the failing rank's message", "[distributed]") {
  const MPI_Comm comm = MPI_COMM_WORLD;
  const int me = distributed::rank(comm), n = distributed::size(comm);
  const bounded_statistic<1, decltype(normal_stat)> stat(normal_stat, {interval(-2.0, 4.0)}, out_of_bounds::clamp);
  std::vector<std::array<double, 1>> shard{{1.0}, {2.0}};
  if (me == n - 1) shard.push_back({std::numeric_limits<double>::quiet_NaN()});
  bool threw = false;
  try {
    (void)distributed::sharded_statistic(comm, stat, shard);
  } catch (const distributed::remote_failure& e) {
    threw = true;
    CHECK(me != n - 1);
    CHECK(e.rank() == n - 1);
    CHECK_THAT(e.what(), Catch::Contains("rank " + std::to_string(n - 1) + " failed") && Catch::Contains("finite"));
  } catch (const std::invalid_argument& e) {
    threw = true;
    CHECK(me == n - 1);  // the failing rank's own error
  }
  CHECK(threw);
  // Nothing failed: every rank gets the value.
  CHECK(distributed::collectively(comm, [&] { return me + 1; }) == me + 1);
}

// A run's settings: chains, burn-in, kept draws and seed (thin 1, sequential chains).
inference_options chains_of(int chains, int burnin, int draws, std::uint64_t seed) {
  inference_options o;
  o.chains = chains;
  o.burnin = burnin;
  o.draws = draws;
  o.seed = seed;
  return o;
}

// A writer that counts what run() tells it: the draws streamed and the results written.
struct counting_writer {
  int draws = 0, writes = 0;
  void draw(const run_header&, const kept_draw&) { ++draws; }
  void write(const run_header&, const inference_result&) { ++writes; }
};

TEST_CASE("run on ranks: the single-process run's draws, whatever the number of ranks", "[distributed]") {
  const MPI_Comm comm = MPI_COMM_WORLD;
  const int me = distributed::rank(comm), n = distributed::size(comm);
  for (bool parallel : {false, true}) {
    inference_options o = chains_of(5, 20, 150, 2026);
    o.thin = 2;
    o.parallel = parallel;
    auto make = [](auto& g) {
      return record_gibbs(beta_prior(1.0, 1.0), laplace_mechanism(1.0, 1.0), Eigen::VectorXd::Constant(1, 31.0), 100.0, g);
    };
    // The root may be any rank: the last one here.
    counting_writer w;
    const auto spread = run(make, run_options{.inference = o}, distributed::ranks(comm, n - 1), w);
    const auto single = infer(make, o);
    CHECK(spread.result.draws.chains().size() == 5);
    CHECK(spread.result.draws.chains() == single.draws.chains());
    CHECK(spread.result.sweeps == single.sweeps);
    CHECK(spread.result.events == single.events);
    CHECK_FALSE(spread.result.interrupted);
    CHECK(spread.reached);
    CHECK(spread.rounds == 1);
    CHECK(spread.sweeps_per_chain == 20 + 150 * 2);
    // The writers are the root's; it streams the draws of the chains it makes itself (chain c on rank c mod n).
    const int root_chains = (5 - n) / n + 1;
    CHECK(w.writes == (me == n - 1 ? 1 : 0));
    CHECK(w.draws == (me == n - 1 ? 150 * root_chains : 0));
  }
}

TEST_CASE("run on ranks: infer_until's rounds and draws, whatever the number of ranks", "[distributed]") {
  const MPI_Comm comm = MPI_COMM_WORLD;
  const inference_options o = chains_of(3, 10, 8, 17);
  auto make = [](auto& g) {
    return record_gibbs(beta_prior(1.0, 1.0), laplace_mechanism(1.0, 1.0), Eigen::VectorXd::Constant(1, 31.0), 100.0, g);
  };
  for (const double min_ess : {50.0, 1e9}) {  // reached after a few doublings; never, up to the cap
    convergence_target t;
    t.min_ess = min_ess;
    t.max_sweeps = 10 + 8 * 64;
    const auto spread = run(make, run_options{.inference = o, .target = t}, distributed::ranks(comm));
    const auto single = infer_until(make, o, t);
    CHECK(spread.result.draws.chains() == single.result.draws.chains());
    CHECK(spread.result.sweeps == single.result.sweeps);
    CHECK(spread.result.events == single.result.events);
    CHECK(spread.reached == single.reached);
    CHECK(spread.rounds == single.rounds);
    CHECK(spread.sweeps_per_chain == single.sweeps_per_chain);
    CHECK(single.rounds > 1);
    CHECK(single.reached == (min_ess < 1e9));
  }
}

TEST_CASE("run on ranks: per-draw diagnostics reach every rank", "[distributed]") {
  const MPI_Comm comm = MPI_COMM_WORLD;
  const inference_options o = chains_of(4, 3, 40, 5);
  auto make = [](auto&) { return uniform_chain{}; };
  const auto single = infer(make, o);
  const auto everywhere = run(make, run_options{.inference = o}, distributed::ranks(comm)).result;
  CHECK(everywhere.diagnostic_names == std::vector<std::string>{"half__"});
  CHECK(everywhere.diagnostics == single.diagnostics);
  CHECK(everywhere.draws.chains() == single.draws.chains());
}

TEST_CASE("run on ranks: a chain that throws ends every rank", "[distributed]") {
  const MPI_Comm comm = MPI_COMM_WORLD;
  const int me = distributed::rank(comm), n = distributed::size(comm);
  // Chain 1 refuses to start (its engine's first output is even), chain 0 does not: a seed found the same way on
  // every rank.
  auto refuses = [](std::uint64_t seed, int c) { return chain_engine(seed, c)() % 2 == 0; };
  std::uint64_t seed = 0;
  while (!(refuses(seed, 1) && !refuses(seed, 0) && !refuses(seed, 2))) ++seed;
  inference_options o;
  o.chains = 3;
  o.burnin = 5;
  o.draws = 10;
  o.seed = seed;
  auto make = [](auto& g) {
    if (g() % 2 == 0) throw std::runtime_error("this chain refuses to start");
    return uniform_chain{};
  };
  for (const bool until : {false, true}) {
    bool threw = false;
    try {
      run_options ro{.inference = o};
      if (until) ro.target = convergence_target{};
      (void)run(make, ro, distributed::ranks(comm));
    } catch (const distributed::remote_failure& e) {
      threw = true;
      CHECK(me != 1 % n);
      CHECK(e.rank() == 1 % n);
      CHECK_THAT(e.what(), Catch::Contains("refuses to start"));
    } catch (const std::runtime_error& e) {
      threw = true;
      CHECK(me == 1 % n);
      CHECK_THAT(e.what(), Catch::Contains("refuses to start"));
    }
    CHECK(threw);
  }
}

TEST_CASE("run on ranks: bad arguments are refused on every rank", "[distributed]") {
  const MPI_Comm comm = MPI_COMM_WORLD;
  inference_options o;
  o.chains = 2;
  o.draws = 10;
  auto make = [](auto&) { return uniform_chain{}; };
  CHECK_THROWS_WITH(distributed::ranks(comm, distributed::size(comm)), Catch::Contains("root"));
  CHECK_THROWS_WITH(distributed::ranks(comm, -1), Catch::Contains("root"));
  o.chains = 0;
  CHECK_THROWS_WITH(run(make, run_options{.inference = o}, distributed::ranks(comm)), Catch::Contains("chains"));
}

TEST_CASE("distributed run_calibration: the single-process report, whatever the number of ranks", "[distributed]") {
  const MPI_Comm comm = MPI_COMM_WORLD;
  const int me = distributed::rank(comm);
  const auto study = coin_study();
  calibration_options o;
  o.trials = 23;
  o.seed = 9;
  o.mmd_draws = 50;
  int last_done = 0;
  const auto spread = distributed::run_calibration(comm, study, o, [&](int done, int total) {
    CHECK(total == 23);
    last_done = done;
  });
  CHECK(spread.has_value() == (me == 0));
  if (spread) {
    CHECK(last_done == 23);
    const auto single = run_calibration(study, o).report();
    const auto rows = spread->report();
    CHECK(rows.size() == 3);
    CHECK(single.size() == rows.size());
    for (std::size_t k = 0; k < std::min(rows.size(), single.size()); ++k) {
      CHECK(rows[k].method == single[k].method);
      CHECK(rows[k].trials == 23);
      CHECK(rows[k].ks == single[k].ks);
      CHECK(rows[k].ks_pvalue == single[k].ks_pvalue);
      CHECK(rows[k].coverage50 == single[k].coverage50);
      CHECK(rows[k].coverage90 == single[k].coverage90);
      CHECK(rows[k].mmd2 == single[k].mmd2);
    }
    CHECK(spread->quantiles("shifted", 0) == run_calibration(study, o).quantiles("shifted", 0));
  }
}

TEST_CASE("distributed run_calibration: a trial that throws ends every rank", "[distributed]") {
  const MPI_Comm comm = MPI_COMM_WORLD;
  calibration_options o;
  o.trials = 40;  // about half the trials have 10 successes or more
  o.seed = 3;
  bool threw = false;
  try {
    (void)distributed::run_calibration(comm, coin_study(10), o);
  } catch (const std::runtime_error& e) {
    threw = true;  // the failing rank's own error or remote_failure, both naming the cause
    CHECK_THAT(e.what(), Catch::Contains("fails on purpose"));
  }
  CHECK(threw);
  o.trials = 1;
  CHECK_THROWS_WITH(distributed::run_calibration(comm, coin_study(), o), Catch::Contains("trials"));
}

// theta and S of every sweep of a K = 6 chain (two chains' worth of sweeps through infer on every rank).
template <class Make>
std::vector<Eigen::MatrixXd> sharded_draws(Make make) {
  inference_options o;
  o.chains = 2;
  o.burnin = 20;
  o.draws = 80;
  o.seed = 404;
  return infer(make, o).draws.chains();
}

TEST_CASE("sharded records: the one-process chain of the same K, bit for bit, on any number of ranks", "[distributed]") {
  const MPI_Comm comm = MPI_COMM_WORLD;
  SECTION("binomial records, integer sums") {
    Eigen::VectorXd z(1);
    z << 41.5;
    const auto spread = sharded_draws([&](std::mt19937_64& g) {
      return distributed::sharded_records(comm, beta_prior(1.0, 1.0), laplace_mechanism(1.0, 0.5), z, 103.0, g, 6);
    });
    const auto single = sharded_draws([&](std::mt19937_64& g) {
      return sharded_record_gibbs(beta_prior(1.0, 1.0), laplace_mechanism(1.0, 0.5), z, 103.0, g, record_sharding{6});
    });
    CHECK(spread == single);
  }
  SECTION("normal records clamped, real-valued sums") {
    Eigen::VectorXd z(2);
    z << 3.1, 40.7;
    const normal_inverse_gamma_prior prior(0.0, 1.0, 3.0, 2.0);
    const auto m = gaussian_mechanism::analytic(8.0, 1.0, 1e-5);
    const clamped_contribution<normal_family> clamp(-2.0, 2.0);
    const auto spread =
        sharded_draws([&](std::mt19937_64& g) { return distributed::sharded_records(comm, prior, m, z, 50.0, g, 6, clamp); });
    const auto single =
        sharded_draws([&](std::mt19937_64& g) { return sharded_record_gibbs(prior, m, z, 50.0, g, record_sharding{6}, clamp); });
    CHECK(spread == single);
  }
  SECTION("linear regression records clamped into a box") {
    const regression_layout layout(1, true);
    const std::vector<interval> box{interval(-1.0, 1.0)};
    const nig_regression_prior prior(Eigen::VectorXd::Zero(2), Eigen::MatrixXd::Identity(2, 2) * 38.0, 20.0, 0.5);
    const niw_hyperprior niw{Eigen::VectorXd::Zero(1), 1.0, Eigen::MatrixXd::Identity(1, 1), 50.0};
    const laplace_mechanism m(layout.sensitivity(box, interval(-1.0, 1.0)).first, 1.0);
    Eigen::VectorXd z(layout.size());
    for (Eigen::Index k = 0; k < z.size(); ++k) z(k) = 0.5 + 0.25 * static_cast<double>(k);
    z(0) = 40.0;
    const auto spread = sharded_draws([&](std::mt19937_64& g) {
      return distributed::sharded_regression_records(comm, layout, prior, niw, box, interval(-1.0, 1.0), m, z, 40.0, g, 6);
    });
    const auto single = sharded_draws([&](std::mt19937_64& g) {
      return sharded_record_regression(layout, prior, niw, box, interval(-1.0, 1.0), m, z, 40.0, g, record_sharding{6});
    });
    CHECK(spread == single);
  }
  SECTION("cell records given two releases of marginals") {
    using privpost_test::two_release_3x3;
    const double n = privpost_test::two_release_records;
    const auto spread = sharded_draws([&](std::mt19937_64& g) {
      return distributed::sharded_histogram_records(comm, Eigen::VectorXd::Ones(9), n, two_release_3x3(), g, 6);
    });
    const auto single = sharded_draws([&](std::mt19937_64& g) {
      return sharded_histogram_gibbs(Eigen::VectorXd::Ones(9), n, two_release_3x3(), g, record_sharding{6});
    });
    CHECK(spread == single);
  }
  SECTION("a user's record model on the sharded frame") {
    const double n = 40.0;
    const auto release = [] { return record_release(gaussian_mechanism::published(0.3), Eigen::VectorXd::Constant(1, 1.2)); };
    const auto spread = sharded_draws([&](std::mt19937_64& g) {
      return distributed::sharded_records(comm, privpost_test::summed_normal_mean{n}, n, g, 6, release());
    });
    const auto single = sharded_draws([&](std::mt19937_64& g) {
      return sharded_record_frame(privpost_test::summed_normal_mean{n}, n, g, record_sharding{6}, release());
    });
    CHECK(spread == single);
  }
  SECTION("each rank holds its shards only") {
    Eigen::VectorXd z(1);
    z << 41.5;
    std::mt19937_64 g(1);
    const auto chain = distributed::sharded_records(comm, beta_prior(1.0, 1.0), laplace_mechanism(1.0, 0.5), z, 103.0, g, 6);
    const int me = distributed::rank(comm), n = distributed::size(comm);
    CHECK(chain.held_shards() == static_cast<std::size_t>((6 - me + n - 1) / n));
    for (std::size_t h = 0; h < chain.held_shards(); ++h) CHECK(chain.shard_index(h) % n == me);
  }
}

// MPI around Catch2: the job fails when a test failed on any rank.
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const int failed = Catch::Session().run(argc, argv);
  int any = 0;
  MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return any == 0 ? 0 : 1;
}
