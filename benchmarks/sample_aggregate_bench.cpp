// Benchmarks of partition releases (sample and aggregate): closed-form partition posteriors at n = 10^6 and
// M = 10^4 (the plan's permutation from the OS CSPRNG included; target under 0.1 s), and MCMC partitions, M = 1000
// semi-conjugate regression Gibbs chains of 2000 draws on 2 threads (target under 10 s). The records are simulated
// once, outside the timed loop.
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "privpost/inference/partition_posterior.hpp"
#include "privpost/mechanisms/above_threshold.hpp"
#include "privpost/mechanisms/partition_plan.hpp"
#include "privpost/mechanisms/sample_aggregate.hpp"
#include "privpost/samplers/semi_conjugate_regression.hpp"
#include "privpost/testing/partition_study.hpp"

using namespace privpost;

namespace {
const partition_regression_data& records(std::size_t n) {
  static std::vector<std::pair<std::size_t, partition_regression_data>> cache;
  for (const auto& [size, data] : cache)
    if (size == n) return data;
  partition_regression_design d;
  d.n = n;
  std::mt19937_64 g(1);
  cache.emplace_back(n, simulate_partition_regression(d, g));
  return cache.back().second;
}
}  // namespace

// Plan (CSPRNG), the known-variance regression posterior's CDF at 3 cutoffs on every partition, the release.
static void partition_probabilities_closed_form(benchmark::State& st) {
  const std::size_t n = 1000000, m = 10000;
  const auto& data = records(n);
  const regression_partition_prior prior{Eigen::VectorXd::Zero(2), Eigen::MatrixXd(), static_cast<double>(n / m), 1.0, 1.0, 1.0};
  const regression_coefficient_posterior posterior(data.x, data.y, prior, 1);
  const std::vector<double> cutoffs = {1.99, 2.0, 2.01};
  probability_release_options o;
  o.epsilon = 1.0;
  for (auto _ : st) {
    const partition_plan plan(n, m);
    const auto outputs = partition_cdf(plan, posterior, cutoffs, {1, 2});
    benchmark::DoNotOptimize(release_posterior_probabilities(outputs.values, cutoffs, o));
  }
}
BENCHMARK(partition_probabilities_closed_form)->Unit(benchmark::kMillisecond)->UseRealTime();

// The permutation alone (CSPRNG), n = 10^6.
static void partition_plan_csprng(benchmark::State& st) {
  for (auto _ : st) benchmark::DoNotOptimize(partition_plan(1000000, 10000));
}
BENCHMARK(partition_plan_csprng)->Unit(benchmark::kMillisecond)->UseRealTime();

// M = 1000 partitions of 100 records, a semi-conjugate Gibbs chain of 200 + 2000 sweeps each (tempered), the
// quantiles at 3 levels, the bound search and the release.
static void partition_quantiles_mcmc(benchmark::State& st) {
  const std::size_t n = 100000, m = 1000;
  const auto& data = records(n);
  run_options chain;
  chain.inference.chains = 1;
  chain.inference.burnin = 200;
  chain.inference.draws = 2000;
  const sampler_partition_posterior posterior(
      semi_conjugate_regression_partitions(data.x, data.y,
                                           {Eigen::Vector2d::Zero(), Eigen::Matrix2d::Identity() * 100.0, 1.0, 1.0}),
      chain, 1);
  const std::vector<double> levels = {0.025, 0.5, 0.975};
  bound_search_options b;
  b.center = 2.0;
  b.base_half_width = 0.25;
  b.max_half_width = 16.0;
  for (auto _ : st) {
    const partition_plan plan(n, m);
    const auto outputs = partition_quantiles(plan, posterior, levels, {1, 2});
    const auto bounds = private_bound_search(outputs.values, b, 0.5);
    benchmark::DoNotOptimize(release_posterior_quantiles(outputs.values, levels, bounds, 0.5));
  }
}
BENCHMARK(partition_quantiles_mcmc)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(1);
