// The tools' multinomial model: records are categories 0..K-1, the counts of the first K - 1 released, a Dirichlet
// prior on the probabilities; no bounds to declare (docs/model-families.md). One type per K (the release record's
// `categories`; 2 to 5, the Dirichlet samplers compiled for each). A bounded_family_tool (bounded_family_tool.hpp says
// what each member is for).
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <Eigen/Core>
#include <privpost/families/multinomial.hpp>

#include "../model_flags.hpp"

namespace privpost::tools {

template <int K>
struct multinomial_model {
  static_assert(K >= 2 && K <= 5, "the tools' multinomial models have 2 to 5 categories");
  static constexpr std::string_view name = "multinomial";
  static constexpr int categories = K;
  using family = privpost::multinomial_family<K>;
  static constexpr std::uint8_t methods = method_records;
  static constexpr std::uint8_t options = option_collapsed_moves;
  static constexpr std::size_t prior_values = K;
  static constexpr std::string_view prior_meaning = "Dirichlet alpha_1..alpha_K";
  static constexpr std::string_view prior_default = std::string_view("1,1,1,1,1").substr(0, 2 * K - 1);
  static constexpr std::string_view prior_default_help = "1 per category";  // the help speaks of every K
  static privpost::dirichlet_prior<K> prior(const std::vector<double>& p) {
    Eigen::Matrix<double, K, 1> alpha;
    for (int k = 0; k < K; ++k) alpha(k) = p[static_cast<std::size_t>(k)];
    return privpost::dirichlet_prior<K>(alpha);
  }
  static privpost::dirichlet_prior<K> calibration_prior() {
    return privpost::dirichlet_prior<K>(Eigen::Matrix<double, K, 1>::Ones());
  }
  static std::vector<std::string> parameters() {
    std::vector<std::string> names;
    for (int k = 0; k < K; ++k) names.push_back("theta_" + std::to_string(k));
    return names;
  }
  static std::string accepted_records() { return "a category 0.." + std::to_string(K - 1); }
  static bool valid_record(double x) { return x >= 0 && x < K && std::floor(x) == x; }
};

}  // namespace privpost::tools
