// Test support: the exact posterior oracle of the small-n tests (docs/exact-sums.md, test 2), computed by enumeration.
// Binomial n = 10, Beta(1, 1) prior, Laplace noise of scale 1/epsilon: the prior predictive of s is BetaBinomial(10, 1, 1),
// uniform on {0..10}, so w_s is proportional to exp(-epsilon |z - s|) and theta | z = sum_s w_s Beta(1 + s, 11 - s).
#pragma once

#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <boost/math/special_functions/beta.hpp>
#include <boost/math/tools/roots.hpp>
#include <cmath>
#include <cstdint>

#include "privpost/inference/infer.hpp"

namespace privpost::test {

/// The oracle for one (epsilon, z): mixture weights, mean, sd, CDF and quantiles (bisection, 50 bits).
struct beta_mixture {
  std::array<double, 11> w{};
  explicit beta_mixture(double epsilon, double z) {
    double total = 0.0;
    for (int s = 0; s <= 10; ++s) total += (w[s] = std::exp(-epsilon * std::abs(z - s)));
    for (double& x : w) x /= total;
  }
  /// From log p(z | s) at s = 0..10 of any release (or several: their sum), as the same mixture.
  explicit beta_mixture(const std::array<double, 11>& log_likelihood) {
    double top = log_likelihood[0], total = 0.0;
    for (const double l : log_likelihood) top = std::max(top, l);
    for (int s = 0; s <= 10; ++s) total += (w[s] = std::exp(log_likelihood[s] - top));
    for (double& x : w) x /= total;
  }
  double mean() const {
    double m = 0.0;
    for (int s = 0; s <= 10; ++s) m += w[s] * (1.0 + s) / 12.0;
    return m;
  }
  double sd() const {
    double second = 0.0;
    for (int s = 0; s <= 10; ++s) second += w[s] * (1.0 + s) * (2.0 + s) / (12.0 * 13.0);
    return std::sqrt(second - mean() * mean());
  }
  double cdf(double x) const {
    double c = 0.0;
    for (int s = 0; s <= 10; ++s) c += w[s] * boost::math::ibeta(1.0 + s, 11.0 - s, x);
    return c;
  }
  double quantile(double p) const {
    boost::math::tools::eps_tolerance<double> tol(50);
    std::uintmax_t iterations = 200;
    const auto [lo, hi] = boost::math::tools::bisect([&](double x) { return cdf(x) - p; }, 0.0, 1.0, tol, iterations);
    return 0.5 * (lo + hi);
  }
};

/// Spec C.7-2's rule for a sampler's draws of theta against the oracle: |mean - oracle| <= 4 sd / sqrt(bulk ESS), the
/// 5%, 50% and 95% quantiles and P(theta <= 0.5) within 0.01, and no numerical repair.
inline void check_matches_oracle(const privpost::inference_result& result, const beta_mixture& oracle) {
  const Eigen::VectorXd all = result.draws.draw_matrix().col(0);
  const double ess = result.draws.ess_bulk(0);
  const double below = static_cast<double>((all.array() <= 0.5).count()) / static_cast<double>(all.size());
  INFO("mean " << result.draws.mean(0) << " vs " << oracle.mean() << " (ESS " << ess << "); q05 "
               << result.draws.quantile(0.05, 0) << " vs " << oracle.quantile(0.05) << "; q50 " << result.draws.quantile(0.5, 0)
               << " vs " << oracle.quantile(0.5) << "; q95 " << result.draws.quantile(0.95, 0) << " vs "
               << oracle.quantile(0.95));
  CHECK(std::abs(result.draws.mean(0) - oracle.mean()) <= 4.0 * oracle.sd() / std::sqrt(ess));
  for (const double p : {0.05, 0.5, 0.95}) CHECK(std::abs(result.draws.quantile(p, 0) - oracle.quantile(p)) <= 0.01);
  CHECK(std::abs(below - oracle.cdf(0.5)) <= 0.01);
  CHECK(result.events == privpost::numerical_events{});
}

/// Spec C.7-2's settings: chains make(epsilon, z, g) (binomial n = 10, Beta(1, 1), Laplace of scale 1 / epsilon) at
/// epsilon in {0.1, 1} and z in {-5, 0, 3, 7.5, 15}, 4 chains x (1000 burn-in + draws) seeded seed_of(epsilon, z), each
/// checked by check_matches_oracle.
template <class Make, class SeedOf>
void check_oracle_settings(int draws, SeedOf seed_of, Make make) {
  for (const double eps : {0.1, 1.0}) {
    for (const double zv : {-5.0, 0.0, 3.0, 7.5, 15.0}) {
      Eigen::VectorXd z(1);
      z << zv;
      privpost::inference_options o;
      o.chains = 4;
      o.burnin = 1000;
      o.draws = draws;
      o.seed = seed_of(eps, zv);
      const auto result = privpost::infer([&](std::mt19937_64& g) { return make(eps, z, g); }, o);
      INFO("epsilon " << eps << ", z " << zv);
      check_matches_oracle(result, beta_mixture(eps, zv));
    }
  }
}

}  // namespace privpost::test
