// privpost/core/random/discrete_noise.hpp
// Exact samplers of the discrete Laplace and the discrete Gaussian distributions on the integers in integer arithmetic
// only (Canonne, Kamath & Steinke, "The Discrete Gaussian for Differential Privacy", NeurIPS 2020, Algorithms 1-3).
// Every probability they use is a ratio of integers and is decided by comparing a uniform integer with an integer, so
// no floating-point value touches a draw and no low-order bit can carry information (Mironov, CCS 2012). They are the
// noise of mechanisms/discrete_laplace.hpp and discrete_gaussian.hpp.
//
// Every loop is bounded. A loop that would need more than its bound happens with probability below 2^-200 (stated at
// each bound) and throws retry_limit_exceeded instead of returning a draw from a changed law.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"

namespace privpost {

namespace detail {
// A GCC and clang extension; __extension__ keeps -Wpedantic quiet.
__extension__ using uint128 = unsigned __int128;

// Uniform on [0, 2^64), exactly, from any engine (std::uniform_int_distribution is exact rejection in libstdc++).
template <random_engine G>
std::uint64_t random_word(G& g) {
  return std::uniform_int_distribution<std::uint64_t>{}(g);
}
}  // namespace detail

/// Uniform on {0, ..., n - 1} for 1 <= n < 2^128, by masking and rejection: each try succeeds with probability > 1/2,
/// and 256 failures in a row (probability < 2^-256) throw retry_limit_exceeded.
template <random_engine G>
detail::uint128 uniform_below(G& g, detail::uint128 n) {
  if (n == 0) throw std::invalid_argument("uniform_below: n is 0; accepted: n >= 1");
  detail::uint128 mask = n - 1;
  for (int shift = 1; shift < 128; shift *= 2) mask |= mask >> shift;
  const bool wide = (n - 1) >> 64 != 0;
  for (int attempt = 0; attempt < 256; ++attempt) {
    detail::uint128 x = detail::random_word(g);
    if (wide) x = (x << 64) | detail::random_word(g);
    x &= mask;
    if (x < n) return x;
  }
  throw retry_limit_exceeded("uniform_below: 256 rejections in a row (probability below 2^-256); the engine is broken");
}

/// Bernoulli(num / den), exactly, for 0 <= num <= den, den >= 1.
template <random_engine G>
bool bernoulli_ratio(G& g, detail::uint128 num, detail::uint128 den) {
  if (den == 0 || num > den) throw std::invalid_argument("bernoulli_ratio: needs 0 <= num <= den and den >= 1");
  return uniform_below(g, den) < num;
}

namespace detail {
// Bernoulli(exp(-num/den)) for 0 <= num <= den (CKS Algorithm 1, gamma in [0, 1]): K = 1, 2, ... while
// Bernoulli(gamma / K) succeeds; the result is "K is odd". Reaching K = 100 has probability 1/99! < 2^-500.
template <random_engine G>
bool bernoulli_exp_unit(G& g, uint128 num, uint128 den) {
  for (std::uint64_t k = 1; k <= 100; ++k)
    if (!(uniform_below(g, den * k) < num)) return k % 2 == 1;
  throw retry_limit_exceeded("bernoulli_exp: 100 successes in a row (probability below 2^-500); the engine is broken");
}
}  // namespace detail

/// Bernoulli(exp(-num / den)), exactly, for num >= 0, 1 <= den < 2^120 (CKS Algorithm 1): floor(num/den) independent
/// Bernoulli(exp(-1)) draws, stopping at the first failure, then one Bernoulli(exp(-(num/den - floor))).
template <random_engine G>
bool bernoulli_exp(G& g, detail::uint128 num, detail::uint128 den) {
  if (den == 0 || (den >> 120) != 0) throw std::invalid_argument("bernoulli_exp: needs 1 <= den < 2^120");
  const detail::uint128 whole = num / den;
  // Each step fails with probability 1 - 1/e, so the loop ends after 1.6 steps on average; it is bounded by whole.
  for (detail::uint128 k = 0; k < whole; ++k)
    if (!detail::bernoulli_exp_unit(g, 1, 1)) return false;
  return detail::bernoulli_exp_unit(g, num % den, den);
}

/// Largest exact integer scale numerator the discrete Laplace sampler accepts (so that t * V stays far from overflow).
inline constexpr std::uint64_t discrete_laplace_max_numerator = std::uint64_t{1} << 52;

/// A draw from the discrete Laplace distribution with scale t / s on the integers: P(Y = y) is proportional to
/// exp(-|y| s / t) (CKS Algorithm 2), for 1 <= t <= 2^52 and s >= 1.
///
/// Each round is accepted with probability at least (1 - 1/e) / 2 > 0.31; 2000 rejected rounds in a row (probability
/// below 2^-1000) throw retry_limit_exceeded. The geometric count V exceeds 2000 with probability e^-2000.
template <random_engine G>
std::int64_t draw_discrete_laplace(G& g, std::uint64_t t, std::uint64_t s) {
  if (t == 0 || t > discrete_laplace_max_numerator || s == 0)
    throw std::invalid_argument("draw_discrete_laplace: needs 1 <= t <= 2^52 and s >= 1 (scale t / s)");
  for (int round = 0; round < 2000; ++round) {
    const detail::uint128 u = uniform_below(g, t);
    if (!bernoulli_exp(g, u, t)) continue;  // U given acceptance: P(U = u) proportional to exp(-u / t)
    std::uint64_t v = 0;
    while (bernoulli_exp(g, 1, 1)) {  // V ~ Geometric(1 - 1/e)
      if (++v > 2000) throw retry_limit_exceeded("draw_discrete_laplace: a geometric count passed 2000 (probability e^-2000)");
    }
    const detail::uint128 x = u + detail::uint128{t} * v;  // X ~ Geometric(1 - exp(-1 / t))
    const detail::uint128 y = x / s;                       // Y ~ Geometric(1 - exp(-s / t))
    const bool negative = (detail::random_word(g) & 1u) != 0;
    if (negative && y == 0) continue;  // so that 0 is not counted twice
    // y <= (2^52 + 2^52 * 2000) < 2^63: representable.
    const auto magnitude = static_cast<std::int64_t>(y);
    return negative ? -magnitude : magnitude;
  }
  throw retry_limit_exceeded("draw_discrete_laplace: 2000 rejected rounds in a row (probability below 2^-1000)");
}

/// Largest variance numerator p (sigma^2 = p / q) the discrete Gaussian sampler accepts, and the largest q.
inline constexpr std::uint64_t discrete_gaussian_max_numerator = std::uint64_t{1} << 50;
inline constexpr std::uint64_t discrete_gaussian_max_denominator = std::uint64_t{1} << 10;

namespace detail {
// floor(sqrt(x)) for a 64-bit x, exactly (Newton's iteration on integers from a floating start, then corrected).
inline std::uint64_t integer_sqrt(std::uint64_t x) {
  auto r = static_cast<std::uint64_t>(std::sqrt(static_cast<double>(x)));
  while (static_cast<uint128>(r) * r > x) --r;
  while (static_cast<uint128>(r + 1) * (r + 1) <= x) ++r;
  return r;
}
}  // namespace detail

/// A draw from the discrete Gaussian distribution N_Z(0, sigma^2) with sigma^2 = p / q: P(Y = y) is proportional to
/// exp(-y^2 / (2 sigma^2)) (CKS Algorithm 3): Y from the discrete Laplace of scale t = floor(sigma) + 1, accepted with
/// probability exp(-(|Y| - sigma^2 / t)^2 / (2 sigma^2)) = exp(-(q t |Y| - p)^2 / (2 p q t^2)), all in integers.
/// Needs 1 <= p <= 2^50 and 1 <= q <= 2^10 (so sigma <= 2^25 and q t < 2^31).
///
/// A candidate with |Y| >= 2^32 > 2^7 sigma is rejected without its Bernoulli draw (so that q t |Y| < 2^63): its
/// acceptance probability is below exp(-(2^32 - 2^25)^2 / 2^51) < exp(-7000), so this changes the law by less than that. Each
/// round is accepted with probability above 0.3 (CKS Sec. 5.3); 2000 rejected rounds in a row throw retry_limit_exceeded.
template <random_engine G>
std::int64_t draw_discrete_gaussian(G& g, std::uint64_t p, std::uint64_t q) {
  if (p == 0 || p > discrete_gaussian_max_numerator || q == 0 || q > discrete_gaussian_max_denominator)
    throw std::invalid_argument("draw_discrete_gaussian: needs 1 <= p <= 2^50 and 1 <= q <= 2^10 (sigma^2 = p / q)");
  const std::uint64_t t = detail::integer_sqrt(p / q) + 1;         // floor(sqrt(p / q)) = floor(sqrt(floor(p / q)))
  const detail::uint128 den = detail::uint128{2} * p * q * t * t;  // <= 2 * 2^50 * 2^10 * 2^52 < 2^120
  for (int round = 0; round < 2000; ++round) {
    const std::int64_t y = draw_discrete_laplace(g, t, 1);
    const std::uint64_t magnitude = y < 0 ? static_cast<std::uint64_t>(-y) : static_cast<std::uint64_t>(y);
    if (magnitude >= (std::uint64_t{1} << 32)) continue;
    const detail::uint128 a = detail::uint128{q} * t * magnitude;  // q t < 2^31, |Y| < 2^32: a < 2^63
    const detail::uint128 diff = a > p ? a - p : p - a;            // < 2^63, so diff^2 < 2^126
    if (bernoulli_exp(g, diff * diff, den)) return y;
  }
  throw retry_limit_exceeded("draw_discrete_gaussian: 2000 rejected rounds in a row (probability below 2^-1000)");
}

}  // namespace privpost
