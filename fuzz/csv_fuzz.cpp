// libFuzzer harness: the CSV reader of privpost-release (examples/tools/release_record.hpp read_csv_column), on a file
// holding the fuzzer's bytes. Contract: the column is read as finite numbers or the file is refused with
// std::invalid_argument naming the line; never a crash, a NaN or an infinity.
#include <unistd.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <stdexcept>
#include <string>

#include "fuzz_support.hpp"
#include "release_record.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::string path = "/tmp/privpost_csv_fuzz_" + std::to_string(::getpid()) + ".csv";
  {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  try {
    for (const double x : privpost::tools::read_csv_column(path, "x"))
      if (!std::isfinite(x)) privpost::fuzz::violated("a non-finite value was read");
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
