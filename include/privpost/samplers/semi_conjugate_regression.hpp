// privpost/samplers/semi_conjugate_regression.hpp
// The two-block Gibbs sampler of the semi-conjugate linear regression y = X beta + e, beta ~ N(mean, covariance)
// independent of sigma^2 ~ InverseGamma(a, b) (Amitai 2018 Sec. 4.1), on a subset of the records with the likelihood
// and the prior raised to powers: a non-private sampler, the MCMC partition posterior of a sample-and-aggregate
// release (run on each partition by sampler_partition_posterior, inference/partition_posterior.hpp).
#pragma once

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <algorithm>
#include <random>
#include <string>
#include <utility>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/numerical_events.hpp"
#include "privpost/core/random/gamma.hpp"
#include "privpost/core/random/normal.hpp"
#include "privpost/families/regression/coefficient_posterior.hpp"

namespace privpost {

/// The prior of semi_conjugate_regression_sampler: beta ~ N(mean, covariance) independent of sigma^2 ~
/// InverseGamma(a, b).
struct semi_conjugate_regression_prior {
  /// Prior mean of the coefficients.
  Eigen::VectorXd mean;
  /// Prior covariance of the coefficients (symmetric positive definite).
  Eigen::MatrixXd covariance;
  /// Inverse-gamma shape of sigma^2.
  double a = 1.0;
  /// Inverse-gamma scale of sigma^2.
  double b = 1.0;
};

/// Gibbs for the semi-conjugate regression on the records task.members, likelihood to the power w =
/// task.likelihood_power and prior to q = task.prior_power. A sweep draws beta | sigma^2 ~ N(V (q S_0^{-1} mu_0 +
/// w X_j^T y_j / sigma^2), V) with V = (q S_0^{-1} + w X_j^T X_j / sigma^2)^{-1}, then sigma^2 | beta ~ IG(q (a + 1) -
/// 1 + w n_j / 2, q b + w ||y_j - X_j beta||^2 / 2). The parameter vector is (beta, sigma^2). The records are read once,
/// into their sums.
///
///     auto make = semi_conjugate_regression_partitions(x, y, prior);     // make(task)(g) is a partition's sampler
///     sampler_partition_posterior slope(make, options, 1);               // coefficient 1
class semi_conjugate_regression_sampler {
 public:
  /// std::invalid_argument for mismatched sizes, non-finite members' records or prior values, a covariance that is not symmetric
  /// positive definite, a or b not > 0, or a member outside the records; std::domain_error when the conditional
  /// inverse-gamma shape is not > 0 (a fractional prior with too few records).
  semi_conjugate_regression_sampler(const Eigen::MatrixXd& x, const Eigen::VectorXd& y,
                                    const semi_conjugate_regression_prior& prior, const partition_task& task)
      : w_(task.likelihood_power), q_(task.prior_power) {
    constexpr const char* who = "semi_conjugate_regression_sampler";
    check_size_match(who, "x rows", x.rows(), "y size", y.size());
    check_size_match(who, "x cols", x.cols(), "prior mean size", prior.mean.size());
    check_size_match(who, "covariance rows", prior.covariance.rows(), "prior mean size", prior.mean.size());
    if (x.cols() < 1) throw_invalid(who, "number of covariates", 0.0, "at least 1");
    check_finite(who, "prior mean", prior.mean);
    check_symmetric_positive_definite(who, "covariance", prior.covariance);
    check_positive_finite(who, "a", prior.a);
    check_positive_finite(who, "b", prior.b);
    check_positive_finite(who, "likelihood_power", w_);
    check_positive_finite(who, "prior_power", q_);
    for (std::size_t i : task.members)
      if (i >= static_cast<std::size_t>(x.rows())) throw_invalid(who, "member", static_cast<double>(i), "a row of x");
    const Eigen::Index p = x.cols();
    xtx_.resize(p, p);
    xty_.resize(p);
    yty_ = detail::partition_gram(x, y, task.members, xtx_, xty_);
    // Only the members are read: a non-finite record among them (or sums beyond a double) shows in the sums.
    check_finite(who, "members' X^T X", xtx_);
    check_finite(who, "members' X^T y", xty_);
    check_finite(who, "members' y^T y", yty_);
    shape_ = q_ * (prior.a + 1.0) - 1.0 + 0.5 * w_ * static_cast<double>(task.members.size());
    if (!(shape_ > 0.0))
      throw_domain(who, "conditional inverse-gamma shape (a + 1) prior_power - 1 + likelihood_power n_j / 2", shape_,
                   "a number > 0 (more records per partition or a larger a)");
    q_precision_ = q_ * prior.covariance.llt().solve(Eigen::MatrixXd::Identity(p, p));
    q_shift_ = q_precision_ * prior.mean;
    q_b_ = q_ * prior.b;
    beta_ = prior.mean;
    sigma2_ = task.members.empty() ? 1.0 : std::max(yty_ / static_cast<double>(task.members.size()), 1e-12);
    z_.resize(p);
    llt_ = Eigen::LLT<Eigen::MatrixXd>(p);
  }

  /// One sweep: beta | sigma^2, then sigma^2 | beta.
  template <random_engine G>
  void step(G& g) {
    llt_.compute(q_precision_ + (w_ / sigma2_) * xtx_);
    if (llt_.info() != Eigen::Success)
      throw_domain("semi_conjugate_regression_sampler", "conditional precision's Cholesky factorisation", 0.0,
                   "positive definite");
    for (Eigen::Index i = 0; i < z_.size(); ++i) z_(i) = draw_normal(g);
    beta_ = llt_.solve(q_shift_ + (w_ / sigma2_) * xty_) + llt_.matrixU().solve(z_);  // N(Q^{-1} r, Q^{-1}), Q = L L^T
    // ||y - X beta||^2 from the sums; rounding can make it slightly negative for an exact fit.
    const double ss = std::max(yty_ - 2.0 * beta_.dot(xty_) + beta_.dot(xtx_ * beta_), 0.0);
    sigma2_ = draw_inverse_gamma(g, shape_, q_b_ + 0.5 * w_ * ss);
  }

  /// (beta, sigma^2).
  Eigen::VectorXd parameter_vector() const {
    Eigen::VectorXd v(beta_.size() + 1);
    v << beta_, sigma2_;
    return v;
  }
  /// None: the sweep has no numerical repairs.
  const numerical_events& events() const noexcept { return events_; }

 private:
  double w_, q_, shape_ = 0.0, q_b_ = 0.0, yty_ = 0.0, sigma2_ = 1.0;
  Eigen::MatrixXd xtx_, q_precision_;
  Eigen::VectorXd xty_, q_shift_, beta_, z_;
  Eigen::LLT<Eigen::MatrixXd> llt_;
  numerical_events events_;
};

/// make(task) for sampler_partition_posterior: the factory (g -> semi_conjugate_regression_sampler) of a partition's
/// sampler. The records and the prior are checked here, once (std::invalid_argument as the sampler's), so that bad
/// input is an error and not a failure of every partition. x and y are referenced, not copied: they must outlive it.
inline auto semi_conjugate_regression_partitions(const Eigen::MatrixXd& x, const Eigen::VectorXd& y,
                                                 semi_conjugate_regression_prior prior) {
  check_finite("semi_conjugate_regression_partitions", "x", x);
  check_finite("semi_conjugate_regression_partitions", "y", y);
  (void)semi_conjugate_regression_sampler(x, y, prior, partition_task{});  // the sizes and the prior
  return [&x, &y, prior = std::move(prior)](const partition_task& task) {
    return [&x, &y, prior, task](std::mt19937_64&) { return semi_conjugate_regression_sampler(x, y, prior, task); };
  };
}

}  // namespace privpost
