// The checked field readers of the tools' JSON records (release_record.hpp, partition_record.hpp): a missing field, a
// wrong type or a non-finite number is a std::invalid_argument naming the field, prefixed by the record's kind.
#pragma once

#include <cmath>
#include <cstddef>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include <privpost/core/concepts.hpp>

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
