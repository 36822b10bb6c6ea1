// Parallel chains share no mutable state (item 7). Run under ThreadSanitizer by the tsan preset (clang):
// four chains in threads of a truncated Poisson model, whose sweeps call log_gamma (std::lgamma writes the global
// signgam and is not required to be reentrant; privpost uses boost::math::lgamma) and draw Poisson records by PTRS.
// Properties: the parallel run completes, draws are finite, and they equal the serial run with the same seed exactly
// (threads do not change the streams); partition posteriors run by a pool of workers give the serial run's outputs.
#include <catch2/catch.hpp>

#include <Eigen/Core>
#include <random>

#include "privpost/core/random/poisson.hpp"
#include "privpost/families/poisson.hpp"
#include "privpost/inference/infer.hpp"
#include "privpost/inference/partition_posterior.hpp"
#include "privpost/mechanisms/laplace.hpp"
#include "privpost/mechanisms/partition_plan.hpp"
#include "privpost/samplers/gibbs_ss_truncated.hpp"
#include "privpost/samplers/semi_conjugate_regression.hpp"

using namespace privpost;

namespace {
// A chain that also draws Poisson variates itself each step (the records' sampler, PTRS for large rates).
struct poisson_draw_chain {
  double lambda;
  double last = 0.0;
  template <class G>
  void step(G& g) {
    last = static_cast<double>(draw_poisson(g, lambda));
  }
  Eigen::VectorXd parameter_vector() const { return Eigen::VectorXd::Constant(1, last); }
  numerical_events events() const { return {}; }
};
}  // namespace

TEST_CASE("parallel chains of a Poisson model: no data race, same draws as serial", "[threads]") {
  const poisson_gamma_prior prior(4.0, 1.0);
  const laplace_mechanism mechanism(12.0, 0.5);  // records truncated to [0, 12]
  Eigen::VectorXd z(1);
  z << 410.0;
  inference_options o;
  o.chains = 4;
  o.burnin = 200;
  o.draws = 300;
  o.seed = 2026;
  auto make = [&](auto& g) { return gibbs_ss_truncated(prior, mechanism, z, 100.0, 0.0, 12.0, g); };
  o.parallel = true;
  const auto parallel = infer(make, o);
  o.parallel = false;
  const auto serial = infer(make, o);
  for (std::size_t c = 0; c < 4; ++c) {
    REQUIRE(parallel.draws.chains()[c].allFinite());
    CHECK(parallel.draws.chains()[c] == serial.draws.chains()[c]);
  }

  auto make_draws = [](auto&) { return poisson_draw_chain{35.0}; };
  o.parallel = true;
  const auto pd = infer(make_draws, o);
  o.parallel = false;
  const auto sd = infer(make_draws, o);
  for (std::size_t c = 0; c < 4; ++c) CHECK(pd.draws.chains()[c] == sd.draws.chains()[c]);
}

TEST_CASE("partition posteriors in threads: no data race, same outputs as one thread", "[threads]") {
  // Partitions of a regression run by 3 workers off one atomic index, some of them failing: the outputs and the
  // failure count are those of the serial run.
  std::mt19937_64 g(5);
  Eigen::MatrixXd x(240, 2);
  Eigen::VectorXd y(240);
  for (int i = 0; i < 240; ++i) {
    x(i, 0) = 1.0;
    x(i, 1) = draw_normal(g);
    y(i) = 1.0 + 2.0 * x(i, 1) + draw_normal(g);
  }
  const partition_plan plan(240, 12, g);
  run_options o;
  o.inference.chains = 1;
  o.inference.burnin = 50;
  o.inference.draws = 200;
  const sampler_partition_posterior gibbs(
      semi_conjugate_regression_partitions(x, y, {Eigen::Vector2d::Zero(), Eigen::Matrix2d::Identity(), 2.0, 1.0}), o, 1);
  auto flaky = [&](const partition_task& task, std::mt19937_64& e) {
    if (task.partition % 5 == 2) throw std::runtime_error("failed");
    return gibbs(task, e);
  };
  const std::vector<double> levels = {0.1, 0.5, 0.9};
  const auto serial = partition_quantiles(plan, flaky, levels, {9, 1});
  const auto threaded = partition_quantiles(plan, flaky, levels, {9, 3});
  CHECK(serial.values == threaded.values);
  CHECK(serial.failures == 2);
  CHECK(threaded.failures == 2);
}
