// Parallel chains share no mutable state (item 7). Run under ThreadSanitizer by the tsan preset (clang):
// four chains in threads of a truncated Poisson model, whose sweeps call log_gamma (std::lgamma writes the global
// signgam and is not required to be reentrant; privpost uses boost::math::lgamma) and draw Poisson records by PTRS.
// Properties: the parallel run completes, draws are finite, and they equal the serial run with the same seed exactly
// (threads do not change the streams).
#include <catch2/catch.hpp>

#include <Eigen/Core>
#include <random>

#include "privpost/core/random/poisson.hpp"
#include "privpost/families/poisson.hpp"
#include "privpost/inference/infer.hpp"
#include "privpost/mechanisms/laplace.hpp"
#include "privpost/samplers/gibbs_ss_truncated.hpp"

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
