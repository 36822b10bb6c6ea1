// privpost/families/autodiff_family.hpp
// autodiff_mean_statistic / autodiff_covariance_statistic: E[t(x)] = grad A(eta) and Var[t(x)] = Hessian A(eta)
// (dissertation Eq. 4.1) by automatic differentiation of a family's log_partition, for families without closed forms.
#pragma once

#include <Eigen/Core>
#include <array>

#include "privpost/core/concepts.hpp"
#include "privpost/families/detail/autodiff_moments.hpp"

namespace privpost {

/// Mean and covariance of t(x) at theta from derivatives of the log-partition function (Eq. 4.1).
template <log_partition_family F>
void autodiff_moments(const typename F::parameter_type& theta, statistic_t<F>& mean, covariance_t<F>& cov) {
  const statistic_t<F> eta = F::natural_parameter(theta);
  if constexpr (detail::log_partition_of_eta<F>) {
    detail::autodiff_gradient_hessian<F::dimension>([](const auto& e) { return F::log_partition(e); }, eta, mean, cov);
  } else {
    detail::autodiff_gradient_hessian<F::dimension>([&](const auto& e) { return F::log_partition(theta, e); }, eta, mean, cov);
  }
}

}  // namespace privpost

namespace privpost {

/// Completes a family that gives only its log-partition: with_autodiff_moments<F> is F plus mean_statistic and
/// covariance_statistic computed by autodiff_moments (Eq. 4.1), so every sampler accepts it. F must provide everything
/// else exponential_family asks for, a `log_partition` template and `natural_parameter`.
template <class F>
struct with_autodiff_moments : F {
  /// Type of t(x) and of E[t(x)].
  using vector_type = Eigen::Matrix<double, F::dimension, 1>;
  /// Type of Cov[t(x)].
  using matrix_type = Eigen::Matrix<double, F::dimension, F::dimension>;

  /// E[t(x) | theta] as the gradient of A(eta) at eta(theta), by forward-mode autodiff.
  static vector_type mean_statistic(const typename F::parameter_type& theta) {
    vector_type mean;
    matrix_type cov;
    moments(theta, mean, cov);
    return mean;
  }
  /// Cov[t(x) | theta] as the Hessian of A(eta) at eta(theta), by forward-mode autodiff.
  static matrix_type covariance_statistic(const typename F::parameter_type& theta) {
    vector_type mean;
    matrix_type cov;
    moments(theta, mean, cov);
    return cov;
  }

  /// Both at once (one autodiff pass): what family_model calls each sweep.
  static void moments(const typename F::parameter_type& theta, vector_type& mean, matrix_type& cov) {
    const vector_type eta = F::natural_parameter(theta);
    if constexpr (requires(const std::array<double, F::dimension>& e) { F::log_partition(e); }) {
      detail::autodiff_gradient_hessian<F::dimension>([](const auto& e) { return F::log_partition(e); }, eta, mean, cov);
    } else {
      detail::autodiff_gradient_hessian<F::dimension>([&](const auto& e) { return F::log_partition(theta, e); }, eta, mean, cov);
    }
  }
};

}  // namespace privpost
