// libFuzzer harness: the JSON release record that privpost-infer reads (examples/tools/release_record.hpp), parsed as
// privpost-infer parses it. Contract: malformed JSON and invalid records are refused (nlohmann's exceptions, which
// privpost-infer reports as a malformed record, or std::invalid_argument naming the field); an accepted record has a
// whole n >= 1, a known mechanism with finite positive parameters and finite noisy statistics.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "fuzz_support.hpp"
#include "release_record.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception&) {
    return 0;
  }
  privpost::tools::release_record r;
  try {
    r = privpost::tools::from_json(j);
  } catch (const nlohmann::json::exception&) {
    return 0;
  } catch (const std::invalid_argument&) {
    return 0;
  }
  if (!(r.n >= 1 && std::floor(r.n) == r.n)) privpost::fuzz::violated("n");
  if (!(std::isfinite(r.epsilon) && r.epsilon > 0)) privpost::fuzz::violated("epsilon");
  if (!(std::isfinite(r.noise) && r.noise > 0)) privpost::fuzz::violated("noise");
  for (const double z : r.noisy_statistics)
    if (!std::isfinite(z)) privpost::fuzz::violated("noisy statistic");
  return 0;
}
