// The tools' truncated family models (records truncated to declared bounds, out-of-bounds ones dropped; dissertation
// Sec. 4.3): each is one type in one file of models/, and the list below is their table. privpost-release,
// privpost-infer, privpost-calibrate and privpost-synthesize run any of them through one generic code path of the kind
// (release_family.cpp, infer_unbounded.cpp, calibrate_truncated.cpp, synthesize.hpp), which takes from the type all
// that is the model's own. Adding a family to the tools is its file and one entry in truncated_family_models
// (docs/layout.md, "Adding a model to the tools").
#pragma once

#include <concepts>
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <privpost/core/concepts.hpp>
#include <privpost/inference/synthetic.hpp>

#include "model_list.hpp"
#include "models/exponential.hpp"
#include "models/normal.hpp"
#include "models/normal_known_var.hpp"
#include "models/poisson.hpp"
#include "models/rayleigh.hpp"

namespace privpost::tools {

/// A truncated family model of the tools:
/// - `name`: the model's name on the command line and in the release record;
/// - `family`: a truncatable family (core/concepts.hpp) whose records the tools can draw and whose statistic is given
///   on intervals (the sensitivity and the range of the statistic follow from the declared bounds); its `discrete`
///   says whether records are whole numbers (a lattice mechanism then releases the statistic exactly, at granularity 1);
/// - `prior_values`, `prior_meaning`, `prior_default`: how many numbers --prior takes, what they are (for the help and
///   the messages), and the default (empty: --prior is required);
/// - `prior(values)`: the conjugate prior from --prior's numbers (std::invalid_argument for values it refuses);
/// - `calibration_prior()`: the prior privpost-calibrate draws the parameter from (docs/tool-calibrate.md);
/// - `parameters()`: the names of the posterior draws' columns.
/// Optional: `record_parameter(theta, prior)`, the family's parameter at a posterior draw when the draw alone does not
/// determine it (normal-known-var: the records' sd is the prior's); see family_parameter_at.
template <class M>
concept truncated_family_tool = privpost::truncatable_family<typename M::family> &&
    privpost::generic_statistic_family<typename M::family> && privpost::record_generating_family<typename M::family> &&
    requires(const std::vector<double>& values) {
  { M::name } -> std::convertible_to<std::string_view>;
  { M::prior_values } -> std::convertible_to<std::size_t>;
  { M::prior_meaning } -> std::convertible_to<std::string_view>;
  { M::prior_default } -> std::convertible_to<std::string_view>;
  { M::prior(values) } -> privpost::conjugate_prior;
  { M::calibration_prior() } -> std::same_as<decltype(M::prior(values))>;
  { M::parameters() } -> std::convertible_to<std::vector<std::string>>;
} && std::same_as<typename decltype(M::prior(std::vector<double>{}))::family, typename M::family>;

/// The truncated family models, in the order the tools list them.
using truncated_family_models =
    std::tuple<poisson_model, exponential_model, normal_known_var_model, normal_model, rayleigh_model>;

static_assert([]<class... M>(std::type_identity<std::tuple<M...>>) { return (truncated_family_tool<M> && ...); }(
                  std::type_identity<truncated_family_models>{}),
              "every entry of truncated_family_models is a truncated_family_tool");

/// The prior of model M, as a type.
template <truncated_family_tool M>
using tool_prior_t = decltype(M::calibration_prior());

/// f(std::type_identity<M>{}) for the truncated family model M called name; std::invalid_argument when no truncated
/// family model has that name. Every model's call must return the same type, not void.
template <class F>
auto visit_truncated_family(std::string_view name, F&& f) {
  auto out = visit_first<truncated_family_models>([&]<class M>(std::type_identity<M>) { return name == M::name; }, f);
  if (!out) throw std::invalid_argument("model '" + std::string(name) + "' is no truncated family model");
  return std::move(*out);
}

namespace truncated_detail {
// The truncated family model of family F, or void.
template <class F, class... M>
auto model_of(std::type_identity<std::tuple<M...>>) {
  if constexpr (sizeof...(M) == 0) {
    return std::type_identity<void>{};
  } else {
    return []<class First, class... Rest>(std::type_identity<std::tuple<First, Rest...>>) {
      if constexpr (std::is_same_v<typename First::family, F>)
        return std::type_identity<First>{};
      else
        return decltype(model_of<F>(std::type_identity<std::tuple<Rest...>>{})){};
    }(std::type_identity<std::tuple<M...>>{});
  }
}
template <class F>
using model_of_t = typename decltype(model_of<F>(std::type_identity<truncated_family_models>{}))::type;

template <class M, class Prior>
concept declares_record_parameter = requires(const Eigen::VectorXd& theta, const Prior& prior) {
  { M::record_parameter(theta, prior) } -> std::convertible_to<typename M::family::parameter_type>;
};
}  // namespace truncated_detail

/// Family F's parameter at a posterior draw theta with this prior (synthetic records): the draw itself (a number, or
/// F::from_vector), or, where F's truncated family model declares record_parameter, what that says.
template <class F, class Prior>
requires privpost::family_from_vector<F> || truncated_detail::declares_record_parameter<truncated_detail::model_of_t<F>, Prior>
typename F::parameter_type family_parameter_at(const Eigen::VectorXd& theta, const Prior& prior) {
  using M = truncated_detail::model_of_t<F>;
  if constexpr (truncated_detail::declares_record_parameter<M, Prior>) {
    return M::record_parameter(theta, prior);
  } else if constexpr (std::is_arithmetic_v<typename F::parameter_type>) {
    return theta(0);
  } else {
    return F::from_vector(theta);
  }
}

}  // namespace privpost::tools
