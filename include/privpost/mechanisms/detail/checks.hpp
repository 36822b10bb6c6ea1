// privpost/mechanisms/detail/checks.hpp
// Shared argument checks for every release mechanism: privacy parameters, sensitivities and statistics.
// Private helpers; include a mechanism header instead.
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <string_view>

#include "privpost/core/errors.hpp"

namespace privpost::detail {

// Below 2^-50 the noise scale exceeds 2^50 times the sensitivity: almost surely a unit mistake.
inline constexpr double min_epsilon = 0x1.0p-50;

inline void check_epsilon(std::string_view function, double epsilon) {
  if (!(std::isfinite(epsilon) && epsilon >= min_epsilon))
    throw_invalid(function, "epsilon", epsilon, "a finite number >= 2^-50 (8.8817841970012523e-16)");
}

inline void check_delta(std::string_view function, double delta, bool allow_zero) {
  if (allow_zero) {
    if (!(delta >= 0.0 && delta < 1.0)) throw_invalid(function, "delta", delta, "a number in [0, 1)");
  } else {
    if (!(delta > 0.0 && delta < 1.0)) throw_invalid(function, "delta", delta, "a number in (0, 1)");
  }
}

inline void check_sensitivity(std::string_view function, std::string_view name, double sensitivity) {
  if (!(std::isfinite(sensitivity) && sensitivity > 0.0))
    throw_invalid(function, name, sensitivity, "a finite number > 0 (-0.0 and 0 are rejected)");
}

// Statistics fed to a mechanism must be finite: NaN plus noise would be released as NaN, revealing it.
template <class Derived>
inline void check_statistics(std::string_view function, std::string_view name, const Eigen::MatrixBase<Derived>& s) {
  for (Eigen::Index j = 0; j < s.size(); ++j) {
    if (!std::isfinite(s(j))) {
      throw_invalid(function, std::string(name) + "[" + std::to_string(j) + "]", s(j), "a finite number");
    }
  }
}

}  // namespace privpost::detail
