// libFuzzer harness: the JSON release record that privpost-infer reads (examples/tools/release_record.hpp), parsed as
// privpost-infer parses it. Contract: malformed JSON and invalid records are refused (nlohmann's exceptions, which
// privpost-infer reports as a malformed record, or std::invalid_argument naming the field); an accepted record has a
// whole n >= 1, a known mechanism with finite positive parameters and finite noisy statistics, and for a lattice mechanism
// (discrete-laplace, discrete-gaussian) a finite granularity > 0, a lattice kind exact or rounded and a dimension in
// [1, 100000], with a family model; a sensitivity equal to the one its declared bounds give; every noisy statistic
// within max_noise_scales_outside noise scales of its statistic's range; distinct names; multinomial K in [2, 5];
// graph edges (u, v) with u < v inside the node list; declared ranges lo < hi with a finite width. A partition release
// record (examples/tools/partition_record.hpp) accepted has released probabilities in [0, 1], non-decreasing, sorted
// quantiles, positive finite noise scales and budgets, and noise-only intervals that are finite (quantiles) or inside
// [0, 1] (probabilities), computed without an exception.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "fuzz_support.hpp"
#include "partition_record.hpp"
#include "release_record.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception&) {
    return 0;
  }
  if (privpost::tools::is_partition_record(j)) {
    privpost::tools::partition_record p;
    try {
      p = privpost::tools::partition_from_json(j);
    } catch (const nlohmann::json::exception&) {
      return 0;
    } catch (const std::invalid_argument&) {
      return 0;
    }
    if (!(std::isfinite(p.epsilon) && p.epsilon > 0)) privpost::fuzz::violated("partition epsilon");
    if (p.probabilities) {
      const auto& r = *p.probabilities;
      if (!(std::isfinite(r.noise_scale) && r.noise_scale > 0)) privpost::fuzz::violated("probability noise scale");
      for (std::size_t k = 0; k < r.probability.size(); ++k) {
        if (!(r.probability[k] >= 0 && r.probability[k] <= 1)) privpost::fuzz::violated("a probability outside [0, 1]");
        if (k > 0 && r.probability[k] < r.probability[k - 1]) privpost::fuzz::violated("decreasing probabilities");
        const auto [lo, hi] = privpost::noise_only_interval(r, k, 0.05);
        if (!(lo >= 0 && lo <= hi && hi <= 1)) privpost::fuzz::violated("a probability interval");
      }
    }
    if (p.quantiles) {
      const auto& r = *p.quantiles;
      if (!(std::isfinite(r.noise_scale) && r.noise_scale > 0)) privpost::fuzz::violated("quantile noise scale");
      for (std::size_t l = 0; l < r.values.size(); ++l) {
        if (l > 0 && r.values[l] < r.values[l - 1]) privpost::fuzz::violated("unsorted quantiles");
        const auto [lo, hi] = privpost::noise_only_interval(r, l, 0.05);
        if (!(std::isfinite(lo) && std::isfinite(hi) && lo <= hi)) privpost::fuzz::violated("a quantile interval");
      }
    }
    return 0;
  }
  privpost::tools::release_record r;
  try {
    r = privpost::tools::from_json(j);
  } catch (const nlohmann::json::exception&) {
    return 0;
  } catch (const std::invalid_argument&) {
    return 0;
  }
  if (!(r.n >= 1 && std::floor(r.n) == r.n)) privpost::fuzz::violated("n");
  if (!(std::isfinite(r.epsilon) && r.epsilon > 0)) privpost::fuzz::violated("epsilon");
  if (!(std::isfinite(r.noise) && r.noise > 0)) privpost::fuzz::violated("noise");
  for (const double z : r.noisy_statistics)
    if (!std::isfinite(z)) privpost::fuzz::violated("noisy statistic");
  if (r.mechanism != "laplace" && r.mechanism != "gaussian" && !privpost::tools::is_discrete(r.mechanism))
    privpost::fuzz::violated("mechanism name");
  if (privpost::tools::is_discrete(r.mechanism)) {
    if (!(std::isfinite(r.granularity) && r.granularity > 0)) privpost::fuzz::violated("granularity");
    if (r.lattice != "exact" && r.lattice != "rounded") privpost::fuzz::violated("lattice");
    if (!(r.lattice_dimension >= 1 && r.lattice_dimension <= 100000)) privpost::fuzz::violated("lattice dimension");
    if (!privpost::tools::is_family_model(r.model)) privpost::fuzz::violated("lattice mechanism with a non-family model");
  }
  namespace tools = privpost::tools;
  if (!tools::same_value(r.sensitivity, tools::record_detail::declared_sensitivity(r)))
    privpost::fuzz::violated("a sensitivity the declared bounds do not give");
  const auto ranges = tools::record_detail::statistic_ranges(r, r.noisy_statistics.size());
  for (std::size_t i = 0; i < r.noisy_statistics.size(); ++i) {
    const auto [lo, hi] = ranges[i];
    const double z = r.noisy_statistics[i];
    if (z < lo - privpost::max_noise_scales_outside * r.noise || z > hi + privpost::max_noise_scales_outside * r.noise)
      privpost::fuzz::violated("a noisy statistic no honest release produces");
  }
  // The payload is the model kind's (payload_for), and its fields are what the reader promises.
  if (r.payload.index() != tools::payload_for(tools::kind_of(r.model)).index()) privpost::fuzz::violated("payload kind");
  auto distinct = [](const std::vector<std::string>& v) {
    for (std::size_t i = 0; i < v.size(); ++i)
      for (std::size_t k = 0; k < i; ++k)
        if (v[i] == v[k]) return false;
    return true;
  };
  auto check_covariates = [&](const tools::covariate_block& c) {
    if (!distinct(c.covariates)) privpost::fuzz::violated("duplicate names");
    for (const auto& [lo, hi] : c.covariate_bounds)
      if (!(lo < hi && std::isfinite(hi - lo))) privpost::fuzz::violated("covariate bound");
  };
  auto check_columns = [&](const tools::table_columns_block& t) {
    if (!distinct(t.nodes)) privpost::fuzz::violated("duplicate names");
    for (const auto& l : t.levels)
      if (!distinct(l)) privpost::fuzz::violated("duplicate level names");
  };
  std::visit(
      [&]<class P>(const P& p) {
        if constexpr (std::is_same_v<P, tools::family_release>) {
          if (tools::takes_categories(r.model) && !(p.categories >= 2 && p.categories <= tools::max_categories))
            privpost::fuzz::violated("categories");
          if (p.has_bounds && !(p.lower < p.upper && std::isfinite(p.upper - p.lower))) privpost::fuzz::violated("bounds");
        } else if constexpr (std::is_base_of_v<tools::covariate_block, P>) {
          check_covariates(p);
        } else {
          check_columns(p);
          if constexpr (std::is_same_v<P, tools::tables_release>)
            for (const auto& [u, v] : p.edges)
              if (!(u >= 0 && u < v && static_cast<std::size_t>(v) < p.nodes.size())) privpost::fuzz::violated("edge");
        }
      },
      r.payload);
  return 0;
}
