// Benchmarks of the DP-GLM logistic model (issue #10): log density plus gradient at d = 2, 6, 14 (exact link; Taylor at
// d = 6), and one full posterior at d = 6: 4 chains x (1000 warm-up + 1000 draws) of NUTS, chains in parallel threads
// (the target: at most 1 second on a 2-core machine). Releases are simulated from the model at N = 5000,
// epsilon = 1, delta = 1e-5, R = 1, tau-scale 0.5.
#include <benchmark/benchmark.h>

#include <random>

#include "privpost/core/random/normal.hpp"
#include "privpost/inference/infer.hpp"
#include "privpost/mechanisms/analytic_gaussian.hpp"
#include "privpost/samplers/glm/logistic_moment_model.hpp"
#include "privpost/samplers/nuts.hpp"

using namespace privpost;

namespace {
struct glm_case {
  Eigen::VectorXd z;
  double n = 5000.0;
  double sigma = 0.0;
  glm_prior prior{9.0, 0.5, 2.0};
};

glm_case make_case(int d, std::mt19937_64& g) {
  glm_case c;
  c.sigma = analytic_gaussian_sigma(1.0, 1e-5, std::sqrt(4.5));
  const Eigen::Index dd = d + d * (d + 1) / 2;
  const logistic_moment_model<> sim(Eigen::VectorXd::Zero(dd), c.n, c.sigma, d, c.prior);
  c.z = simulate_glm_release(sim, draw_glm_prior(g, d, c.prior), g);
  return c;
}

template <class Link>
void glm_gradient(benchmark::State& st) {
  const int d = static_cast<int>(st.range(0));
  std::mt19937_64 g(1);
  const glm_case c = make_case(d, g);
  // A typical point: where a short warm-up of NUTS ends.
  nuts_options opt;
  opt.warmup = 200;
  nuts_sampler<logistic_moment_model<Link>> s(logistic_moment_model<Link>(c.z, c.n, c.sigma, d, c.prior), opt, g);
  for (int i = 0; i < 200; ++i) s.step(g);
  logistic_moment_model<Link> m(c.z, c.n, c.sigma, d, c.prior);
  const Eigen::VectorXd u = s.position();
  Eigen::VectorXd grad(u.size());
  for (auto _ : st) benchmark::DoNotOptimize(m.log_density_gradient(u, grad));
}
BENCHMARK_TEMPLATE(glm_gradient, exact_logistic_link)->Arg(2)->Arg(6)->Arg(14);
BENCHMARK_TEMPLATE(glm_gradient, taylor_logistic_link)->Arg(6);

void glm_posterior_d6(benchmark::State& st) {
  std::mt19937_64 g(2);
  const glm_case c = make_case(6, g);
  nuts_options opt;  // Stan's defaults: 1000 warm-up transitions
  inference_options io;
  io.chains = 4;
  io.burnin = opt.warmup;
  io.draws = 1000;
  io.parallel = true;
  io.seed = 3;
  for (auto _ : st) {
    auto r = infer(
        [&](std::mt19937_64& eng) {
          return nuts_sampler<logistic_moment_model<>>(logistic_moment_model<>(c.z, c.n, c.sigma, 6, c.prior), opt, eng);
        },
        io);
    benchmark::DoNotOptimize(r.draws.mean(0));
    st.counters["divergences"] = static_cast<double>(r.events.divergences);
  }
}
BENCHMARK(glm_posterior_d6)->Unit(benchmark::kMillisecond)->Iterations(1)->UseRealTime();
}  // namespace
