// Benchmarks of a release of a 100-dimensional statistic by each mechanism, with a seeded engine and with the
// OS CSPRNG (the default), and of the analytic Gaussian calibration itself.
#include <benchmark/benchmark.h>

#include <random>

#include "privpost/mechanisms/analytic_gaussian.hpp"
#include "privpost/mechanisms/gaussian.hpp"
#include "privpost/mechanisms/laplace.hpp"

using namespace privpost;

static void laplace_release_100(benchmark::State& st) {
  const laplace_mechanism m(1.0, 0.5);
  const Eigen::VectorXd s = Eigen::VectorXd::LinSpaced(100, 0.0, 99.0);
  std::mt19937_64 g(1);
  for (auto _ : st) benchmark::DoNotOptimize(m.release(s, g));
}
BENCHMARK(laplace_release_100);

static void laplace_release_100_csprng(benchmark::State& st) {
  const laplace_mechanism m(1.0, 0.5);
  const Eigen::VectorXd s = Eigen::VectorXd::LinSpaced(100, 0.0, 99.0);
  for (auto _ : st) benchmark::DoNotOptimize(m.release(s));
}
BENCHMARK(laplace_release_100_csprng);

static void gaussian_release_100(benchmark::State& st) {
  const auto m = gaussian_mechanism::analytic(1.0, 0.5, 1e-6);
  const Eigen::VectorXd s = Eigen::VectorXd::LinSpaced(100, 0.0, 99.0);
  std::mt19937_64 g(1);
  for (auto _ : st) benchmark::DoNotOptimize(m.release(s, g));
}
BENCHMARK(gaussian_release_100);

static void gaussian_release_100_csprng(benchmark::State& st) {
  const auto m = gaussian_mechanism::analytic(1.0, 0.5, 1e-6);
  const Eigen::VectorXd s = Eigen::VectorXd::LinSpaced(100, 0.0, 99.0);
  for (auto _ : st) benchmark::DoNotOptimize(m.release(s));
}
BENCHMARK(gaussian_release_100_csprng);

static void analytic_calibration(benchmark::State& st) {
  for (auto _ : st) benchmark::DoNotOptimize(analytic_gaussian_sigma(1.0, 1e-5, 1.0));
}
BENCHMARK(analytic_calibration);
