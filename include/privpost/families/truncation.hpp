// privpost/families/truncation.hpp
// Truncated families and the random-sum CLT: for a univariate family with log_region_probability, the probability q of
// [v, w] and the mean and covariance of t(x) given x in [v, w] by Lemma 1 (autodiff of log(F(w) - F(v)) in eta, in log
// space), and the moments of the regions' sums (Prop. 5, with the multinomial cross-covariances of the regions).
#pragma once

#include <Eigen/Core>
#include <array>
#include <cmath>
#include <limits>
#include <optional>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/families/detail/autodiff_moments.hpp"
#include "privpost/families/family_model.hpp"

namespace privpost {

/// Probability and moments of t(x) for one region [v, w] (Lemma 1).
template <exponential_family F>
struct region_moments {
  double probability = 0.0;                       ///< q = F(w) - F(v)
  double log_probability = 0.0;                   ///< log q (finite even when q underflows)
  statistic_t<F> mean = statistic_t<F>::Zero();   ///< E[t(x) | x in [v, w]]
  covariance_t<F> cov = covariance_t<F>::Zero();  ///< Var[t(x) | x in [v, w]]
};

/// Lemma 1: mean = E[t] + grad log q(eta), cov = Var[t] + Hessian log q(eta), for the region [v, w] (v < w, NaN-free,
/// infinite ends allowed); nothing where the region holds no probability mass at theta.
template <truncatable_family F>
std::optional<region_moments<F>> try_truncated_moments(const typename F::parameter_type& theta, double v, double w) {
  check_interval("truncated_moments", "[v, w]", v, w);
  const statistic_t<F> eta = F::natural_parameter(theta);
  std::array<double, F::dimension> e{};
  for (int j = 0; j < F::dimension; ++j) e[static_cast<std::size_t>(j)] = eta(j);
  region_moments<F> r;
  r.log_probability = F::log_region_probability(theta, e, v, w);
  if (!(r.log_probability > -std::numeric_limits<double>::infinity())) return std::nullopt;
  r.probability = std::exp(r.log_probability);
  statistic_t<F> grad;
  covariance_t<F> hess;
  detail::autodiff_gradient_hessian<F::dimension>([&](const auto& x) { return F::log_region_probability(theta, x, v, w); }, eta,
                                                  grad, hess);
  family_moments<F>(theta, r.mean, r.cov);  // a family may give moments() alone (concepts.hpp, exponential_family)
  r.mean += grad;
  r.cov += hess;
  r.cov = 0.5 * (r.cov + r.cov.transpose()).eval();
  return r;
}

/// Lemma 1 as above; throws std::domain_error where the region holds no probability mass at theta.
template <truncatable_family F>
region_moments<F> truncated_moments(const typename F::parameter_type& theta, double v, double w) {
  auto r = try_truncated_moments<F>(theta, v, w);
  if (!r) {  // the error path only: evaluate the log probability again to name it (-inf or NaN)
    const statistic_t<F> eta = F::natural_parameter(theta);
    std::array<double, F::dimension> e{};
    for (int j = 0; j < F::dimension; ++j) e[static_cast<std::size_t>(j)] = eta(j);
    throw_domain("truncated_moments", "log probability of the region", F::log_region_probability(theta, e, v, w),
                 "a region with positive probability");
  }
  return *r;
}

/// The three regions of a truncated release with bounds [a, b]: lower (-inf, a), centre [a, b], upper (b, inf).
/// For discrete families the lower region is x <= a - 1 and the upper x >= b + 1 (integers).
template <truncatable_family F>
struct three_regions {
  /// @{
  /// The moments of the lower, centre and upper regions.
  region_moments<F> lower, centre, upper;
  /// @}
};

template <truncatable_family F>
three_regions<F> region_split(const typename F::parameter_type& theta, double a, double b) {
  const double inf = std::numeric_limits<double>::infinity();
  const double below = F::discrete ? a - 1.0 : a;
  const double above = F::discrete ? b + 1.0 : b;
  three_regions<F> r;
  r.centre = truncated_moments<F>(theta, a, b);
  auto safe = [&](double v, double w) {
    // An empty region (e.g. below the support) has probability 0 and contributes nothing.
    if (!(v < w || (F::discrete && v == w))) return region_moments<F>{0.0, -inf, statistic_t<F>::Zero(), covariance_t<F>::Zero()};
    std::array<double, F::dimension> e{};
    const statistic_t<F> eta = F::natural_parameter(theta);
    for (int j = 0; j < F::dimension; ++j) e[static_cast<std::size_t>(j)] = eta(j);
    if (!(F::log_region_probability(theta, e, v, w) > -inf))
      return region_moments<F>{0.0, -inf, statistic_t<F>::Zero(), covariance_t<F>::Zero()};
    return truncated_moments<F>(theta, v, w);
  };
  r.lower = safe(-inf, below);
  r.upper = safe(above, inf);
  return r;
}

/// Prop. 5 for the three regions jointly: the sums (s_lower, s_centre, s_upper) of n records have mean n q_r mu_r and
/// covariance n q_r Sigma_r + n q_r (1 - q_r) mu_r mu_r^T on the diagonal blocks and -n q_r q_r' mu_r mu_r'^T off it
/// (the counts are multinomial). Returns the 3D mean and 3D x 3D covariance, blocks in the order lower, centre, upper.
template <truncatable_family F>
void joint_region_moments(const three_regions<F>& r, double n, Eigen::Matrix<double, 3 * F::dimension, 1>& mean,
                          Eigen::Matrix<double, 3 * F::dimension, 3 * F::dimension>& cov) {
  constexpr int d = F::dimension;
  const std::array<const region_moments<F>*, 3> regions = {&r.lower, &r.centre, &r.upper};
  for (int i = 0; i < 3; ++i) {
    const auto& ri = *regions[static_cast<std::size_t>(i)];
    mean.template segment<d>(i * d) = n * ri.probability * ri.mean;
    for (int j = 0; j < 3; ++j) {
      const auto& rj = *regions[static_cast<std::size_t>(j)];
      if (i == j) {
        cov.template block<d, d>(i * d, j * d) =
            n * ri.probability * ri.cov + n * ri.probability * (1.0 - ri.probability) * ri.mean * ri.mean.transpose();
      } else {
        cov.template block<d, d>(i * d, j * d) = -n * ri.probability * rj.probability * ri.mean * rj.mean.transpose();
      }
    }
  }
}

/// The per-record statistic of a truncatable family as a generic callable on std::array<T, 1> (for bounded_statistic).
template <generic_statistic_family F>
struct record_statistic {
  /// t(x[0]) in the scalar type T.
  template <class T>
  std::array<T, F::dimension> operator()(const std::array<T, 1>& x) const {
    return F::generic_statistic(x[0]);
  }
};

}  // namespace privpost
