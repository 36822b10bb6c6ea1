// The checked field readers of the tools' JSON records (release_record.hpp, partition_record.hpp): a missing field, a
// wrong type or a non-finite number is a std::invalid_argument naming the field, prefixed by the record's kind.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include <privpost/core/concepts.hpp>
#include <privpost/core/random/os_random_engine.hpp>

namespace privpost::tools {

struct json_fields {
  std::string prefix;  ///< "release record: ", ...

  [[noreturn]] void fail(const std::string& what) const { throw std::invalid_argument(prefix + what); }
  const nlohmann::json& need(const nlohmann::json& obj, const char* key) const {
    if (!obj.is_object() || !obj.contains(key)) fail(std::string("missing field '") + key + "'");
    return obj.at(key);
  }
  double number(const nlohmann::json& obj, const char* key) const {
    const auto& v = need(obj, key);
    if (!v.is_number()) fail(std::string("field '") + key + "' is not a number");
    const double x = v.get<double>();
    if (!std::isfinite(x)) fail(std::string("field '") + key + "' is not finite");
    return x;
  }
  std::string text(const nlohmann::json& obj, const char* key) const {
    const auto& v = need(obj, key);
    if (!v.is_string()) fail(std::string("field '") + key + "' is not a string");
    return v.get<std::string>();
  }
};

/// A release's identity, its record's "release_id": 128 bits from the OS CSPRNG as 32 lowercase hex digits, drawn when
/// the release is made. Two records with one identity are one release (a file given twice, or copied): analysed as two,
/// their noise would be counted twice and the posterior would be too narrow.
inline std::string new_release_id() {
  privpost::os_random_engine g;
  static constexpr char hex[] = "0123456789abcdef";
  std::string id;
  for (int word = 0; word < 2; ++word) {
    std::uint64_t bits = g();
    for (int k = 0; k < 16; ++k, bits >>= 4) id.push_back(hex[bits & 15u]);
  }
  return id;
}

/// The "release_id" of record j: empty when it has none (records of older privpost versions and of other tools);
/// std::invalid_argument through f when it is not 32 lowercase hex digits.
inline std::string read_release_id(const nlohmann::json& j, const json_fields& f) {
  if (!j.contains("release_id")) return {};
  const std::string id = f.text(j, "release_id");
  bool hex = id.size() == 32;
  for (char c : id) hex = hex && ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'));
  if (!hex) f.fail("field 'release_id' is not 32 lowercase hex digits (the identity privpost-release draws)");
  return id;
}

/// The "ledger" object of a record written with privpost-release --ledger.
inline nlohmann::json ledger_json(const std::string& file, const std::string& label, std::size_t entries, privacy_budget spent,
                                  privacy_budget total) {
  return {{"file", file},
          {"entry", label},
          {"entries", entries},
          {"spent", {{"epsilon", spent.epsilon}, {"delta", spent.delta}}},
          {"total", {{"epsilon", total.epsilon}, {"delta", total.delta}}}};
}

}  // namespace privpost::tools
