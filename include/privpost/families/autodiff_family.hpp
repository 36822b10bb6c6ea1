// privpost/families/autodiff_family.hpp
// autodiff_moments: E[t(x)] = grad A(eta) and Var[t(x)] = Hessian A(eta) (dissertation Eq. 4.1) by automatic
// differentiation of a family's log_partition; complete_family: a family from its defining members (statistic,
// natural_parameter, log_partition, support_type), the rest derived.
#pragma once

#include <Eigen/Core>
#include <array>
#include <concepts>
#include <cstddef>
#include <type_traits>
#include <utility>

#include "privpost/core/concepts.hpp"
#include "privpost/families/detail/autodiff_moments.hpp"

namespace privpost {

namespace detail {
// The gradient and Hessian of F's log-partition at eta (Eq. 4.1) into mean and cov, for a D-dimensional statistic:
// F::log_partition(eta) where F has it, else F::log_partition(theta, eta). Asks nothing else of F (F may be the
// incomplete family that complete_family derives from).
template <int D, class F, class Vector, class Matrix>
void log_partition_derivatives(const typename F::parameter_type& theta, const Vector& eta, Vector& mean, Matrix& cov) {
  if constexpr (requires(const std::array<double, static_cast<std::size_t>(D)>& e) { F::log_partition(e); }) {
    autodiff_gradient_hessian<D>([](const auto& e) { return F::log_partition(e); }, eta, mean, cov);
  } else {
    autodiff_gradient_hessian<D>([&](const auto& e) { return F::log_partition(theta, e); }, eta, mean, cov);
  }
}
}  // namespace detail

/// Mean and covariance of t(x) at theta from derivatives of the log-partition function (Eq. 4.1).
template <log_partition_family F>
void autodiff_moments(const typename F::parameter_type& theta, statistic_t<F>& mean, covariance_t<F>& cov) {
  const statistic_t<F> eta = F::natural_parameter(theta);
  detail::log_partition_derivatives<F::dimension, F>(theta, eta, mean, cov);
}

namespace detail {
template <class F>
concept declares_dimension = requires {
  { F::dimension } -> std::convertible_to<int>;
};
template <class F>
concept declares_parameter_dimension = requires {
  { F::parameter_dimension } -> std::convertible_to<int>;
};
template <class F>
concept declares_discrete = requires {
  { F::discrete } -> std::convertible_to<bool>;
};
template <class F, class V, class M>
concept declares_moments = requires(const typename F::parameter_type& theta, V& mean, M& cov) {
  F::moments(theta, mean, cov);
};
template <class F>
concept declares_mean_and_covariance = requires(const typename F::parameter_type& theta) {
  F::mean_statistic(theta);
  F::covariance_statistic(theta);
};

// The size of t(x): F::dimension if declared, else the compile-time rows of what F::statistic returns.
template <class F>
constexpr int family_dimension() {
  if constexpr (declares_dimension<F>) {
    return F::dimension;
  } else {
    using statistic_type = std::remove_cvref_t<decltype(F::statistic(std::declval<const typename F::record_type&>()))>;
    static_assert(statistic_type::RowsAtCompileTime > 0, "complete_family: statistic(x) must return a fixed-size Eigen vector");
    return statistic_type::RowsAtCompileTime;
  }
}

// The size of the parameter vector: F::parameter_dimension if declared, 1 for a number, else the rows of to_vector.
template <class F>
constexpr int family_parameter_dimension() {
  if constexpr (declares_parameter_dimension<F>) {
    return F::parameter_dimension;
  } else if constexpr (std::is_arithmetic_v<typename F::parameter_type>) {
    return 1;
  } else {
    using vector_type = std::remove_cvref_t<decltype(F::to_vector(std::declval<const typename F::parameter_type&>()))>;
    static_assert(vector_type::RowsAtCompileTime > 0, "complete_family: to_vector(theta) must return a fixed-size Eigen vector");
    return vector_type::RowsAtCompileTime;
  }
}

template <class F>
constexpr bool family_discrete() {
  if constexpr (declares_discrete<F>) {
    return F::discrete;
  } else {
    return std::is_integral_v<typename F::record_type>;
  }
}
}  // namespace detail

/// A family from its defining members, everything else derived (and taken from F wherever F declares it, for speed or
/// exactness). The minimal F gives
///   record_type, parameter_type          one record, one parameter value
///   statistic(x)                         t(x), a fixed-size Eigen vector
///   natural_parameter(theta)             eta(theta)
///   log_partition(eta)                   A(eta), a template over the scalar type (or log_partition(theta, eta))
///   support_type                         the valid set of sums (families/support.hpp)
/// and complete_family<F> adds: dimension (the rows of statistic's result), parameter_dimension (1 for a number, else
/// the rows of F::to_vector), discrete (whether record_type is an integer type), mean_statistic, covariance_statistic
/// and moments (F's closed forms where given, else the gradient and Hessian of A at eta(theta) by forward-mode autodiff,
/// Eq. 4.1). The result is an exponential_family and a log_partition_family; with log_region_probability it is a
/// truncatable_family, with draw_record a record_generating_family.
template <class F>
struct complete_family : F {
  /// Length of t(x).
  static constexpr int dimension = detail::family_dimension<F>();
  /// Length of the parameter vector.
  static constexpr int parameter_dimension = detail::family_parameter_dimension<F>();
  /// Whether records are integers (truncation shifts the region ends by one half).
  static constexpr bool discrete = detail::family_discrete<F>();
  /// Type of t(x) and of E[t(x)].
  using vector_type = Eigen::Matrix<double, dimension, 1>;
  /// Type of Cov[t(x)].
  using matrix_type = Eigen::Matrix<double, dimension, dimension>;

  /// E[t(x)] and Cov[t(x)] at theta in one call (what family_model calls each sweep).
  static void moments(const typename F::parameter_type& theta, vector_type& mean, matrix_type& cov) {
    if constexpr (detail::declares_moments<F, vector_type, matrix_type>) {
      F::moments(theta, mean, cov);
    } else if constexpr (detail::declares_mean_and_covariance<F>) {
      mean = F::mean_statistic(theta);
      cov = F::covariance_statistic(theta);
    } else {
      const vector_type eta = F::natural_parameter(theta);
      detail::log_partition_derivatives<dimension, F>(theta, eta, mean, cov);
    }
  }
  /// E[t(x) | theta].
  static vector_type mean_statistic(const typename F::parameter_type& theta) {
    if constexpr (requires { F::mean_statistic(theta); }) {
      return F::mean_statistic(theta);
    } else {
      vector_type mean;
      matrix_type cov;
      moments(theta, mean, cov);
      return mean;
    }
  }
  /// Cov[t(x) | theta].
  static matrix_type covariance_statistic(const typename F::parameter_type& theta) {
    if constexpr (requires { F::covariance_statistic(theta); }) {
      return F::covariance_statistic(theta);
    } else {
      vector_type mean;
      matrix_type cov;
      moments(theta, mean, cov);
      return cov;
    }
  }
};

}  // namespace privpost
