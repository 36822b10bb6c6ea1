// The tools' logistic model: logistic regression on declared covariates (DP-GLM, docs/model-glm.md); responses are
// labels (0/1, -1/+1, or text with --positive LABEL). A glm_tool (glm_tool.hpp says what each member is for).
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

#include <privpost/families/glm/glm_statistic.hpp>
#include <privpost/samplers/glm/glm_prior.hpp>
#include <privpost/samplers/glm/logistic_moment_model.hpp>

#include "../model_flags.hpp"

namespace privpost::tools {

struct logistic_model {
  static constexpr std::string_view name = "logistic";
  static constexpr privpost::glm_kind kind = privpost::glm_kind::logistic;
  static constexpr std::uint8_t options = option_link | option_target_accept | option_metric | option_max_minutes;
  static privpost::glm_statistic statistic(int d, double radius, double /*y_bound: labels*/, std::optional<double> c) {
    return privpost::glm_statistic::logistic(d, radius, c);
  }
  static std::string sensitivity_rule(bool intercept) {
    return intercept ? "Lemma 3.3 (exact), with the intercept column's inner products" : "Lemma 3.3 (exact)";
  }
  template <class F>
  static int with_moment_model(const std::string& link, F&& f) {
    if (link == "exact") return f(std::type_identity<privpost::logistic_moment_model<privpost::exact_logistic_link>>{}, link);
    if (link == "taylor") return f(std::type_identity<privpost::logistic_moment_model<privpost::taylor_logistic_link>>{}, link);
    throw std::invalid_argument("--link is '" + link + "'; accepted: exact, taylor");
  }
  static std::string title(const std::string& how, const std::string& link) {
    return "noise-aware logistic DP-GLM (" + how + ", link " + link + ")";
  }
  using study_model = privpost::logistic_moment_model<>;
  /// The paper's coefficients (s_max 9), unit covariate scales.
  static constexpr privpost::glm_prior study_prior{9.0, 1.0, 2.0, 0.5};
  static constexpr double study_y_bound = 1.0;  // labels: no count bound
  static constexpr std::string_view study_title = "logistic";
  static constexpr std::string_view study_l1_note = "";
  static constexpr std::string_view study_l2_note = "Lemma 3.3 at R = 1";
};

}  // namespace privpost::tools
