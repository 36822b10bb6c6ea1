// privpost_calibration_json_check REPORT_JSON CALIBRATED CONTROL: checks privpost-calibrate --format json by the rule of
// every calibration test (tests/support/calibration_rule.hpp): each row of method CALIBRATED passes (KS p > 0.001, both
// coverages within 3.5 binomial standard deviations of nominal), and each row of the negative control CONTROL fails.
// Prints one line per row and "ok", or the first row that breaks the rule (exit status 1).
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "../support/calibration_rule.hpp"

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: privpost_calibration_json_check REPORT_JSON CALIBRATED CONTROL\n");
    return 2;
  }
  std::ifstream in(argv[1]);
  nlohmann::json report;
  try {
    in >> report;
  } catch (const nlohmann::json::exception& e) {
    std::printf("%s: not JSON (%s)\n", argv[1], e.what());
    return 1;
  }
  const std::string calibrated = argv[2], control = argv[3];
  int seen_calibrated = 0, seen_control = 0;
  for (const auto& row : report) {
    const std::string method = row.at("method").get<std::string>();
    if (method != calibrated && method != control) continue;
    const double p = row.at("ks_pvalue").get<double>(), c50 = row.at("coverage50").get<double>(),
                 c90 = row.at("coverage90").get<double>();
    const int trials = row.at("trials").get<int>();
    const bool passes = privpost::test::calibrated(p, c50, c90, trials);
    std::printf("%s[%d]: KS p %.3g, coverage 50%% %.3f, 90%% %.3f (M = %d, tolerance %.3f and %.3f): %s\n", method.c_str(),
                row.at("parameter").get<int>(), p, c50, c90, trials, privpost::test::coverage_tolerance(0.5, trials),
                privpost::test::coverage_tolerance(0.9, trials), passes ? "calibrated" : "miscalibrated");
    if (passes != (method == calibrated)) {
      std::printf("%s should be %s\n", method.c_str(), method == calibrated ? "calibrated" : "miscalibrated (negative control)");
      return 1;
    }
    ++(method == calibrated ? seen_calibrated : seen_control);
  }
  if (seen_calibrated == 0 || seen_control == 0) {
    std::printf("the report has no row of %s\n", seen_calibrated == 0 ? calibrated.c_str() : control.c_str());
    return 1;
  }
  std::printf("ok\n");
  return 0;
}
