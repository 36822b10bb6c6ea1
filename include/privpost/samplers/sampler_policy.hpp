// privpost/samplers/sampler_policy.hpp
// The default choice of sampler for a single release of an exponential family's sum (docs/exact-sums.md,
// "Which sampler"): exact where it is cheap, Gibbs-SS with the Metropolis-Hastings correction where n is large.
//
//     const sampler_kind kind = default_sampler<binomial_family>(n);   // or sampler_kind_from_string(name)
//     visit_sampler(kind, prior, mechanism, z, n, {}, [&](auto make) { result = infer(make, options); });
//
// visit_sampler builds the sampler a kind names for one release and hands its factory (make(g), as infer takes it) to
// the caller's visitor: the policy's choice and a user's named choice take one path, and a program (the tools, the
// calibration studies) chooses samplers by the same code a library user runs.
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

#include <Eigen/Core>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/interval.hpp"
#include "privpost/samplers/gibbs_ss.hpp"
#include "privpost/samplers/gibbs_ss_corrected.hpp"
#include "privpost/samplers/gibbs_ss_exact.hpp"
#include "privpost/samplers/gibbs_ss_truncated.hpp"
#include "privpost/samplers/record_augmented.hpp"

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

/// How visit_sampler builds a sampler beyond the release itself. A setting the chosen kind does not use must keep its
/// default (visit_sampler refuses it rather than ignore it).
struct sampler_build {
  /// Collapsed moves a sweep (gibbs_ss::set_collapsed_moves, >= 0): sampler_kind::gibbs of a release without
  /// truncation only.
  int collapsed_moves = 0;
  /// How record_gibbs starts its chains: sampler_kind::records only.
  record_init init = record_init::prior;
  /// Set: the release summed a record's statistic when it lay in [lo, hi] and dropped the record otherwise (the
  /// truncated release of a truncatable_family, mechanisms/ssp.hpp): gibbs_ss_truncated for sampler_kind::gibbs and
  /// record_gibbs with dropped_contribution for sampler_kind::records. Unset: the records' statistics were summed as
  /// they are (a bounded family).
  std::optional<interval> dropped_outside{};
};

namespace detail {
// Whether each kind's sampler accepts Prior and Mechanism, as the sampler's own constraints state it (the one place
// both sampler_refusal and visit_sampler ask). A truncated release's record-level sampler needs the dropped
// contribution to be a record_contribution of the family, not only the plain sampler.
template <class Prior, class Mechanism>
inline constexpr bool builds_gibbs = requires {
  typename gibbs_ss<family_model<typename Prior::family>, Prior, Mechanism>;
};
template <class Prior, class Mechanism>
inline constexpr bool builds_gibbs_truncated = requires {
  typename gibbs_ss_truncated<Prior, Mechanism>;
};
template <class Prior, class Mechanism>
inline constexpr bool builds_exact = requires {
  typename gibbs_ss_exact<Prior, Mechanism>;
};
template <class Prior, class Mechanism>
inline constexpr bool builds_corrected = requires {
  typename gibbs_ss_corrected<Prior, Mechanism>;
};
template <class Prior, class Mechanism>
inline constexpr bool builds_records = requires {
  typename record_gibbs<Prior, Mechanism>;
};
template <class Prior, class Mechanism>
inline constexpr bool builds_records_truncated = truncatable_family<typename Prior::family>&& requires {
  typename record_gibbs<Prior, Mechanism, dropped_contribution<typename Prior::family>>;
};

// Why `kind` cannot be built for Prior and Mechanism under `build`, or nothing when it can: the kinds' requirements
// (above), then the settings each kind uses.
template <conjugate_prior Prior, class Mechanism>
std::optional<std::string> sampler_refusal(sampler_kind kind, const sampler_build& build) {
  const bool truncated = build.dropped_outside.has_value();
  std::optional<std::string> why;
  switch (kind) {
    case sampler_kind::gibbs:
      if (truncated && !builds_gibbs_truncated<Prior, Mechanism>)
        why =
            "applies to a truncated release only for a truncatable_family (Poisson, exponential, normal) and a "
            "scale-mixture mechanism (Laplace, Gaussian)";
      else if (!truncated && !builds_gibbs<Prior, Mechanism>)
        why = "needs a scale-mixture mechanism (Laplace, Gaussian) and a family with conjugate updates";
      break;
    case sampler_kind::exact:
      if (!builds_exact<Prior, Mechanism>)
        why = "applies to a finite_sum_family only (the binomial: its sum enumerated over 0..n)";
      break;
    case sampler_kind::corrected:
      if (!builds_corrected<Prior, Mechanism>)
        why = "applies to an integer_sum_family (binomial, Poisson) with a scale-mixture mechanism (Laplace, Gaussian) only";
      break;
    case sampler_kind::records:
      if (!builds_records<Prior, Mechanism>)
        why = "applies to a family that draws records (record_generating_family) only";
      else if (truncated && !builds_records_truncated<Prior, Mechanism>)
        why = "applies to a truncated release only for a truncatable_family (records dropped outside the bounds)";
      break;
  }
  if (!why && (kind == sampler_kind::exact || kind == sampler_kind::corrected) && truncated)
    why = "applies to a release without truncation only";
  if (!why && build.collapsed_moves != 0 && !(kind == sampler_kind::gibbs && !truncated))
    why = "takes no collapsed moves (they apply to sampler_kind gibbs of a release without truncation)";
  if (!why && build.init != record_init::prior && kind != sampler_kind::records)
    why = "takes no record_init (it applies to sampler_kind records)";
  return why;
}
}  // namespace detail

/// std::invalid_argument naming the kind and why, unless visit_sampler can build `kind` for Prior and Mechanism under
/// `build`: a program calls it before anything else happens (before a budget is charged, a file written).
template <conjugate_prior Prior, class Mechanism>
void check_sampler_applies(sampler_kind kind, const sampler_build& build) {
  if (build.collapsed_moves < 0)
    throw_invalid("check_sampler_applies", "collapsed_moves", build.collapsed_moves, "a whole number >= 0");
  if (const auto why = detail::sampler_refusal<Prior, Mechanism>(kind, build))
    throw std::invalid_argument("sampler " + to_string(kind) + " " + *why);
}

/// Builds the sampler of `kind` for the release z of n records (prior, mechanism and build as above) and calls
/// visit(make), where make(g) returns a new chain of that sampler from engine g (what infer, run and single_chain take;
/// make owns copies of the release, so it outlives this call). Returns what visit returns, which must be one type for
/// every kind. The samplers: gibbs_ss (gibbs; with build.collapsed_moves), gibbs_ss_truncated (gibbs of a truncated
/// release), gibbs_ss_exact (exact), gibbs_ss_corrected (corrected), record_gibbs (records; build.init, and
/// dropped_contribution for a truncated release). std::invalid_argument as check_sampler_applies before visit is called;
/// the sampler's own checks of z and n when make runs.
template <conjugate_prior Prior, class Mechanism, class Visitor>
decltype(auto) visit_sampler(sampler_kind kind, const Prior& prior, const Mechanism& mechanism, const Eigen::VectorXd& z,
                             double n, const sampler_build& build, Visitor&& visit) {
  check_sampler_applies<Prior, Mechanism>(kind, build);
  using F = typename Prior::family;
  // Only the kinds that apply are instantiated: each branch is discarded where its sampler does not accept the types.
  if (kind == sampler_kind::gibbs && build.dropped_outside) {
    if constexpr (detail::builds_gibbs_truncated<Prior, Mechanism>)
      return visit([=, bounds = *build.dropped_outside](auto& g) {
        return gibbs_ss_truncated(prior, mechanism, z, n, bounds.lo, bounds.hi, g);
      });
  } else if (kind == sampler_kind::gibbs) {
    if constexpr (detail::builds_gibbs<Prior, Mechanism>)
      return visit([=, moves = build.collapsed_moves](auto& g) {
        gibbs_ss chain(prior, mechanism, z, n, g);
        chain.set_collapsed_moves(moves);
        return chain;
      });
  } else if (kind == sampler_kind::exact) {
    if constexpr (detail::builds_exact<Prior, Mechanism>)
      return visit([=](auto& g) { return gibbs_ss_exact(prior, mechanism, z, n, g); });
  } else if (kind == sampler_kind::corrected) {
    if constexpr (detail::builds_corrected<Prior, Mechanism>)
      return visit([=](auto& g) { return gibbs_ss_corrected(prior, mechanism, z, n, g); });
  } else if (build.dropped_outside) {
    if constexpr (detail::builds_records_truncated<Prior, Mechanism>)
      return visit([=, init = build.init, bounds = *build.dropped_outside](auto& g) {
        return record_gibbs(prior, mechanism, z, n, g, init, dropped_contribution<F>(bounds.lo, bounds.hi));
      });
  } else {
    if constexpr (detail::builds_records<Prior, Mechanism>)
      return visit([=, init = build.init](auto& g) { return record_gibbs(prior, mechanism, z, n, g, init); });
  }
  // check_sampler_applies refused every kind whose branch is discarded above.
  throw std::logic_error("visit_sampler: sampler " + to_string(kind) + " passed its checks but has no branch");
}

}  // namespace privpost
