// The tools' poisson-glm model: Poisson regression on declared covariates (DP-GLM, docs/model-glm.md); responses are
// counts, clamped to the declared --y-bound. A glm_tool (glm_tool.hpp says what each member is for).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>

#include <privpost/families/glm/glm_statistic.hpp>
#include <privpost/samplers/glm/glm_prior.hpp>
#include <privpost/samplers/glm/poisson_moment_model.hpp>

#include "../model_flags.hpp"

namespace privpost::tools {

struct poisson_glm_model {
  static constexpr std::string_view name = "poisson-glm";
  static constexpr privpost::glm_kind kind = privpost::glm_kind::poisson;
  static constexpr std::uint8_t options = option_target_accept | option_metric | option_max_minutes;
  static privpost::glm_statistic statistic(int d, double radius, double y_bound, std::optional<double> c) {
    return privpost::glm_statistic::poisson(d, radius, y_bound, c);
  }
  static std::string sensitivity_rule(bool intercept) {
    return intercept ? "exact Poisson bound (docs/design-glm.md Sec. 2.3) at sqrt(c^2 + R^2), equal noise"
                     : "exact Poisson bound (docs/design-glm.md Sec. 2.3), equal noise";
  }
  /// The moments are exact (no link to choose: --link is refused by the model table before this).
  template <class F>
  static int with_moment_model(const std::string& /*link*/, F&& f) {
    return f(std::type_identity<privpost::poisson_moment_model>{}, std::string("log (exact moments)"));
  }
  static std::string title(const std::string& how, const std::string& /*link*/) {
    return "noise-aware Poisson DP-GLM (" + how + ", exact tilted moments)";
  }
  using study_model = privpost::poisson_moment_model;
  /// Rates up to about e^2 per record, so that the counts stay well inside study_y_bound.
  static constexpr privpost::glm_prior study_prior{4.0, 0.5, 2.0, 0.5};
  static constexpr double study_y_bound = 5.0;
  static constexpr std::string_view study_title = "Poisson";
  static constexpr std::string_view study_l1_note = ", R_y = 5";
  static constexpr std::string_view study_l2_note = "docs/design-glm.md Sec. 2.3 at R = 1, R_y = 5";
};

}  // namespace privpost::tools
