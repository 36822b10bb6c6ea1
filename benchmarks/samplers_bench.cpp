// Benchmarks of one Gibbs-SS sweep (theta | s, s | theta w z, w | s z) per family, Laplace mechanism, n = 1000,
// epsilon = 0.1, std::mt19937_64. Issue #3 targets: binomial <= 0.5 us, multinomial K = 3 <= 1.5 us.
#include <benchmark/benchmark.h>

#include <random>

#include "privpost/families/binomial.hpp"
#include "privpost/families/multinomial.hpp"
#include "privpost/mechanisms/gaussian.hpp"
#include "privpost/mechanisms/laplace.hpp"
#include "privpost/samplers/gibbs_ss.hpp"

using namespace privpost;

static void gibbs_sweep_binomial(benchmark::State& st) {
  std::mt19937_64 g(1);
  Eigen::VectorXd z(1);
  z << 310.0;
  gibbs_ss sampler(beta_prior(1.0, 1.0), laplace_mechanism(1.0, 0.1), z, 1000.0, g);
  for (auto _ : st) {
    sampler.step(g);
    benchmark::DoNotOptimize(sampler.parameter());
  }
}
BENCHMARK(gibbs_sweep_binomial);

static void gibbs_sweep_binomial_gaussian(benchmark::State& st) {
  std::mt19937_64 g(1);
  Eigen::VectorXd z(1);
  z << 310.0;
  gibbs_ss sampler(beta_prior(1.0, 1.0), gaussian_mechanism::analytic(1.0, 0.1, 1e-5), z, 1000.0, g);
  for (auto _ : st) {
    sampler.step(g);
    benchmark::DoNotOptimize(sampler.parameter());
  }
}
BENCHMARK(gibbs_sweep_binomial_gaussian);

static void gibbs_sweep_multinomial_k3(benchmark::State& st) {
  std::mt19937_64 g(1);
  Eigen::VectorXd z(2);
  z << 310.0, 420.0;
  gibbs_ss sampler(dirichlet_prior<3>(Eigen::Vector3d::Ones()), laplace_mechanism(2.0, 0.1), z, 1000.0, g);
  for (auto _ : st) {
    sampler.step(g);
    benchmark::DoNotOptimize(sampler.parameter().data());
  }
}
BENCHMARK(gibbs_sweep_multinomial_k3);
