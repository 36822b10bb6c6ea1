// truncated_exponential: waiting times are unbounded, so the owner declares bounds [0, b], drops records outside them,
// and releases the sum of the rest (dissertation Sec. 4.3). The analyst models the dropped tail explicitly.
#include <privpost/core/random/exponential.hpp>
#include <privpost/families/exponential.hpp>
#include <privpost/families/truncation.hpp>
#include <privpost/inference/convergence_check.hpp>
#include <privpost/inference/run.hpp>
#include <privpost/mechanisms/laplace.hpp>
#include <privpost/mechanisms/ssp.hpp>
#include <privpost/samplers/conjugate.hpp>
#include <privpost/samplers/gibbs_ss_truncated.hpp>

#include <array>
#include <cstdio>
#include <random>
#include <span>
#include <vector>

int main() {
  // The owner's 300 waiting times (rate 0.5 per hour), bounds [0, 8] hours, records above 8 are dropped.
  std::mt19937_64 simulate(5);
  std::vector<std::array<double, 1>> waits(300);
  for (auto& w : waits) w[0] = privpost::draw_exponential(simulate, 0.5);
  const double a = 0.0, b = 8.0;
  const privpost::bounded_statistic<1, privpost::record_statistic<privpost::exponential_rate_family>> total(
      {}, {privpost::interval(a, b)}, privpost::out_of_bounds::drop);
  const privpost::laplace_mechanism mechanism(total.l1_sensitivity(), 0.5);
  const Eigen::VectorXd z = privpost::release_statistic(total, waits, mechanism);
  std::printf("released truncated sum %.1f (n = %zu, bounds [%g, %g], sensitivity %g, epsilon 0.5)\n", z(0), waits.size(), a, b,
              total.l1_sensitivity());

  const privpost::exponential_gamma_prior prior(10.0, 20.0);  // prior mean rate 0.5 per hour, sd 0.16
  const double n = static_cast<double>(waits.size());
  privpost::run_options options;  // the chains; run() also takes writers and a convergence target
  options.inference.draws = 2000;
  options.inference.seed = 1;
  const auto aware =
      privpost::run([&](auto& g) { return privpost::gibbs_ss_truncated(prior, mechanism, z, n, a, b, g); }, options).result;
  const auto naive = privpost::run([&](auto& g) { return privpost::conjugate_sampler(prior, z, n, g); }, options).result;
  // For the example only: the posterior given the exact, untruncated sum, which the analyst never sees.
  Eigen::Matrix<double, 1, 1> full = Eigen::Matrix<double, 1, 1>::Zero();
  for (const auto& w : waits) full(0) += w[0];
  const auto oracle = privpost::run([&](auto& g) { return privpost::conjugate_sampler(prior, full, n, g); }, options).result;
  auto row = [](const char* name, const privpost::posterior& p) {
    const auto ci = p.interval(0.9);
    std::printf("  %-40s mean %.3f  90%% interval [%.3f, %.3f]\n", name, p.mean(), ci.lower, ci.upper);
  };
  std::printf("posterior of the rate (true value 0.5):\n");
  row("noise- and truncation-aware Gibbs-SS", aware.draws);
  row("naive (z taken as the full, exact sum)", naive.draws);
  row("non-private, untruncated (reference)", oracle.draws);
  std::printf(
      "A truncated sum cannot tell a low rate with many dropped records from a higher one, and the noise adds to\n"
      "that; Gibbs-SS carries both uncertainties, the naive update neither.\n");
  for (const auto& w : privpost::convergence_warnings(aware.draws, aware.events, aware.sweeps, {}, {"rate"}))
    std::printf("WARNING: %s\n", w.c_str());
  return 0;
}
