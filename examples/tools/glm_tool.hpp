// The tools' GLM models (DP-GLM, docs/model-glm.md): each is one type in one file of models/, and the list below is
// their table. privpost-release, privpost-infer, privpost-calibrate and privpost-synthesize run either through one
// code path (release_glm.cpp, infer_glm.cpp, calibrate_glm.cpp, synthesize.hpp), which takes from the type all that is
// the model's own; what depends on the response (labels, or counts with a declared bound) follows the library's
// glm_kind.
#pragma once

#include <concepts>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include <privpost/families/glm/glm_statistic.hpp>
#include <privpost/samplers/glm/glm_prior.hpp>

#include "model_list.hpp"
#include "models/logistic.hpp"
#include "models/poisson_glm.hpp"

namespace privpost::tools {

/// A GLM model of the tools:
/// - `name`: the model's name on the command line and in the release record; `kind`: the library's glm_kind (the
///   response: labels, or counts clamped to a declared bound, --y-bound); `options`: the privpost-infer options it
///   takes beyond every model's (model_flags.hpp);
/// - `statistic(d, radius, y_bound, c)`: the released statistic (glm_statistic); `sensitivity_rule(intercept)`: the
///   release record's words for where its sensitivity comes from;
/// - `with_moment_model(link, f)`: f(std::type_identity<Model>{}, link's name) for the moment model privpost-infer
///   samples (--link where the model has links); `title(how, link)`: the noise-aware posterior's title;
/// - `study_model`, `study_prior`, `study_y_bound`, `study_title`, `study_l1_note`, `study_l2_note`: privpost-calibrate's
///   moment model, prior, count bound and the words of its header line.
template <class M>
concept glm_tool = requires(int d, double r, std::optional<double> c, bool intercept, const std::string& s) {
  { M::name } -> std::convertible_to<std::string_view>;
  { M::kind } -> std::convertible_to<privpost::glm_kind>;
  { M::options } -> std::convertible_to<std::uint8_t>;
  { M::statistic(d, r, r, c) } -> std::same_as<privpost::glm_statistic>;
  { M::sensitivity_rule(intercept) } -> std::convertible_to<std::string>;
  { M::title(s, s) } -> std::convertible_to<std::string>;
  typename M::study_model;
  { M::study_prior } -> std::convertible_to<privpost::glm_prior>;
  { M::study_y_bound } -> std::convertible_to<double>;
  { M::study_title } -> std::convertible_to<std::string_view>;
  { M::study_l1_note } -> std::convertible_to<std::string_view>;
  { M::study_l2_note } -> std::convertible_to<std::string_view>;
};

/// The GLM models, in the order the tools list them.
/// The GLMs' --prior (privpost-infer), one for every GLM model: glm_prior's members.
inline constexpr std::string_view glm_prior_meaning =
    "s_max,tau_scale,lkj_eta,mean_scale (||theta||^2 < s_max, half-normal covariate sds, LKJ correlation, normal "
    "covariate means; default 9,2.5,2,1; on the declared ranges' unit-ball scale 100,1/sqrt(d),2,1/sqrt(d))";

using glm_models = std::tuple<logistic_model, poisson_glm_model>;

static_assert(
    []<class... M>(std::type_identity<std::tuple<M...>>) { return (glm_tool<M> && ...); }(std::type_identity<glm_models>{}),
    "every entry of glm_models is a glm_tool");

/// f(std::type_identity<M>{}) for the GLM model M called name; std::invalid_argument when no GLM model has that name.
template <class F>
auto visit_glm(std::string_view name, F&& f) {
  auto out = visit_first<glm_models>([&]<class M>(std::type_identity<M>) { return name == M::name; }, f);
  if (!out) throw std::invalid_argument("model '" + std::string(name) + "' is no GLM model");
  return std::move(*out);
}

/// The response kind of the GLM model called name (std::invalid_argument for another name).
inline privpost::glm_kind glm_kind_of(std::string_view name) {
  return visit_glm(name, []<class M>(std::type_identity<M>) { return M::kind; });
}

/// true for a GLM model whose responses are counts with a declared bound (--y-bound, the record's y_bound).
inline bool glm_counts(std::string_view name) {
  return visit_first<glm_models>([&]<class M>(std::type_identity<M>) { return name == M::name; },
                                 []<class M>(std::type_identity<M>) { return M::kind == privpost::glm_kind::poisson; })
      .value_or(false);
}

/// The statistic the GLM model called name releases (std::invalid_argument for another name).
inline privpost::glm_statistic glm_statistic_of(std::string_view name, int d, double radius, double y_bound,
                                                std::optional<double> c) {
  return visit_glm(name, [&]<class M>(std::type_identity<M>) { return M::statistic(d, radius, y_bound, c); });
}

}  // namespace privpost::tools
