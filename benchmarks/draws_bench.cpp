// Benchmarks of every random draw in privpost/core/random (one draw per iteration, std::mt19937_64).
#include <benchmark/benchmark.h>

#include <random>

#include "privpost/core/random/beta.hpp"
#include "privpost/core/random/binomial.hpp"
#include "privpost/core/random/dirichlet.hpp"
#include "privpost/core/random/exponential.hpp"
#include "privpost/core/random/gamma.hpp"
#include "privpost/core/random/inverse_gaussian.hpp"
#include "privpost/core/random/multivariate_normal.hpp"
#include "privpost/core/random/normal.hpp"
#include "privpost/core/random/os_random_engine.hpp"
#include "privpost/core/random/truncated_normal.hpp"
#include "privpost/core/random/uniform.hpp"
#include "privpost/core/random/wishart.hpp"

using namespace privpost;

#define PRIVPOST_DRAW_BENCH(name, expr)               \
  static void name(benchmark::State& st) {            \
    std::mt19937_64 g(1);                             \
    for (auto _ : st) benchmark::DoNotOptimize(expr); \
  }                                                   \
  BENCHMARK(name)

PRIVPOST_DRAW_BENCH(uniform, draw_uniform(g));
PRIVPOST_DRAW_BENCH(normal, draw_normal(g));
PRIVPOST_DRAW_BENCH(exponential, draw_exponential(g));
PRIVPOST_DRAW_BENCH(laplace, draw_laplace(g, 0.0, 1.0));
PRIVPOST_DRAW_BENCH(truncated_normal_centre, draw_truncated_normal(g, 0.0, 1.0, -1.0, 2.0));
PRIVPOST_DRAW_BENCH(truncated_normal_unit_interval, draw_truncated_normal(g, 30.0, 20.0, 0.0, 100.0));
PRIVPOST_DRAW_BENCH(truncated_normal_tail_30sd, draw_truncated_normal(g, 0.0, 1.0, 30.0, 1e300));
PRIVPOST_DRAW_BENCH(gamma_shape_0_5, draw_gamma(g, 0.5, 1.0));
PRIVPOST_DRAW_BENCH(gamma_shape_5, draw_gamma(g, 5.0, 1.0));
PRIVPOST_DRAW_BENCH(inverse_gamma, draw_inverse_gamma(g, 3.0, 1.0));
PRIVPOST_DRAW_BENCH(beta, draw_beta(g, 2.0, 5.0));
PRIVPOST_DRAW_BENCH(inverse_gaussian, draw_inverse_gaussian(g, 2.0, 1.0));
PRIVPOST_DRAW_BENCH(binomial_inversion_n30, draw_binomial(g, 30, 0.2));
PRIVPOST_DRAW_BENCH(binomial_btrd_n100, draw_binomial(g, 100, 0.3));
PRIVPOST_DRAW_BENCH(binomial_btrd_n1e7, draw_binomial(g, 10'000'000, 0.3));

static void dirichlet_k3(benchmark::State& st) {
  std::mt19937_64 g(1);
  const Eigen::Vector3d alpha(1.0, 2.0, 3.0);
  Eigen::Vector3d out;
  for (auto _ : st) {
    draw_dirichlet(g, alpha, out);
    benchmark::DoNotOptimize(out.data());
  }
}
BENCHMARK(dirichlet_k3);

static void multivariate_normal_d4(benchmark::State& st) {
  std::mt19937_64 g(1);
  const Eigen::Vector4d mean = Eigen::Vector4d::Zero();
  const Eigen::Matrix4d l = Eigen::Matrix4d::Identity();
  Eigen::Vector4d out;
  for (auto _ : st) {
    draw_multivariate_normal(g, mean, l, out);
    benchmark::DoNotOptimize(out.data());
  }
}
BENCHMARK(multivariate_normal_d4);

static void wishart_d3(benchmark::State& st) {
  std::mt19937_64 g(1);
  const Eigen::Matrix3d s = Eigen::Matrix3d::Identity();
  for (auto _ : st) benchmark::DoNotOptimize(draw_wishart(g, 5.0, s));
}
BENCHMARK(wishart_d3);

static void inverse_wishart_d3(benchmark::State& st) {
  std::mt19937_64 g(1);
  const Eigen::Matrix3d s = Eigen::Matrix3d::Identity();
  for (auto _ : st) benchmark::DoNotOptimize(draw_inverse_wishart(g, 5.0, s));
}
BENCHMARK(inverse_wishart_d3);

static void os_engine_uniform(benchmark::State& st) {
  os_random_engine g;
  for (auto _ : st) benchmark::DoNotOptimize(draw_uniform(g));
}
BENCHMARK(os_engine_uniform);
