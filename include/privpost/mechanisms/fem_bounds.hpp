// privpost/mechanisms/fem_bounds.hpp
// The marginal-likelihood bounds of Williams & McSherry (2010, Eq. 5) for a release z of the factored exponential
// mechanism given n iid records x ~ p(. | theta), rebuilt from their proof sketches (docs/histogram-measurements.md,
// "The factored exponential mechanism and the W&M bounds"). The random-walk Metropolis sampler of theta on the
// lower bound that W&M ran is samplers/fem_bound_sampler.hpp. With r_z'(x) = exp(l(z', x) - l(z, x)) and E the expectation over
// one record:
//     lower: L(z | theta) = 1 / sum_z' (E[r_z'(x)^kappa])^n <= p(z | theta)            (Jensen, 1/y convex)
//     upper: U_q(z | theta) = e^{-H[q]} (E[exp(kappa (l(z, x) - sum_z' q(z') l(z', x)))])^n >= p(z | theta)
// for any q on Z (the entropy bound of log-sum-exp); q(z') proportional to exp(kappa n E[l(z', x)]) makes it tight
// (the paper's q without kappa is valid but loose: spec B.4, max error 0.75 at kappa 0.01). Both need only
// single-record expectations: exact for a finite record space; a Monte Carlo expectation makes them approximate, not
// bounds (log of a Monte Carlo mean is biased). The bound posterior is an approximation: the exact posterior given a
// release is the record-level sampler's (samplers/record_fem.hpp).
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <limits>
#include <span>
#include <string>
#include <utility>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/interval.hpp"
#include "privpost/core/math/log_sum_exp.hpp"
#include "privpost/core/numerical_events.hpp"
#include "privpost/core/random/normal.hpp"
#include "privpost/core/random/uniform.hpp"
#include "privpost/mechanisms/factored_exponential.hpp"

namespace privpost {

/// log L and log min(U, 1) of a release's marginal likelihood p(z | theta): log_lower <= log p(z | theta) <= log_upper.
struct fem_log_bounds {
  /// log L(z | theta) <= 0.
  double log_lower = 0.0;
  /// log min(U_q(z | theta), 1) <= 0.
  double log_upper = 0.0;
};

/// The bounds of release z of mechanism m given n records whose single-record expectations are
/// expectation(f) = E_theta[f(x)] for f: record -> double (see fem_log_marginal_bounds below for a finite record
/// space). std::invalid_argument for z outside the candidates or n not finite and >= 1; std::domain_error if an
/// expectation is not finite and positive where it must be.
template <class Record, class Score, class Expectation>
fem_log_bounds fem_log_marginal_bounds(const factored_exponential_mechanism<Record, Score>& m, std::size_t z, double n,
                                       Expectation&& expectation) {
  constexpr const char* who = "fem_log_marginal_bounds";
  m.check_release(who, z);
  if (!(std::isfinite(n) && n >= 1.0)) throw_invalid(who, "n", n, "a finite number >= 1");
  const double kappa = m.exponent();
  const auto k = static_cast<Eigen::Index>(m.candidates());
  auto positive = [&](double v, const char* what) {
    if (!(std::isfinite(v) && v > 0.0))
      throw std::domain_error(std::string(who) + ": the expectation of " + what + " is " + std::to_string(v) +
                              "; accepted: a finite number > 0 (check the record law)");
    return v;
  };
  // Lower bound: -logsumexp_z' (n log E[r_z'^kappa]).
  Eigen::VectorXd terms(k), mean_score(k);
  for (Eigen::Index c = 0; c < k; ++c) {
    const auto cz = static_cast<std::size_t>(c);
    terms(c) =
        n * std::log(positive(expectation([&](const Record& x) { return std::exp(kappa * (m.score(cz, x) - m.score(z, x))); }),
                              "r^kappa"));
    mean_score(c) = expectation([&](const Record& x) { return m.score(cz, x); });
    if (!std::isfinite(mean_score(c)))
      throw std::domain_error(std::string(who) + ": the expectation of a score is not finite; accepted: a finite number");
  }
  fem_log_bounds out;
  out.log_lower = -detail::log_sum_exp(terms);
  // Upper bound with q proportional to exp(kappa n E[l(z', x)]): -H[q] + n log E[exp(kappa (l(z, x) - q . l(., x)))].
  const Eigen::VectorXd a = kappa * n * mean_score;
  const Eigen::VectorXd log_q = (a.array() - detail::log_sum_exp(a)).matrix();
  const Eigen::VectorXd q = log_q.array().exp().matrix();
  double entropy = 0.0;
  for (Eigen::Index c = 0; c < k; ++c)
    if (q(c) > 0.0) entropy -= q(c) * log_q(c);
  const double moment = positive(expectation([&](const Record& x) {
                                   double weighted = 0.0;
                                   for (Eigen::Index c = 0; c < k; ++c)
                                     weighted += q(c) * m.score(static_cast<std::size_t>(c), x);
                                   return std::exp(kappa * (m.score(z, x) - weighted));
                                 }),
                                 "the upper bound's moment");
  out.log_upper = std::min(0.0, -entropy + n * std::log(moment));
  return out;
}

/// The bounds for a finite record space: record `support[j]` has probability `probabilities[j]` under theta (finite,
/// >= 0, summing to 1 within 1e-9). std::invalid_argument otherwise.
template <class Record, class Score>
fem_log_bounds fem_log_marginal_bounds(const factored_exponential_mechanism<Record, Score>& m, std::size_t z, double n,
                                       std::span<const Record> support, std::span<const double> probabilities) {
  constexpr const char* who = "fem_log_marginal_bounds";
  check_size_match(who, "probabilities", static_cast<std::int64_t>(probabilities.size()), "support",
                   static_cast<std::int64_t>(support.size()));
  double total = 0.0;
  for (double p : probabilities) {
    if (!(std::isfinite(p) && p >= 0.0)) throw_invalid(who, "probability", p, "a finite number >= 0");
    total += p;
  }
  if (!(std::abs(total - 1.0) <= 1e-9)) throw_invalid(who, "sum of probabilities", total, "1 (within 1e-9)");
  return fem_log_marginal_bounds(m, z, n, [&](auto&& f) {
    double e = 0.0;
    for (std::size_t j = 0; j < support.size(); ++j)
      if (probabilities[j] > 0.0) e += probabilities[j] * f(support[j]);
    return e;
  });
}

}  // namespace privpost
