// privpost/mechanisms/ssp.hpp
// bounded_statistic: sufficient-statistic perturbation with declared record bounds. Each coordinate's range comes from
// interval arithmetic over the box (never from the data); records outside are clamped or dropped (dissertation Sec. 4.3.1).
#pragma once

#include <Eigen/Core>
#include <array>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/interval.hpp"
#include "privpost/core/math/exact_sum.hpp"
#include "privpost/core/random/os_random_engine.hpp"

namespace privpost {

/// What happens to a record with a coordinate outside the declared box.
enum class out_of_bounds {
  clamp,  ///< each coordinate is moved to the nearest bound; the record always contributes t(clamp(x)).
  drop    ///< the record contributes 0 (the dissertation's truncated models, Sec. 4.3, assume this).
};

/// A sum of per-record statistics with sensitivity from declared bounds.
template <std::size_t P, per_record_statistic<P> Statistic>
class bounded_statistic {
 public:
  /// A record: P coordinates.
  using record_type = std::array<double, P>;
  /// Coordinates per record.
  static constexpr std::size_t record_size = P;
  /// Length of the statistic.
  static constexpr std::size_t dimension = std::tuple_size_v<std::invoke_result_t<const Statistic&, const record_type&>>;
  /// Type of the statistic.
  using vector_type = Eigen::Matrix<double, static_cast<int>(dimension), 1>;

  /// The sum of t over admitted records, and how many records were outside the box. `outside` is private
  /// information for the data owner's audit only: never publish it.
  struct result {
    /// The sum of t over the admitted records.
    vector_type statistic;
    /// Records read.
    std::size_t records = 0;
    /// Records outside the box (clamped or dropped): private, never publish it.
    std::size_t outside = 0;
  };

  /// Throws std::invalid_argument for non-finite bounds, lo >= hi, or a statistic whose range over the box is
  /// unbounded or constant (zero sensitivity).
  bounded_statistic(Statistic t, const std::array<interval, P>& box, out_of_bounds policy)
      : t_(std::move(t)), box_(box), policy_(policy) {
    for (std::size_t k = 0; k < P; ++k) {
      const std::string name = "bound[" + std::to_string(k) + "]";
      check_finite("bounded_statistic", name + ".lo", box[k].lo);
      check_finite("bounded_statistic", name + ".hi", box[k].hi);
      if (!(box[k].lo < box[k].hi))
        throw_invalid("bounded_statistic", name + ".hi", box[k].hi, "a number > lower bound " + detail::format_value(box[k].lo));
    }
    const std::array<interval, dimension> image = t_(box_);
    double l1 = 0.0, l2 = 0.0;
    for (std::size_t j = 0; j < dimension; ++j) {
      image_[j] = image[j];
      // Under dropping a record may contribute 0, so the contribution's range must include 0 (App. B.3).
      ranges_[j] = (policy_ == out_of_bounds::drop) ? hull(image[j], interval(0.0)) : image[j];
      const double w = ranges_[j].width();
      if (!std::isfinite(w))
        throw_invalid("bounded_statistic", "range width of t[" + std::to_string(j) + "]", w, "a finite width");
      l1 += w;
      l2 += w * w;
    }
    l1_ = l1;
    l2_ = std::sqrt(l2);
    check_sensitivity("bounded_statistic", "L1 sensitivity from the bounds", l1_);
  }

  /// The declared bounds of each record coordinate.
  const std::array<interval, P>& box() const noexcept { return box_; }
  /// What happens to a record outside the box.
  out_of_bounds policy() const noexcept { return policy_; }
  /// Range of t_j over the box (what a record inside contributes).
  const std::array<interval, dimension>& image() const noexcept { return image_; }
  /// Range of what one record can contribute to coordinate j under the policy.
  const std::array<interval, dimension>& ranges() const noexcept { return ranges_; }
  /// sum_j width(range_j): bounds max ||t(x) - t(x')||_1 over any two records.
  double l1_sensitivity() const noexcept { return l1_; }
  /// sqrt(sum_j width(range_j)^2): bounds max ||t(x) - t(x')||_2.
  double l2_sensitivity() const noexcept { return l2_; }

  /// The record as the policy admits it: clamped, unchanged, or std::nullopt (dropped). NaN or infinite
  /// coordinates throw std::invalid_argument (std::clamp would pass NaN through).
  std::optional<record_type> admit(const record_type& x) const {
    record_type y = x;
    for (std::size_t k = 0; k < P; ++k) {
      if (!std::isfinite(x[k]))
        throw_invalid("bounded_statistic", "record coordinate " + std::to_string(k), x[k], "a finite number");
      if (x[k] < box_[k].lo || x[k] > box_[k].hi) {
        if (policy_ == out_of_bounds::drop) return std::nullopt;
        y[k] = x[k] < box_[k].lo ? box_[k].lo : box_[k].hi;
      }
    }
    return y;
  }

  /// What one record contributes to the sum under the policy.
  vector_type contribution(const record_type& x) const {
    vector_type c = vector_type::Zero();
    if (const auto y = admit(x)) {
      const auto t = t_(*y);
      for (std::size_t j = 0; j < dimension; ++j) {
        // Guards the privacy promise: a statistic that escapes its interval bound would leak.
        if (!ranges_[j].contains(t[j]))
          throw std::logic_error("bounded_statistic: t[" + std::to_string(j) + "] = " + detail::format_value(t[j]) +
                                 " lies outside its interval bound; the statistic is not interval-sound");
        c(static_cast<Eigen::Index>(j)) = t[j];
      }
    }
    return c;
  }

  /// The exact sums over part of the records (a shard), before rounding: parts merged in any grouping and order give
  /// the statistic of all the records bit for bit.
  struct partial {
    /// The exact sum of each coordinate of t over the part's admitted records.
    std::array<exact_sum, dimension> sums{};
    /// Records read.
    std::size_t records = 0;
    /// Records outside the box (clamped or dropped): private, never publish it.
    std::size_t outside = 0;

    /// Adds another part's sums and counts.
    void merge(const partial& other) {
      for (std::size_t j = 0; j < dimension; ++j) sums[j].merge(other.sums[j]);
      records += other.records;
      outside += other.outside;
    }
    /// The statistic: each exact sum rounded once.
    result finish() const {
      result r{vector_type::Zero(), records, outside};
      for (std::size_t j = 0; j < dimension; ++j) r.statistic(static_cast<Eigen::Index>(j)) = sums[j].value();
      return r;
    }
  };

  /// The exact sums over `records`, with the policy applied.
  partial accumulate(std::span<const record_type> records) const {
    partial p;
    p.records = records.size();
    for (const auto& x : records) {
      if (!admit_is_identity(x)) ++p.outside;
      const vector_type c = contribution(x);
      for (std::size_t j = 0; j < dimension; ++j) p.sums[j].add(c(static_cast<Eigen::Index>(j)));
    }
    return p;
  }

  /// The statistic over all records, with the policy applied: each coordinate the exact sum of the contributions
  /// rounded once, so it does not depend on the records' order (nor on a split into shards, see accumulate).
  result compute(std::span<const record_type> records) const { return accumulate(records).finish(); }

 private:
  bool admit_is_identity(const record_type& x) const {
    for (std::size_t k = 0; k < P; ++k)
      if (x[k] < box_[k].lo || x[k] > box_[k].hi) return false;
    return true;
  }

  Statistic t_;
  std::array<interval, P> box_;
  out_of_bounds policy_;
  std::array<interval, dimension> image_{};
  std::array<interval, dimension> ranges_{};
  double l1_ = 0.0;
  double l2_ = 0.0;
};

/// Throws unless the mechanism's declared sensitivity covers the statistic's: Laplace needs the L1 bound,
/// Gaussian the L2 bound. A mechanism built for a smaller sensitivity would silently leak.
template <std::size_t P, class Statistic, release_mechanism M>
void check_mechanism_covers(const bounded_statistic<P, Statistic>& stat, const M& mechanism) {
  if constexpr (requires { mechanism.l1_sensitivity(); }) {
    if (!(mechanism.l1_sensitivity() >= stat.l1_sensitivity()))
      throw_invalid("release_statistic", "mechanism L1 sensitivity", mechanism.l1_sensitivity(),
                    "a number >= the statistic's L1 sensitivity " + detail::format_value(stat.l1_sensitivity()));
  } else if constexpr (requires { mechanism.l2_sensitivity(); }) {
    if (!(mechanism.l2_sensitivity() >= stat.l2_sensitivity()))
      throw_invalid("release_statistic", "mechanism L2 sensitivity", mechanism.l2_sensitivity(),
                    "a number >= the statistic's L2 sensitivity " + detail::format_value(stat.l2_sensitivity()));
  } else {
    static_assert(
        requires { mechanism.l1_sensitivity(); }, "the mechanism must report l1_sensitivity() or l2_sensitivity()");
  }
}

/// Computes the statistic over the records (any contiguous range of std::array<double, P>: a vector, an array, a span)
/// and releases it through the mechanism, drawing the noise from `g`
/// (pass an explicitly seeded engine only for tests and simulation studies).
template <std::size_t P, class Statistic, release_mechanism M, random_engine G>
Eigen::VectorXd release_statistic(const bounded_statistic<P, Statistic>& stat,
                                  std::type_identity_t<std::span<const std::array<double, P>>> records, const M& mechanism,
                                  G& g) {
  check_mechanism_covers(stat, mechanism);
  const Eigen::VectorXd s = stat.compute(records).statistic;
  return mechanism.release(s, g);
}

/// As above, with noise from the operating system's CSPRNG: the default for a real release.
template <std::size_t P, class Statistic, release_mechanism M>
Eigen::VectorXd release_statistic(const bounded_statistic<P, Statistic>& stat,
                                  std::type_identity_t<std::span<const std::array<double, P>>> records, const M& mechanism) {
  os_random_engine g;
  return release_statistic(stat, records, mechanism, g);
}

}  // namespace privpost
