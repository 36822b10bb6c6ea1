// privpost/core/random/os_random_engine.hpp
// os_random_engine: a uniform random bit generator that reads the operating system's CSPRNG (getrandom(2)).
// It is the default engine of every release; it cannot be seeded, and it throws if the OS source fails.
#pragma once

#include <array>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <system_error>

#if defined(__linux__)
#include <sys/random.h>
#else
#error "privpost/core/random/os_random_engine.hpp: only Linux getrandom(2) is supported so far"
#endif

namespace privpost {

/// Draws 64-bit words from getrandom(2), buffered 512 words (4 KiB) at a time, so that one system call (the cost, more
/// than the kernel's generator) serves many words: a partition plan of 10^6 records draws 10^6 of them. Not copyable:
/// two copies would replay the same buffered words.
class os_random_engine {
 public:
  /// The engine's output: 64 random bits.
  using result_type = std::uint64_t;

  os_random_engine() = default;
  os_random_engine(const os_random_engine&) = delete;
  os_random_engine& operator=(const os_random_engine&) = delete;
  os_random_engine(os_random_engine&&) = delete;
  os_random_engine& operator=(os_random_engine&&) = delete;
  ~os_random_engine() { buffer_.fill(0); }

  /// Smallest output, 0.
  static constexpr result_type min() { return 0; }
  /// Largest output, 2^64 - 1.
  static constexpr result_type max() { return std::numeric_limits<result_type>::max(); }

  /// 64 bits from the operating system's CSPRNG.
  result_type operator()() {
    if (next_ == buffer_.size()) refill();
    return buffer_[next_++];
  }

 private:
  void refill() {
    auto* p = reinterpret_cast<unsigned char*>(buffer_.data());
    std::size_t left = sizeof(buffer_);
    // getrandom may return fewer bytes than asked or be interrupted by a signal; bounded retries.
    for (int tries = 0; left > 0; ++tries) {
      if (tries >= 64) throw std::system_error(EIO, std::generic_category(), "os_random_engine: getrandom made no progress");
      const ssize_t got = ::getrandom(p, left, 0);
      if (got < 0) {
        if (errno == EINTR) continue;
        throw std::system_error(errno, std::generic_category(), "os_random_engine: getrandom failed");
      }
      p += got;
      left -= static_cast<std::size_t>(got);
    }
    next_ = 0;
  }

  std::array<result_type, 512> buffer_{};
  std::size_t next_ = buffer_.size();
};

}  // namespace privpost
