// Benchmarks of the distributed layer, run under mpiexec (not Google Benchmark: its timing loop is per process, and
// these measure collective steps). Run it at 1 and at K ranks:
//
//     mpiexec -n 1 build/default/benchmarks/privpost_bench_distributed
//     mpiexec -n 2 build/default/benchmarks/privpost_bench_distributed
//
// and compare: (1) the reduction of one statistic's exact sums (dimension 1, 10, 100), median of 2000 calls, the cost
// a sharded release or a sharded sweep pays once; (2) a sharded normal-model statistic over 10^6 records split
// evenly; (3) a calibration study of 256 trials (the binomial model's Gibbs-SS, n = 100, 4000 sweeps a trial) spread
// over the ranks, median of 3 runs: the speed-up at K ranks is the 1-rank figure over the K-rank one; (4) one sweep of
// the record-level sampler with 10^6 binomial records in 8 shards over the ranks (Laplace epsilon 1), median of 20
// sweeps after 5, with the one-process record_gibbs sweep beside it at 1 rank; (5) the same for 10^6 cell records of a
// 10 x 10 x 10 table given its three 2-way marginals (Laplace epsilon 1), with histogram_gibbs beside it. Rank 0 prints.
#include <mpi.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <random>
#include <span>
#include <vector>

#include "privpost/core/random/beta.hpp"
#include "privpost/core/random/binomial.hpp"
#include "privpost/distributed/mpi.hpp"
#include "privpost/families/binomial.hpp"
#include "privpost/mechanisms/laplace.hpp"
#include "privpost/samplers/gibbs_ss.hpp"
#include "privpost/samplers/record_augmented.hpp"
#include "privpost/samplers/record_histogram.hpp"

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The median time of 20 sweeps of chain after 5 (every rank in step: a barrier before each).
template <class Chain>
double median_sweep(MPI_Comm comm, Chain& chain, std::mt19937_64& g) {
  std::vector<double> times;
  for (int sweep = 0; sweep < 25; ++sweep) {
    MPI_Barrier(comm);
    const auto start = std::chrono::steady_clock::now();
    chain.step(g);
    if (sweep >= 5) times.push_back(seconds_since(start));
  }
  return median(times);
}

// The binomial model's SBC trial: theta ~ Beta(1, 1), x ~ Binomial(100, theta), a Laplace release at epsilon 1, and
// 4000 Gibbs-SS sweeps.
struct binomial_trial {
  Eigen::VectorXd truth;
  Eigen::VectorXd z;
};

auto binomial_study() {
  const privpost::laplace_mechanism m(1.0, 1.0);
  auto simulate = [m](std::mt19937_64& g) {
    const double theta = privpost::draw_beta(g, 1.0, 1.0);
    Eigen::VectorXd s(1);
    s(0) = static_cast<double>(privpost::draw_binomial(g, 100, theta));
    return binomial_trial{Eigen::VectorXd::Constant(1, theta), m.release(s, g)};
  };
  auto gibbs = [m](const binomial_trial& t, std::mt19937_64& g) {
    return privpost::single_chain([&](auto& e) { return privpost::gibbs_ss(privpost::beta_prior(1.0, 1.0), m, t.z, 100.0, e); },
                                  1000, 3000, g);
  };
  return privpost::simulation_study(simulate, std::vector<privpost::named_method<binomial_trial>>{{"gibbs", gibbs}});
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  const MPI_Comm comm = MPI_COMM_WORLD;
  const int me = privpost::distributed::rank(comm), ranks = privpost::distributed::size(comm);
  if (me == 0) std::printf("privpost_bench_distributed: %d rank(s)\n", ranks);

  for (std::size_t dimension : {1u, 10u, 100u}) {
    std::vector<privpost::exact_sum> start_sums(dimension);
    for (auto& s : start_sums) s.add(1.5 * (me + 1));
    std::vector<double> times;
    for (int rep = 0; rep < 2000; ++rep) {
      std::vector<privpost::exact_sum> sums = start_sums;  // the totals replace the sums: start afresh each time
      MPI_Barrier(comm);
      const auto start = std::chrono::steady_clock::now();
      privpost::distributed::allreduce(comm, std::span<privpost::exact_sum>(sums));
      times.push_back(seconds_since(start));
    }
    if (me == 0) std::printf("  allreduce of %3zu exact sums: %8.2f us (median of 2000)\n", dimension, 1e6 * median(times));
  }

  {
    const std::size_t total = 1000000, mine = total / static_cast<std::size_t>(ranks);
    std::mt19937_64 g(17 + static_cast<unsigned>(me));
    std::uniform_real_distribution<double> u(-1.0, 6.0);
    std::vector<std::array<double, 1>> shard(mine);
    for (auto& x : shard) x[0] = u(g);
    const auto t = [](const auto& x) { return std::array{x[0], x[0] * x[0]}; };
    const privpost::bounded_statistic<1, decltype(t)> stat(t, {privpost::interval(0.0, 5.0)}, privpost::out_of_bounds::clamp);
    std::vector<double> times;
    for (int rep = 0; rep < 5; ++rep) {
      MPI_Barrier(comm);
      const auto start = std::chrono::steady_clock::now();
      const auto s = privpost::distributed::sharded_statistic(comm, stat, shard);
      times.push_back(seconds_since(start));
      if (s.records != mine * static_cast<std::size_t>(ranks)) MPI_Abort(comm, 1);
    }
    if (me == 0) std::printf("  sharded normal statistic, 10^6 records: %8.2f ms (median of 5)\n", 1e3 * median(times));
  }

  {
    const auto study = binomial_study();
    privpost::calibration_options o;
    o.trials = 256;
    o.seed = 3;
    o.mmd_draws = 0;
    std::vector<double> times;
    for (int rep = 0; rep < 3; ++rep) {
      MPI_Barrier(comm);
      const auto start = std::chrono::steady_clock::now();
      const auto acc = privpost::distributed::run_calibration(comm, study, o);
      MPI_Barrier(comm);
      times.push_back(seconds_since(start));
      if (acc && acc->report().front().trials != 256) MPI_Abort(comm, 1);
    }
    if (me == 0) std::printf("  calibration study, 256 trials x 4000 sweeps: %8.3f s (median of 3)\n", median(times));
  }
  {
    Eigen::VectorXd z(1);
    z << 300000.0;
    const privpost::beta_prior prior(1.0, 1.0);
    const privpost::laplace_mechanism m(1.0, 1.0);
    std::mt19937_64 g(5);
    auto chain = privpost::distributed::sharded_records(comm, prior, m, z, 1e6, g, 8);
    const double sweep_seconds = median_sweep(comm, chain, g);
    if (me == 0)
      std::printf("  sharded record sweep, 10^6 binomial records, 8 shards: %8.2f ms (median of 20)\n", 1e3 * sweep_seconds);
    if (ranks == 1) {
      privpost::record_gibbs plain(prior, m, z, 1e6, g);
      std::printf("  record_gibbs sweep, 10^6 binomial records (one process): %8.2f ms (median of 20)\n",
                  1e3 * median_sweep(comm, plain, g));
    }
  }
  {
    const auto q = privpost::linear_queries::marginals({10, 10, 10}, {{0, 1}, {0, 2}, {1, 2}});
    const Eigen::VectorXd h = Eigen::VectorXd::Constant(1000, 1000.0);  // 10^6 records spread evenly
    std::mt19937_64 g(6);
    const privpost::laplace_mechanism m(q.l1_sensitivity(), 1.0);
    const Eigen::VectorXd z = m.release(q.apply(h), g);
    auto measurements = [&] {
      std::vector<privpost::histogram_measurement> ms;
      ms.emplace_back(q, m, z);
      return ms;
    };
    auto chain = privpost::distributed::sharded_histogram_records(comm, Eigen::VectorXd::Ones(1000), 1e6, measurements(), g, 8);
    const double sweep_seconds = median_sweep(comm, chain, g);
    if (me == 0)
      std::printf("  sharded histogram sweep, 10^6 records, 3 marginals of 1000 cells, 8 shards: %8.2f ms (median of 20)\n",
                  1e3 * sweep_seconds);
    if (ranks == 1) {
      privpost::histogram_gibbs plain(Eigen::VectorXd::Ones(1000), 1e6, measurements(), g);
      std::printf("  histogram_gibbs sweep, the same (one process): %8.2f ms (median of 20)\n",
                  1e3 * median_sweep(comm, plain, g));
    }
  }
  MPI_Finalize();
  return 0;
}
