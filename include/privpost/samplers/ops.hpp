// privpost/samplers/ops.hpp
// ops_binomial: the one-posterior-sampling baseline (Foulds et al. 2016; dissertation Sec. 4.4.1): k draws, each epsilon/k-DP,
// from the beta posterior tempered by tau = (epsilon/k) / (2 log((1 - a0)/a0)) with theta restricted to [a0, 1 - a0].
#pragma once

#include <Eigen/Core>
#include <boost/math/special_functions/beta.hpp>
#include <cmath>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/random/uniform.hpp"
#include "privpost/families/binomial.hpp"

namespace privpost {

/// Settings of the OPS baseline.
struct ops_options {
  double epsilon = 1.0;  ///< total budget, split evenly over the draws
  int draws = 100;       ///< number of released posterior draws (the dissertation uses 100)
  double a0 = 0.1;       ///< theta is restricted to [a0, 1 - a0] so the log-likelihood is bounded (dissertation: 0.1)
};

/// Releases `draws` OPS samples for binomial data with exact count s of n records and a Beta(a, b) prior restricted to
/// [a0, 1 - a0]. One record changes the log-likelihood by at most L = log((1 - a0)/a0) for every theta, so sampling from
/// p(theta) exp(tau loglik) is 2 tau L-DP (exponential mechanism); tau = (epsilon/draws) / (2 L). Each draw is exact
/// (inverse CDF of the tempered beta on [a0, 1 - a0]). This is a release mechanism: it reads the private s.
template <random_engine G>
Eigen::VectorXd ops_binomial(const beta_prior& prior, double s, double n, const ops_options& options, G& g) {
  check_epsilon("ops_binomial", options.epsilon);
  if (options.draws < 1) throw_invalid("ops_binomial", "draws", options.draws, "an integer >= 1");
  if (!(options.a0 > 0.0 && options.a0 < 0.5)) throw_invalid("ops_binomial", "a0", options.a0, "a number in (0, 0.5)");
  if (!(std::isfinite(n) && n > 0.0)) throw_invalid("ops_binomial", "n", n, "a finite number > 0");
  if (!(s >= 0.0 && s <= n)) throw_invalid("ops_binomial", "s", s, "a number in [0, n]");
  const double lo = options.a0, hi = 1.0 - options.a0;
  const double loglik_range = std::log(hi / lo);
  const double tau = (options.epsilon / options.draws) / (2.0 * loglik_range);
  const double a = prior.a() + tau * s, b = prior.b() + tau * (n - s);
  const double p_lo = boost::math::ibeta(a, b, lo), p_hi = boost::math::ibeta(a, b, hi);
  Eigen::VectorXd out(options.draws);
  for (int i = 0; i < options.draws; ++i) {
    if (p_hi - p_lo > 1e-300) {
      const double u = p_lo + (p_hi - p_lo) * draw_uniform(g);
      out(i) = std::clamp(boost::math::ibeta_inv(a, b, u), lo, hi);
    } else {
      // All the tempered mass lies beyond double precision on one side: the restricted draw is that bound.
      out(i) = (a / (a + b) < lo) ? lo : hi;
    }
  }
  return out;
}

}  // namespace privpost
