// privpost/samplers/sampler_policy.hpp
// The default choice of sampler for a single release of an exponential family's sum (docs/exact-sums.md,
// "Which sampler"): exact where it is cheap, Gibbs-SS with the Metropolis-Hastings correction where n is large.
//
//     switch (default_sampler<binomial_family>(n)) { case sampler_kind::exact: ... }
//
// A program that lets its user name the sampler reads the name with sampler_kind_from_string and switches on the
// same enum, so the policy's choice and the user's take one path.
//
// The rule, from the measured sweep costs (benchmarks/samplers_bench.cpp, one core, -O3):
//   - a family whose sum has a closed-form law on a finite support (finite_sum_family: the binomial), released without
//     clamping or dropping: enumeration (gibbs_ss_exact, about 0.2 us + 12.5 ns x n a sweep, the exact conditional, no
//     latent noise variance) up to n = exact_enumeration_limit, beyond it gibbs_ss_corrected (about 0.45 us a sweep at
//     any n, exact as well);
//   - any other bounded family that can draw records (the multinomial): the record-level sampler record_gibbs (exact,
//     O(n) a sweep: 0.4 us at n = 10, 31 us at n = 1000 for the binomial; the tools' 12000 sweeps take under a second)
//     up to n = record_level_limit, the spec's rule, and Gibbs-SS beyond (its CLT is accurate there; for a strong-noise
//     release add collapsed moves, gibbs_ss::set_collapsed_moves);
//   - an unbounded family released with truncation (truncatable_family: Poisson, exponential, normal): Gibbs-SS
//     (gibbs_ss_truncated) at every n. Its posterior can be bimodal (samplers/gibbs_ss_truncated.hpp) and
//     gibbs_ss_truncated has a mode-jumping move that record_gibbs lacks: on exponential releases (bounds [0, 8],
//     epsilon 1) the record-level chains' bulk ESS was 361 / 570 / 51 of 4000 draws at n = 20 / 50 / 200 (R-hat up to
//     1.06) against Gibbs-SS's 2589 / 1856 / 1069. record_gibbs stays available by name;
//   - everything else (regression, GLMs, graphical models): Gibbs-SS or the model's own sampler.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"

namespace privpost {

/// The samplers the default policy chooses among.
enum class sampler_kind {
  gibbs,      ///< gibbs_ss (or gibbs_ss_truncated for a truncated release): the CLT for the sum
  exact,      ///< gibbs_ss_exact: the sum enumerated over its support
  corrected,  ///< gibbs_ss_corrected: Gibbs-SS's sum draw corrected by Metropolis-Hastings
  records     ///< record_gibbs: the records latent
};

/// The name the tools use for a sampler kind ("gibbs", "exact", "corrected", "records").
inline std::string to_string(sampler_kind kind) {
  switch (kind) {
    case sampler_kind::exact:
      return "exact";
    case sampler_kind::corrected:
      return "corrected";
    case sampler_kind::records:
      return "records";
    case sampler_kind::gibbs:
      break;
  }
  return "gibbs";
}

/// The sampler kind a name of to_string stands for; std::invalid_argument naming the accepted names for any other.
inline sampler_kind sampler_kind_from_string(std::string_view name) {
  for (const auto kind : {sampler_kind::gibbs, sampler_kind::exact, sampler_kind::corrected, sampler_kind::records})
    if (to_string(kind) == name) return kind;
  throw std::invalid_argument("sampler_kind_from_string: '" + std::string(name) +
                              "' names no sampler; accepted: gibbs, exact, corrected, records");
}

/// The largest n at which the default policy enumerates a finite_sum_family's sum (gibbs_ss_exact).
inline constexpr double exact_enumeration_limit = 50.0;
/// The largest n at which the default policy runs the record-level sampler (record_gibbs) on a bounded family.
inline constexpr double record_level_limit = 2000.0;

/// The default sampler for n records of family F released once. std::invalid_argument for n that is not a finite
/// number >= 1.
template <exponential_family F>
sampler_kind default_sampler(double n) {
  check_record_count("default_sampler", n);
  if constexpr (finite_sum_family<F>) {
    return n <= exact_enumeration_limit ? sampler_kind::exact : sampler_kind::corrected;
  } else if constexpr (truncatable_family<F>) {
    return sampler_kind::gibbs;
  } else if constexpr (record_generating_family<F>) {
    return n <= record_level_limit ? sampler_kind::records : sampler_kind::gibbs;
  } else {
    return sampler_kind::gibbs;
  }
}

}  // namespace privpost
