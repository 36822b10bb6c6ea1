// The tools' normal model: reals with unknown mean and variance, a normal-inverse-gamma prior; records outside the
// declared bounds are dropped (docs/model-families.md). A truncated_family_tool (truncated_family_tool.hpp says what
// each member is for).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <privpost/families/normal.hpp>

namespace privpost::tools {

struct normal_model {
  static constexpr std::string_view name = "normal";
  using family = privpost::normal_family;
  static constexpr std::size_t prior_values = 4;
  static constexpr std::string_view prior_meaning = "normal-inverse-gamma m,kappa,a,b";
  static constexpr std::string_view prior_default = "0,1,1,1";
  static privpost::normal_inverse_gamma_prior prior(const std::vector<double>& p) { return {p[0], p[1], p[2], p[3]}; }
  static privpost::normal_inverse_gamma_prior calibration_prior() { return {0.0, 1.0, 10.0, 10.0}; }
  static std::vector<std::string> parameters() { return {"mean", "variance"}; }
};

}  // namespace privpost::tools
