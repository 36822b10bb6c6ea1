// privpost/families/family_model.hpp
// family_model<F>: the zero-cost adapter that makes a static exponential-family trait F a statistic_model (one model
// behind every method, docs/concepts.md): CLT moments n mu(theta), n Sigma(theta) (Eq. 4.1) in one call, F's support policy,
// and Conjugate-Update through the prior's update(s, n). Fixed-size Eigen types throughout, so sweeps do not allocate.
#pragma once

#include <Eigen/Core>
#include <type_traits>

#include "privpost/core/concepts.hpp"
#include "privpost/core/numerical_events.hpp"

namespace privpost {

namespace detail {
// A family written against privpost 0.1 (lower_bound, upper_bound, is_valid, project as static members).
template <class F>
struct static_bounds_support {
  static constexpr int rejection_tries = 100;
  using vector_type = Eigen::Matrix<double, F::dimension, 1>;
  // An interval_support only for one statistic: lower_bound(n)(0) bounds the first coordinate alone.
  static double lower(double n) requires(F::dimension == 1) { return F::lower_bound(n)(0); }
  static double upper(double n) requires(F::dimension == 1) { return F::upper_bound(n)(0); }
  static bool contains(const vector_type& s, double n) { return F::is_valid(s, n); }
  static bool project(vector_type& s, double n, numerical_events&) {
    if (F::is_valid(s, n)) return false;
    s = F::project(s, n);
    return true;
  }
};

template <class F>
struct family_support {
  using type = static_bounds_support<F>;
};
template <class F>
requires requires { typename F::support_type; }
struct family_support<F> {
  using type = typename F::support_type;
};
}  // namespace detail

/// The support policy of a family: its support_type, or an adapter of its 0.1-style static members.
template <exponential_family F>
using family_support_t = typename detail::family_support<F>::type;

/// The parameter of a family as the vector posteriors store: F::to_vector(theta), or the number itself.
template <exponential_family F>
parameter_vector_t<F> family_parameter_vector(const typename F::parameter_type& theta) {
  if constexpr (requires { F::to_vector(theta); }) {
    return F::to_vector(theta);
  } else {
    return parameter_vector_t<F>::Constant(static_cast<double>(theta));
  }
}

/// Mean and covariance of one record's statistic, in one call when the family provides moments(theta, mean, cov).
template <exponential_family F>
void family_moments(const typename F::parameter_type& theta, statistic_t<F>& mean, covariance_t<F>& cov) {
  if constexpr (requires { F::moments(theta, mean, cov); }) {
    F::moments(theta, mean, cov);
  } else {
    mean = F::mean_statistic(theta);
    cov = F::covariance_statistic(theta);
  }
}

/// A static family trait as a statistic_model (stateless; every member is a thin forward to F).
template <exponential_family F>
struct family_model {
  /// The wrapped family.
  using family = F;
  /// The family's parameter type.
  using parameter_type = typename F::parameter_type;
  /// Type of the sufficient statistic.
  using vector_type = statistic_t<F>;
  /// Type of its covariance.
  using matrix_type = covariance_t<F>;
  /// The family's support of the statistic sums.
  using support_type = family_support_t<F>;
  /// Compile-time length of the statistic.
  static constexpr int static_size = F::dimension;

  /// Length of the statistic.
  static constexpr Eigen::Index size() noexcept { return F::dimension; }
  /// The support of the statistic sums.
  static support_type support() noexcept { return {}; }

  /// n mu(theta) and n Sigma(theta) (CLT for the sum of n records).
  static void moments(const parameter_type& theta, double n, vector_type& mean, matrix_type& cov) {
    family_moments<F>(theta, mean, cov);
    mean *= n;
    cov *= n;
  }

  /// The parameter as a vector (the coordinates the draws report).
  static parameter_vector_t<F> parameter_vector(const parameter_type& theta) { return family_parameter_vector<F>(theta); }

  /// @{
  /// F's integer-sum law, where F has one (integer_sum_model, finite_sum_model, natural_sum_model): the exact sum
  /// blocks then run the family.
  static double log_sum_probability(double s, double n, const parameter_type& theta) requires requires {
    F::log_sum_probability(s, n, theta);
  }
  { return F::log_sum_probability(s, n, theta); }
  static double sum_upper(double n) requires requires { F::sum_upper(n); }
  { return F::sum_upper(n); }
  static vector_type natural_parameter(const parameter_type& theta) requires requires { F::natural_parameter(theta); }
  { return F::natural_parameter(theta); }
  /// @}

  /// Conjugate-Update(lambda, s, n) by the prior's own update.
  template <conjugate_prior Prior>
  requires std::same_as<typename Prior::family, F>
  static Prior update(const Prior& prior, const vector_type& s, double n) { return prior.update(s, n); }
};

}  // namespace privpost
