// privpost/mechanisms/partition_plan.hpp
// partition_plan: a uniformly random split of record positions 0..n-1 into M disjoint partitions whose sizes differ by
// at most one, the first step of sample and aggregate (Nissim et al. 2007; Amitai 2018 Sec. 2, spec A.2).
#pragma once

#include <cstddef>
#include <cstdint>
#include <numeric>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/random/os_random_engine.hpp"
#include "privpost/core/random/uniform.hpp"

namespace privpost {

/// Which records go to which partition. The assignment is a uniformly random permutation of the positions, never a
/// function of record values: under substitution neighbours a changed record keeps its position and so its partition,
/// which is what gives a mean of M partition outputs the sensitivity (output range) / M. Sizes are floor(n / M) or
/// ceil(n / M); the first n mod M partitions hold the extra record.
class partition_plan {
 public:
  /// A plan drawn from engine g (simulation studies and tests). std::invalid_argument unless partitions >= 2,
  /// min_partition_size >= 1 and every partition holds at least min_partition_size records
  /// (floor(n / partitions) >= min_partition_size; with the default 2: partitions <= n / 2).
  template <random_engine G>
  partition_plan(std::size_t n, std::size_t partitions, G& g, std::size_t min_partition_size = 2)
      : n_(n), partitions_(partitions) {
    check(n, partitions, min_partition_size);
    shuffle(g);
  }

  /// A plan drawn from the operating system's CSPRNG (the default for releases: a seeded plan would let whoever knows
  /// the seed know each record's partition, which the privacy argument does not need but the method should not leak).
  partition_plan(std::size_t n, std::size_t partitions, std::size_t min_partition_size = 2) : n_(n), partitions_(partitions) {
    check(n, partitions, min_partition_size);
    os_random_engine g;
    shuffle(g);
  }

  /// The number of partitions M.
  std::size_t partitions() const noexcept { return partitions_; }
  /// The number of records n.
  std::size_t records() const noexcept { return n_; }
  /// The number of records of partition j (floor(n / M) or ceil(n / M)). std::invalid_argument for j >= M.
  std::size_t size(std::size_t j) const {
    check_partition("partition_plan::size", j);
    return base_ + (j < extra_ ? 1 : 0);
  }
  /// The record positions (0-based) of partition j, in random order. std::invalid_argument for j >= M.
  std::span<const std::size_t> members(std::size_t j) const {
    check_partition("partition_plan::members", j);
    return std::span<const std::size_t>(order_).subspan(start(j), size(j));
  }
  /// The power n / n_j that tempers partition j's likelihood to the full data's (Li, Srivastava & Dunson 2017; Amitai
  /// 2018 Eq. 4.1). It equals M when every partition has n / M records.
  double likelihood_power(std::size_t j) const { return static_cast<double>(n_) / static_cast<double>(size(j)); }

 private:
  template <random_engine G>
  void shuffle(G& g) {
    base_ = n_ / partitions_;
    extra_ = n_ % partitions_;
    order_.resize(n_);
    std::iota(order_.begin(), order_.end(), std::size_t{0});
    // Fisher-Yates with exact uniform indices: every permutation has probability 1 / n!.
    for (std::size_t i = n_; i > 1; --i) {
      const auto k = static_cast<std::size_t>(draw_index(g, static_cast<std::uint64_t>(i)));
      std::swap(order_[i - 1], order_[k]);
    }
  }

  static void check(std::size_t n, std::size_t partitions, std::size_t min_partition_size) {
    constexpr const char* who = "partition_plan";
    if (partitions < 2) throw_invalid(who, "partitions", static_cast<double>(partitions), "an integer >= 2");
    if (min_partition_size < 1)
      throw_invalid(who, "min_partition_size", static_cast<double>(min_partition_size), "an integer >= 1");
    if (n / partitions < min_partition_size)
      throw_invalid(who, "partitions", static_cast<double>(partitions),
                    "at most n / min_partition_size = " + std::to_string(n / min_partition_size) + " (n = " + std::to_string(n) +
                        " records, at least " + std::to_string(min_partition_size) + " in every partition)");
  }
  void check_partition(const char* who, std::size_t j) const {
    if (j >= partitions_)
      throw_invalid(who, "partition", static_cast<double>(j), "an index below " + std::to_string(partitions_));
  }
  std::size_t start(std::size_t j) const noexcept { return j * base_ + (j < extra_ ? j : extra_); }

  std::size_t n_;
  std::size_t partitions_;
  std::size_t base_ = 0;
  std::size_t extra_ = 0;
  std::vector<std::size_t> order_;
};

}  // namespace privpost
