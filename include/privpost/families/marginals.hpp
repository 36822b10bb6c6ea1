// privpost/families/marginals.hpp
// The closed-form marginal laws of the built-in conjugate priors' parameters, as Boost.Math distributions
// (parameter_marginal, core/concepts.hpp): what a closed-form partition posterior reports (conjugate_partition_posterior,
// inference/partition_posterior.hpp). Kept out of the family headers so that only their users pay for Boost.Math's
// distributions.
#pragma once

#include <boost/math/distributions/beta.hpp>
#include <boost/math/distributions/gamma.hpp>
#include <boost/math/distributions/normal.hpp>
#include <string>

#include "privpost/core/errors.hpp"
#include "privpost/families/binomial.hpp"
#include "privpost/families/exponential.hpp"
#include "privpost/families/multinomial.hpp"
#include "privpost/families/normal_known_variance.hpp"
#include "privpost/families/poisson.hpp"

namespace privpost {

namespace detail {
inline void check_marginal_coordinate(int k, int dimension) {
  if (k < 0 || k >= dimension)
    throw_invalid("parameter_marginal", "coordinate", k, "an integer in [0, " + std::to_string(dimension - 1) + "]");
}
}  // namespace detail

/// The success probability under Beta(a, b): Beta(a, b) itself (coordinate 0).
inline boost::math::beta_distribution<double> parameter_marginal(const beta_prior& p, int k) {
  detail::check_marginal_coordinate(k, 1);
  return {p.a(), p.b()};
}

/// The rate under Gamma(shape, rate) (coordinate 0), as Boost's Gamma(shape, scale = 1 / rate).
inline boost::math::gamma_distribution<double> parameter_marginal(const poisson_gamma_prior& p, int k) {
  detail::check_marginal_coordinate(k, 1);
  return {p.shape(), 1.0 / p.rate()};
}

/// The rate under Gamma(shape, rate) (coordinate 0), as Boost's Gamma(shape, scale = 1 / rate).
inline boost::math::gamma_distribution<double> parameter_marginal(const exponential_gamma_prior& p, int k) {
  detail::check_marginal_coordinate(k, 1);
  return {p.shape(), 1.0 / p.rate()};
}

/// The mean under N(mean0, sd0^2) (coordinate 0, the parameter vector's only one).
inline boost::math::normal_distribution<double> parameter_marginal(const normal_mean_prior& p, int k) {
  detail::check_marginal_coordinate(k, 1);
  return {p.mean0(), p.sd0()};
}

/// Category probability theta_k under Dirichlet(alpha): Beta(alpha_k, sum(alpha) - alpha_k).
template <int K>
boost::math::beta_distribution<double> parameter_marginal(const dirichlet_prior<K>& p, int k) {
  detail::check_marginal_coordinate(k, K);
  return {p.alpha()(k), p.alpha().sum() - p.alpha()(k)};
}

}  // namespace privpost
