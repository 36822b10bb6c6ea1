// privpost/families/family_concepts.hpp
// The customisation points of a family and its conjugate prior (DESIGN.md "Concepts"). A user who adds a family writes
// one struct modelling exponential_family and one modelling conjugate_prior, and gets every sampler and the calibration tools.
#pragma once

#include <Eigen/Core>
#include <concepts>
#include <random>

namespace privpost {

/// An exponential family p(x | theta) = h(x) exp(eta(theta)^T t(x) - A(eta)) with a D-dimensional statistic.
/// Customisation points (all static):
///   dimension, parameter_dimension                 compile-time sizes of t(x) and of the parameter vector
///   record_type, parameter_type                    one record, one parameter value
///   statistic(x)                                   t(x) for one record
///   mean_statistic(theta), covariance_statistic(theta)   E[t(x)], Var[t(x)] for one record
///   lower_bound(n), upper_bound(n), is_valid(s, n), project(s, n)   the set of sums of n records' statistics
///   to_vector(theta)                               the parameter as a vector (what posteriors store)
template <class F>
concept exponential_family = requires(const typename F::record_type& x, const typename F::parameter_type& theta,
                                      const Eigen::Matrix<double, F::dimension, 1>& s, double n) {
  typename F::record_type;
  typename F::parameter_type;
  requires F::dimension >= 1;
  requires F::parameter_dimension >= 1;
  { F::statistic(x) } -> std::convertible_to<Eigen::Matrix<double, F::dimension, 1>>;
  { F::mean_statistic(theta) } -> std::convertible_to<Eigen::Matrix<double, F::dimension, 1>>;
  { F::covariance_statistic(theta) } -> std::convertible_to<Eigen::Matrix<double, F::dimension, F::dimension>>;
  { F::lower_bound(n) } -> std::convertible_to<Eigen::Matrix<double, F::dimension, 1>>;
  { F::upper_bound(n) } -> std::convertible_to<Eigen::Matrix<double, F::dimension, 1>>;
  { F::is_valid(s, n) } -> std::convertible_to<bool>;
  { F::project(s, n) } -> std::convertible_to<Eigen::Matrix<double, F::dimension, 1>>;
  { F::to_vector(theta) } -> std::convertible_to<Eigen::Matrix<double, F::parameter_dimension, 1>>;
};

/// A conjugate prior: update(s, n) is Conjugate-Update(lambda, s, n) (dissertation Sec. 4.1) and returns the posterior
/// as a value of the same type; draw(g) draws a parameter.
template <class P>
concept conjugate_prior = exponential_family<typename P::family> &&
                          requires(const P& p, const Eigen::Matrix<double, P::family::dimension, 1>& s, double n,
                                   std::mt19937_64& g) {
                            { p.update(s, n) } -> std::same_as<P>;
                            { p.draw(g) } -> std::convertible_to<typename P::family::parameter_type>;
                          };

/// Shorthands for a family's fixed-size vector and matrix types.
template <exponential_family F>
using statistic_t = Eigen::Matrix<double, F::dimension, 1>;
template <exponential_family F>
using covariance_t = Eigen::Matrix<double, F::dimension, F::dimension>;
template <exponential_family F>
using parameter_vector_t = Eigen::Matrix<double, F::parameter_dimension, 1>;

}  // namespace privpost
