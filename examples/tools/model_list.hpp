// The tools' lists of model types (std::tuple of types; bounded_family_tool.hpp, truncated_family_tool.hpp): the one
// way to find a type in a list by a run-time property such as the model's name.
#pragma once

#include <optional>
#include <tuple>
#include <type_traits>

namespace privpost::tools {

/// f(std::type_identity<M>{}) for the first type M of the std::tuple List with pred(std::type_identity<M>{}), or
/// std::nullopt when no type has it. Every type's call of f must return the same type, not void.
template <class List, class Pred, class F>
auto visit_first(Pred pred, F&& f) {
  return [&]<class... M>(std::type_identity<std::tuple<M...>>) {
    std::optional<std::common_type_t<decltype(f(std::type_identity<M>{}))...>> out;
    (void)((pred(std::type_identity<M>{}) && (out.emplace(f(std::type_identity<M>{})), true)) || ...);
    return out;
  }(std::type_identity<List>{});
}

}  // namespace privpost::tools
