// privpost/mechanisms/above_threshold.hpp
// private_bound_search: AboveThreshold (sparse vector; Dwork & Roth 2014 Alg. 1) over doubling intervals, the private
// clipping bound of the partition quantile release (Amitai 2018 Sec. 4, corrected: the threshold is a fraction of M).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/random/exponential.hpp"
#include "privpost/core/random/os_random_engine.hpp"

namespace privpost {

/// The public settings of the bound search. All of them must be chosen without looking at the data (tuning them on
/// the private records is itself a leak).
struct bound_search_options {
  /// Centre c of every interval (public, data-independent).
  double center = 0.0;
  /// Half-width mu of the first interval I_0 = [c - mu, c + mu]; I_t has half-width mu 2^t.
  double base_half_width = 1.0;
  /// The search stops at the first t whose noisy count of partitions inside I_t reaches fraction * M (plus noise).
  /// A fraction near 1 gives the stopping index a long tail (the threshold noise is drawn once): keep
  /// fraction <= 1 - 3 (4 / epsilon) / M.
  double fraction = 0.9;
  /// The largest half-width, an a-priori plausible range (required): the search ends there if it has not stopped, so
  /// it tries t = 0, ..., ceil(log2(max_half_width / mu)).
  double max_half_width = 0.0;
};

/// The outcome of the search: the clipping interval [center - half_width, center + half_width] (public).
struct bound_search_result {
  /// The index t at which the search stopped (or the last index, when capped).
  int doublings = 0;
  /// The interval's centre (the option's, public).
  double center = 0.0;
  /// The interval's half-width: min(mu 2^t, max_half_width).
  double half_width = 0.0;
  /// True when no query passed and the search ended at max_half_width (still epsilon-DP: AboveThreshold's final "no").
  bool capped = false;
  /// The search's privacy cost, (epsilon_1, 0).
  privacy_budget budget;
};

/// The last index the search tries, ceil(log2(max_half_width / base_half_width)), after checking the options:
/// std::invalid_argument naming `who` for a centre that is not finite, a base half-width not finite and > 0, a
/// fraction outside (0, 1] or a max_half_width that is not finite and >= the base.
inline int bound_search_last_index(const char* who, const bound_search_options& o) {
  check_finite(who, "center", o.center);
  check_positive_finite(who, "base_half_width", o.base_half_width);
  if (!(o.fraction > 0.0 && o.fraction <= 1.0)) throw_invalid(who, "fraction", o.fraction, "a number in (0, 1]");
  if (!(std::isfinite(o.max_half_width) && o.max_half_width >= o.base_half_width))
    throw_invalid(who, "max_half_width", o.max_half_width,
                  "a finite number >= base_half_width = " + std::to_string(o.base_half_width) + " (required)");
  const double ratio = o.max_half_width / o.base_half_width;
  if (!std::isfinite(ratio)) throw_invalid(who, "max_half_width / base_half_width", ratio, "a finite ratio");
  return static_cast<int>(std::ceil(std::log2(ratio)));  // <= 2098 for finite doubles: the loop is bounded
}

namespace detail {
inline bool all_within(const std::vector<double>& values, double lo, double hi) {
  if (values.empty()) return false;
  for (double v : values)
    if (!(v >= lo && v <= hi)) return false;  // NaN is never inside
  return true;
}
}  // namespace detail

/// AboveThreshold over I_t = [c - mu 2^t, c + mu 2^t], t = 0, 1, ...: q_t = #{partitions j whose values all lie in
/// I_t} has sensitivity 1 (a record changes one partition), the threshold fraction * M + Lap(2 / epsilon1) is drawn
/// once and each q_t gets fresh Lap(4 / epsilon1) noise, which makes the stopping index epsilon1-DP (Dwork & Roth
/// Thm. 3.23). partition_values[j] holds partition j's outputs (for several quantile levels, all of them: the count
/// is of partitions, so the sensitivity stays 1); a NaN or empty entry counts as outside. Noise from engine g (studies
/// and tests). std::invalid_argument for fewer than 2 partitions, options outside their ranges (see
/// bound_search_options) or epsilon1 not finite and >= 2^-50.
template <random_engine G>
bound_search_result private_bound_search(std::span<const std::vector<double>> partition_values,
                                         const bound_search_options& options, double epsilon1, G& g) {
  constexpr const char* who = "private_bound_search";
  const int last = bound_search_last_index(who, options);
  check_epsilon(who, epsilon1);
  if (partition_values.size() < 2)
    throw_invalid(who, "number of partitions", static_cast<double>(partition_values.size()), "an integer >= 2");
  const double m = static_cast<double>(partition_values.size());
  const double threshold = options.fraction * m + draw_laplace(g, 0.0, 2.0 / epsilon1);
  bound_search_result r;
  r.center = options.center;
  r.budget = {epsilon1, 0.0};
  for (int t = 0; t <= last; ++t) {
    const double half = std::min(std::ldexp(options.base_half_width, t), options.max_half_width);
    std::size_t inside = 0;
    for (const auto& values : partition_values)
      if (detail::all_within(values, options.center - half, options.center + half)) ++inside;
    if (static_cast<double>(inside) + draw_laplace(g, 0.0, 4.0 / epsilon1) >= threshold) {
      r.doublings = t;
      r.half_width = half;
      return r;
    }
  }
  r.doublings = last;
  r.half_width = options.max_half_width;
  r.capped = true;
  return r;
}

/// The same with noise from the operating system's CSPRNG (the default for releases).
inline bound_search_result private_bound_search(std::span<const std::vector<double>> partition_values,
                                                const bound_search_options& options, double epsilon1) {
  os_random_engine g;
  return private_bound_search(partition_values, options, epsilon1, g);
}

}  // namespace privpost
