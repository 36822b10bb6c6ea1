// The tools' bounded family models (records bounded by the model itself, no bounds to declare): each is one type in
// one file of models/ (the multinomial one type per K), and the list below is their table. privpost-release,
// privpost-infer, privpost-calibrate and privpost-synthesize run any of them through one generic code path of the kind
// (release_family.cpp, infer_bounded.cpp, calibrate_bounded.cpp, synthesize.hpp), which takes from the type all that
// is the model's own.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <privpost/core/concepts.hpp>

#include "model_list.hpp"
#include "models/binomial.hpp"
#include "models/multinomial.hpp"

namespace privpost::tools {

/// A bounded family model of the tools:
/// - `name`: the model's name on the command line and in the release record; `categories`: K, the record's
///   `categories` field, for a model with one type per K (0: the model has no such field);
/// - `family`: an exponential family whose sensitivities (`l1_sensitivity`, `l2_sensitivity`) are the family's own,
///   and whose statistic is a vector of counts;
/// - `methods`, `options`: the privpost-infer methods and options it takes beyond every model's (model_flags.hpp);
/// - `prior_values`, `prior_meaning`, `prior_default`, `prior(values)`, `calibration_prior()`, `parameters()`: as for
///   a truncated family (truncated_family_tool.hpp);
/// - `valid_record(x)` and `accepted_records()`: which CSV values are records (privpost-release refuses the others,
///   naming what it accepts).
/// Optional: `prior_default_help`, the default as --prior's help states it for every K of a model with one type per K.
template <class M>
concept bounded_family_tool = privpost::exponential_family<typename M::family> &&
    requires(const std::vector<double>& values, double x) {
  { M::name } -> std::convertible_to<std::string_view>;
  { M::categories } -> std::convertible_to<int>;
  { M::methods } -> std::convertible_to<std::uint8_t>;
  { M::options } -> std::convertible_to<std::uint8_t>;
  { M::family::l1_sensitivity } -> std::convertible_to<double>;
  { M::family::l2_sensitivity } -> std::convertible_to<double>;
  { M::prior_values } -> std::convertible_to<std::size_t>;
  { M::prior_meaning } -> std::convertible_to<std::string_view>;
  { M::prior_default } -> std::convertible_to<std::string_view>;
  { M::prior(values) } -> privpost::conjugate_prior;
  { M::calibration_prior() } -> std::same_as<decltype(M::prior(values))>;
  { M::parameters() } -> std::convertible_to<std::vector<std::string>>;
  { M::valid_record(x) } -> std::convertible_to<bool>;
  { M::accepted_records() } -> std::convertible_to<std::string>;
};

/// The bounded family models, in the order the tools list them (a model with one type per K: every K in turn).
using bounded_family_models =
    std::tuple<binomial_model, multinomial_model<2>, multinomial_model<3>, multinomial_model<4>, multinomial_model<5>>;

static_assert([]<class... M>(std::type_identity<std::tuple<M...>>) { return (bounded_family_tool<M> && ...); }(
                  std::type_identity<bounded_family_models>{}),
              "every entry of bounded_family_models is a bounded_family_tool");

/// true for a bounded family model with one type per K (the release record's `categories`, --categories).
inline bool takes_categories(std::string_view name) {
  return [&]<class... M>(std::type_identity<std::tuple<M...>>) {
    return ((name == M::name && M::categories != 0) || ...);
  }(std::type_identity<bounded_family_models>{});
}

/// f(std::type_identity<M>{}) for the bounded family model M called name with these categories (ignored by a model
/// without them); std::invalid_argument when there is none. Every model's call must return the same type, not void.
template <class F>
auto visit_bounded_family(std::string_view name, int categories, F&& f) {
  auto out = visit_first<bounded_family_models>(
      [&]<class M>(std::type_identity<M>) { return name == M::name && (M::categories == 0 || M::categories == categories); }, f);
  if (!out)
    throw std::invalid_argument("model '" + std::string(name) + "' with categories " + std::to_string(categories) +
                                " is no bounded family model");
  return std::move(*out);
}

}  // namespace privpost::tools
