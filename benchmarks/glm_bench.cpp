// Benchmarks of the DP-GLM logistic model: log density plus gradient at d = 2, 6, 14 (exact link; Taylor at
// d = 6), and whole posteriors at d = 2, 6 and 14: 4 chains x (1000 warm-up + 1000 draws) of NUTS, chains in parallel
// threads (the d = 6 target: at most 1 second on a 2-core machine; counters: divergences, the smallest bulk ESS and the
// largest R-hat over the parameters, so that a faster run is not a worse one, and ESS per CPU second), noise-aware and
// naive, for the paper's model and the tools' intercept-and-mean model. Releases are simulated from the model at
// N = 5000 (2000 for the posterior at d = 2), epsilon = 1, delta = 1e-5, R = 1, tau-scale 0.5; the gradient also at d = 6 with an
// intercept and a covariate mean. The Poisson model's gradient (exact tilted moments) at d = 2 and 6 with an intercept and a
// covariate mean, R_y = 10, coefficient prior ||theta~||^2 < 4. A sweep of NUTS (Gaussian release) and of the collapsed Gibbs
// sampler (Laplace release) at d = 2 and 6.
#include <benchmark/benchmark.h>

#include <ctime>
#include <random>
#include <type_traits>

#include "privpost/core/random/normal.hpp"
#include "privpost/families/glm/glm_statistic.hpp"
#include "privpost/inference/infer.hpp"
#include "privpost/mechanisms/analytic_gaussian.hpp"
#include "privpost/mechanisms/laplace.hpp"
#include "privpost/samplers/glm/glm_collapsed_gibbs.hpp"
#include "privpost/samplers/glm/logistic_moment_model.hpp"
#include "privpost/samplers/glm/poisson_moment_model.hpp"
#include "privpost/samplers/nuts.hpp"

using namespace privpost;

namespace {
struct glm_case {
  Eigen::VectorXd z;
  double n = 5000.0;
  double sigma = 0.0;
  glm_prior prior{9.0, 0.5, 2.0, 0.5};
  glm_model_options options{};
};

template <class Model = logistic_moment_model<>>
glm_case make_case(int d, std::mt19937_64& g, const glm_model_options& options = {}, double n = 5000.0) {
  glm_case c;
  c.options = options;
  c.n = n;
  const bool poisson = std::is_same_v<Model, poisson_moment_model>;
  if (poisson) c.prior.s_max = 4.0;
  const auto statistic =
      poisson ? glm_statistic::poisson(d, 1.0, 10.0, options.intercept) : glm_statistic::logistic(d, 1.0, options.intercept);
  c.sigma = analytic_gaussian_sigma(1.0, 1e-5, statistic.l2_sensitivity());
  const Model sim(Eigen::VectorXd::Zero(statistic.size()), c.n, c.sigma, d, c.prior, options);
  c.z = simulate_glm_release(sim, draw_glm_prior(g, d, c.prior, options), g);
  return c;
}

template <class Link>
void glm_gradient(benchmark::State& st) {
  const int d = static_cast<int>(st.range(0));
  std::mt19937_64 g(1);
  // range(1) = 1: with an intercept column (c = 1) and a covariate mean (docs/design-glm.md Sec. 3.7).
  const glm_case c = make_case(d, g, st.range(1) == 1 ? glm_model_options{1.0, true} : glm_model_options{});
  // A typical point: where a short warm-up of NUTS ends.
  nuts_options opt;
  opt.warmup = 200;
  nuts_sampler<logistic_moment_model<Link>> s(logistic_moment_model<Link>(c.z, c.n, c.sigma, d, c.prior, c.options), opt, g);
  for (int i = 0; i < 200; ++i) s.step(g);
  logistic_moment_model<Link> m(c.z, c.n, c.sigma, d, c.prior, c.options);
  const Eigen::VectorXd u = s.position();
  Eigen::VectorXd grad(u.size());
  for (auto _ : st) benchmark::DoNotOptimize(m.log_density_gradient(u, grad));
}
BENCHMARK_TEMPLATE(glm_gradient, exact_logistic_link)->Args({2, 0})->Args({6, 0})->Args({14, 0})->Args({6, 1});
BENCHMARK_TEMPLATE(glm_gradient, taylor_logistic_link)->Args({6, 0});

void poisson_glm_gradient(benchmark::State& st) {
  const int d = static_cast<int>(st.range(0));
  std::mt19937_64 g(1);
  const glm_case c = make_case<poisson_moment_model>(d, g, glm_model_options{1.0, true});
  nuts_options opt;
  opt.warmup = 200;
  nuts_sampler<poisson_moment_model> s(poisson_moment_model(c.z, c.n, c.sigma, d, c.prior, c.options), opt, g);
  for (int i = 0; i < 200; ++i) s.step(g);
  poisson_moment_model m(c.z, c.n, c.sigma, d, c.prior, c.options);
  const Eigen::VectorXd u = s.position();
  Eigen::VectorXd grad(u.size());
  for (auto _ : st) benchmark::DoNotOptimize(m.log_density_gradient(u, grad));
}
BENCHMARK(poisson_glm_gradient)->Arg(2)->Arg(3)->Arg(6);

// One sweep after 300 warm-up transitions at N = 5000, epsilon = 1: range(1) = 0, a NUTS transition on the Gaussian
// release (sigma of the analytic mechanism); 1, a sweep of glm_collapsed_gibbs on a Laplace release at
// glm_statistic::l1_sensitivity (NUTS given w, then s by norm_product and w by the mechanism): the cost of item 4.
void glm_sweep(benchmark::State& st) {
  const int d = static_cast<int>(st.range(0));
  std::mt19937_64 g(5);
  const glm_case c = make_case(d, g);
  nuts_options opt;
  opt.warmup = 300;
  if (st.range(1) == 0) {
    nuts_sampler<logistic_moment_model<>> s(logistic_moment_model<>(c.z, c.n, c.sigma, d, c.prior), opt, g);
    for (int i = 0; i < opt.warmup; ++i) s.step(g);
    for (auto _ : st) s.step(g);
    return;
  }
  const laplace_mechanism lap(glm_statistic::logistic(d, 1.0).l1_sensitivity(), 1.0);
  const logistic_moment_model<> sim(Eigen::VectorXd::Zero(c.z.size()), c.n, 0.0, d, c.prior);
  const Eigen::VectorXd z = lap.release(simulate_glm_release(sim, draw_glm_prior(g, d, c.prior), g), g);
  glm_collapsed_gibbs<logistic_moment_map<exact_logistic_link>, laplace_mechanism> s(z, c.n, lap, d, c.prior, {}, opt, g);
  for (int i = 0; i < opt.warmup; ++i) s.step(g);
  for (auto _ : st) s.step(g);
}
BENCHMARK(glm_sweep)->Args({2, 0})->Args({2, 1})->Args({6, 0})->Args({6, 1})->Unit(benchmark::kMicrosecond);

// A whole posterior: 4 chains x (1000 warm-up + 1000 draws) of NUTS in 2 threads. Args: d; the model (0: the paper's,
// no intercept and zero-mean covariates; 1: an intercept and a covariate mean, the tools' model); the method (0:
// noise-aware, 1: naive, the release's noise ignored); NUTS's metric (0: diagonal, Stan's default; 1: dense, the tools'
// default). N = 5000 records, 2000 at d = 2 (the settings of the Stan comparison in docs/comparison.md). Counters:
// divergences, the smallest bulk ESS and the largest R-hat over the parameters (so that a faster run is not a worse
// one), and the smallest bulk ESS per second of CPU.
void glm_posterior(benchmark::State& st) {
  const int d = static_cast<int>(st.range(0));
  std::mt19937_64 g(2);
  const glm_case c =
      make_case(d, g, st.range(1) == 1 ? glm_model_options{1.0, true} : glm_model_options{}, d == 2 ? 2000.0 : 5000.0);
  const double model_sigma = st.range(2) == 1 ? 0.0 : c.sigma;
  nuts_options opt;  // Stan's defaults (1000 warm-up transitions) with the tools' curvature start
  opt.dense_metric = st.range(3) == 1;
  opt.curvature_start = true;
  inference_options io;
  io.chains = 4;
  io.burnin = opt.warmup;
  io.draws = 1000;
  io.parallel = true;
  io.seed = 3;
  for (auto _ : st) {
    const std::clock_t cpu = std::clock();
    auto r = infer(
        [&](std::mt19937_64& eng) {
          return nuts_sampler<logistic_moment_model<>>(logistic_moment_model<>(c.z, c.n, model_sigma, d, c.prior, c.options), opt,
                                                       eng);
        },
        io);
    const double cpu_seconds = static_cast<double>(std::clock() - cpu) / CLOCKS_PER_SEC;
    benchmark::DoNotOptimize(r.draws.mean(0));
    st.counters["divergences"] = static_cast<double>(r.events.divergences);
    const double ess = r.draws.min_ess_bulk();
    st.counters["min_ess_bulk"] = ess;
    st.counters["max_rhat"] = r.draws.max_rhat();
    st.counters["min_ess_per_cpu_s"] = ess / cpu_seconds;
  }
}
// The paper's d = 6 and 14 (its two trims) and d = 2, the tools' intercept-and-mean model at d = 6, and the naive
// posteriors, under either metric.
BENCHMARK(glm_posterior)
    ->ArgsProduct({{6}, {0, 1}, {0, 1}, {0, 1}})
    ->Args({2, 0, 0, 0})
    ->Args({2, 0, 0, 1})
    ->Args({14, 0, 0, 0})
    ->Args({14, 0, 0, 1})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1)
    ->UseRealTime();
}  // namespace
