// privpost/core/interval.hpp
// interval: closed-interval arithmetic used to bound a per-record statistic t(x) over a declared box of records,
// so that sensitivity comes from the declared bounds and never from the data (docs/privacy.md).
#pragma once

#include <algorithm>
#include <cmath>

#include "privpost/core/errors.hpp"

namespace privpost {

/// A closed interval [lo, hi]. Each operation returns an interval that contains every value the operation can take
/// for arguments in its operands (a sound enclosure; tight for the operations listed, when operands are independent).
struct interval {
  /// Lower end.
  double lo = 0.0;
  /// Upper end (>= lo).
  double hi = 0.0;

  constexpr interval() = default;
  /// The degenerate interval [point, point]; implicit so that constants mix with intervals.
  constexpr interval(double point) : lo(point), hi(point) {}  // NOLINT: constants mix with intervals implicitly
  /// [lower, upper]; std::invalid_argument on a NaN end or lower > upper.
  interval(double lower, double upper) : lo(lower), hi(upper) { check_interval("interval", "[lo, hi]", lower, upper); }

  /// hi - lo.
  constexpr double width() const { return hi - lo; }
  /// max |x| over the interval.
  constexpr double magnitude() const { return std::max(std::abs(lo), std::abs(hi)); }
  /// lo <= x <= hi.
  constexpr bool contains(double x) const { return lo <= x && x <= hi; }

  /// [a.lo + b.lo, a.hi + b.hi].
  friend interval operator+(interval a, interval b) { return {a.lo + b.lo, a.hi + b.hi}; }
  /// [a.lo - b.hi, a.hi - b.lo].
  friend interval operator-(interval a, interval b) { return {a.lo - b.hi, a.hi - b.lo}; }
  /// [-a.hi, -a.lo].
  friend interval operator-(interval a) { return {-a.hi, -a.lo}; }
  /// The smallest interval holding every product of a point of a and a point of b.
  friend interval operator*(interval a, interval b) {
    const double p1 = a.lo * b.lo, p2 = a.lo * b.hi, p3 = a.hi * b.lo, p4 = a.hi * b.hi;
    return {std::min({p1, p2, p3, p4}), std::max({p1, p2, p3, p4})};
  }
  /// The smallest interval holding every quotient; std::domain_error when b contains 0.
  friend interval operator/(interval a, interval b) {
    if (b.lo <= 0.0 && b.hi >= 0.0)
      throw_domain("interval division", "divisor lower bound", b.lo, "a divisor interval that excludes 0");
    return a * interval(1.0 / b.hi, 1.0 / b.lo);
  }
  /// *this = *this + b.
  interval& operator+=(interval b) { return *this = *this + b; }
  /// *this = *this - b.
  interval& operator-=(interval b) { return *this = *this - b; }
  /// *this = *this * b.
  interval& operator*=(interval b) { return *this = *this * b; }
  /// Equal when both ends are equal.
  friend bool operator==(const interval&, const interval&) = default;
};

/// The smallest interval holding both.
inline interval hull(interval a, interval b) { return {std::min(a.lo, b.lo), std::max(a.hi, b.hi)}; }

/// x^2, tight (x * x of an interval that straddles 0 would give a negative lower end).
inline interval square(interval x) {
  if (x.lo >= 0.0) return {x.lo * x.lo, x.hi * x.hi};
  if (x.hi <= 0.0) return {x.hi * x.hi, x.lo * x.lo};
  return {0.0, std::max(x.lo * x.lo, x.hi * x.hi)};
}
/// x^2 for plain numbers, so one generic statistic serves both doubles and intervals.
inline double square(double x) { return x * x; }

inline interval abs(interval x) {
  if (x.lo >= 0.0) return x;
  if (x.hi <= 0.0) return -x;
  return {0.0, std::max(-x.lo, x.hi)};
}

inline interval exp(interval x) { return {std::exp(x.lo), std::exp(x.hi)}; }

inline interval log(interval x) {
  if (!(x.lo > 0.0)) throw_domain("interval log", "lower bound", x.lo, "an interval with lower bound > 0");
  return {std::log(x.lo), std::log(x.hi)};
}

inline interval sqrt(interval x) {
  if (!(x.lo >= 0.0)) throw_domain("interval sqrt", "lower bound", x.lo, "an interval with lower bound >= 0");
  return {std::sqrt(x.lo), std::sqrt(x.hi)};
}

}  // namespace privpost
