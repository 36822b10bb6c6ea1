// Shared helpers of the libFuzzer harnesses: read doubles and bytes from the fuzzer's input, and the
// harnesses' contract, that an input is either refused with a documented exception or gives finite results.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace privpost::fuzz {

/// Reads fixed-size values from the fuzzer's bytes; past the end it returns zeros.
class input {
 public:
  input(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}
  double real() {
    double x = 0.0;
    take(&x, sizeof x);
    return x;
  }
  std::uint8_t byte() {
    std::uint8_t b = 0;
    take(&b, 1);
    return b;
  }
  std::size_t left() const { return size_ - at_; }

 private:
  void take(void* out, std::size_t n) {
    const std::size_t k = n < left() ? n : left();
    std::memcpy(out, data_ + at_, k);
    if (k < n) std::memset(static_cast<char*>(out) + k, 0, n - k);
    at_ += k;
  }
  const std::uint8_t* data_;
  std::size_t size_, at_ = 0;
};

/// A broken contract: abort, so that libFuzzer records the input as a crash.
[[noreturn]] inline void violated(const char* what) {
  std::fprintf(stderr, "privpost fuzz: contract violated: %s\n", what);
  __builtin_trap();
}

}  // namespace privpost::fuzz
