// Benchmarks of every random draw in privpost/core/random (one draw per iteration, std::mt19937_64), the xoshiro256
// engine beside std::mt19937_64, log_gamma on both of its branches (the exact and CGM samplers' log factorials), and synthetic
// records from posterior draws (inference/synthetic.hpp, synthetic_glm.hpp, synthetic_regression.hpp).
#include <benchmark/benchmark.h>

#include <cmath>
#include <random>

#include "privpost/core/math/log_gamma.hpp"
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
#include "privpost/core/random/xoshiro.hpp"
#include "privpost/families/binomial.hpp"
#include "privpost/families/normal.hpp"
#include "privpost/inference/synthetic.hpp"
#include "privpost/inference/synthetic_glm.hpp"
#include "privpost/inference/synthetic_regression.hpp"

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

static void engine_mt19937_64(benchmark::State& st) {
  std::mt19937_64 g(1);
  for (auto _ : st) benchmark::DoNotOptimize(g());
}
BENCHMARK(engine_mt19937_64);

static void engine_xoshiro256(benchmark::State& st) {
  xoshiro256 g(1);
  for (auto _ : st) benchmark::DoNotOptimize(g());
}
BENCHMARK(engine_xoshiro256);

// log_gamma at an argument drawn uniformly on [lo, lo + width) (the draw's own time included: compare with `uniform`):
// Boost's Lanczos branch below 10, Stirling's series from 10.
static void log_gamma_at(benchmark::State& st, double lo, double width) {
  std::mt19937_64 g(1);
  for (auto _ : st) benchmark::DoNotOptimize(log_gamma(lo + width * draw_uniform(g)));
}
BENCHMARK_CAPTURE(log_gamma_at, lanczos_0_5_to_10, 0.5, 9.5);
BENCHMARK_CAPTURE(log_gamma_at, stirling_10_to_1e4, 10.0, 1e4);

// m = 20 synthetic sets of 10^5 records each from 20 parameter draws: binomial (Bernoulli records) and normal.
static void synthetic_binomial_20x1e5(benchmark::State& st) {
  std::mt19937_64 g(1);
  for (auto _ : st)
    for (int l = 0; l < 20; ++l)
      benchmark::DoNotOptimize(
          synthetic_family_records<binomial_family>(Eigen::VectorXd::Constant(1, 0.3 + 0.01 * l), 100000, g).data());
}
BENCHMARK(synthetic_binomial_20x1e5)->Unit(benchmark::kMillisecond);

static void synthetic_normal_20x1e5(benchmark::State& st) {
  std::mt19937_64 g(1);
  for (auto _ : st)
    for (int l = 0; l < 20; ++l)
      benchmark::DoNotOptimize(
          synthetic_family_records<normal_family>(Eigen::Vector2d(0.1 * l, 1.0 + 0.1 * l), 100000, g).data());
}
BENCHMARK(synthetic_normal_20x1e5)->Unit(benchmark::kMillisecond);

// m = 20 synthetic sets of 10^5 records of the DP-GLMs at d = 6 (an intercept and a covariate mean, the unit-ball box
// of a release with declared ranges; inference/synthetic_glm.hpp) and of linear regression at d = 6
// (inference/synthetic_regression.hpp), each set at its own parameter draw.
template <glm_kind Kind>
static void synthetic_glm_d6_20x1e5(benchmark::State& st) {
  constexpr int d = 6;
  std::mt19937_64 g(1);
  Eigen::VectorXd v = Eigen::VectorXd::Zero(glm_synthetic_parameter::vector_size(d, true, true));
  v.head(d + 1).setConstant(0.3);                          // theta~
  v.segment(d + 1, d).setConstant(0.2);                    // tau
  v.segment(2 * d + 1, d * (d - 1) / 2).setConstant(0.2);  // Omega's lower triangle
  glm_record_limits limits;
  limits.coordinate = 1.0 / std::sqrt(double(d));
  limits.count = 50.0;
  for (auto _ : st)
    for (int l = 0; l < 20; ++l) {
      v(0) = 0.01 * l;
      const auto p = glm_synthetic_parameter::from_vector(d, 1.0, true, v);
      benchmark::DoNotOptimize(synthetic_glm_records(Kind, p, limits, 100000, g).data());
    }
}
BENCHMARK(synthetic_glm_d6_20x1e5<glm_kind::logistic>)->Unit(benchmark::kMillisecond);
BENCHMARK(synthetic_glm_d6_20x1e5<glm_kind::poisson>)->Unit(benchmark::kMillisecond);

static void synthetic_regression_d6_20x1e5(benchmark::State& st) {
  const regression_layout layout(6, true);
  std::mt19937_64 g(1);
  regression_synthetic_parameter p;
  p.theta = Eigen::VectorXd::Constant(7, 0.3);
  p.variance = 0.5;
  p.mean = Eigen::VectorXd::Zero(6);
  p.covariance = Eigen::MatrixXd::Identity(6, 6) + Eigen::MatrixXd::Constant(6, 6, 0.2);
  for (auto _ : st)
    for (int l = 0; l < 20; ++l) {
      p.theta(0) = 0.01 * l;
      benchmark::DoNotOptimize(synthetic_regression_records(layout, p, 100000, g).data());
    }
}
BENCHMARK(synthetic_regression_d6_20x1e5)->Unit(benchmark::kMillisecond);
