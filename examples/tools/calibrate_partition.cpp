// privpost-calibrate --model linreg --partitions M: before a partition release, the error of sample and aggregate at
// the user's n, M and epsilon on simulated regressions (privpost/testing/partition_study.hpp; the partition-release
// spec's A.9 items 6 and 8): per combiner and cutoff the mean |p(b) - released|, and the reliability of the releases.
#include <cmath>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include <privpost/testing/partition_study.hpp>

#include "calibrate.hpp"
#include "models.hpp"

namespace privpost::tools::calibrate {

int run_partition_study(const cli_options& o) {
  if (privpost::tools::spread_job() != nullptr)
    throw std::invalid_argument("--partitions runs in one process; run it without mpirun");
  if (privpost::tools::kind_of(o.model) != privpost::tools::model_kind::regression)
    throw std::invalid_argument("--partitions serves --model linreg");
  if (o.dim != 1) throw std::invalid_argument("--partitions studies one covariate (--dim 1)");
  if (!(o.n >= 4 && o.n <= 1e7 && std::floor(o.n) == o.n)) throw std::invalid_argument("--n must be a whole number in [4, 10^7]");
  check_epsilon("privpost-calibrate", o.epsilon);
  partition_regression_design design;
  design.n = static_cast<std::size_t>(o.n);
  design.partitions = o.partitions;
  // Checked here (with the plan's message) rather than in the first trial.
  std::mt19937_64 check(0);
  (void)partition_plan(design.n, design.partitions, check);

  probability_study_options po;
  po.step = 1.0 / std::sqrt(o.n);  // about one full-posterior sd of the slope (x ~ N(0, 1), noise sd 1)
  po.datasets = o.trials;
  po.seed = o.seed;
  po.threads = 2;
  std::cerr << "privpost-calibrate: " << o.trials << " simulated regressions y = 1 + 2 x + N(0, 1), x ~ N(0, 1), n = " << design.n
            << ", M = " << design.partitions << ": cutoffs 2 + k / sqrt(n), k = -2..2; without noise, then at epsilon "
            << o.epsilon << " ...\n";
  po.epsilon = 0.0;
  const auto exact = probability_study(design, po);
  po.epsilon = o.epsilon;
  const auto noisy = probability_study(design, po);
  std::cerr << "privpost-calibrate: reliability: " << o.trials << " releases of Pr(slope <= prior median) ...\n";
  reliability_study_options ro;
  ro.trials = o.trials;
  ro.seed = o.seed;
  ro.epsilon = o.epsilon;
  ro.threads = 2;
  const auto bins = reliability_study(design, ro);

  nlohmann::json out = {{"n", design.n}, {"partitions", design.partitions}, {"epsilon", o.epsilon}, {"datasets", o.trials}};
  out["error"] = nlohmann::json::array();
  std::ostream& os = o.format == "json" ? std::cerr : std::cout;
  os << std::setprecision(3) << std::fixed;
  os << "\nMean |p(b) - released| over " << o.trials << " data sets (p(b): the full-data posterior), by combiner and cutoff "
     << "b = 2 + k / sqrt(n); in brackets without noise; 'saturated': released 0 or 1\n";
  os << std::setw(22) << "combiner" << std::setw(6) << "k" << std::setw(10) << "p(b)" << std::setw(18) << "|error|"
     << std::setw(12) << "signed" << std::setw(11) << "saturated\n";
  for (std::size_t i = 0; i < noisy.size(); ++i) {
    const auto& r = noisy[i];
    os << std::setw(22) << combiner_name(r.combiner) << std::setw(6) << std::setprecision(0) << r.offset << std::setprecision(3)
       << std::setw(10) << r.mean_exact << std::setw(9) << r.mean_abs << " (" << exact[i].mean_abs << ")" << std::setw(12)
       << r.mean_signed << std::setw(10) << r.saturated << "\n";
    out["error"].push_back({{"combiner", combiner_name(r.combiner)},
                            {"k", r.offset},
                            {"mean_p", r.mean_exact},
                            {"mean_abs_error", r.mean_abs},
                            {"mean_abs_error_without_noise", exact[i].mean_abs},
                            {"mean_signed_error", r.mean_signed},
                            {"saturated", r.saturated}});
  }
  os << "\nReliability (normality-corrected, epsilon " << o.epsilon << "): slope and intercept from N((1, 2), (2 / sqrt(n))^2), "
     << "release of Pr(slope <= 2); per bin of the released value, how often the slope was <= 2\n";
  os << std::setw(16) << "released in" << std::setw(8) << "trials" << std::setw(12) << "mean" << std::setw(12) << "frequency"
     << std::setw(12) << "mean p(b)\n";
  out["reliability"] = nlohmann::json::array();
  for (const auto& b : bins) {
    os << "    [" << std::setprecision(1) << b.lower << ", " << b.upper << ")" << std::setprecision(3) << std::setw(8) << b.trials
       << std::setw(12) << b.mean_released << std::setw(12) << b.frequency << std::setw(12) << b.mean_exact << "\n";
    out["reliability"].push_back({{"lower", b.lower},
                                  {"upper", b.upper},
                                  {"trials", b.trials},
                                  {"mean_released", b.mean_released},
                                  {"frequency", b.frequency},
                                  {"mean_p", b.mean_exact}});
  }
  if (o.format == "json") std::cout << out.dump(2) << '\n';
  return 0;
}

}  // namespace privpost::tools::calibrate
