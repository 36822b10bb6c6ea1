// The tools' binomial model: 0/1 records, the count of ones released, a Beta prior on the success probability; no
// bounds to declare (docs/model-families.md). A bounded_family_tool (bounded_family_tool.hpp says what each member is
// for).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <privpost/families/binomial.hpp>

#include "../model_flags.hpp"

namespace privpost::tools {

struct binomial_model {
  static constexpr std::string_view name = "binomial";
  static constexpr int categories = 0;  // no categories field
  using family = privpost::binomial_family;
  static constexpr std::uint8_t methods = method_exact | method_corrected | method_records;
  static constexpr std::uint8_t options = option_collapsed_moves;
  static constexpr std::size_t prior_values = 2;
  static constexpr std::string_view prior_meaning = "Beta a,b";
  static constexpr std::string_view prior_default = "1,1";
  static privpost::beta_prior prior(const std::vector<double>& p) { return {p[0], p[1]}; }
  static privpost::beta_prior calibration_prior() { return {1.0, 1.0}; }
  static std::vector<std::string> parameters() { return {"theta"}; }
  static std::string accepted_records() { return "0 or 1"; }
  static bool valid_record(double x) { return x == 0.0 || x == 1.0; }
};

}  // namespace privpost::tools
