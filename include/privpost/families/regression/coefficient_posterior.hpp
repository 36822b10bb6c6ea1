// privpost/families/regression/coefficient_posterior.hpp
// The closed-form posterior of one coefficient of a linear regression y = X beta + e on a subset of the records, with
// the likelihood and the prior raised to powers (a partition_posterior of a sample-and-aggregate release, Amitai 2018
// Ch. 3-4, docs/partition-release.md): normal-inverse-gamma conjugacy, with Zellner's g-prior or a known variance.
#pragma once

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <cstddef>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <utility>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"

namespace privpost {

namespace detail {
// X_j^T X_j and X_j^T y_j of the partition's records (into xtx and xty, sized p x p and p); returns y_j^T y_j.
inline double partition_gram(const Eigen::MatrixXd& x, const Eigen::VectorXd& y, std::span<const std::size_t> members,
                             Eigen::MatrixXd& xtx, Eigen::VectorXd& xty) {
  xtx.setZero();
  xty.setZero();
  double yty = 0.0;
  for (std::size_t i : members) {
    const auto row = x.row(static_cast<Eigen::Index>(i));
    xtx.selfadjointView<Eigen::Lower>().rankUpdate(row.transpose());
    xty += row.transpose() * y(static_cast<Eigen::Index>(i));
    yty += y(static_cast<Eigen::Index>(i)) * y(static_cast<Eigen::Index>(i));
  }
  xtx = xtx.selfadjointView<Eigen::Lower>();
  return yty;
}

}  // namespace detail

/// A normal or Student-t marginal (location, scale, degrees of freedom; +infinity degrees: normal), the closed-form
/// posterior of one regression coefficient.
struct scalar_marginal {
  /// Location.
  double location = 0.0;
  /// Scale (> 0).
  double scale = 1.0;
  /// Degrees of freedom; +infinity for a normal marginal.
  double degrees_of_freedom = std::numeric_limits<double>::infinity();
  /// Pr(theta <= b) (closed_form_marginal).
  friend double cdf(const scalar_marginal& m, double b) {
    const double z = (b - m.location) / m.scale;
    if (std::isinf(m.degrees_of_freedom)) return boost::math::cdf(boost::math::normal_distribution<double>(), z);
    return boost::math::cdf(boost::math::students_t_distribution<double>(m.degrees_of_freedom), z);
  }
  /// The p-quantile (closed_form_marginal).
  friend double quantile(const scalar_marginal& m, double p) {
    if (std::isinf(m.degrees_of_freedom))
      return m.location + m.scale * boost::math::quantile(boost::math::normal_distribution<double>(), p);
    return m.location + m.scale * boost::math::quantile(boost::math::students_t_distribution<double>(m.degrees_of_freedom), p);
  }
};

/// The prior of a regression partition posterior: beta | sigma^2 ~ N(mean, sigma^2 precision^{-1}) and, unless the
/// variance is known, sigma^2 ~ InverseGamma(a, b).
struct regression_partition_prior {
  /// Prior mean of the coefficients.
  Eigen::VectorXd mean;
  /// Prior precision Lambda_0 (in units of 1 / sigma^2); unused when zellner_g > 0.
  Eigen::MatrixXd precision;
  /// > 0: Zellner's g-prior on each partition, Lambda_0 = X_j^T X_j / g (the thesis's experiments use g = the
  /// partition's size); 0: the fixed precision above.
  double zellner_g = 0.0;
  /// Inverse-gamma shape of sigma^2 (unknown variance).
  double a = 1.0;
  /// Inverse-gamma scale of sigma^2 (unknown variance).
  double b = 1.0;
  /// > 0: sigma^2 is known (the thesis's Ch. 3 and Sec. 4.1 setting); 0: it has the inverse-gamma prior.
  double known_variance = 0.0;
};

/// The closed-form posterior of coefficient k of a linear regression y = X beta + e on one partition's records, with
/// the likelihood raised to task.likelihood_power and the prior to task.prior_power (normal-inverse-gamma
/// conjugacy): a normal marginal when the variance is known, else Student-t with 2 a_n degrees of freedom, location
/// mu_{n,k} and scale^2 (b_n / a_n) (Lambda_n^{-1})_kk. The records are referenced, not copied: they must outlive it.
class regression_coefficient_posterior {
 public:
  /// x: n x p covariates, y: n responses, prior of dimension p, coefficient k in [0, p). std::invalid_argument for
  /// mismatched sizes, non-finite records or prior values, a precision that is not symmetric positive definite (unless
  /// zellner_g > 0), a or b not > 0, or a negative known variance.
  regression_coefficient_posterior(const Eigen::MatrixXd& x, const Eigen::VectorXd& y, regression_partition_prior prior,
                                   Eigen::Index coefficient)
      : x_(x), y_(y), prior_(std::move(prior)), k_(coefficient) {
    constexpr const char* who = "regression_coefficient_posterior";
    check_size_match(who, "x rows", x.rows(), "y size", y.size());
    check_size_match(who, "x cols", x.cols(), "prior mean size", prior_.mean.size());
    if (x.cols() < 1) throw_invalid(who, "number of covariates", 0.0, "at least 1");
    check_finite(who, "x", x);
    check_finite(who, "y", y);
    check_finite(who, "prior mean", prior_.mean);
    if (!(coefficient >= 0 && coefficient < x.cols()))
      throw_invalid(who, "coefficient", static_cast<double>(coefficient), "an index below " + std::to_string(x.cols()));
    if (!(prior_.zellner_g >= 0.0 && std::isfinite(prior_.zellner_g)))
      throw_invalid(who, "zellner_g", prior_.zellner_g, "0 (fixed precision) or a finite number > 0");
    if (prior_.zellner_g == 0.0) {
      check_size_match(who, "precision rows", prior_.precision.rows(), "prior mean size", prior_.mean.size());
      check_symmetric_positive_definite(who, "precision", prior_.precision);
    }
    check_nonnegative_finite(who, "known_variance", prior_.known_variance);
    if (prior_.known_variance == 0.0) {
      check_positive_finite(who, "a", prior_.a);
      check_positive_finite(who, "b", prior_.b);
    }
  }

  /// The marginal posterior of beta_k given the partition's records. std::domain_error when the posterior's
  /// inverse-gamma shape or scale is not > 0 (a fractional prior with too few records per partition), or when the
  /// posterior precision is not positive definite (too few records for the covariates under a g-prior).
  scalar_marginal operator()(const partition_task& task, std::mt19937_64&) const {
    constexpr const char* who = "regression_coefficient_posterior";
    const Eigen::Index p = x_.cols();
    const double w = task.likelihood_power, q = task.prior_power;
    Eigen::MatrixXd xtx(p, p);
    Eigen::VectorXd xty(p);
    const double yty = detail::partition_gram(x_, y_, task.members, xtx, xty);
    const Eigen::MatrixXd lambda0 = q * (prior_.zellner_g > 0.0 ? Eigen::MatrixXd(xtx / prior_.zellner_g) : prior_.precision);
    const Eigen::MatrixXd lambda_n = lambda0 + w * xtx;
    const Eigen::LLT<Eigen::MatrixXd> llt(lambda_n);
    if (llt.info() != Eigen::Success)
      throw_domain(who, "posterior precision's Cholesky factorisation", 0.0, "a positive definite matrix");
    const Eigen::VectorXd r = lambda0 * prior_.mean + w * xty;
    const Eigen::VectorXd mu_n = llt.solve(r);
    const Eigen::VectorXd ek = Eigen::VectorXd::Unit(p, k_);
    const double v_kk = llt.solve(ek)(k_);  // (Lambda_n^{-1})_kk
    scalar_marginal m;
    m.location = mu_n(k_);
    if (prior_.known_variance > 0.0) {
      m.scale = std::sqrt(prior_.known_variance * v_kk);
      return m;
    }
    // p(sigma^2, beta)^q is NIG-shaped with shape (a + 1 + p/2) q - 1 - p/2, which may be negative (an improper
    // factor); the partition posterior is proper while its own shape a_n is > 0.
    const double half_p = 0.5 * static_cast<double>(p);
    const double a0 = q * (prior_.a + 1.0 + half_p) - 1.0 - half_p;
    const double a_n = a0 + 0.5 * w * static_cast<double>(task.members.size());
    if (!(a_n > 0.0))
      throw_domain(who, "posterior inverse-gamma shape a_n = (a + 1 + p/2) prior_power - 1 - p/2 + likelihood_power n_j / 2", a_n,
                   "a number > 0 (more records per partition, a larger a, or partition_prior::full)");
    const double b_n = q * prior_.b + 0.5 * (w * yty + prior_.mean.dot(lambda0 * prior_.mean) - r.dot(mu_n));
    if (!(b_n > 0.0)) throw_domain(who, "posterior inverse-gamma scale", b_n, "a number > 0");
    m.degrees_of_freedom = 2.0 * a_n;
    m.scale = std::sqrt(b_n / a_n * v_kk);
    return m;
  }

 private:
  const Eigen::MatrixXd& x_;
  const Eigen::VectorXd& y_;
  regression_partition_prior prior_;
  Eigen::Index k_;
};

}  // namespace privpost
