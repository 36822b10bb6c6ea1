// Test support: the coverage rule of every simulation-based calibration test.
// Over M independent trials the number of 50% (90%) central intervals that cover the true parameter is
// Binomial(M, 0.5) (Binomial(M, 0.9)) for a calibrated method, so a coverage estimate has standard deviation
// sqrt(p (1 - p) / M). A method passes when both coverages lie within 3.5 such standard deviations of nominal:
// two-sided false-alarm rate 4.7e-4 per check, about 5% for a test case that makes 100 such checks (the bounded
// studies check 2 levels x 3 coordinates x 9 settings for two methods); 3 standard deviations failed the exact
// non-private posterior once in 72 checks. The seeds are fixed, so each check is deterministic.
// At M = 1500: tolerance 0.045 for 50% and 0.027 for 90%; a 90% coverage of 0.86 (a 0.04 shortfall, as a miscalibrated truncated
// sampler once showed) then lies (0.04 - 0.027) / 0.0077 = 1.7 standard deviations beyond the tolerance and is caught with
// probability 0.95. The KS test of the same quantiles (level 0.001) is kept beside it: it sees shape, the coverage sees the
// tails.
#pragma once

#include <catch2/catch.hpp>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "privpost/diagnostics/calibration.hpp"
#include "privpost/inference/calibration_study.hpp"

namespace privpost::test {

inline constexpr double calibration_ks_level = 1e-3;
inline constexpr double coverage_sds = 3.5;

/// coverage_sds binomial standard deviations of a coverage estimate at `trials` trials.
inline double coverage_tolerance(double nominal, int trials) {
  return coverage_sds * std::sqrt(nominal * (1.0 - nominal) / static_cast<double>(trials));
}

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
