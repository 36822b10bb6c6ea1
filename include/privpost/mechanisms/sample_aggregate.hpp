// privpost/mechanisms/sample_aggregate.hpp
// Sample and aggregate releases of posterior probabilities Pr(theta <= b) and quantiles (Amitai 2018 Ch. 3-4, with
// the corrections of the partition-release spec A.3-A.5): per-partition outputs, range-checked, aggregated, Laplace noise.
#pragma once

#include <algorithm>
#include <boost/math/distributions/chi_squared.hpp>
#include <cmath>
#include <cstddef>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/math/normal_tail.hpp"
#include "privpost/core/random/exponential.hpp"
#include "privpost/core/random/os_random_engine.hpp"
#include "privpost/mechanisms/above_threshold.hpp"

namespace privpost {

/// How the M partition probabilities p_j(b) become one released probability.
enum class probability_combiner {
  /// Eq. 3.9-3.10 as published: Phi(sqrt(M) Phi^{-1}(mean p_j + noise)). Kept to reproduce the thesis; it returns a
  /// CDF with twice the posterior variance (partition estimates scatter with the partition posterior's own
  /// variance), so it over-states probabilities below the posterior mean and under-states them above.
  normality,
  /// The default: Phi(sqrt(2 M) Phi^{-1}(mean p_j + noise)), the normal-theory correction of Eq. 3.10.
  normality_corrected,
  /// Fisher's -2 log p (Eq. 3.15-3.16): 1 - F_{chi2, 2M}(sum_j min(-2 log p_j, -2 log p*) + noise), with the noise of
  /// the sum (scale -2 log(p*) / epsilon; the thesis's scale is M times too small). A heuristic away from the truth.
  fisher,
  /// Stouffer's combination with clipped z-scores (an extension): Phi(sqrt(M) (mean clip(Phi^{-1}(p_j), -c, c) + noise)).
  stouffer_clipped,
};

/// The combiner's name as the tools and release records spell it ("normality", "normality-corrected", "fisher",
/// "stouffer-clipped").
inline std::string_view combiner_name(probability_combiner c) {
  switch (c) {
    case probability_combiner::normality:
      return "normality";
    case probability_combiner::normality_corrected:
      return "normality-corrected";
    case probability_combiner::fisher:
      return "fisher";
    case probability_combiner::stouffer_clipped:
      return "stouffer-clipped";
  }
  throw_invalid("combiner_name", "combiner", static_cast<double>(static_cast<int>(c)), "one of the four combiners");
}

/// The combiner named name (combiner_name's spelling). std::invalid_argument otherwise.
inline probability_combiner parse_probability_combiner(std::string_view name) {
  for (auto c : {probability_combiner::normality, probability_combiner::normality_corrected, probability_combiner::fisher,
                 probability_combiner::stouffer_clipped})
    if (name == combiner_name(c)) return c;
  throw std::invalid_argument("parse_probability_combiner: combiner is '" + std::string(name) +
                              "'; accepted: normality, normality-corrected, fisher, stouffer-clipped");
}

/// The public settings of a probability release (choose them without looking at the data).
struct probability_release_options {
  /// How the partition probabilities are combined.
  probability_combiner combiner = probability_combiner::normality_corrected;
  /// The budget of this release, all cutoffs together (the L1 sensitivity covers the vector of cutoffs).
  double epsilon = 0.0;
  /// fisher: each -2 log p_j is capped at -2 log p*, in (0, 1).
  double p_star = 1e-3;
  /// stouffer_clipped: each z-score is clipped to [-z_clip, z_clip], z_clip > 0.
  double z_clip = 3.0;
  /// The probability that replaces a partition output that is NaN, outside [0, 1] or missing (data-independent).
  double fallback = 0.5;
};

/// What every partition release reports: M, its cost, the Laplace noise of its aggregate vector and that vector.
struct partition_aggregate_release {
  /// The number of partitions M.
  std::size_t partitions = 0;
  /// The whole privacy cost.
  privacy_budget budget;
  /// The L1 sensitivity of the aggregate vector (each release's comment says which).
  double sensitivity = 0.0;
  /// The Laplace scale of each coordinate's noise, sensitivity / epsilon.
  double noise_scale = 0.0;
  /// The differentially private quantity: the aggregate over partitions plus noise, one per cutoff or level.
  std::vector<double> noisy_aggregate;
  /// Partition outputs replaced by the fallback. Private: never publish it (it depends on the data).
  std::size_t fallbacks = 0;
};

namespace detail {
// [a - t, a + t] for the aggregate's coordinate k, t = noise_scale ln(1 / alpha) (Laplace: Pr(|eta| > t) = alpha);
// std::invalid_argument naming `index` for k out of range, or alpha outside (0, 1).
inline std::pair<double, double> noise_only_aggregate(const partition_aggregate_release& r, const char* index, std::size_t k,
                                                      double alpha) {
  constexpr const char* who = "noise_only_interval";
  if (k >= r.noisy_aggregate.size())
    throw_invalid(who, index, static_cast<double>(k), "an index below " + std::to_string(r.noisy_aggregate.size()));
  if (!(alpha > 0.0 && alpha < 1.0)) throw_invalid(who, "alpha", alpha, "a number in (0, 1)");
  const double t = r.noise_scale * std::log(1.0 / alpha);
  return {r.noisy_aggregate[k] - t, r.noisy_aggregate[k] + t};
}
}  // namespace detail

/// A released vector of posterior probabilities Pr(theta <= b_k), k = 1..K, and all an analyst needs to recompute
/// its post-processing and the noise-only intervals. The cost is (epsilon, 0); the aggregate's L1 sensitivity K/M
/// (normality), K (-2 log p*) (fisher), 2 K c / M (stouffer).
struct probability_release : partition_aggregate_release {
  /// The cutoffs b_1 < ... < b_K (public, chosen before the release).
  std::vector<double> cutoffs;
  /// The settings of the release (epsilon, combiner, p*, z_clip, fallback).
  probability_release_options options;
  /// The released probabilities: the combiner's map of noisy_aggregate, made non-decreasing in the cutoff
  /// (pool-adjacent-violators; post-processing, free of privacy cost).
  std::vector<double> probability;
};

namespace detail {
inline void check_probability_options(const char* who, const probability_release_options& o, bool need_epsilon) {
  if (need_epsilon) check_epsilon(who, o.epsilon);
  if (!(o.p_star > 0.0 && o.p_star < 1.0)) throw_invalid(who, "p_star", o.p_star, "a number in (0, 1)");
  check_positive_finite(who, "z_clip", o.z_clip);
  if (!(o.fallback >= 0.0 && o.fallback <= 1.0)) throw_invalid(who, "fallback", o.fallback, "a probability in [0, 1]");
}

inline void check_partition_count(const char* who, std::size_t m) {
  if (m < 2) throw_invalid(who, "number of partitions", static_cast<double>(m), "an integer >= 2");
}

inline void check_increasing(const char* who, const char* name, std::span<const double> xs) {
  if (xs.empty()) throw_invalid(who, std::string("number of ") + name, 0.0, "at least 1");
  for (std::size_t k = 0; k < xs.size(); ++k) {
    check_finite(who, name, xs[k]);
    if (k > 0 && !(xs[k] > xs[k - 1]))
      throw_invalid(who, name, xs[k], "strictly increasing values (the one before is " + format_value(xs[k - 1]) + ")");
  }
}

}  // namespace detail

/// Pool-adjacent-violators: replaces y by the non-decreasing sequence closest to it in least squares (equal weights).
inline void make_nondecreasing(std::vector<double>& y) {
  std::vector<double> level;
  std::vector<std::size_t> count;
  for (double v : y) {
    level.push_back(v);
    count.push_back(1);
    while (level.size() > 1 && level[level.size() - 2] > level.back()) {
      const std::size_t c = count[count.size() - 2] + count.back();
      const double merged = (level[level.size() - 2] * static_cast<double>(count[count.size() - 2]) +
                             level.back() * static_cast<double>(count.back())) /
                            static_cast<double>(c);
      level.pop_back();
      count.pop_back();
      level.back() = merged;
      count.back() = c;
    }
  }
  std::size_t i = 0;
  for (std::size_t b = 0; b < level.size(); ++b)
    for (std::size_t k = 0; k < count[b]; ++k) y[i++] = level[b];
}

/// The term a partition contributes for probability p in [0, 1]: p (normality), min(-2 log p, -2 log p*) (fisher),
/// clip(Phi^{-1}(p), -c, c) (stouffer_clipped). Every term lies in a fixed range, which bounds the sensitivity.
inline double sample_aggregate_term(const probability_release_options& o, double p) {
  switch (o.combiner) {
    case probability_combiner::normality:
    case probability_combiner::normality_corrected:
      return p;
    case probability_combiner::fisher:
      return p > 0.0 ? std::min(-2.0 * std::log(p), -2.0 * std::log(o.p_star)) : -2.0 * std::log(o.p_star);
    case probability_combiner::stouffer_clipped:
      return std::clamp(normal_quantile(p), -o.z_clip, o.z_clip);
  }
  return p;
}

/// The sensitivity of one coordinate of the aggregate over M partitions (a record changes one partition's term):
/// 1/M for the means of probabilities, -2 log p* for Fisher's sum, 2 c / M for the mean of clipped z-scores.
inline double sample_aggregate_sensitivity(const probability_release_options& o, std::size_t partitions) {
  const double m = static_cast<double>(partitions);
  switch (o.combiner) {
    case probability_combiner::normality:
    case probability_combiner::normality_corrected:
      return 1.0 / m;
    case probability_combiner::fisher:
      return -2.0 * std::log(o.p_star);
    case probability_combiner::stouffer_clipped:
      return 2.0 * o.z_clip / m;
  }
  return 1.0 / m;
}

/// The combiner's post-processing map from an (noisy) aggregate to a probability; monotone in the aggregate
/// (increasing, except decreasing for fisher). A mean of probabilities outside [0, 1] is clamped first, Phi^{-1}(0)
/// = -inf and Phi^{-1}(1) = +inf; a negative Fisher sum gives 1.
inline double combined_probability(const probability_release_options& o, std::size_t partitions, double aggregate) {
  const double m = static_cast<double>(partitions);
  switch (o.combiner) {
    case probability_combiner::normality:
      return normal_cdf(std::sqrt(m) * normal_quantile(std::clamp(aggregate, 0.0, 1.0)));
    case probability_combiner::normality_corrected:
      return normal_cdf(std::sqrt(2.0 * m) * normal_quantile(std::clamp(aggregate, 0.0, 1.0)));
    case probability_combiner::fisher:
      if (!(aggregate > 0.0)) return 1.0;
      return boost::math::cdf(boost::math::complement(boost::math::chi_squared_distribution<double>(2.0 * m), aggregate));
    case probability_combiner::stouffer_clipped:
      return normal_cdf(std::sqrt(m) * aggregate);
  }
  return 0.5;
}

/// The checks of release_posterior_probabilities, without the partition outputs (so that a tool can refuse its
/// arguments before it charges a ledger or runs a posterior): std::invalid_argument naming `who` for cutoffs that are
/// not finite and strictly increasing or options outside their ranges (see probability_release_options).
inline void check_probability_release(const char* who, std::span<const double> cutoffs,
                                      const probability_release_options& options) {
  detail::check_increasing(who, "cutoffs", cutoffs);
  detail::check_probability_options(who, options, true);
}

/// The checks of release_posterior_quantiles' levels: std::invalid_argument naming `who` unless they are strictly
/// increasing in (0, 1).
inline void check_quantile_levels(const char* who, std::span<const double> levels) {
  detail::check_increasing(who, "levels", levels);
  for (double p : levels)
    if (!(p > 0.0 && p < 1.0)) throw_invalid(who, "level", p, "a number in (0, 1)");
}

/// The aggregate of the partition probabilities without noise, one per cutoff: the mean (normality, stouffer) or the
/// sum (fisher) of the terms. partition_probabilities[j][k] is partition j's Pr(theta <= b_k); an entry that is NaN or
/// outside [0, 1], or a partition whose vector does not have `cutoffs` entries, takes options.fallback (counted in
/// `fallbacks`, which is private). For studies and for the release below.
inline std::vector<double> aggregate_partition_probabilities(std::span<const std::vector<double>> partition_probabilities,
                                                             std::size_t cutoffs, const probability_release_options& options,
                                                             std::size_t& fallbacks) {
  constexpr const char* who = "aggregate_partition_probabilities";
  detail::check_partition_count(who, partition_probabilities.size());
  detail::check_probability_options(who, options, false);
  if (cutoffs < 1) throw_invalid(who, "cutoffs", 0.0, "at least 1");
  std::vector<double> sum(cutoffs, 0.0);
  for (const auto& p : partition_probabilities) {
    const bool shaped = p.size() == cutoffs;
    for (std::size_t k = 0; k < cutoffs; ++k) {
      double v = shaped ? p[k] : options.fallback;
      if (!(v >= 0.0 && v <= 1.0)) v = options.fallback;  // NaN too
      if (!shaped || v != p[k]) ++fallbacks;
      sum[k] += sample_aggregate_term(options, v);
    }
  }
  if (options.combiner != probability_combiner::fisher)
    for (double& s : sum) s /= static_cast<double>(partition_probabilities.size());
  return sum;
}

/// Releases Pr(theta <= b_k) for every cutoff: aggregate (above), Laplace noise of scale K * (coordinate
/// sensitivity) / epsilon on each coordinate (the L1 sensitivity of the whole vector, so the release is
/// options.epsilon-DP under substitution of one record, whatever the partition posteriors are), then the combiner's
/// map and a non-decreasing projection. Noise from engine g (studies and tests). std::invalid_argument for fewer than
/// 2 partitions, cutoffs that are not finite and strictly increasing, or options outside their ranges.
template <random_engine G>
probability_release release_posterior_probabilities(std::span<const std::vector<double>> partition_probabilities,
                                                    std::span<const double> cutoffs, const probability_release_options& options,
                                                    G& g) {
  constexpr const char* who = "release_posterior_probabilities";
  detail::check_partition_count(who, partition_probabilities.size());
  check_probability_release(who, cutoffs, options);
  probability_release r;
  r.cutoffs.assign(cutoffs.begin(), cutoffs.end());
  r.options = options;
  r.partitions = partition_probabilities.size();
  r.budget = {options.epsilon, 0.0};
  r.sensitivity = static_cast<double>(cutoffs.size()) * sample_aggregate_sensitivity(options, r.partitions);
  r.noise_scale = r.sensitivity / options.epsilon;
  if (!std::isfinite(r.noise_scale)) throw_invalid(who, "sensitivity / epsilon", r.noise_scale, "a finite noise scale");
  r.noisy_aggregate = aggregate_partition_probabilities(partition_probabilities, cutoffs.size(), options, r.fallbacks);
  for (double& a : r.noisy_aggregate) a = draw_laplace(g, a, r.noise_scale);
  r.probability.resize(cutoffs.size());
  for (std::size_t k = 0; k < cutoffs.size(); ++k)
    r.probability[k] = combined_probability(options, r.partitions, r.noisy_aggregate[k]);
  make_nondecreasing(r.probability);
  return r;
}

/// The same with noise from the operating system's CSPRNG (the default for releases).
inline probability_release release_posterior_probabilities(std::span<const std::vector<double>> partition_probabilities,
                                                           std::span<const double> cutoffs,
                                                           const probability_release_options& options) {
  os_random_engine g;
  return release_posterior_probabilities(partition_probabilities, cutoffs, options, g);
}

/// A (1 - alpha) interval for the noiseless probability at cutoff k given the release, from the noise alone: the
/// combiner's monotone map of [a - t, a + t], a the noisy aggregate and t = noise_scale ln(1 / alpha) (Laplace:
/// Pr(|eta| > t) = alpha). It does not include the method's approximation error. std::invalid_argument for k out of
/// range or alpha outside (0, 1).
inline std::pair<double, double> noise_only_interval(const probability_release& r, std::size_t k, double alpha) {
  const auto [lo, hi] = detail::noise_only_aggregate(r, "k", k, alpha);
  const double a = combined_probability(r.options, r.partitions, lo);
  const double b = combined_probability(r.options, r.partitions, hi);
  return {std::min(a, b), std::max(a, b)};
}

/// A released vector of posterior quantiles at levels p_1 < ... < p_L, and all an analyst needs to recompute it. The
/// aggregate is mean_j clip(Q_j(p_l)) in level order, of L1 sensitivity L 2 b / M and noise scale sensitivity /
/// epsilon_2; the cost is (epsilon_1 + epsilon_2, 0) by sequential composition; the fallback is the centre.
struct quantile_release : partition_aggregate_release {
  /// The levels, in (0, 1), strictly increasing.
  std::vector<double> levels;
  /// The private clipping interval (the bound search's result, itself a release).
  bound_search_result bounds;
  /// The budget of the quantile values, epsilon_2 (the bound search's epsilon_1 is in bounds.budget).
  double epsilon_values = 0.0;
  /// The released quantiles: noisy_aggregate sorted (so that intervals never cross; post-processing).
  std::vector<double> values;
};

/// The mean over partitions of each level's quantile clipped to [center - half_width, center + half_width] (half_width
/// may be +infinity: no clipping, for studies). partition_quantiles[j][l] is partition j's quantile at level l; a
/// non-finite entry, or a partition whose vector does not have `levels` entries, takes the centre (counted in
/// `fallbacks`, private).
inline std::vector<double> aggregate_partition_quantiles(std::span<const std::vector<double>> partition_quantiles,
                                                         std::size_t levels, double center, double half_width,
                                                         std::size_t& fallbacks) {
  constexpr const char* who = "aggregate_partition_quantiles";
  detail::check_partition_count(who, partition_quantiles.size());
  if (levels < 1) throw_invalid(who, "levels", 0.0, "at least 1");
  check_finite(who, "center", center);
  if (!(half_width > 0.0)) throw_invalid(who, "half_width", half_width, "a number > 0 (+infinity: no clipping)");
  std::vector<double> sum(levels, 0.0);
  for (const auto& q : partition_quantiles) {
    const bool shaped = q.size() == levels;
    for (std::size_t l = 0; l < levels; ++l) {
      double v = shaped ? q[l] : center;
      if (!std::isfinite(v)) v = center;
      if (!shaped || v != q[l]) ++fallbacks;
      sum[l] += std::clamp(v, center - half_width, center + half_width);
    }
  }
  for (double& s : sum) s /= static_cast<double>(partition_quantiles.size());
  return sum;
}

/// Releases the quantiles at `levels`: each partition's quantiles clipped to the bound search's interval, averaged
/// (the one-dimensional Wasserstein barycentre's quantile; Amitai Eq. 4.4, a mean: Eq. 4.3's sum is a typo), plus
/// Laplace noise of scale L 2 b / (M epsilon2) per coordinate, then sorted. epsilon2-DP given the interval; with the
/// search, epsilon1 + epsilon2. Noise from engine g. std::invalid_argument for fewer than 2 partitions, levels not
/// strictly increasing in (0, 1), an interval that is not finite with half-width > 0, or epsilon2 not finite and >= 2^-50.
template <random_engine G>
quantile_release release_posterior_quantiles(std::span<const std::vector<double>> partition_quantiles,
                                             std::span<const double> levels, const bound_search_result& bounds, double epsilon2,
                                             G& g) {
  constexpr const char* who = "release_posterior_quantiles";
  detail::check_partition_count(who, partition_quantiles.size());
  check_quantile_levels(who, levels);
  check_finite(who, "bounds.center", bounds.center);
  check_positive_finite(who, "bounds.half_width", bounds.half_width);
  check_nonnegative_finite(who, "bounds.budget.epsilon", bounds.budget.epsilon);
  check_epsilon(who, epsilon2);
  quantile_release r;
  r.levels.assign(levels.begin(), levels.end());
  r.partitions = partition_quantiles.size();
  r.bounds = bounds;
  r.epsilon_values = epsilon2;
  r.budget = {bounds.budget.epsilon + epsilon2, 0.0};
  r.sensitivity = static_cast<double>(levels.size()) * 2.0 * bounds.half_width / static_cast<double>(r.partitions);
  r.noise_scale = r.sensitivity / epsilon2;
  if (!std::isfinite(r.noise_scale)) throw_invalid(who, "sensitivity / epsilon2", r.noise_scale, "a finite noise scale");
  r.noisy_aggregate =
      aggregate_partition_quantiles(partition_quantiles, levels.size(), bounds.center, bounds.half_width, r.fallbacks);
  for (double& a : r.noisy_aggregate) a = draw_laplace(g, a, r.noise_scale);
  r.values = r.noisy_aggregate;
  std::sort(r.values.begin(), r.values.end());
  return r;
}

/// The same with noise from the operating system's CSPRNG (the default for releases).
inline quantile_release release_posterior_quantiles(std::span<const std::vector<double>> partition_quantiles,
                                                    std::span<const double> levels, const bound_search_result& bounds,
                                                    double epsilon2) {
  os_random_engine g;
  return release_posterior_quantiles(partition_quantiles, levels, bounds, epsilon2, g);
}

/// A (1 - alpha) interval for the noiseless clipped mean at level l from the noise alone: noisy_aggregate[l] -+
/// noise_scale ln(1 / alpha). std::invalid_argument for l out of range or alpha outside (0, 1).
inline std::pair<double, double> noise_only_interval(const quantile_release& r, std::size_t l, double alpha) {
  return detail::noise_only_aggregate(r, "l", l, alpha);
}

/// Simultaneous (1 - alpha) intervals for the noiseless clipped means at every level, from the noise alone, each
/// centred on its own row's released (sorted) value: values[l] -+ t with t = noise_scale ln(1 / (1 - (1 - alpha)^(1/L))),
/// so that all L independent Laplace noises are below t together with probability 1 - alpha. Sorting keeps the cover:
/// the noiseless means are non-decreasing in the level (each partition's quantiles are, and so are their clipped mean),
/// and for a non-decreasing q, max_l |sorted(a)_l - q_l| <= max_l |a_l - q_l|. (noise_only_interval's interval at l is
/// centred on the unsorted aggregate, which after a swap is another row's released value.) std::invalid_argument for
/// alpha outside (0, 1) or a release without levels.
inline std::vector<std::pair<double, double>> noise_only_intervals(const quantile_release& r, double alpha) {
  constexpr const char* who = "noise_only_intervals";
  if (!(alpha > 0.0 && alpha < 1.0)) throw_invalid(who, "alpha", alpha, "a number in (0, 1)");
  if (r.values.empty()) throw_invalid(who, "number of released values", 0.0, "at least 1");
  const double each = -std::expm1(std::log1p(-alpha) / static_cast<double>(r.values.size()));  // 1 - (1 - alpha)^(1/L)
  const double t = r.noise_scale * std::log(1.0 / each);
  std::vector<std::pair<double, double>> out;
  out.reserve(r.values.size());
  for (double v : r.values) out.emplace_back(v - t, v + t);
  return out;
}

}  // namespace privpost
