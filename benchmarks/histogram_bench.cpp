// Benchmarks of the histogram sampler (samplers/record_histogram.hpp; docs/histogram-measurements.md B.11): one sweep
// at n = 10^5 records of a 10 x 10 x 10 table (D = 1000 cells) given its three 2-way marginals (K = 3, 300 queries,
// Laplace epsilon 1), target at most 3 ms; the record-level binomial sweep (samplers/record_augmented.hpp) at the same
// n beside it, target: the histogram's per-record cost within 3 times the binomial's; both again with privpost's
// xoshiro256 engine in place of std::mt19937_64 (two engine outputs a record); and the alias table's build and draw at
// D = 1000.
#include <benchmark/benchmark.h>

#include <Eigen/Core>
#include <random>
#include <span>
#include <vector>

#include "privpost/core/random/categorical.hpp"
#include "privpost/core/random/dirichlet.hpp"
#include "privpost/core/random/xoshiro.hpp"
#include "privpost/families/binomial.hpp"
#include "privpost/mechanisms/laplace.hpp"
#include "privpost/samplers/record_augmented.hpp"
#include "privpost/samplers/record_histogram.hpp"

using namespace privpost;

namespace {
constexpr double records = 1e5;

// The three 2-way marginals of a 10 x 10 x 10 table released from n records drawn from a Dirichlet(1) table.
template <class G>
histogram_gibbs make_table_sampler(G& g) {
  const auto q = linear_queries::marginals({10, 10, 10}, {{0, 1}, {0, 2}, {1, 2}});
  const Eigen::VectorXd theta = draw_dirichlet(g, Eigen::VectorXd::Ones(1000));
  const alias_table cells(std::span<const double>(theta.data(), 1000));
  Eigen::VectorXd h = Eigen::VectorXd::Zero(1000);
  for (int i = 0; i < static_cast<int>(records); ++i) h(static_cast<Eigen::Index>(cells.draw(g))) += 1.0;
  const laplace_mechanism m(q.l1_sensitivity(), 1.0);
  std::vector<histogram_measurement> ms;
  ms.emplace_back(q, m, m.release(q.apply(h), g));
  return histogram_gibbs(Eigen::VectorXd::Ones(1000), records, ms, g, record_init::consistent);
}
}  // namespace

template <class G>
static void histogram_sweep_three_marginals(benchmark::State& st) {
  G g(1);
  auto sampler = make_table_sampler(g);
  for (int i = 0; i < 20; ++i) sampler.step(g);  // past the start
  for (auto _ : st) {
    sampler.step(g);
    benchmark::DoNotOptimize(sampler.parameter_vector().data());
  }
  st.counters["acceptance"] = sampler.record_acceptance();
  st.counters["ns_per_record"] = benchmark::Counter(records * static_cast<double>(st.iterations()),
                                                    benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(histogram_sweep_three_marginals<std::mt19937_64>)->Unit(benchmark::kMillisecond);
BENCHMARK(histogram_sweep_three_marginals<xoshiro256>)->Unit(benchmark::kMillisecond);

template <class G>
static void record_sweep_binomial_large(benchmark::State& st) {
  G g(1);
  record_gibbs sampler(beta_prior(1.0, 1.0), laplace_mechanism(1.0, 1.0), Eigen::VectorXd::Constant(1, 0.31 * records), records,
                       g, record_init::consistent);
  for (auto _ : st) {
    sampler.step(g);
    benchmark::DoNotOptimize(sampler.parameter());
  }
  st.counters["ns_per_record"] = benchmark::Counter(records * static_cast<double>(st.iterations()),
                                                    benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(record_sweep_binomial_large<std::mt19937_64>)->Unit(benchmark::kMillisecond);
BENCHMARK(record_sweep_binomial_large<xoshiro256>)->Unit(benchmark::kMillisecond);

static void alias_build_1000(benchmark::State& st) {
  std::mt19937_64 g(2);
  const Eigen::VectorXd theta = draw_dirichlet(g, Eigen::VectorXd::Ones(1000));
  alias_table t;
  for (auto _ : st) {
    t.build(std::span<const double>(theta.data(), 1000));
    benchmark::DoNotOptimize(t.size());
  }
}
BENCHMARK(alias_build_1000);

static void alias_draw_1000(benchmark::State& st) {
  std::mt19937_64 g(3);
  const Eigen::VectorXd theta = draw_dirichlet(g, Eigen::VectorXd::Ones(1000));
  const alias_table t(std::span<const double>(theta.data(), 1000));
  for (auto _ : st) benchmark::DoNotOptimize(t.draw(g));
}
BENCHMARK(alias_draw_1000);
