// privpost/samplers/ops.hpp
// ops_binomial: the one-posterior-sampling baseline (Foulds et al. 2016; dissertation Sec. 4.4.1): k draws, each epsilon/k-DP,
// from the beta posterior tempered by tau = (epsilon/k) / (2 log((1 - a0)/a0)) with theta restricted to [a0, 1 - a0].
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <boost/math/special_functions/beta.hpp>
#include <cmath>
#include <exception>
#include <stdexcept>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/random/truncated_normal.hpp"
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
/// (inverse CDF of the tempered beta on [a0, 1 - a0]; where a shape is below 1, the rejection sampler of
/// detail::restricted_beta_small_b, which needs a0 >= 1e-4) while a + b <= ops_exact_limit (2^48, about 2.8e14: n = 10^12
/// records at epsilon / draws up to about 1200). Beyond it Boost's incomplete beta is neither accurate nor fast: at
/// a = b its quantiles were off by 3e-6 sd at a + b = 1e15, 1e-4 sd at 1e16 and 6e-3 sd at 1e18; its continued
/// fraction took 1 s at 1e20, 5 s at 1e22, and hung at 2e299 (an adversarial test). There the draw is from
/// the normal law of the same mean and variance restricted to [a0, 1 - a0], an approximation: where the tempered mean
/// lies in [a0, 1 - a0], min(a, b) >= a0 (a + b) > 2.8e13 and the Kolmogorov distance between the two laws is of the
/// order of the beta's skewness, below 2 / sqrt(min(a, b)) < 4e-7 at a0 = 0.1; where it lies outside, both put their
/// mass within (a + b)^-1/2 < 6e-8 of the nearer bound. std::domain_error when a + b overflows, or when Boost's
/// incomplete beta or its inverse fails (denormal-range shapes, found by fuzzing). This is a release
/// mechanism: it reads the private s.
inline constexpr double ops_exact_limit = 281474976710656.0;  // 2^48

namespace detail {
// An exact draw of Beta(a, b) restricted to [lo, hi] (0 < lo < hi < 1) when b < 1 and b <= a, by rejection: propose
// from the density proportional to x^(a-1) on [lo, hi] (inverse CDF x = hi exp(log1p(v expm1(-a L)) / a), L =
// log(hi / lo), v uniform on (0, 1], stable for every a > 0: tiny a gives the log-uniform law, huge a hi v^(1/a)) and
// accept with (1 - x)^(b-1) / (1 - hi)^(b-1), which is <= 1 for b < 1 and at least ((1 - hi) / (1 - lo))^(1-b) >=
// lo / (1 - lo) everywhere. Boost's ibeta_inv fails there (NaN draws, or a failed assertion in a
// debug build, at a = 3e-5, b = 7e-24). At most 10^6 proposals: for lo >= 1e-4 the chance of reaching that bound is
// below (1 - lo / (1 - lo))^(10^6) < e^-100; std::domain_error for lo < 1e-4 (no bound worth the name).
template <random_engine G>
double restricted_beta_small_b(G& g, double a, double b, double lo, double hi) {
  if (lo < 1e-4)
    throw_domain("ops_binomial", "a0 with a tempered beta shape below 1", lo,
                 "a0 >= 1e-4 when a tempered shape is below 1 (the exact rejection sampler's acceptance is about a0)");
  const double shrink = std::expm1(-a * std::log(hi / lo));  // in (-1, 0)
  const double log_max = (b - 1.0) * std::log1p(-hi);
  for (int t = 0; t < 1000000; ++t) {
    const double v = 1.0 - draw_uniform(g);  // (0, 1]
    const double x = std::clamp(hi * std::exp(std::log1p(v * shrink) / a), lo, hi);
    if (std::log(draw_uniform(g)) < (b - 1.0) * std::log1p(-x) - log_max) return x;
  }
  throw retry_limit_exceeded("ops_binomial: the restricted beta's rejection sampler exceeded 10^6 proposals");
}
}  // namespace detail

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
  if (!std::isfinite(a + b))
    throw_domain("ops_binomial", "tempered beta a + b = prior a + b + tau n", a + b,
                 "finite (tau n = epsilon n / (2 draws log((1 - a0) / a0)) overflows)");
  Eigen::VectorXd out(options.draws);
  if (a + b > ops_exact_limit) {
    // The normal approximation (comment above); a variance that underflows leaves the mean, clamped to the support.
    const double mean = a / (a + b);
    const double sd = std::sqrt(mean * (b / (a + b)) / (a + b + 1.0));
    for (int i = 0; i < options.draws; ++i)
      out(i) = sd > 0.0 ? std::clamp(draw_truncated_normal(g, mean, sd, lo, hi), lo, hi) : std::clamp(mean, lo, hi);
    return out;
  }
  if (std::min(a, b) < 1.0) {
    // A shape below 1: the exact rejection sampler of detail::restricted_beta_small_b (Boost's ibeta_inv is unreliable
    // there); by symmetry x -> 1 - x when a is the smaller shape. Outside the try below, so that its own exceptions
    // (std::domain_error for a0 < 1e-4, retry_limit_exceeded) reach the caller as they are.
    for (int i = 0; i < options.draws; ++i)
      out(i) = b <= a ? detail::restricted_beta_small_b(g, a, b, lo, hi) : 1.0 - detail::restricted_beta_small_b(g, b, a, lo, hi);
    return out;
  }
  // Boost's errors (overflow_error; evaluation_error, its root finder's 200 iterations exceeded, which the
  // fuzzing found at a = 3e-5, b = 7e-156 before shapes below 1 took the branch above) become std::domain_error naming
  // a and b.
  try {
    const double p_lo = boost::math::ibeta(a, b, lo), p_hi = boost::math::ibeta(a, b, hi);
    for (int i = 0; i < options.draws; ++i) {
      if (p_hi - p_lo > 1e-300) {
        const double u = p_lo + (p_hi - p_lo) * draw_uniform(g);
        const double x = boost::math::ibeta_inv(a, b, u);
        if (!std::isfinite(x)) throw_domain("ops_binomial", "Boost's ibeta_inv draw", x, "a finite number");
        out(i) = std::clamp(x, lo, hi);
      } else {
        // All the tempered mass lies beyond double precision on one side: the restricted draw is that bound.
        out(i) = (a / (a + b) < lo) ? lo : hi;
      }
    }
  } catch (const std::domain_error&) {
    throw;
  } catch (const std::exception& e) {
    throw std::domain_error("ops_binomial: the incomplete beta of the tempered posterior failed at a = " +
                            detail::format_value(a) + ", b = " + detail::format_value(b) + " (" + e.what() +
                            "); accepted: a tempered beta Boost can invert (prior shapes far from the denormal range)");
  }
  return out;
}

}  // namespace privpost
