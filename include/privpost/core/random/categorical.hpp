// privpost/core/random/categorical.hpp
// alias_table: draws from a categorical distribution over D categories in O(1) after an O(D) build (Walker's alias
// method in Vose's numerically stable form, Vose 1991). The histogram sampler rebuilds it once per sweep from the
// current cell probabilities and draws one proposal per record from it.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <vector>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/random/uniform.hpp"

namespace privpost {

/// A categorical distribution over 0..D-1 with weights w_k (proportional to the probabilities), drawn in O(1).
///
///     alias_table t(std::vector<double>{0.2, 0.5, 0.3});
///     const std::size_t k = t.draw(g);  // P(k) = w_k / sum w
class alias_table {
 public:
  /// The most categories (indices are stored in 32 bits).
  static constexpr std::size_t max_categories = std::size_t{1} << 31;

  /// An empty table; build() before draw().
  alias_table() = default;
  /// The table of `weights` (see build).
  explicit alias_table(std::span<const double> weights) { build(weights); }

  /// Rebuilds the table from `weights`: every weight finite and >= 0, their sum finite and > 0, at least one and at
  /// most max_categories of them; std::invalid_argument otherwise (naming the first bad weight). Reuses the storage.
  void build(std::span<const double> weights) {
    const std::size_t d = weights.size();
    if (d < 1 || d > max_categories)
      throw_invalid("alias_table::build", "categories", static_cast<double>(d), "an integer in [1, 2^31]");
    double total = 0.0;
    for (std::size_t k = 0; k < d; ++k) {
      if (!(std::isfinite(weights[k]) && weights[k] >= 0.0))
        throw_invalid("alias_table::build", "weight " + std::to_string(k), weights[k], "a finite number >= 0");
      total += weights[k];
    }
    if (!(total > 0.0 && std::isfinite(total)))
      throw_invalid("alias_table::build", "sum of weights", total, "a finite number > 0");
    probability_.resize(d);
    alias_.resize(d);
    small_.clear();
    large_.clear();
    small_.reserve(d);  // once: the lists' lengths vary between builds, their capacity then never does
    large_.reserve(d);
    // Scaled weights d w_k / sum w average 1: categories below 1 are topped up by one above 1 (Vose's two worklists,
    // which keep the rounding of the running excess from pushing a large category below zero).
    const double scale = static_cast<double>(d) / total;
    for (std::size_t k = 0; k < d; ++k) {
      probability_[k] = weights[k] * scale;
      alias_[k] = static_cast<std::uint32_t>(k);
      (probability_[k] < 1.0 ? small_ : large_).push_back(static_cast<std::uint32_t>(k));
    }
    while (!small_.empty() && !large_.empty()) {
      const std::uint32_t s = small_.back(), l = large_.back();
      small_.pop_back();
      large_.pop_back();
      alias_[s] = l;
      probability_[l] = (probability_[l] + probability_[s]) - 1.0;
      (probability_[l] < 1.0 ? small_ : large_).push_back(l);
    }
    // What is left on either list is 1 up to rounding: it keeps its own category.
    for (std::uint32_t k : large_) probability_[k] = 1.0;
    for (std::uint32_t k : small_) probability_[k] = 1.0;
    threshold_.resize(d);
    for (std::size_t k = 0; k < d; ++k)
      threshold_[k] = probability_[k] >= 1.0 ? (std::uint64_t{1} << 53)
                                             : static_cast<std::uint64_t>(std::ldexp(std::max(probability_[k], 0.0), 53));
  }

  /// The number of categories (0 before build).
  std::size_t size() const noexcept { return probability_.size(); }

  /// One draw from 53 random bits k: the column is floor(k D / 2^53) and the remainder k D mod 2^53 is compared with
  /// the column's keep threshold (its probability in units of 2^-53), all in integers, so the probabilities are exact
  /// to D 2^-53. Precondition: built.
  template <random_engine G>
  std::size_t draw(G& g) const {
    const std::uint64_t k = detail::bits53(g);
    // k D (< 2^84) from 32-bit halves: hi holds its bits 32 and up, lo's low 32 bits its bits 0-31.
    const std::uint64_t d = threshold_.size(), lo = (k & 0xFFFFFFFFull) * d, hi = (k >> 32) * d + (lo >> 32);
    const auto column = static_cast<std::size_t>(hi >> 21);
    const std::uint64_t remainder = ((hi & ((std::uint64_t{1} << 21) - 1)) << 32) | (lo & 0xFFFFFFFFull);
    // Keep or alias without a branch: the comparison is a coin flip per draw, and a mispredicted branch would cost
    // more than the rest of the draw.
    const std::uint64_t keep = std::uint64_t{0} - static_cast<std::uint64_t>(remainder < threshold_[column]);
    return static_cast<std::size_t>((column & keep) | (std::uint64_t{alias_[column]} & ~keep));
  }

  /// The probability of category k that draw() realises (tests): (keep_k + sum of the columns aliased to k) / D, the
  /// keep fractions as the integer thresholds draw() compares with.
  double probability(std::size_t k) const {
    if (k >= threshold_.size()) throw_invalid("alias_table::probability", "k", static_cast<double>(k), "a category of the table");
    constexpr double unit = 0x1.0p-53;
    double p = static_cast<double>(threshold_[k]) * unit;
    for (std::size_t c = 0; c < threshold_.size(); ++c)
      if (alias_[c] == k && c != k) p += 1.0 - static_cast<double>(threshold_[c]) * unit;
    return p / static_cast<double>(threshold_.size());
  }

 private:
  std::vector<double> probability_;
  std::vector<std::uint64_t> threshold_;  // probability_ in units of 2^-53
  std::vector<std::uint32_t> alias_;
  std::vector<std::uint32_t> small_, large_;
};

}  // namespace privpost
