// Benchmarks of CGM-EM (docs/design-cgm.md Sec. 5.8) on the study's chain T = 10, K = 3 (Dirichlet(1) edge
// potentials, N = 10^4 records, Laplace noise at the dissertation's scale b = |E| / epsilon): one box-dual E-step from
// a cold start (g = 0) and warm (from the previous solution at a nearby theta), and a whole MAP-EM fit (alpha_0 = 10,
// at most 2000 iterations) for epsilon = 1, 0.1 and 0.01 with either evidence term and with or without SQUAREM, and the
// naive MLE at three lambdas. Targets of the spec:
// E-step warm <= 1 ms, MAP-EM <= 1 s, naive MLE <= 25 ms, MAP-EM <= 20 x naive (AT-8). Also the exact count tables of
// the study's data generation (Sec. 5.6) at N = 10^4 and 10^7, which should cost the same; and the Bayesian CGM
// (Sec. 6): one Gibbs-SS sweep over tree_cgm_model (d = 81 released cells) with its collapsed or shift moves, its CLT
// moments alone, and whole posteriors at privpost-infer's defaults with and without the shift moves (ESS per second).
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <ctime>
#include <random>

#include "privpost/families/graphical/contingency_tables.hpp"
#include "privpost/families/graphical/count_sampling.hpp"
#include "privpost/families/graphical/hyper_dirichlet.hpp"
#include "privpost/families/graphical/pairwise_graph.hpp"
#include "privpost/families/graphical/tree_bp.hpp"
#include "privpost/families/graphical/tree_cgm_model.hpp"
#include "privpost/inference/fit.hpp"
#include "privpost/inference/infer.hpp"
#include "privpost/mechanisms/laplace.hpp"
#include "privpost/samplers/cgm/box_dual.hpp"
#include "privpost/samplers/cgm/cgm_em.hpp"
#include "privpost/samplers/cgm/cgm_noise.hpp"
#include "privpost/samplers/cgm/naive_mle.hpp"
#include "privpost/samplers/gibbs_ss.hpp"

using namespace privpost;

namespace {
struct study_release {
  pairwise_graph graph = chain_graph(10, 3);
  Eigen::VectorXd theta, y;
  double n_records = 1e4, scale = 0.0;
};

// The true model's expected tables N mu plus Laplace noise of scale |E| / epsilon (one fixed draw per epsilon).
study_release make_release(double epsilon) {
  study_release r;
  const table_layout layout(r.graph);
  std::mt19937_64 g(7);
  std::exponential_distribution<double> e(1.0);
  r.theta.setZero(layout.size());
  for (int k = 0; k < r.graph.num_edges(); ++k) {
    Eigen::VectorXd w(9);
    for (Eigen::Index i = 0; i < 9; ++i) w(i) = e(g);
    r.theta.segment(layout.edge_offset(k), 9) = (w / w.sum()).array().log().matrix();
  }
  tree_bp bp(r.graph);
  Eigen::VectorXd mu;
  bp.marginals(r.theta, mu);
  r.scale = contingency_l1_sensitivity(r.graph, neighbour_relation::add_remove) / epsilon;
  std::exponential_distribution<double> noise(1.0 / r.scale);
  r.y = r.n_records * mu.tail(layout.released_size());
  for (Eigen::Index j = 0; j < r.y.size(); ++j) r.y(j) += (g() % 2 == 0 ? 1.0 : -1.0) * noise(g);
  return r;
}

void estep_cold(benchmark::State& st) {
  const study_release r = make_release(0.1);
  tree_bp bp(r.graph);
  box_dual_estep solver(r.graph);
  Eigen::VectorXd g, n;
  int iterations = 0;
  for (auto _ : st) {
    g.resize(0);
    iterations = solver.solve(bp, Eigen::VectorXd::Zero(r.theta.size()), r.y, r.n_records, cgm_evidence::laplace(r.scale), g, n)
                     .iterations;
    benchmark::DoNotOptimize(n.data());
  }
  st.counters["fista_iterations"] = iterations;
}
BENCHMARK(estep_cold)->Unit(benchmark::kMicrosecond);

// Warm: the E-step at the true theta, started from the solution at theta + N(0, 0.01^2) noise (as between EM
// iterations).
void estep_warm(benchmark::State& st) {
  const study_release r = make_release(0.1);
  tree_bp bp(r.graph);
  box_dual_estep solver(r.graph);
  Eigen::VectorXd start, n, g;
  Eigen::VectorXd nearby = r.theta;
  std::mt19937_64 h(3);
  std::normal_distribution<double> z(0.0, 0.01);
  for (Eigen::Index i = 0; i < nearby.size(); ++i) nearby(i) += z(h);
  solver.solve(bp, nearby, r.y, r.n_records, cgm_evidence::laplace(r.scale), start, n);
  int iterations = 0;
  for (auto _ : st) {
    g = start;
    iterations = solver.solve(bp, r.theta, r.y, r.n_records, cgm_evidence::laplace(r.scale), g, n).iterations;
    benchmark::DoNotOptimize(n.data());
  }
  st.counters["fista_iterations"] = iterations;
}
BENCHMARK(estep_warm)->Unit(benchmark::kMicrosecond);

void map_em_fit(benchmark::State& st) {
  const double epsilon = static_cast<double>(st.range(0)) / 100.0;
  const study_release r = make_release(epsilon);
  cgm_em_options options;
  options.keep_trace = false;
  options.accelerate = st.range(2) == 1;
  const map_em_evidence evidence = st.range(1) == 1 ? map_em_evidence::gaussian_surrogate : map_em_evidence::exact;
  int iterations = 0;
  bool converged = false;
  for (auto _ : st) {
    with_map_em_evidence(evidence, cgm_evidence::laplace(r.scale), r.graph, r.n_records, true, [&](auto noise) {
      cgm_em em(r.graph, r.y, r.n_records, noise, tree_bp(r.graph), options);
      const fit_result f = fit(em, fit_options{2000});
      iterations = f.iterations;
      converged = f.converged;
      benchmark::DoNotOptimize(em.parameter_vector().data());
    });
  }
  st.counters["em_iterations"] = iterations;
  st.counters["converged"] = converged ? 1 : 0;
}
// epsilon = first argument / 100: 1, 0.1, 0.01; surrogate: 0 the Laplace density, 1 the Gaussian of its variance
// (privpost-infer's automatic choice, map_em_prefers_gaussian, takes it at epsilon 1 and 0.1, where N / 9 = 123 b and
// 12 b, and the Laplace density at 0.01, 1.2 b); squarem: 0 plain EM, 1 SQUAREM (the default).
BENCHMARK(map_em_fit)
    ->ArgsProduct({{100, 10, 1}, {0, 1}, {0, 1}})
    ->ArgNames({"eps100", "surrogate", "squarem"})
    ->Unit(benchmark::kMillisecond);

// The naive MLE (projected targets, lambda = 10^-range) on the same release at epsilon = 0.1, at most 5000 iterations.
void naive_fit(benchmark::State& st) {
  const study_release r = make_release(0.1);
  naive_mle_options options;
  options.lambda = std::pow(10.0, -static_cast<double>(st.range(0)));
  int iterations = 0;
  for (auto _ : st) {
    naive_mle naive(r.graph, r.y, r.n_records, tree_bp(r.graph), options);
    iterations = fit(naive, fit_options{5000}).iterations;
    benchmark::DoNotOptimize(naive.parameter_vector().data());
  }
  st.counters["iterations"] = iterations;
}
BENCHMARK(naive_fit)->Arg(4)->Arg(3)->Arg(2)->Unit(benchmark::kMillisecond);

// The exact tables of N = 10^range records of the study's chain by conditional multinomials (tree_count_sampler).
void count_tables(benchmark::State& st) {
  const study_release r = make_release(0.1);
  tree_bp bp(r.graph);
  Eigen::VectorXd mu, counts;
  bp.marginals(r.theta, mu);
  tree_count_sampler sampler(r.graph);
  std::mt19937_64 g(11);
  const auto n = static_cast<std::int64_t>(std::pow(10.0, static_cast<double>(st.range(0))));
  for (auto _ : st) {
    sampler.sample(g, mu, n, counts);
    benchmark::DoNotOptimize(counts.data());
  }
}
BENCHMARK(count_tables)->Arg(4)->Arg(7)->Unit(benchmark::kMicrosecond);

// One Gibbs-SS sweep of the Bayesian CGM on the study's chain (hyper-Dirichlet alpha_0 = 10, the library's Laplace
// scale 2|E| / epsilon = 180): conjugate draw, CLT moments, Matheron draw of the tables with rejections, variances.
void tree_cgm_sweep(benchmark::State& st) {
  const study_release r = make_release(0.1);
  const laplace_mechanism mechanism(contingency_l1_sensitivity(r.graph), 0.1);
  std::mt19937_64 g(12);
  gibbs_ss chain(tree_cgm_model(r.graph), hyper_dirichlet(r.graph, 10.0), mechanism, r.y, r.n_records, g);
  for (int i = 0; i < 100; ++i) chain.step(g);
  for (auto _ : st) {
    chain.step(g);
    benchmark::DoNotOptimize(chain.statistic().data());
  }
}
BENCHMARK(tree_cgm_sweep)->Unit(benchmark::kMicrosecond);

// The same sweep at epsilon = 0.01 (b = 1800) with the optional moves (arguments: collapsed moves, shift moves). One
// collapsed move: the prior's 28 blocks each proposed from its Dirichlet and accepted by the integrated likelihood (28
// CLT moments and 81 x 81 Cholesky factorisations). A shift move (gibbs_ss::set_shift_moves): the 28 blocks each a
// random-walk proposal with the tables translated along, accepted by the terms of the tables at and below the block
// (no factorisation). The cost side of the moves; their mixing (R-hat, ESS) is tree_cgm_posterior's and the tests'
// (tests/samplers/cgm_gibbs_calibration_test.cpp).
void tree_cgm_sweep_moves(benchmark::State& st) {
  const study_release r = make_release(0.01);
  const laplace_mechanism mechanism(contingency_l1_sensitivity(r.graph), 0.01);
  std::mt19937_64 g(12);
  gibbs_ss chain(tree_cgm_model(r.graph), hyper_dirichlet(r.graph, 10.0), mechanism, r.y, r.n_records, g);
  chain.set_collapsed_moves(static_cast<int>(st.range(0)));
  chain.set_shift_moves(static_cast<int>(st.range(1)));
  for (int i = 0; i < 100; ++i) chain.step(g);
  for (auto _ : st) {
    chain.step(g);
    benchmark::DoNotOptimize(chain.statistic().data());
  }
}
BENCHMARK(tree_cgm_sweep_moves)
    ->Args({0, 0})
    ->Args({1, 0})
    ->Args({0, 1})
    ->Args({0, 4})
    ->ArgNames({"collapsed", "shifts"})
    ->Unit(benchmark::kMicrosecond);

// The posterior as privpost-infer runs it on that release at epsilon = 0.01 and 0.1 (first argument: epsilon x 100):
// 4 chains of 1000 draws after 1000 burn-in sweeps on two threads, plain Gibbs-SS at thin 10 (shifts 0) against 4 shift
// moves a sweep at thin 2 (the tool's defaults). Counters: the largest R-hat and the smallest bulk ESS over the edge
// cells, and that ESS per CPU second.
void tree_cgm_posterior(benchmark::State& st) {
  const double epsilon = static_cast<double>(st.range(0)) / 100.0;
  const int shifts = static_cast<int>(st.range(1));
  const study_release r = make_release(epsilon);
  const laplace_mechanism mechanism(contingency_l1_sensitivity(r.graph), epsilon);
  const tree_cgm_model model(r.graph);
  const hyper_dirichlet prior(r.graph, 10.0);
  const table_layout layout(r.graph);
  inference_options io;
  io.chains = 4;
  io.burnin = 1000;
  io.draws = 1000;
  io.thin = shifts > 0 ? 2 : 10;
  io.parallel = true;
  io.seed = 5;
  for (auto _ : st) {
    const std::clock_t cpu = std::clock();
    const auto result = infer(
        [&](std::mt19937_64& e) {
          gibbs_ss chain(model, prior, mechanism, r.y, r.n_records, e);
          chain.set_shift_moves(shifts);
          return chain;
        },
        io);
    const double cpu_seconds = static_cast<double>(std::clock() - cpu) / CLOCKS_PER_SEC;
    const double ess = result.draws.min_ess_bulk(layout.edges_begin(), layout.size());
    st.counters["max_rhat"] = result.draws.max_rhat(layout.edges_begin(), layout.size());
    st.counters["min_ess_bulk"] = ess;
    st.counters["min_ess_per_cpu_s"] = ess / cpu_seconds;
  }
}
BENCHMARK(tree_cgm_posterior)
    ->ArgsProduct({{1, 10}, {0, 4}})
    ->ArgNames({"eps_x100", "shifts"})
    ->Iterations(1)
    ->Unit(benchmark::kSecond);

// The CLT moments N mu_E, N Sigma_EE of the same model (81 x 81, propagation from every clamped cell).
void tree_cgm_moments(benchmark::State& st) {
  const pairwise_graph graph = chain_graph(10, 3);
  const tree_cgm_model model(graph);
  std::mt19937_64 g(13);
  const Eigen::VectorXd mu = hyper_dirichlet(graph, 10.0).draw(g);
  Eigen::VectorXd mean;
  Eigen::MatrixXd cov;
  for (auto _ : st) {
    model.moments(mu, 1e4, mean, cov);
    benchmark::DoNotOptimize(cov.data());
  }
}
BENCHMARK(tree_cgm_moments)->Unit(benchmark::kMicrosecond);
}  // namespace
