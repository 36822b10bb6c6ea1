// distributed_release: records sharded over the processes of an MPI job, one release, one posterior.
//
//     mpiexec -n 2 ./build/default/examples/privpost_distributed_release [--csv FILE] [--check]
//
// Each rank holds a shard of the 1984 House votes (rows i with i mod ranks = rank: a stand-in for machines that each
// hold their own records) and computes its part of the count of republicans exactly; the parts combine into the count
// one process computes from all the rows, bit for bit (distributed::sharded_statistic). Rank 0 alone draws the Laplace
// noise, once, from the OS CSPRNG, and sends the release to the others; the noise-aware posterior of the share of
// republicans then runs its chains spread over the ranks (privpost::run on distributed::ranks), with the draws one process would
// make for the same seed. --check exits non-zero unless the sharded count equals the single-process count and the posterior's
// R-hat is below 1.01.
#include <mpi.h>
#include <privpost/distributed/mpi.hpp>
#include <privpost/families/binomial.hpp>
#include <privpost/inference/infer.hpp>
#include <privpost/inference/run.hpp>
#include <privpost/mechanisms/laplace.hpp>
#include <privpost/mechanisms/ssp.hpp>
#include <privpost/samplers/gibbs_ss.hpp>

#include <array>
#include <cstdio>
#include <cstring>
#include <exception>
#include <span>
#include <string>
#include <vector>

#include "housevotes_data.hpp"

#ifndef PRIVPOST_HOUSEVOTES_CSV
#define PRIVPOST_HOUSEVOTES_CSV "examples/data/housevotes84.csv"
#endif

namespace {
int run(int argc, char** argv) {
  const MPI_Comm comm = MPI_COMM_WORLD;
  const int me = privpost::distributed::rank(comm), ranks = privpost::distributed::size(comm);
  std::string csv = PRIVPOST_HOUSEVOTES_CSV;
  bool check = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--check") == 0) {
      check = true;
    } else if (std::strcmp(argv[i], "--csv") == 0 && i + 1 < argc) {
      csv = argv[++i];
    } else {
      if (me == 0) std::fprintf(stderr, "usage: mpiexec -n K %s [--csv FILE] [--check]\n", argv[0]);
      return 2;
    }
  }

  // ---- the data owner: every rank reads its own shard; a shard that fails to read stops every rank ---------------
  const Eigen::MatrixXi votes = privpost::distributed::collectively(comm, [&] { return privpost::examples::read_votes(csv); });
  std::vector<std::array<double, 1>> shard;
  for (Eigen::Index i = me; i < votes.rows(); i += ranks) shard.push_back({static_cast<double>(votes(i, 0))});
  const auto identity = [](const auto& x) { return std::array{x[0]}; };
  const privpost::bounded_statistic<1, decltype(identity)> count(identity, {privpost::interval(0.0, 1.0)},
                                                                 privpost::out_of_bounds::clamp);
  const auto statistic = privpost::distributed::sharded_statistic(comm, count, shard);
  const double epsilon = 0.5;
  const privpost::laplace_mechanism mechanism(count.l1_sensitivity(), epsilon);
  // Rank 0 alone draws the noise (OS CSPRNG), once; the others receive the release, never the exact count.
  double z = 0.0;
  if (me == 0) z = mechanism.release(statistic.statistic)(0);
  privpost::distributed::broadcast(comm, std::span<double>(&z, 1));
  const double n = static_cast<double>(statistic.records);

  // ---- the analyst: the chains spread over the ranks -------------------------------------------------------------
  privpost::inference_options options;
  options.chains = 4;
  options.burnin = 1000;
  options.draws = 2000;
  options.seed = 11;
  const privpost::beta_prior prior(1.0, 1.0);
  const Eigen::VectorXd released = Eigen::VectorXd::Constant(1, z);
  const auto result = privpost::run([&](auto& g) { return privpost::gibbs_ss(prior, mechanism, released, n, g); },
                                    {.inference = options}, privpost::distributed::ranks(comm))
                          .result;

  bool ok = true;
  if (me == 0) {
    // For the example only: the single-process count from all rows, which the sharded count must equal exactly.
    std::vector<std::array<double, 1>> all;
    for (Eigen::Index i = 0; i < votes.rows(); ++i) all.push_back({static_cast<double>(votes(i, 0))});
    const double single = count.compute(all).statistic(0);
    const auto ci = result.draws.interval(0.9);
    std::printf("%d ranks, %zu records on rank 0; count of republicans: sharded %.0f, one process %.0f (%s)\n", ranks,
                shard.size(), statistic.statistic(0), single, statistic.statistic(0) == single ? "equal" : "DIFFERENT");
    std::printf("released with Laplace noise at epsilon %.1f: z = %.2f of n = %.0f\n", epsilon, z, n);
    std::printf("posterior share of republicans (4 chains over %d ranks): mean %.3f, 90%% interval [%.3f, %.3f], R-hat %.3f\n",
                ranks, result.draws.mean(), ci.lower, ci.upper, result.draws.rhat());
    ok = statistic.statistic(0) == single && result.draws.rhat() < 1.01;
  }
  double status = ok ? 0.0 : 1.0;  // rank 0's verdict, for every rank's exit status
  privpost::distributed::broadcast(comm, std::span<double>(&status, 1));
  return check && status != 0.0 ? 1 : 0;
}
}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int status = 1;
  try {
    status = run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
  }
  MPI_Finalize();
  return status;
}
