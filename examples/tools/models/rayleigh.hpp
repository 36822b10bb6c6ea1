// The tools' rayleigh model: a user's family added to privpost-release, -infer, -calibrate and -synthesize in this one
// file (docs/layout.md, "Adding a model to the tools"). The family and its prior are the ones examples/custom_family.cpp
// runs the library on (examples/rayleigh_family.hpp): nonnegative reals x with p(x | theta) = (2x / theta)
// exp(-x^2 / theta), an inverse-gamma prior on theta = lambda^2; records outside the declared bounds are dropped
// (docs/model-rayleigh.md). A truncated_family_tool (truncated_family_tool.hpp says what each member is for).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <privpost/core/errors.hpp>

#include "../../rayleigh_family.hpp"

namespace privpost::tools {

struct rayleigh_model {
  static constexpr std::string_view name = "rayleigh";
  using family = my::rayleigh_family;
  static constexpr std::size_t prior_values = 2;
  static constexpr std::string_view prior_meaning = "inverse-gamma a,b of theta = lambda^2";
  static constexpr std::string_view prior_default = "2,2";
  /// my::rayleigh_prior is a user's aggregate without checks of its own: its parameters are checked here.
  static my::rayleigh_prior prior(const std::vector<double>& p) {
    privpost::check_positive_finite("rayleigh_prior", "a", p[0]);
    privpost::check_positive_finite("rayleigh_prior", "b", p[1]);
    return {p[0], p[1]};
  }
  static my::rayleigh_prior calibration_prior() { return {20.0, 20.0}; }
  static std::vector<std::string> parameters() { return {"theta"}; }
};

}  // namespace privpost::tools
