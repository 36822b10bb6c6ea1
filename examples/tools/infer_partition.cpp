// privpost-infer on a partition release record (privpost-release --partitions): no sampler runs; the released
// probabilities and quantiles are printed with their noise-only intervals, recomputed from the record's DP aggregates
// (the quantiles' intervals simultaneous over the levels and centred on the released, sorted, values).
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "partition_record.hpp"

namespace privpost::tools {

int report_partition_release(const partition_record& r, const std::string& format) {
  constexpr double alpha = 0.05;
  nlohmann::json out = {{"model", "linreg"}, {"release", "partition"}, {"coefficient", r.coefficient},
                        {"n", r.n},          {"epsilon", r.epsilon},   {"noise_only_level", 1.0 - alpha}};
  std::ostream& os = format == "json" ? std::cerr : std::cout;
  os << "privpost-infer: partition release (sample and aggregate, Amitai 2018) of the coefficient of " << r.coefficient
     << ", n = " << r.n << ", epsilon " << r.epsilon
     << ". The released values approximate the full-data posterior; the intervals below cover the noise only (95%), not "
        "the method's approximation error (privpost-calibrate --partitions estimates it before a release).\n";
  os << std::setprecision(4);
  if (r.probabilities) {
    const auto& p = *r.probabilities;
    os << "\nPr(" << r.coefficient << " coefficient <= b), combiner " << combiner_name(p.options.combiner)
       << ", M = " << p.partitions << " partitions, Laplace scale " << p.noise_scale << " on the aggregate:\n";
    os << "  " << std::setw(12) << "b" << std::setw(12) << "released"
       << "   noise-only 95% interval\n";
    out["probabilities"] = nlohmann::json::array();
    for (std::size_t k = 0; k < p.cutoffs.size(); ++k) {
      const auto [lo, hi] = noise_only_interval(p, k, alpha);
      os << "  " << std::setw(12) << p.cutoffs[k] << std::setw(12) << p.probability[k] << "   [" << lo << ", " << hi << "]\n";
      out["probabilities"].push_back(
          {{"cutoff", p.cutoffs[k]}, {"probability", p.probability[k]}, {"noise_only_interval", {lo, hi}}});
    }
  }
  if (r.quantiles) {
    const auto& q = *r.quantiles;
    os << "\nQuantiles of the " << r.coefficient << " coefficient, M = " << q.partitions << " partitions clipped to "
       << q.bounds.center << " +- " << q.bounds.half_width << (q.bounds.capped ? " (the bound search reached its cap)" : "")
       << ", Laplace scale " << q.noise_scale << ":\n";
    // The released values are the aggregate sorted: each row's interval is centred on that row's released value, and
    // the intervals cover every level together (noise_only_intervals); the unsorted aggregate is in the JSON only.
    os << "  " << std::setw(12) << "level" << std::setw(12) << "released"
       << "   noise-only 95% interval (all levels together)\n";
    out["quantiles"] = nlohmann::json::array();
    const auto intervals = noise_only_intervals(q, alpha);
    for (std::size_t l = 0; l < q.levels.size(); ++l) {
      const auto [lo, hi] = intervals[l];
      os << "  " << std::setw(12) << q.levels[l] << std::setw(12) << q.values[l] << "   [" << lo << ", " << hi << "]\n";
      out["quantiles"].push_back({{"level", q.levels[l]},
                                  {"value", q.values[l]},
                                  {"noisy_aggregate", q.noisy_aggregate[l]},
                                  {"noise_only_interval", {lo, hi}}});
    }
    out["quantile_intervals"] = "simultaneous over the levels, each centred on its released (sorted) value";
  }
  if (format == "json") std::cout << out.dump(2) << '\n';
  return 0;
}

}  // namespace privpost::tools
