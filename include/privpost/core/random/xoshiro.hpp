// privpost/core/random/xoshiro.hpp
// xoshiro256: the xoshiro256** generator of Blackman & Vigna ("Scrambled linear pseudorandom number generators", ACM
// TOMS 2021), a 64-bit engine with 256 bits of state, for inference chains where the engine is a large share of the
// work. The record-level samplers draw two outputs a record, and std::mt19937_64 was a third of a histogram sweep
// (benchmarks/histogram_bench.cpp): its state refill runs every 312 outputs and its call is not inlined, while this
// engine's step is a few shifts, rotations and exclusive ors. Every sampler takes any random_engine; the tools'
// chains stay on std::mt19937_64 so that their seeded results do not change.
//
// Not for release noise: releases draw from os_random_engine (the operating system's CSPRNG). Statistical quality:
// xoshiro256** passes BigCrush and PractRand to the sizes its authors tested; its lowest bits are as good as its
// highest (unlike xoshiro256+), and privpost's draws use the top 53 bits.
//
//     privpost::xoshiro256 g(42);  // seeded by SplitMix64, as the authors recommend
//     histogram_gibbs chain(alpha, n, measurements, g);
//     chain.step(g);
#pragma once

#include <cstdint>

namespace privpost {

/// The xoshiro256** engine: a std::uniform_random_bit_generator of 64-bit outputs with period 2^256 - 1.
class xoshiro256 {
 public:
  /// 64-bit outputs.
  using result_type = std::uint64_t;

  /// State from SplitMix64 seeded with `seed` (four consecutive outputs), which is never all zero.
  explicit xoshiro256(std::uint64_t seed = 0) noexcept { this->seed(seed); }

  /// Reseeds as the constructor does.
  void seed(std::uint64_t seed) noexcept {
    for (auto& word : state_) {
      seed += 0x9e3779b97f4a7c15ull;  // SplitMix64 (Steele, Lea & Flood 2014)
      std::uint64_t z = seed;
      z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
      z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
      word = z ^ (z >> 31);
    }
  }

  /// The state words as given (tests against the reference sequence). The all-zero state is a fixed point; this
  /// constructor does not reject it, so callers pass reference states only.
  static xoshiro256 from_state(std::uint64_t s0, std::uint64_t s1, std::uint64_t s2, std::uint64_t s3) noexcept {
    xoshiro256 g;
    g.state_[0] = s0;
    g.state_[1] = s1;
    g.state_[2] = s2;
    g.state_[3] = s3;
    return g;
  }

  /// The smallest output, 0.
  static constexpr result_type min() noexcept { return 0; }
  /// The largest output, 2^64 - 1.
  static constexpr result_type max() noexcept { return ~result_type{0}; }

  /// The next output.
  result_type operator()() noexcept {
    const std::uint64_t out = rotate(state_[1] * 5, 7) * 9, shifted = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= shifted;
    state_[3] = rotate(state_[3], 45);
    return out;
  }

  /// Advances the state by n outputs.
  void discard(std::uint64_t n) noexcept {
    for (; n > 0; --n) (*this)();
  }

  /// Equal states (the same outputs from here on).
  friend bool operator==(const xoshiro256&, const xoshiro256&) = default;

 private:
  static constexpr std::uint64_t rotate(std::uint64_t x, int k) noexcept { return (x << k) | (x >> (64 - k)); }

  std::uint64_t state_[4] = {};
};

}  // namespace privpost
