// privpost/core/errors.hpp
// Named argument checks for the API boundary (Stan Math style): each throws std::invalid_argument or
// std::domain_error whose message names the function, the argument, its value and the accepted range.
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace privpost {

namespace detail {

// x as the shortest text that reads back to the same double (0.3, not 0.29999999999999999), whole numbers below 2^53
// in full (1000000, not 1e+06): a message shows the value as the user wrote it, and exactly.
inline std::string format_value(double x) {
  if (x == 0.0 && std::signbit(x)) return "-0.0";
  char buffer[64];
  if (std::isfinite(x) && std::floor(x) == x && std::abs(x) < 9007199254740992.0) {
    std::snprintf(buffer, sizeof buffer, "%.0f", x);
    return buffer;
  }
  for (int digits = 1; digits <= 17; ++digits) {  // 17 significant digits always read back
    std::snprintf(buffer, sizeof buffer, "%.*g", digits, x);
    if (!std::isfinite(x) || std::strtod(buffer, nullptr) == x) break;
  }
  return buffer;
}

inline std::string message(std::string_view function, std::string_view name, std::string_view value, std::string_view accepted) {
  std::string m;
  m.reserve(function.size() + name.size() + value.size() + accepted.size() + 32);
  m.append(function).append(": ").append(name).append(" is ").append(value);
  m.append("; accepted: ").append(accepted);
  return m;
}

inline constexpr double symmetry_tolerance = 1e-12;

}  // namespace detail

/// Throws std::invalid_argument "function: name is value; accepted: accepted".
[[noreturn]] inline void throw_invalid(std::string_view function, std::string_view name, double value,
                                       std::string_view accepted) {
  throw std::invalid_argument(detail::message(function, name, detail::format_value(value), accepted));
}

/// Throws std::domain_error "function: name is value; accepted: accepted".
[[noreturn]] inline void throw_domain(std::string_view function, std::string_view name, double value, std::string_view accepted) {
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
    throw_invalid(function, name, x, "a number in [" + detail::format_value(lo) + ", " + detail::format_value(hi) + "]");
  }
}

/// Two sizes must agree.
inline void check_size_match(std::string_view function, std::string_view name_a, std::int64_t a, std::string_view name_b,
                             std::int64_t b) {
  if (a != b) {
    std::ostringstream os;
    os << function << ": " << name_a << " has size " << a << " but " << name_b << " has size " << b << "; accepted: equal sizes";
    throw std::invalid_argument(os.str());
  }
}

/// A matrix must be size x size (its rows and its columns named in the error).
template <class Derived>
void check_square_size(std::string_view function, std::string_view name, const Eigen::EigenBase<Derived>& m,
                       std::string_view size_name, std::int64_t size) {
  // The names are built only on a mismatch: the moment models' hot paths call this and allocate nothing.
  if (m.rows() != size) check_size_match(function, std::string(name) + " rows", m.rows(), size_name, size);
  if (m.cols() != size) check_size_match(function, std::string(name) + " columns", m.cols(), size_name, size);
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

/// Every entry of a vector or matrix must be finite; the message names the first offending entry.
template <class Derived>
void check_finite(std::string_view function, std::string_view name, const Eigen::DenseBase<Derived>& x) {
  for (Eigen::Index j = 0; j < x.cols(); ++j)
    for (Eigen::Index i = 0; i < x.rows(); ++i)
      if (!std::isfinite(x(i, j))) {
        std::ostringstream entry;  // (not string operator+: GCC 12 -O3 reports a false -Wrestrict there)
        entry << name;
        if (x.cols() == 1) {
          entry << '[' << i << ']';
        } else {
          entry << '(' << i << ", " << j << ')';
        }
        throw_invalid(function, entry.str(), x(i, j), "a finite number");
      }
}

/// The power q of a prior raised to a power (prior_power, core/concepts.hpp) must be in (0, 1].
inline void check_prior_power(double q) {
  if (!(q > 0.0 && q <= 1.0)) throw_invalid("prior_power", "power", q, "a number in (0, 1]");
}

/// A number of records n must be finite and > 0 (a whole number is not required: the CLT treats it as real).
inline void check_record_count(std::string_view function, double n) {
  if (!(std::isfinite(n) && n > 0.0)) throw_invalid(function, "n", n, "a finite number > 0");
}

/// A matrix must be square, finite, symmetric (to a relative 1e-12) and positive definite (its Cholesky factor exists).
template <class Derived>
void check_symmetric_positive_definite(std::string_view function, std::string_view name, const Eigen::MatrixBase<Derived>& m) {
  check_size_match(function, std::string(name) + " rows", m.rows(), std::string(name) + " cols", m.cols());
  check_finite(function, name, m);
  const double asymmetry = (m - m.transpose()).cwiseAbs().maxCoeff();
  if (asymmetry > detail::symmetry_tolerance * m.cwiseAbs().maxCoeff())
    throw_invalid(function, std::string(name) + " asymmetry max|m - m^T|", asymmetry, "a symmetric matrix");
  Eigen::Matrix<double, Derived::RowsAtCompileTime, Derived::ColsAtCompileTime> copy = m;
  for (Eigen::Index k = 0; k < copy.rows(); ++k) {  // unblocked Cholesky: the first non-positive pivot names the failure
    double pivot = copy(k, k);
    for (Eigen::Index j = 0; j < k; ++j) pivot -= copy(k, j) * copy(k, j);
    if (!(pivot > 0.0))
      throw_invalid(function, std::string(name) + " Cholesky pivot " + std::to_string(k), pivot,
                    "a positive definite matrix (every pivot > 0)");
    copy(k, k) = std::sqrt(pivot);
    for (Eigen::Index i = k + 1; i < copy.rows(); ++i) {
      double v = copy(i, k);
      for (Eigen::Index j = 0; j < k; ++j) v -= copy(i, j) * copy(k, j);
      copy(i, k) = v / copy(k, k);
    }
  }
}

// --- privacy parameters (every mechanism, and OPS, which is a mechanism too) ---

namespace detail {
// Below 2^-50 the noise scale exceeds 2^50 times the sensitivity: almost surely a unit mistake.
inline constexpr double min_epsilon = 0x1.0p-50;
}  // namespace detail

/// epsilon must be finite and >= 2^-50.
inline void check_epsilon(std::string_view function, double epsilon) {
  if (!(std::isfinite(epsilon) && epsilon >= detail::min_epsilon))
    throw_invalid(function, "epsilon", epsilon, "a finite number >= 2^-50 (8.8817841970012523e-16)");
}

/// delta must lie in [0, 1) (allow_zero) or (0, 1).
inline void check_delta(std::string_view function, double delta, bool allow_zero) {
  if (allow_zero) {
    if (!(delta >= 0.0 && delta < 1.0)) throw_invalid(function, "delta", delta, "a number in [0, 1)");
  } else {
    if (!(delta > 0.0 && delta < 1.0)) throw_invalid(function, "delta", delta, "a number in (0, 1)");
  }
}

/// A sensitivity must be finite and > 0.
namespace detail {
/// The refusal of a release by a mechanism built from a published noise scale (published(...)): it carries no budget.
[[noreturn]] inline void refuse_published_release(std::string_view mechanism) {
  throw std::logic_error(std::string(mechanism) +
                         "::release: this mechanism was built from a published noise scale and has no privacy budget; it "
                         "is for inference on someone else's release only. accepted: a mechanism calibrated from a "
                         "sensitivity and a budget");
}
}  // namespace detail

inline void check_sensitivity(std::string_view function, std::string_view name, double sensitivity) {
  if (!(std::isfinite(sensitivity) && sensitivity > 0.0))
    throw_invalid(function, name, sensitivity, "a finite number > 0 (-0.0 and 0 are rejected)");
}

/// Statistics fed to a mechanism must be finite: NaN plus noise would be released as NaN, revealing it.
template <class Derived>
void check_statistics(std::string_view function, std::string_view name, const Eigen::MatrixBase<Derived>& s) {
  check_finite(function, name, s);
}

/// Thrown when a bounded retry loop gives up; signals a numerical failure that the caller can count.
class retry_limit_exceeded : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Thrown by the drivers when their stop flag was set before any result was kept (inference_options::stop: during
/// burn-in), so there is nothing to return.
class interrupted_error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace privpost
