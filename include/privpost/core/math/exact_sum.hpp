// privpost/core/math/exact_sum.hpp
// Sums of doubles without rounding. A released statistic must not depend on how the records were split or ordered:
// a data owner whose records are sharded over machines computes per-shard partial sums, and the statistic they
// combine to has to be bit for bit the one a single process computes from the concatenated data (otherwise two
// honest runs publish two different numbers, and a release cannot be checked). Floating-point addition is not
// associative, so any reduction order gives its own rounding; an exact accumulator has none until value() rounds
// once.
#pragma once

#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "privpost/core/errors.hpp"

namespace privpost {

/// An exact sum of finite doubles. Every added value is held without rounding in a fixed-point accumulator over the
/// whole double range (units of 2^-1074, the smallest subnormal, in 32-bit digits stored in signed 64-bit limbs), so
/// value(), the exact sum rounded once to nearest (ties to even), does not depend on the order or grouping of the
/// additions: sums of the parts, merged, equal the sum of the whole. An addition costs a few integer operations.
///
///     exact_sum s;
///     for (double x : shard) s.add(x);
///     s.merge(other_shard_sum);       // or exchange limbs() between processes
///     const double total = s.value();
class exact_sum {
 public:
  /// Bits per digit.
  static constexpr int digit_bits = 32;
  /// Digits: 2^(32 * 70) units of 2^-1074 is 2^1166, room for 2^63 additions of the largest double (2^1024 each)
  /// with the top digit carrying the sign.
  static constexpr std::size_t digits = 70;
  /// The stored digits, least significant first.
  using limbs_type = std::array<std::int64_t, digits>;

  /// Zero.
  exact_sum() = default;

  /// Adds x exactly. std::invalid_argument unless x is finite.
  void add(double x) {
    if (!std::isfinite(x)) throw_invalid("exact_sum::add", "x", x, "a finite number");
    const auto bits = std::bit_cast<std::uint64_t>(x);
    const auto exponent = static_cast<unsigned>((bits >> 52) & 0x7FF);
    std::uint64_t mantissa = bits & ((std::uint64_t{1} << 52) - 1);
    if (mantissa == 0 && exponent == 0) return;  // +0 and -0
    // x = mantissa 2^(exponent - 1075) for a normal number (hidden bit restored), mantissa 2^-1074 for a subnormal:
    // mantissa 2^p in units of 2^-1074, p in [0, 2046], spread over digits k, k + 1 and k + 2 (53 + 31 bits at most).
    unsigned p = 0;
    if (exponent != 0) {
      mantissa |= std::uint64_t{1} << 52;
      p = exponent - 1;
    }
    const std::size_t k = p / digit_bits;
    const unsigned offset = p % digit_bits;
    constexpr std::uint64_t mask = 0xFFFFFFFFull;
    const std::uint64_t upper = mantissa >> (digit_bits - offset);  // the bits above digit k (shift in [1, 32])
    const auto d0 = static_cast<std::int64_t>((mantissa << offset) & mask);
    const auto d1 = static_cast<std::int64_t>(upper & mask);
    const auto d2 = static_cast<std::int64_t>(upper >> digit_bits);
    if (bits >> 63) {
      limbs_[k] -= d0;
      limbs_[k + 1] -= d1;
      limbs_[k + 2] -= d2;
    } else {
      limbs_[k] += d0;
      limbs_[k + 1] += d1;
      limbs_[k + 2] += d2;
    }
    // Each addition moves a digit by less than 2^32: after 2^30 of them a digit is below 2^62 in magnitude, and
    // carrying then keeps every digit far from overflow.
    if (++pending_ == pending_limit) normalize();
  }

  /// Adds every value of xs (std::invalid_argument at the first one not finite).
  void add(std::span<const double> xs) {
    for (double x : xs) add(x);
  }

  /// Adds the exact sum held by other. std::domain_error when the total's magnitude reaches 2^1164 (the accumulator's
  /// range; a double ends below 2^1024).
  void merge(const exact_sum& other) {
    normalize();
    const limbs_type o = other.limbs();
    for (std::size_t i = 0; i < digits; ++i) limbs_[i] += o[i];
    normalize();
  }

  /// The exact sum rounded once to the nearest double (ties to even); an exact zero is +0. std::domain_error if the
  /// rounded sum is beyond the largest double.
  double value() const {
    limbs_type d = limbs();
    const bool negative = d[digits - 1] < 0;
    if (negative) {
      for (auto& x : d) x = -x;
      carry(d);
    }
    std::size_t top = digits;
    while (top > 0 && d[top - 1] == 0) --top;
    if (top == 0) return 0.0;
    const std::size_t h = top - 1;
    double magnitude;
    if (h < 2) {
      // At most 64 bits in units of 2^-1074: the conversion rounds once, and a result that is subnormal has at most
      // 53 bits, so the scaling is exact.
      const std::uint64_t m = h == 0 ? digit(d, 0) : (digit(d, 1) << digit_bits) | digit(d, 0);
      magnitude = std::ldexp(static_cast<double>(m), -1074);
    } else {
      // The top 64 significant bits of the digits h, h - 1 and h - 2, with every lower bit ORed into the lowest one:
      // converting rounds at bit 11, and the sticky bit 0 (below the guard bit 10) makes that rounding the exact
      // sum's. The result is at least 2^(64 - 1074), normal, so the scaling is exact.
      const std::uint64_t high = digit(d, h), low = (digit(d, h - 1) << digit_bits) | digit(d, h - 2);
      const int shift = std::bit_width(high);  // in [1, 32]: the bits of `low` that fall off
      std::uint64_t r = (high << (64 - shift)) | (low >> shift);
      bool sticky = (low & ((std::uint64_t{1} << shift) - 1)) != 0;
      for (std::size_t i = 0; i + 2 < h && !sticky; ++i) sticky = d[i] != 0;
      if (sticky) r |= 1;
      magnitude = std::ldexp(static_cast<double>(r), shift + static_cast<int>(digit_bits * (h - 2)) - 1074);
    }
    if (!std::isfinite(magnitude))
      throw std::domain_error("exact_sum::value: the sum overflows a double (its magnitude is at least 2^1024)");
    return negative ? -magnitude : magnitude;
  }

  /// The digits with every carry propagated: digits 0..68 in [0, 2^32), the last one signed and small. What a
  /// distributed reduction adds digit by digit: the integer sum of up to 2^30 such arrays cannot overflow, and
  /// from_limbs() turns it back into the exact sum.
  limbs_type limbs() const {
    limbs_type d = limbs_;
    carry(d);
    return d;
  }

  /// The sum whose digits are `d` (any values of magnitude below 2^62, such as sums of limbs() of up to 2^30 sums).
  /// std::invalid_argument naming the first digit out of range; std::domain_error when the sum's magnitude reaches
  /// 2^1164.
  static exact_sum from_limbs(const limbs_type& d) {
    constexpr std::int64_t limit = std::int64_t{1} << 62;
    for (std::size_t i = 0; i < digits; ++i)
      if (!(d[i] > -limit && d[i] < limit))
        throw_invalid("exact_sum::from_limbs", "digit " + std::to_string(i), static_cast<double>(d[i]),
                      "an integer of magnitude below 2^62");
    exact_sum s;
    s.limbs_ = d;
    s.normalize();
    return s;
  }

  /// Whether the exact sum is zero.
  bool is_zero() const {
    const limbs_type d = limbs();
    for (auto x : d)
      if (x != 0) return false;
    return true;
  }

 private:
  static constexpr std::uint32_t pending_limit = std::uint32_t{1} << 30;

  static std::uint64_t digit(const limbs_type& d, std::size_t i) { return static_cast<std::uint64_t>(d[i]); }

  // Carries so that digits 0..68 lie in [0, 2^32) and the top one holds the sign (floor division by 2^32, which C++20
  // defines for negative values as the arithmetic shift).
  static void carry(limbs_type& d) {
    for (std::size_t i = 0; i + 1 < digits; ++i) {
      const std::int64_t c = d[i] >> digit_bits;
      d[i] -= c * (std::int64_t{1} << digit_bits);
      d[i + 1] += c;
    }
  }

  // Carries, and refuses a sum that has left the accumulator's range: the top digit then holds everything from
  // 2^1134 up, and past 2^30 of those (2^1164) repeated merging could overflow it.
  void normalize() {
    carry(limbs_);
    pending_ = 0;
    constexpr std::int64_t top_limit = std::int64_t{1} << 30;
    if (!(limbs_[digits - 1] > -top_limit && limbs_[digits - 1] < top_limit)) {
      limbs_ = limbs_type{};
      throw std::domain_error("exact_sum: the sum's magnitude reached 2^1164, beyond the accumulator's range");
    }
  }

  limbs_type limbs_{};
  std::uint32_t pending_ = 0;
};

}  // namespace privpost
