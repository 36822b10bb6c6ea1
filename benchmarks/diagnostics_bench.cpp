// Benchmarks of the convergence diagnostics on 4 chains x 1000 draws of an AR(1) process (phi = 0.5).
#include <benchmark/benchmark.h>

#include <random>

#include "privpost/core/random/normal.hpp"
#include "privpost/diagnostics/convergence.hpp"
#include "privpost/diagnostics/mmd.hpp"

using namespace privpost;

static Eigen::MatrixXd chains() {
  std::mt19937_64 g(1);
  Eigen::MatrixXd x(1000, 4);
  for (Eigen::Index c = 0; c < 4; ++c) {
    double v = 0.0;
    for (Eigen::Index i = 0; i < 1000; ++i) x(i, c) = v = 0.5 * v + draw_normal(g);
  }
  return x;
}

static void rhat_4x1000(benchmark::State& st) {
  const Eigen::MatrixXd x = chains();
  for (auto _ : st) benchmark::DoNotOptimize(rhat(x));
}
BENCHMARK(rhat_4x1000);

static void ess_bulk_4x1000(benchmark::State& st) {
  const Eigen::MatrixXd x = chains();
  for (auto _ : st) benchmark::DoNotOptimize(ess_bulk(x));
}
BENCHMARK(ess_bulk_4x1000);

static void ess_tail_4x1000(benchmark::State& st) {
  const Eigen::MatrixXd x = chains();
  for (auto _ : st) benchmark::DoNotOptimize(ess_tail(x));
}
BENCHMARK(ess_tail_4x1000);

static void mmd2_1000x1000(benchmark::State& st) {
  const Eigen::MatrixXd x = chains();
  const Eigen::MatrixXd a = x.col(0), b = x.col(1);
  for (auto _ : st) benchmark::DoNotOptimize(mmd2(a, b));
}
BENCHMARK(mmd2_1000x1000);
