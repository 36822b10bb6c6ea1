// The tools' poisson model: counts, rate lambda, a Gamma prior on the rate; records outside the declared bounds are
// dropped (docs/model-families.md). A truncated_family_tool (truncated_family_tool.hpp says what each member is for).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <privpost/families/poisson.hpp>

namespace privpost::tools {

struct poisson_model {
  static constexpr std::string_view name = "poisson";
  using family = privpost::poisson_family;
  static constexpr std::size_t prior_values = 2;
  static constexpr std::string_view prior_meaning = "Gamma shape,rate of the rate";
  static constexpr std::string_view prior_default = "1,1";
  static privpost::poisson_gamma_prior prior(const std::vector<double>& p) { return {p[0], p[1]}; }
  static privpost::poisson_gamma_prior calibration_prior() { return {10.0, 2.0}; }
  static std::vector<std::string> parameters() { return {"rate"}; }
};

}  // namespace privpost::tools
