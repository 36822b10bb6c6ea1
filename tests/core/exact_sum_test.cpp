// exact_sum: the correctly rounded sum, whatever the order or grouping of the additions. The oracle is an independent
// algorithm, Shewchuk's non-overlapping partials (Adaptive Precision Floating-Point Arithmetic, 1997, as in Python's
// math.fsum) with its final round-half-even correction; the hand-made cases check the rounding at the guard and sticky
// bits, cancellation, subnormals and intermediate sums beyond the double range.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include "privpost/core/math/exact_sum.hpp"

using namespace privpost;

namespace exact_sum_test {

// Shewchuk's partials: after each addition, `partials` holds non-overlapping doubles whose exact sum is the exact sum
// so far (every two-sum is error-free while nothing overflows). The correctly rounded total is the top partial plus
// the next, corrected when that addition is a tie decided by the partials below.
double partials_sum(const std::vector<double>& xs) {
  std::vector<double> partials;
  for (double x : xs) {
    std::size_t i = 0;
    for (double y : partials) {
      if (std::abs(x) < std::abs(y)) std::swap(x, y);
      const double hi = x + y;
      const double lo = y - (hi - x);
      if (lo != 0.0) partials[i++] = lo;
      x = hi;
    }
    partials.resize(i);
    partials.push_back(x);
  }
  if (partials.empty()) return 0.0;
  std::size_t n = partials.size();
  double hi = partials[--n];
  double lo = 0.0;
  while (n > 0) {
    const double x = hi;
    const double y = partials[--n];
    hi = x + y;
    lo = y - (hi - x);
    if (lo != 0.0) break;
  }
  if (n > 0 && ((lo < 0.0 && partials[n - 1] < 0.0) || (lo > 0.0 && partials[n - 1] > 0.0))) {
    const double y = lo * 2.0;
    const double x = hi + y;
    if (y == x - hi) hi = x;
  }
  return hi;
}

double exact(const std::vector<double>& xs) {
  exact_sum s;
  for (double x : xs) s.add(x);
  return s.value();
}

// Values of both signs over about 2^-600 to 2^600 (magnitudes the partials' two-sums handle without overflow).
std::vector<double> wide_values(std::mt19937_64& g, std::size_t n) {
  std::uniform_real_distribution<double> mantissa(0.5, 1.0);
  std::uniform_int_distribution<int> exponent(-600, 600);
  std::vector<double> xs(n);
  for (auto& x : xs) x = std::ldexp(mantissa(g), exponent(g)) * (g() % 2 == 0 ? 1.0 : -1.0);
  return xs;
}

}  // namespace exact_sum_test

using namespace exact_sum_test;

TEST_CASE("exact_sum: rounding at the guard and sticky bits", "[exact_sum]") {
  const double two53 = 0x1.0p53;
  CHECK(exact({two53, 1.0}) == two53);                        // a tie: to even
  CHECK(exact({two53, 3.0}) == two53 + 4.0);                  // a tie: to even, upwards
  CHECK(exact({two53, 1.0, 0x1.0p-100}) == two53 + 2.0);      // above the tie by a bit far below: up
  CHECK(exact({two53, 1.0, -0x1.0p-100}) == two53);           // below it: down
  CHECK(exact({-two53, -1.0, -0x1.0p-100}) == -two53 - 2.0);  // symmetric for negative sums
  CHECK(exact({1e100, 1.0, -1e100}) == 1.0);                  // plain addition loses the 1
  CHECK(exact({0.1, 0.2, 0.3}) == partials_sum({0.1, 0.2, 0.3}));
  CHECK(exact({0.1, 0.2, 0.3}) != 0.1 + 0.2 + 0.3);  // the exact sum rounds to 0.6, left to right gives 0.6000000000000001
}

TEST_CASE("exact_sum: cancellation, zeros, subnormals and sums beyond the range", "[exact_sum]") {
  const double big = std::numeric_limits<double>::max();
  const double tiny = std::numeric_limits<double>::denorm_min();
  CHECK(exact({}) == 0.0);
  CHECK_FALSE(std::signbit(exact({-0.0, -0.0})));  // an exact zero is +0
  CHECK(exact({0.75, -0.75}) == 0.0);
  CHECK(exact({tiny, tiny, tiny}) == 3.0 * tiny);
  CHECK(exact({std::numeric_limits<double>::min(), -tiny}) == std::numeric_limits<double>::min() - tiny);
  CHECK(exact({big, big, -big}) == big);  // the intermediate 2 max is held exactly
  CHECK(exact({-big, -big, big, 1.0}) == -big);
  std::vector<double> many(2000, big);
  many.insert(many.end(), 2000, -big);
  many.push_back(tiny);
  CHECK(exact(many) == tiny);
  exact_sum s;
  s.add(0.5);
  s.add(-0.5);
  CHECK(s.is_zero());
}

TEST_CASE("exact_sum: the oracle's value in any order and any grouping", "[exact_sum]") {
  std::mt19937_64 g(20261203);
  for (int trial = 0; trial < 50; ++trial) {
    auto xs = wide_values(g, 1 + g() % 300);
    if (trial % 5 == 0)  // heavy cancellation: each value with its negative, and one small value
      for (std::size_t i = 0, n = xs.size(); i < n; ++i) xs.push_back(-xs[i] * (i == 0 ? 0.5 : 1.0));
    const double expected = partials_sum(xs);
    CHECK(exact(xs) == expected);
    std::shuffle(xs.begin(), xs.end(), g);
    CHECK(exact(xs) == expected);
    // Three shards of uneven sizes, merged; and the same through limbs() summed digit by digit, as a reduction does.
    const std::size_t a = g() % (xs.size() + 1), b = a + g() % (xs.size() - a + 1);
    exact_sum s1, s2, s3;
    for (std::size_t i = 0; i < xs.size(); ++i) (i < a ? s1 : i < b ? s2 : s3).add(xs[i]);
    exact_sum merged = s3;
    merged.merge(s1);
    merged.merge(s2);
    CHECK(merged.value() == expected);
    exact_sum::limbs_type total{};
    for (const exact_sum* s : {&s1, &s2, &s3}) {
      const auto d = s->limbs();
      for (std::size_t i = 0; i < exact_sum::digits; ++i) total[i] += d[i];
    }
    CHECK(exact_sum::from_limbs(total).value() == expected);
  }
}

TEST_CASE("exact_sum: bad input", "[exact_sum]") {
  exact_sum s;
  CHECK_THROWS_AS(s.add(std::numeric_limits<double>::quiet_NaN()), std::invalid_argument);
  CHECK_THROWS_AS(s.add(std::numeric_limits<double>::infinity()), std::invalid_argument);
  CHECK_THROWS_WITH(s.add(-std::numeric_limits<double>::infinity()), Catch::Contains("a finite number"));
  const double big = std::numeric_limits<double>::max();
  s.add(big);
  s.add(big);
  CHECK_THROWS_AS(s.value(), std::domain_error);
  s.add(-big);
  CHECK(s.value() == big);
  exact_sum::limbs_type d{};
  d[3] = std::int64_t{1} << 62;
  CHECK_THROWS_WITH(exact_sum::from_limbs(d), Catch::Contains("digit 3"));
  // Merging a sum into itself doubles it: past the accumulator's range (2^1164) that is an error, never a wrapped digit.
  exact_sum doubling;
  doubling.add(big);
  int merges = 0;
  CHECK_THROWS_AS(
      [&] {
        for (; merges < 1000; ++merges) doubling.merge(doubling);
      }(),
      std::domain_error);
  CHECK(merges == 140);  // the largest double (below 2^1024) doubled 140 times is below 2^1164; once more is not
  exact_sum::limbs_type high{};
  high[exact_sum::digits - 1] = std::int64_t{1} << 31;
  CHECK_THROWS_AS(exact_sum::from_limbs(high), std::domain_error);
}
