// privpost/core/random/uniform.hpp
// draw_uniform: a double uniform on the open interval (0, 1) with 53 random bits, from any engine; draw_index: an
// integer uniform on {0, ..., k - 1}. Every other draw in privpost is built on them, so that all draws are reproducible
// across standard libraries (std::uniform_int_distribution's algorithm is the library's choice).
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"

namespace privpost {

namespace detail {
// 53 random bits from one 64-bit output, or two 32-bit outputs; other engines go through a bounded bit pump.
template <random_engine G>
inline std::uint64_t bits53(G& g) {
  using R = typename std::remove_cvref_t<G>::result_type;
  constexpr auto lo = std::remove_cvref_t<G>::min();
  constexpr auto hi = std::remove_cvref_t<G>::max();
  if constexpr (lo == 0 && hi == std::numeric_limits<std::uint64_t>::max()) {
    return static_cast<std::uint64_t>(g()) >> 11;
  } else if constexpr (lo == 0 && static_cast<std::uint64_t>(hi) == 0xFFFFFFFFull) {
    const std::uint64_t a = static_cast<std::uint64_t>(g()) >> 5;  // 27 bits
    const std::uint64_t b = static_cast<std::uint64_t>(g()) >> 6;  // 26 bits
    return (a << 26) | b;
  } else {
    // Generic engines: collect one bit at a time from the largest power-of-two range below hi - lo + 1.
    const std::uint64_t span = static_cast<std::uint64_t>(hi - lo);  // < 2^64 - 1 here
    static_assert(hi > lo, "draw_uniform: the engine must produce at least two values");
    const int width = std::bit_width(span + 1) - 1;  // largest power of two <= span + 1
    const std::uint64_t mask = (std::uint64_t{1} << width) - 1;
    std::uint64_t out = 0;
    int have = 0;
    // Each accepted output gives `width` bits; rejection of out-of-mask values happens with probability < 1/2,
    // so 4096 tries is never reached in practice; the bound keeps a broken engine from hanging us.
    for (int tries = 0; have < 53; ++tries) {
      if (tries > 4096) throw retry_limit_exceeded("draw_uniform: engine produced too few usable bits");
      const std::uint64_t v = static_cast<std::uint64_t>(static_cast<R>(g() - lo));
      if (v > mask) continue;
      const int take = (53 - have < width) ? 53 - have : width;
      out = (out << take) | (v >> (width - take));
      have += take;
    }
    return out;
  }
}
}  // namespace detail

/// Uniform on the open interval (0, 1): (k + 1/2) / 2^53 for a uniform 53-bit integer k.
template <random_engine G>
inline double draw_uniform(G& g) {
  return (static_cast<double>(detail::bits53(g)) + 0.5) * 0x1.0p-53;
}

/// The Metropolis-Hastings decision log(u) < log_alpha for u in (0, 1) (a draw_uniform), with the logarithm taken
/// only when the bounds 2 (u - 1) / (u + 1) >= log u >= (u - 1) / sqrt(u) (on (0, 1]) do not decide it: accepted when
/// 2 (u - 1) < log_alpha (u + 1) (so whenever log_alpha >= 0), rejected when log_alpha < 0 and (1 - u)^2 <=
/// log_alpha^2 u, neither needing a division or a root. The band between them is about 1% of u near u = alpha,
/// where the record-level samplers spent much of their time in the logarithm. Each bound is tested with a margin,
/// relative to its terms, far above their rounding, so a bound never decides a draw the logarithm would decide the
/// other way. log_alpha may be infinite (-infinity rejects, +infinity accepts); NaN rejects.
inline bool log_uniform_below(double u, double log_alpha) noexcept {
  if (2.0 * (u - 1.0) < log_alpha * (u + 1.0) - 1e-12 * (1.0 + std::abs(log_alpha))) return true;
  const double w = 1.0 - u, right = log_alpha * log_alpha * u;
  if (log_alpha < 0.0 && w * w <= right - 1e-12 * (1.0 + right)) return false;
  return std::log(u) < log_alpha;
}

/// An integer uniform on {0, ..., k - 1}, exactly (rejection of the top 2^53 mod k values of a 53-bit draw, so no
/// modulo bias). std::invalid_argument unless 1 <= k <= 2^53; retry_limit_exceeded if an engine yields 4096 rejected
/// draws in a row (each is rejected with probability < 1/2).
template <random_engine G>
inline std::uint64_t draw_index(G& g, std::uint64_t k) {
  constexpr std::uint64_t range = std::uint64_t{1} << 53;
  if (k < 1 || k > range) throw_invalid("draw_index", "k", static_cast<double>(k), "an integer in [1, 2^53]");
  const std::uint64_t limit = range - range % k;  // the largest multiple of k <= 2^53
  for (int tries = 0; tries < 4096; ++tries) {
    const std::uint64_t r = detail::bits53(g);
    if (r < limit) return r % k;
  }
  throw retry_limit_exceeded("draw_index: 4096 draws in a row rejected (a broken engine)");
}

}  // namespace privpost
