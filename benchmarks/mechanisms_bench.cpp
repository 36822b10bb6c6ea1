// Benchmarks of a release of a 100-dimensional statistic by each mechanism, with a seeded engine and with the
// OS CSPRNG (the default), and of the analytic Gaussian calibration itself. The lattice mechanisms (exact integer
// sampling) at a small and a large scale: their cost grows with neither. The statistic's side: the exact sum that makes
// a statistic independent of the records' order and sharding, against plain summation, and a normal model's bounded
// statistic over 10^5 records.
#include <benchmark/benchmark.h>

#include <array>
#include <random>
#include <vector>

#include "privpost/core/math/exact_sum.hpp"
#include "privpost/mechanisms/ssp.hpp"

#include "privpost/mechanisms/analytic_gaussian.hpp"
#include "privpost/mechanisms/discrete_gaussian.hpp"
#include "privpost/mechanisms/discrete_laplace.hpp"
#include "privpost/mechanisms/gaussian.hpp"
#include "privpost/mechanisms/laplace.hpp"

using namespace privpost;

namespace {
std::vector<double> bench_values(std::size_t n) {
  std::mt19937_64 g(5);
  std::uniform_real_distribution<double> u(-3.0, 5.0);
  std::vector<double> xs(n);
  for (auto& x : xs) x = u(g);
  return xs;
}
}  // namespace

static void exact_sum_add_1000(benchmark::State& st) {
  const auto xs = bench_values(1000);
  for (auto _ : st) {
    exact_sum s;
    for (double x : xs) s.add(x);
    benchmark::DoNotOptimize(s.value());
  }
  st.counters["ns_per_add"] = benchmark::Counter(1000.0 * static_cast<double>(st.iterations()),
                                                 benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(exact_sum_add_1000);

static void plain_sum_1000(benchmark::State& st) {
  const auto xs = bench_values(1000);
  for (auto _ : st) {
    double s = 0.0;
    for (double x : xs) s += x;
    benchmark::DoNotOptimize(s);
  }
}
BENCHMARK(plain_sum_1000);

static void bounded_statistic_normal_1e5(benchmark::State& st) {
  const auto xs = bench_values(100000);
  std::vector<std::array<double, 1>> records(xs.size());
  for (std::size_t i = 0; i < xs.size(); ++i) records[i][0] = xs[i];
  const auto t = [](const auto& x) { return std::array{x[0], x[0] * x[0]}; };
  const bounded_statistic<1, decltype(t)> stat(t, {interval(-2.0, 4.0)}, out_of_bounds::clamp);
  for (auto _ : st) benchmark::DoNotOptimize(stat.compute(records).statistic(0));
}
BENCHMARK(bounded_statistic_normal_1e5)->Unit(benchmark::kMillisecond);

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

// Arg: 1 / epsilon, so the noise scale in lattice units (counts, gamma = 1).
static void discrete_laplace_release_100(benchmark::State& st) {
  const discrete_laplace_mechanism m(1.0, 1.0 / static_cast<double>(st.range(0)));
  const Eigen::VectorXd s = Eigen::VectorXd::LinSpaced(100, 0.0, 99.0);
  std::mt19937_64 g(1);
  for (auto _ : st) benchmark::DoNotOptimize(m.release(s, g));
}
BENCHMARK(discrete_laplace_release_100)->Arg(2)->Arg(1000)->ArgName("scale");

static void discrete_laplace_release_100_csprng(benchmark::State& st) {
  const discrete_laplace_mechanism m(1.0, 0.5);
  const Eigen::VectorXd s = Eigen::VectorXd::LinSpaced(100, 0.0, 99.0);
  for (auto _ : st) benchmark::DoNotOptimize(m.release(s));
}
BENCHMARK(discrete_laplace_release_100_csprng);

// Arg: 1 / epsilon at delta 1e-6 (sigma about 5.4 and 4700 lattice units).
static void discrete_gaussian_release_100(benchmark::State& st) {
  const discrete_gaussian_mechanism m(1.0, 1.0 / static_cast<double>(st.range(0)), 1e-6);
  const Eigen::VectorXd s = Eigen::VectorXd::LinSpaced(100, 0.0, 99.0);
  std::mt19937_64 g(1);
  for (auto _ : st) benchmark::DoNotOptimize(m.release(s, g));
}
BENCHMARK(discrete_gaussian_release_100)->Arg(1)->Arg(1000)->ArgName("inv_epsilon");

static void discrete_gaussian_release_100_csprng(benchmark::State& st) {
  const discrete_gaussian_mechanism m(1.0, 0.5, 1e-6);
  const Eigen::VectorXd s = Eigen::VectorXd::LinSpaced(100, 0.0, 99.0);
  for (auto _ : st) benchmark::DoNotOptimize(m.release(s));
}
BENCHMARK(discrete_gaussian_release_100_csprng);
