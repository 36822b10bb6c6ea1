// privpost/core/errors.hpp
// Named argument checks for the API boundary (Stan Math style): each throws std::invalid_argument or
// std::domain_error whose message names the function, the argument, its value and the accepted range.
#pragma once

#include <cmath>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace privpost {

namespace detail {

inline std::string format_value(double x) {
  std::ostringstream os;
  os.precision(17);
  if (x == 0.0 && std::signbit(x)) {
    os << "-0.0";
  } else {
    os << x;
  }
  return os.str();
}

inline std::string message(std::string_view function, std::string_view name, std::string_view value,
                           std::string_view accepted) {
  std::string m;
  m.reserve(function.size() + name.size() + value.size() + accepted.size() + 32);
  m.append(function).append(": ").append(name).append(" is ").append(value);
  m.append("; accepted: ").append(accepted);
  return m;
}

}  // namespace detail

/// Throws std::invalid_argument "function: name is value; accepted: accepted".
[[noreturn]] inline void throw_invalid(std::string_view function, std::string_view name, double value,
                                       std::string_view accepted) {
  throw std::invalid_argument(detail::message(function, name, detail::format_value(value), accepted));
}

/// Throws std::domain_error "function: name is value; accepted: accepted".
[[noreturn]] inline void throw_domain(std::string_view function, std::string_view name, double value,
                                      std::string_view accepted) {
  throw std::domain_error(detail::message(function, name, detail::format_value(value), accepted));
}

/// x must be a finite number.
inline void check_finite(std::string_view function, std::string_view name, double x) {
  if (!std::isfinite(x)) throw_invalid(function, name, x, "a finite number");
}

/// x must be finite and > 0 (NaN, infinities, 0 and -0.0 are rejected).
inline void check_positive_finite(std::string_view function, std::string_view name, double x) {
  if (!(std::isfinite(x) && x > 0.0)) throw_invalid(function, name, x, "a finite number > 0");
}

/// x must be finite and >= 0.
inline void check_nonnegative_finite(std::string_view function, std::string_view name, double x) {
  if (!(std::isfinite(x) && x >= 0.0)) throw_invalid(function, name, x, "a finite number >= 0");
}

/// x must lie in the closed interval [lo, hi] (and not be NaN).
inline void check_bounded(std::string_view function, std::string_view name, double x, double lo, double hi) {
  if (!(x >= lo && x <= hi)) {
    throw_invalid(function, name, x,
                  "a number in [" + detail::format_value(lo) + ", " + detail::format_value(hi) + "]");
  }
}

/// Two sizes must agree.
inline void check_size_match(std::string_view function, std::string_view name_a, std::int64_t a,
                             std::string_view name_b, std::int64_t b) {
  if (a != b) {
    std::ostringstream os;
    os << function << ": " << name_a << " has size " << a << " but " << name_b << " has size " << b
       << "; accepted: equal sizes";
    throw std::invalid_argument(os.str());
  }
}

/// A closed interval [lo, hi] must be finite-or-infinite but ordered and NaN-free.
inline void check_interval(std::string_view function, std::string_view name, double lo, double hi) {
  if (std::isnan(lo) || std::isnan(hi) || !(lo <= hi)) {
    std::ostringstream os;
    os.precision(17);
    os << function << ": " << name << " is [" << detail::format_value(lo) << ", " << detail::format_value(hi)
       << "]; accepted: an interval with lower bound <= upper bound and no NaN";
    throw std::invalid_argument(os.str());
  }
}

/// Thrown when a bounded retry loop gives up; signals a numerical failure that the caller can count.
class retry_limit_exceeded : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace privpost
