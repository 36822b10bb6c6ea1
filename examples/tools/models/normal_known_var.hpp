// The tools' normal-known-var model: reals with a known sd sigma, a normal prior on the mean; records outside the
// declared bounds are dropped (docs/model-families.md). A truncated_family_tool (truncated_family_tool.hpp says what
// each member is for). sigma is part of the prior (--prior mean0,sd0,sigma), which has no default.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <Eigen/Core>
#include <privpost/families/normal_known_variance.hpp>

namespace privpost::tools {

struct normal_known_var_model {
  static constexpr std::string_view name = "normal-known-var";
  using family = privpost::normal_known_variance_family;
  static constexpr std::size_t prior_values = 3;
  static constexpr std::string_view prior_meaning = "mean0,sd0,sigma with sigma the records' known sd";
  static constexpr std::string_view prior_default = "";  // required: sigma, the records' known sd, has no default
  static privpost::normal_mean_prior prior(const std::vector<double>& p) { return {p[0], p[1], p[2]}; }
  static privpost::normal_mean_prior calibration_prior() { return {0.0, 1.0, 1.0}; }
  static std::vector<std::string> parameters() { return {"mean"}; }
  /// A posterior draw holds the mean only; the records' known sd is the prior's (synthetic records).
  static privpost::normal_mean_parameter record_parameter(const Eigen::VectorXd& theta, const privpost::normal_mean_prior& p) {
    return {theta(0), p.sigma()};
  }
};

}  // namespace privpost::tools
