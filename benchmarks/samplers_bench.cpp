// Benchmarks of one Gibbs-SS sweep (theta | s, s | theta w z, w | s z) per family, Laplace mechanism, n = 1000,
// epsilon = 0.1, std::mt19937_64; and ESS per second with and without collapsed moves at epsilon = 0.01. Targets:
// binomial <= 0.5 us, multinomial K = 3 <= 1.5 us, truncated exponential <= 5 us.
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>

#include "privpost/diagnostics/convergence.hpp"
#include "privpost/families/binomial.hpp"
#include "privpost/families/exponential.hpp"
#include "privpost/families/multinomial.hpp"
#include "privpost/families/normal.hpp"
#include "privpost/families/poisson.hpp"
#include "privpost/families/regression/linear_regression_model.hpp"
#include "privpost/inference/infer.hpp"
#include "privpost/mechanisms/gaussian.hpp"
#include "privpost/mechanisms/laplace.hpp"
#include "privpost/mechanisms/mechanism_variant.hpp"
#include "privpost/samplers/gibbs_ss.hpp"
#include "privpost/samplers/gibbs_ss_corrected.hpp"
#include "privpost/samplers/gibbs_ss_exact.hpp"
#include "privpost/samplers/gibbs_ss_truncated.hpp"
#include "privpost/samplers/gibbs_ss_window.hpp"
#include "privpost/samplers/record_augmented.hpp"
#include "privpost/samplers/record_fem.hpp"
#include "privpost/samplers/record_frame.hpp"
#include "privpost/samplers/record_regression.hpp"
#include "privpost/samplers/record_releases.hpp"

#include "../examples/dapper_model.hpp"

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

// The driver's cost per sweep around the cheapest sampler: infer with 4 sequential chains of 10^4 kept draws (thin 1,
// no burn-in) over the binomial sweep above; the difference from gibbs_sweep_binomial is the driver's share
// (the stop flag's check and the per-draw diagnostics' hook, a no-op for samplers without them, run on every sweep).
static void infer_driver_binomial(benchmark::State& st) {
  Eigen::VectorXd z(1);
  z << 310.0;
  inference_options o;
  o.chains = 4;
  o.burnin = 0;
  o.draws = 10000;
  for (auto _ : st) {
    const auto r = infer([&](auto& g) { return gibbs_ss(beta_prior(1.0, 1.0), laplace_mechanism(1.0, 0.1), z, 1000.0, g); }, o);
    benchmark::DoNotOptimize(r.draws.chains().front().data());
  }
  st.SetItemsProcessed(st.iterations() * 40000);
}
BENCHMARK(infer_driver_binomial)->Unit(benchmark::kMillisecond);

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

// The same sweeps through mechanism_variant (the mechanism chosen at run time, as the command-line tools do): the cost
// of the dispatch per sweep against gibbs_sweep_binomial and gibbs_sweep_binomial_gaussian.
using laplace_or_gaussian = mechanism_variant<laplace_mechanism, gaussian_mechanism>;
static void gibbs_sweep_binomial_variant(benchmark::State& st) {
  std::mt19937_64 g(1);
  Eigen::VectorXd z(1);
  z << 310.0;
  const laplace_or_gaussian m = st.range(0) == 0 ? laplace_or_gaussian(laplace_mechanism(1.0, 0.1))
                                                 : laplace_or_gaussian(gaussian_mechanism::analytic(1.0, 0.1, 1e-5));
  gibbs_ss sampler(beta_prior(1.0, 1.0), m, z, 1000.0, g);
  for (auto _ : st) {
    sampler.step(g);
    benchmark::DoNotOptimize(sampler.parameter());
  }
}
BENCHMARK(gibbs_sweep_binomial_variant)->Arg(0)->Arg(1)->ArgName("gaussian");

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

// One sweep of the exact sampler (samplers/gibbs_ss_exact.hpp), binomial, Laplace epsilon 0.1: theta | s and the
// enumeration of s over {0..n} (n + 1 log-probabilities and exponentials). Spec estimate: 0.3 us at n = 10, 20 us at 1000.
static void gibbs_exact_sweep_binomial(benchmark::State& st) {
  std::mt19937_64 g(1);
  const double n = static_cast<double>(st.range(0));
  gibbs_ss_exact sampler(beta_prior(1.0, 1.0), laplace_mechanism(1.0, 0.1), Eigen::VectorXd::Constant(1, 0.31 * n), n, g);
  for (auto _ : st) {
    sampler.step(g);
    benchmark::DoNotOptimize(sampler.parameter());
  }
}
BENCHMARK(gibbs_exact_sweep_binomial)->Arg(10)->Arg(1000)->ArgName("n");

// One sweep of the windowed exact sampler (samplers/gibbs_ss_window.hpp), Poisson sums of n records, lambda ~
// Gamma(2, 0.4), Laplace of scale 1 / epsilon, z at the prior mean sum 5 n: theta | s, the mode by bisection and the
// window of sums within e^-50 of it (its width is the second argument's counter). Compare gibbs_exact_sweep_binomial.
static void gibbs_window_sweep_poisson(benchmark::State& st) {
  std::mt19937_64 g(1);
  const double n = static_cast<double>(st.range(0)), epsilon = st.range(1) == 0 ? 0.1 : 1.0;
  gibbs_ss_window sampler(poisson_gamma_prior(2.0, 0.4), laplace_mechanism(1.0, epsilon), Eigen::VectorXd::Constant(1, 5.0 * n),
                          n, g);
  for (int i = 0; i < 100; ++i) sampler.step(g);
  double width = 0.0;
  for (auto _ : st) {
    sampler.step(g);
    width += static_cast<double>(sampler.window_size());
    benchmark::DoNotOptimize(sampler.parameter());
  }
  st.counters["window"] = benchmark::Counter(width, benchmark::Counter::kAvgIterations);
}
BENCHMARK(gibbs_window_sweep_poisson)->Args({10, 0})->Args({10, 1})->Args({1000, 0})->Args({1000, 1})->ArgNames({"n", "eps1"});

// One sweep of Gibbs-SS with the MH-corrected sum draw (samplers/gibbs_ss_corrected.hpp), binomial, Laplace epsilon 0.1,
// against gibbs_sweep_binomial (the correction may cost at most 2x today's sweep). O(1) in n.
static void gibbs_corrected_sweep_binomial(benchmark::State& st) {
  std::mt19937_64 g(1);
  const double n = static_cast<double>(st.range(0));
  gibbs_ss_corrected sampler(beta_prior(1.0, 1.0), laplace_mechanism(1.0, 0.1), Eigen::VectorXd::Constant(1, 0.31 * n), n, g);
  for (auto _ : st) {
    sampler.step(g);
    benchmark::DoNotOptimize(sampler.parameter());
  }
}
BENCHMARK(gibbs_corrected_sweep_binomial)->Arg(10)->Arg(1000)->Arg(1000000)->ArgName("n");

// The same for Poisson sums (an unbounded support: the defensive proposal is N(m, 9 v)), lambda ~ Gamma(2, 0.4),
// Laplace epsilon 0.1, z at the prior mean sum 5 n, against plain Gibbs-SS on the same release
// (gibbs_plain_sweep_poisson) and the window sampler (gibbs_window_sweep_poisson). O(1) in n.
static void gibbs_corrected_sweep_poisson(benchmark::State& st) {
  std::mt19937_64 g(1);
  const double n = static_cast<double>(st.range(0));
  gibbs_ss_corrected sampler(poisson_gamma_prior(2.0, 0.4), laplace_mechanism(1.0, 0.1), Eigen::VectorXd::Constant(1, 5.0 * n), n,
                             g);
  for (auto _ : st) {
    sampler.step(g);
    benchmark::DoNotOptimize(sampler.parameter());
  }
  st.counters["acceptance"] = sampler.sum_acceptance();
}
BENCHMARK(gibbs_corrected_sweep_poisson)->Arg(10)->Arg(1000)->Arg(1000000)->ArgName("n");
static void gibbs_plain_sweep_poisson(benchmark::State& st) {
  std::mt19937_64 g(1);
  const double n = static_cast<double>(st.range(0));
  gibbs_ss sampler(poisson_gamma_prior(2.0, 0.4), laplace_mechanism(1.0, 0.1), Eigen::VectorXd::Constant(1, 5.0 * n), n, g);
  for (auto _ : st) {
    sampler.step(g);
    benchmark::DoNotOptimize(sampler.parameter());
  }
}
BENCHMARK(gibbs_plain_sweep_poisson)->Arg(10)->Arg(1000)->Arg(1000000)->ArgName("n");

// One sweep of the record-level sampler (samplers/record_augmented.hpp), Laplace epsilon 0.1: theta | records and n
// record updates (a Bernoulli draw, and for a changed record one Laplace log-density and perhaps a uniform).
static void record_sweep_binomial(benchmark::State& st) {
  std::mt19937_64 g(1);
  const double n = static_cast<double>(st.range(0));
  record_gibbs sampler(beta_prior(1.0, 1.0), laplace_mechanism(1.0, 0.1), Eigen::VectorXd::Constant(1, 0.31 * n), n, g);
  for (auto _ : st) {
    sampler.step(g);
    benchmark::DoNotOptimize(sampler.parameter());
  }
}
BENCHMARK(record_sweep_binomial)->Arg(10)->Arg(1000)->Arg(100000)->ArgName("n");

// The same records under two Laplace releases (samplers/record_releases.hpp), epsilon 0.05 each: a record update
// evaluates up to two log-densities.
static void record_sweep_binomial_two_releases(benchmark::State& st) {
  std::mt19937_64 g(1);
  const double n = static_cast<double>(st.range(0));
  const laplace_mechanism half(1.0, 0.05);
  record_gibbs_releases sampler(beta_prior(1.0, 1.0), n, g, record_release(half, Eigen::VectorXd::Constant(1, 0.31 * n)),
                                record_release(half, Eigen::VectorXd::Constant(1, 0.29 * n)));
  for (auto _ : st) {
    sampler.step(g);
    benchmark::DoNotOptimize(sampler.parameter());
  }
}
BENCHMARK(record_sweep_binomial_two_releases)->Arg(10)->Arg(1000)->ArgName("n");

// The same for Poisson records under a truncated release (drop outside [0, 20]), n = 1000, lambda ~ Gamma(10, 1).
static void record_sweep_truncated_poisson(benchmark::State& st) {
  std::mt19937_64 g(1);
  record_gibbs sampler(poisson_gamma_prior(10.0, 1.0), laplace_mechanism(20.0, 0.1), Eigen::VectorXd::Constant(1, 10000.0),
                       1000.0, g, dropped_contribution<poisson_family>(0.0, 20.0));
  for (auto _ : st) {
    sampler.step(g);
    benchmark::DoNotOptimize(sampler.parameter());
  }
}
BENCHMARK(record_sweep_truncated_poisson);

// The record-level frame under the factored exponential mechanism (samplers/record_fem.hpp): n = 1000 binomial records,
// 9 candidates scored by the log-likelihood of a coin with success probability (j + 1) / 10 (clamped to [-3, 0]),
// epsilon 1. A record update computes its 9 scores in place and one log-sum-exp.
namespace {
struct coin_log_likelihood {
  double operator()(std::size_t j, const double& x) const {
    const double p = (static_cast<double>(j) + 1.0) / 10.0;
    return std::log(x > 0.5 ? p : 1.0 - p);
  }
};
}  // namespace
static void record_sweep_fem(benchmark::State& st) {
  std::mt19937_64 g(1);
  const factored_exponential_mechanism<double, coin_log_likelihood> m(9, coin_log_likelihood{}, interval(-3.0, 0.0), 1.0);
  fem_record_gibbs sampler(beta_prior(1.0, 1.0), m, 6, 1000.0, g);
  for (auto _ : st) {
    sampler.step(g);
    benchmark::DoNotOptimize(sampler.parameter());
  }
}
BENCHMARK(record_sweep_fem);

// dapper's example on the record-level frame (examples/dapper_model.hpp): n = 10^4 records y ~ N(theta, 1), the mean
// released with noise sd 1/3. One sweep: theta | records, the transport move (a slice-sampling update, each density
// evaluation one pass over the shifted records) and 10^4 record updates.
static void record_sweep_dapper(benchmark::State& st) {
  std::mt19937_64 g(1);
  const double n = static_cast<double>(st.range(0));
  record_frame sampler(my::normal_mean_model{n}, n, g,
                       record_release(my::mean_noise{1.0 / 3.0}, Eigen::VectorXd::Constant(1, -2.0)));
  for (auto _ : st) {
    sampler.step(g);
    benchmark::DoNotOptimize(sampler.parameter());
  }
}
BENCHMARK(record_sweep_dapper)->Arg(100)->Arg(10000)->ArgName("n");

// Mixing where the noise dominates: n = 1000, epsilon = 0.01, 4 chains x 5000 sweeps after 500
// burn-in per iteration, without (moves 0) and with (moves 1) one collapsed move per sweep. Counter ess_per_s: bulk ESS
// of theta_0 over the 4 chains per second of CPU time (Google Benchmark's rate counter), the figure that matters.
template <class Prior>
void ess_per_second(benchmark::State& st, const Prior& prior, double sensitivity, const Eigen::VectorXd& z) {
  const int moves = static_cast<int>(st.range(0));
  std::uint64_t seed = 1;
  double ess = 0.0;
  for (auto _ : st) {
    Eigen::MatrixXd x(5000, 4);
    for (int c = 0; c < 4; ++c) {
      std::mt19937_64 g(seed++);
      gibbs_ss sampler(prior, laplace_mechanism(sensitivity, 0.01), z, 1000.0, g);
      sampler.set_collapsed_moves(moves);
      for (int i = 0; i < 500; ++i) sampler.step(g);
      for (int i = 0; i < 5000; ++i) {
        sampler.step(g);
        x(i, c) = sampler.parameter_vector()(0);
      }
    }
    ess += ess_bulk(x);
  }
  st.counters["ess_per_s"] = benchmark::Counter(ess, benchmark::Counter::kIsRate);
}
static void ess_per_second_binomial(benchmark::State& st) {
  ess_per_second(st, beta_prior(1.0, 1.0), 1.0, Eigen::VectorXd::Constant(1, 357.0));
}
BENCHMARK(ess_per_second_binomial)->Arg(0)->Arg(1)->ArgName("moves")->Unit(benchmark::kMillisecond);
static void ess_per_second_multinomial_k3(benchmark::State& st) {
  ess_per_second(st, dirichlet_prior<3>(Eigen::Vector3d::Ones()), 2.0, Eigen::Vector2d(520.0, 180.0));
}
BENCHMARK(ess_per_second_multinomial_k3)->Arg(0)->Arg(1)->ArgName("moves")->Unit(benchmark::kMillisecond);

// Truncated releases (Sec. 4.3): the joint (s, s_c) update with Lemma 1 moments by autodiff. Target: exponential <= 5 us.
static void gibbs_sweep_truncated_exponential(benchmark::State& st) {
  std::mt19937_64 g(1);
  Eigen::VectorXd z(1);
  z << 900.0;
  gibbs_ss_truncated sampler(exponential_gamma_prior(20.0, 20.0), laplace_mechanism(4.0, 0.1), z, 1000.0, 0.0, 4.0, g);
  for (auto _ : st) {
    sampler.step(g);
    benchmark::DoNotOptimize(sampler.parameter());
  }
}
BENCHMARK(gibbs_sweep_truncated_exponential);

static void gibbs_sweep_truncated_poisson(benchmark::State& st) {
  std::mt19937_64 g(1);
  Eigen::VectorXd z(1);
  z << 4800.0;
  gibbs_ss_truncated sampler(poisson_gamma_prior(10.0, 2.0), laplace_mechanism(11.0, 0.1), z, 1000.0, 1.0, 11.0, g);
  for (auto _ : st) {
    sampler.step(g);
    benchmark::DoNotOptimize(sampler.parameter());
  }
}
BENCHMARK(gibbs_sweep_truncated_poisson);

static void gibbs_sweep_truncated_normal(benchmark::State& st) {
  std::mt19937_64 g(1);
  Eigen::VectorXd z(2);
  z << 20.0, 950.0;
  gibbs_ss_truncated sampler(normal_inverse_gamma_prior(0.0, 1.0, 10.0, 10.0), laplace_mechanism(12.0, 0.1), z, 1000.0, -3.0, 3.0,
                             g);
  for (auto _ : st) {
    sampler.step(g);
    benchmark::DoNotOptimize(sampler.parameter().mean);
  }
}
BENCHMARK(gibbs_sweep_truncated_normal);

// Linear regression: one Gibbs-SS-Update sweep with D design columns (D - 1 covariates plus an intercept), at
// n = 1e3 and 1e6 (the sweep cost does not depend on n). Targets: D = 2 <= 10 us, D = 4 <= 30 us, D = 10 <= 500 us.
static void gibbs_sweep_regression_update(benchmark::State& st) {
  const int columns = static_cast<int>(st.range(0));
  const double n = static_cast<double>(st.range(1));
  const regression_layout layout(columns - 1, true);
  const int d = columns - 1;
  std::mt19937_64 g(1);
  const nig_regression_prior prior(Eigen::VectorXd::Zero(columns), Eigen::MatrixXd::Identity(columns, columns) * 38.0, 20.0, 0.5);
  const niw_hyperprior h{Eigen::VectorXd::Zero(d), 1.0, Eigen::MatrixXd::Identity(d, d), 50.0};
  // A plausible release: the statistic of n records with x ~ N(0, I/49), y ~ N(0, 0.026), plus Laplace noise.
  Eigen::VectorXd z = Eigen::VectorXd::Zero(layout.size());
  const Eigen::MatrixXd b = n * Eigen::MatrixXd::Identity(columns + 1, columns + 1) * 0.02;
  Eigen::MatrixXd bb = b;
  bb(0, 0) = n;
  z = layout.statistic_of(bb);
  const laplace_mechanism mech(
      layout.sensitivity(std::vector<interval>(static_cast<std::size_t>(d), interval(-1, 1)), interval(-1, 1)).first, 0.1);
  z = mech.release(z, g);
  gibbs_ss sampler(linear_regression_model(layout, hierarchical_normal_covariates(layout, h, g)), prior, mech, z, n, g);
  for (auto _ : st) {
    sampler.step(g);
    benchmark::DoNotOptimize(sampler.parameter().variance);
  }
}
BENCHMARK(gibbs_sweep_regression_update)
    ->Args({2, 1000})
    ->Args({2, 1000000})
    ->Args({4, 1000})
    ->Args({4, 1000000})
    ->Args({10, 1000})
    ->Args({10, 1000000});

// The record-level regression sampler (samplers/record_regression.hpp): one sweep with D design
// columns (D - 1 covariates plus an intercept), NIW covariates, records clamped into [-1, 1], Laplace epsilon 1, at
// n = 20 (the calibration test's size) and n = 1000. O(n D^2) a sweep.
static void record_sweep_regression(benchmark::State& st) {
  const int columns = static_cast<int>(st.range(0));
  const double n = static_cast<double>(st.range(1));
  const int d = columns - 1;
  const regression_layout layout(d, true);
  std::mt19937_64 g(1);
  const nig_regression_prior prior(Eigen::VectorXd::Zero(columns), Eigen::MatrixXd::Identity(columns, columns) * 38.0, 20.0, 0.5);
  const niw_hyperprior h{Eigen::VectorXd::Zero(d), 1.0, Eigen::MatrixXd::Identity(d, d), 50.0};
  Eigen::MatrixXd bb = n * Eigen::MatrixXd::Identity(columns + 1, columns + 1) * 0.02;
  bb(0, 0) = n;
  const std::vector<interval> box(static_cast<std::size_t>(d), interval(-1, 1));
  const laplace_mechanism mech(layout.sensitivity(box, interval(-1, 1)).first, 1.0);
  const Eigen::VectorXd z = mech.release(layout.statistic_of(bb), g);
  record_regression sampler(layout, prior, h, box, interval(-1, 1), mech, z, n, g);
  for (auto _ : st) {
    sampler.step(g);
    benchmark::DoNotOptimize(sampler.parameter().variance);
  }
}
BENCHMARK(record_sweep_regression)->Args({2, 20})->Args({2, 1000})->Args({4, 20})->Args({4, 1000});
