// Test support: the calibration checks of every simulation-based calibration test, by the rule of calibration_rule.hpp.
#pragma once

#include <catch2/catch.hpp>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "calibration_rule.hpp"
#include "privpost/diagnostics/calibration.hpp"
#include "privpost/inference/calibration_study.hpp"

namespace privpost::test {

/// The report row of one method and parameter coordinate (std::logic_error when the report has none).
inline const privpost::calibration_row& row(const std::vector<privpost::calibration_row>& rows, const std::string& method,
                                            int parameter = 0) {
  for (const auto& r : rows)
    if (r.method == method && r.parameter == parameter) return r;
  throw std::logic_error("no calibration row for " + method + "[" + std::to_string(parameter) + "]");
}

/// KS p > 0.001 and both coverages within tolerance.
inline void check_calibrated(const privpost::calibration_row& r) {
  INFO(r.method << "[" << r.parameter << "], M = " << r.trials << ": KS " << r.ks << " (p " << r.ks_pvalue << "), coverage 50% "
                << r.coverage50 << " (tolerance " << coverage_tolerance(0.5, r.trials) << "), 90% " << r.coverage90
                << " (tolerance " << coverage_tolerance(0.9, r.trials) << ")");
  CHECK(r.ks_pvalue > calibration_ks_level);
  CHECK(std::abs(r.coverage50 - 0.5) <= coverage_tolerance(0.5, r.trials));
  CHECK(std::abs(r.coverage90 - 0.9) <= coverage_tolerance(0.9, r.trials));
}

/// The negative control: rejected by KS or outside the coverage tolerance at 50% or 90%.
inline bool miscalibrated(const privpost::calibration_row& r) {
  return r.ks_pvalue < calibration_ks_level || std::abs(r.coverage50 - 0.5) > coverage_tolerance(0.5, r.trials) ||
         std::abs(r.coverage90 - 0.9) > coverage_tolerance(0.9, r.trials);
}

// The row of a study run by hand (not through run_calibration): the true parameter's posterior quantile in every trial.
inline privpost::calibration_row row_of_quantiles(const std::string& method, int parameter,
                                                  const std::vector<double>& quantiles) {
  privpost::calibration_row r;
  r.method = method;
  r.parameter = parameter;
  r.trials = static_cast<int>(quantiles.size());
  const auto ks = privpost::ks_uniform(quantiles);
  r.ks = ks.statistic;
  r.ks_pvalue = ks.p_value;
  r.coverage50 = privpost::coverage(quantiles, 0.5);
  r.coverage90 = privpost::coverage(quantiles, 0.9);
  return r;
}

}  // namespace privpost::test
