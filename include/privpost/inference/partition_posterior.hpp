// privpost/inference/partition_posterior.hpp
// Partition posteriors for sample-and-aggregate releases (Amitai 2018 Ch. 3-4): runs any posterior on each partition
// of a partition_plan, in parallel threads, and returns its CDF at cutoffs or its quantiles at levels.
#pragma once

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <algorithm>
#include <atomic>
#include <boost/math/distributions/beta.hpp>
#include <boost/math/distributions/gamma.hpp>
#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <limits>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "privpost/core/errors.hpp"
#include "privpost/core/random/gamma.hpp"
#include "privpost/core/random/normal.hpp"
#include "privpost/diagnostics/calibration.hpp"
#include "privpost/diagnostics/sample_quantile.hpp"
#include "privpost/families/binomial.hpp"
#include "privpost/families/multinomial.hpp"
#include "privpost/families/poisson.hpp"
#include "privpost/families/regression/normal_inverse_gamma_regression.hpp"
#include "privpost/inference/infer.hpp"
#include "privpost/mechanisms/partition_plan.hpp"

namespace privpost {

/// What a partition posterior is asked to compute: the posterior given the partition's records only,
/// p_j(theta) proportional to [prod_{i in members} p(x_i | theta)]^likelihood_power p(theta)^prior_power.
struct partition_task {
  /// The partition's index j.
  std::size_t partition = 0;
  /// The record positions of partition j (the only records it may read; everything else must be public).
  std::span<const std::size_t> members;
  /// 1 for probabilities (Ch. 3), n / n_j for quantiles (the tempered posterior of Eq. 4.1).
  double likelihood_power = 1.0;
  /// 1, or 1 / M for a fractional prior (spec A.3(b): the full prior in each of M partitions counts it M times).
  double prior_power = 1.0;
};

/// How the prior enters the untempered partition posteriors of a probability release.
enum class partition_prior {
  /// p(theta)^(1/M) in each partition, so that the product of the M partition posteriors has the prior once (the
  /// default: with the full prior the aggregate is biased by M - 1 extra priors).
  fractional,
  /// The full prior in each partition (the thesis's setting, kept to reproduce it).
  full,
};

/// A closed-form partition posterior of a scalar: anything with cdf(b) and quantile(p).
template <class P>
concept closed_form_marginal = requires(const P& p, double x) {
  { p.cdf(x) } -> std::convertible_to<double>;
  { p.quantile(x) } -> std::convertible_to<double>;
};

/// A partition posterior: f(task, g) returns draws of the scalar of interest (Eigen::VectorXd or std::vector<double>)
/// or a closed_form_marginal. g is the partition's engine, chain_engine(seed, j).
template <class F>
concept partition_posterior = std::invocable<F&, const partition_task&, std::mt19937_64&> &&
    (closed_form_marginal<std::invoke_result_t<F&, const partition_task&, std::mt19937_64&>> ||
     std::convertible_to<std::invoke_result_t<F&, const partition_task&, std::mt19937_64&>, Eigen::VectorXd> ||
     std::convertible_to<std::invoke_result_t<F&, const partition_task&, std::mt19937_64&>, std::vector<double>>);

/// How the partitions are run.
struct partition_run_options {
  /// Partition j's engine is chain_engine(seed, j). A release's seed must not depend on the data.
  std::uint64_t seed = 0;
  /// Worker threads (>= 1). The outputs are stored by partition and seeded by index: the same for any thread count.
  int threads = 1;
};

/// The partition outputs, one vector per partition (empty where the posterior failed), ready for the release
/// functions of mechanisms/sample_aggregate.hpp, which replace empty or invalid outputs by their fallback.
struct partition_outputs {
  /// outputs[j][k]: partition j's value at cutoff or level k.
  std::vector<std::vector<double>> values;
  /// Partitions whose posterior threw. Private: never publish it (it depends on the data); an escaping exception
  /// would itself be an output, so none escapes.
  std::size_t failures = 0;
};

namespace detail {
// Runs one task per partition on `threads` workers (an atomic work index); output(task, g) fills values[j]. Any
// exception leaves values[j] empty and counts a failure.
template <class Output>
partition_outputs run_partitions(const char* who, const partition_plan& plan, double prior_power, bool tempered,
                                 const partition_run_options& options, Output output) {
  if (options.threads < 1) throw_invalid(who, "threads", options.threads, "an integer >= 1");
  if (plan.partitions() > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw_invalid(who, "partitions", static_cast<double>(plan.partitions()), "at most INT_MAX");
  partition_outputs out;
  out.values.resize(plan.partitions());
  std::vector<char> failed(plan.partitions(), 0);
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t j = next++; j < plan.partitions(); j = next++) {
      try {
        partition_task task{j, plan.members(j), tempered ? plan.likelihood_power(j) : 1.0, prior_power};
        std::mt19937_64 g = chain_engine(options.seed, static_cast<int>(j));
        out.values[j] = output(task, g);
      } catch (...) {
        out.values[j].clear();
        failed[j] = 1;
      }
    }
  };
  const auto threads = std::min<std::size_t>(static_cast<std::size_t>(options.threads), plan.partitions());
  if (threads <= 1) {
    work();
  } else {
    std::vector<std::jthread> pool;
    pool.reserve(threads);
    for (std::size_t t = 0; t < threads; ++t) pool.emplace_back(work);
  }
  for (char f : failed) out.failures += static_cast<std::size_t>(f);
  return out;
}

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

template <class Result>
Eigen::VectorXd as_draws(Result&& r) {
  if constexpr (std::convertible_to<Result, Eigen::VectorXd>) {
    return Eigen::VectorXd(std::forward<Result>(r));
  } else {
    const std::vector<double> v(std::forward<Result>(r));
    return Eigen::Map<const Eigen::VectorXd>(v.data(), static_cast<Eigen::Index>(v.size()));
  }
}
}  // namespace detail

/// Partition probabilities Pr(theta <= b_k | D_j) for a probability release (Ch. 3): each partition's untempered
/// posterior (likelihood power 1, prior power 1/M under partition_prior::fractional), its CDF at every cutoff (closed
/// form, or the fraction of draws below b with ties counted half). std::invalid_argument for no cutoffs or
/// threads < 1; a posterior that throws or returns no draws gives an empty output (the release's fallback).
template <partition_posterior F>
partition_outputs partition_cdf(const partition_plan& plan, F&& posterior, std::span<const double> cutoffs,
                                const partition_run_options& options, partition_prior prior = partition_prior::fractional) {
  constexpr const char* who = "partition_cdf";
  if (cutoffs.empty()) throw_invalid(who, "number of cutoffs", 0.0, "at least 1");
  for (double b : cutoffs) check_finite(who, "cutoff", b);
  const double prior_power = prior == partition_prior::fractional ? 1.0 / static_cast<double>(plan.partitions()) : 1.0;
  return detail::run_partitions(who, plan, prior_power, false, options, [&](const partition_task& task, std::mt19937_64& g) {
    auto&& r = posterior(task, g);
    std::vector<double> p(cutoffs.size());
    if constexpr (closed_form_marginal<std::remove_cvref_t<decltype(r)>>) {
      for (std::size_t k = 0; k < cutoffs.size(); ++k) p[k] = r.cdf(cutoffs[k]);
    } else {
      const Eigen::VectorXd draws = detail::as_draws(std::forward<decltype(r)>(r));
      for (std::size_t k = 0; k < cutoffs.size(); ++k) p[k] = posterior_quantile(cutoffs[k], draws);
    }
    return p;
  });
}

/// Partition quantiles for a quantile release (Ch. 4): each partition's posterior with its likelihood tempered by
/// n / n_j and the full prior (Eq. 4.1), its quantile at every level (closed form, or the type-7 sample quantile of
/// the draws). std::invalid_argument for levels outside (0, 1) or threads < 1; failures as for partition_cdf.
template <partition_posterior F>
partition_outputs partition_quantiles(const partition_plan& plan, F&& posterior, std::span<const double> levels,
                                      const partition_run_options& options) {
  constexpr const char* who = "partition_quantiles";
  if (levels.empty()) throw_invalid(who, "number of levels", 0.0, "at least 1");
  for (double p : levels)
    if (!(p > 0.0 && p < 1.0)) throw_invalid(who, "level", p, "a number in (0, 1)");
  return detail::run_partitions(who, plan, 1.0, true, options, [&](const partition_task& task, std::mt19937_64& g) {
    auto&& r = posterior(task, g);
    std::vector<double> q(levels.size());
    if constexpr (closed_form_marginal<std::remove_cvref_t<decltype(r)>>) {
      for (std::size_t l = 0; l < levels.size(); ++l) q[l] = r.quantile(levels[l]);
    } else {
      const Eigen::VectorXd draws = detail::as_draws(std::forward<decltype(r)>(r));
      for (std::size_t l = 0; l < levels.size(); ++l) q[l] = sample_quantile(draws, levels[l]);
    }
    return q;
  });
}

/// A normal or Student-t marginal (location, scale, degrees of freedom; +infinity degrees: normal), the closed-form
/// posterior of one regression coefficient.
struct scalar_marginal {
  /// Location.
  double location = 0.0;
  /// Scale (> 0).
  double scale = 1.0;
  /// Degrees of freedom; +infinity for a normal marginal.
  double degrees_of_freedom = std::numeric_limits<double>::infinity();
  /// Pr(theta <= b).
  double cdf(double b) const {
    const double z = (b - location) / scale;
    if (std::isinf(degrees_of_freedom)) return boost::math::cdf(boost::math::normal_distribution<double>(), z);
    return boost::math::cdf(boost::math::students_t_distribution<double>(degrees_of_freedom), z);
  }
  /// The p-quantile.
  double quantile(double p) const {
    if (std::isinf(degrees_of_freedom))
      return location + scale * boost::math::quantile(boost::math::normal_distribution<double>(), p);
    return location + scale * boost::math::quantile(boost::math::students_t_distribution<double>(degrees_of_freedom), p);
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

/// The prior of semi_conjugate_regression_posterior: beta ~ N(mean, covariance) independent of sigma^2 ~
/// InverseGamma(a, b) (Amitai 2018 Sec. 4.1), and the chain's length.
struct semi_conjugate_regression_settings {
  /// Prior mean of the coefficients.
  Eigen::VectorXd mean;
  /// Prior covariance of the coefficients (symmetric positive definite).
  Eigen::MatrixXd covariance;
  /// Inverse-gamma shape of sigma^2.
  double a = 1.0;
  /// Inverse-gamma scale of sigma^2.
  double b = 1.0;
  /// Sweeps discarded before the draws are kept.
  int burnin = 200;
  /// Draws kept (one per sweep).
  int draws = 2000;
};

/// An MCMC partition posterior: the two-block Gibbs sampler of the semi-conjugate linear regression on one partition's
/// records (spec A.5 step 1), with the likelihood raised to task.likelihood_power w and the prior to
/// task.prior_power q: beta | sigma^2 ~ N(V (q S_0^{-1} mu_0 + w X_j^T y_j / sigma^2), V) with
/// V = (q S_0^{-1} + w X_j^T X_j / sigma^2)^{-1}, and sigma^2 | beta ~ IG(q (a + 1) - 1 + w n_j / 2,
/// q b + w ||y_j - X_j beta||^2 / 2). Returns the draws of coefficient k. The records are referenced, not copied.
class semi_conjugate_regression_posterior {
 public:
  /// std::invalid_argument for mismatched sizes, non-finite records or prior values, a covariance that is not
  /// symmetric positive definite, a or b not > 0, burnin < 0 or draws < 1, or k out of range.
  semi_conjugate_regression_posterior(const Eigen::MatrixXd& x, const Eigen::VectorXd& y,
                                      semi_conjugate_regression_settings settings, Eigen::Index coefficient)
      : x_(x), y_(y), s_(std::move(settings)), k_(coefficient) {
    constexpr const char* who = "semi_conjugate_regression_posterior";
    check_size_match(who, "x rows", x.rows(), "y size", y.size());
    check_size_match(who, "x cols", x.cols(), "prior mean size", s_.mean.size());
    check_size_match(who, "covariance rows", s_.covariance.rows(), "prior mean size", s_.mean.size());
    if (x.cols() < 1) throw_invalid(who, "number of covariates", 0.0, "at least 1");
    check_finite(who, "x", x);
    check_finite(who, "y", y);
    check_finite(who, "prior mean", s_.mean);
    check_symmetric_positive_definite(who, "covariance", s_.covariance);
    check_positive_finite(who, "a", s_.a);
    check_positive_finite(who, "b", s_.b);
    if (s_.burnin < 0) throw_invalid(who, "burnin", s_.burnin, "an integer >= 0");
    if (s_.draws < 1) throw_invalid(who, "draws", s_.draws, "an integer >= 1");
    if (!(coefficient >= 0 && coefficient < x.cols()))
      throw_invalid(who, "coefficient", static_cast<double>(coefficient), "an index below " + std::to_string(x.cols()));
    prior_precision_ = s_.covariance.llt().solve(Eigen::MatrixXd::Identity(x.cols(), x.cols()));
  }

  /// The draws of beta_k. std::domain_error when the conditional inverse-gamma shape is not > 0 (a fractional prior
  /// with too few records).
  Eigen::VectorXd operator()(const partition_task& task, std::mt19937_64& g) const {
    constexpr const char* who = "semi_conjugate_regression_posterior";
    const Eigen::Index p = x_.cols();
    const double w = task.likelihood_power, q = task.prior_power;
    Eigen::MatrixXd xtx(p, p);
    Eigen::VectorXd xty(p);
    const double yty = detail::partition_gram(x_, y_, task.members, xtx, xty);
    const double shape = q * (s_.a + 1.0) - 1.0 + 0.5 * w * static_cast<double>(task.members.size());
    if (!(shape > 0.0))
      throw_domain(who, "conditional inverse-gamma shape (a + 1) prior_power - 1 + likelihood_power n_j / 2", shape,
                   "a number > 0 (more records per partition or a larger a)");
    const Eigen::MatrixXd q_precision = q * prior_precision_;
    const Eigen::VectorXd q_shift = q_precision * s_.mean;
    Eigen::VectorXd beta = s_.mean, z(p), out(s_.draws);
    double sigma2 = task.members.empty() ? 1.0 : std::max(yty / static_cast<double>(task.members.size()), 1e-12);
    Eigen::LLT<Eigen::MatrixXd> llt(p);
    for (int sweep = 0; sweep < s_.burnin + s_.draws; ++sweep) {
      llt.compute(q_precision + (w / sigma2) * xtx);
      if (llt.info() != Eigen::Success)
        throw_domain(who, "conditional precision's Cholesky factorisation", 0.0, "positive definite");
      for (Eigen::Index i = 0; i < p; ++i) z(i) = draw_normal(g);
      beta = llt.solve(q_shift + (w / sigma2) * xty) + llt.matrixU().solve(z);  // N(Q^{-1} r, Q^{-1}), Q = L L^T
      // ||y - X beta||^2 from the partition's sums; rounding can make it slightly negative for an exact fit.
      const double ss = std::max(yty - 2.0 * beta.dot(xty) + beta.dot(xtx * beta), 0.0);
      sigma2 = draw_inverse_gamma(g, shape, q * s_.b + 0.5 * w * ss);
      if (sweep >= s_.burnin) out(sweep - s_.burnin) = beta(k_);
    }
    return out;
  }

 private:
  const Eigen::MatrixXd& x_;
  const Eigen::VectorXd& y_;
  semi_conjugate_regression_settings s_;
  Eigen::Index k_;
  Eigen::MatrixXd prior_precision_;
};

/// The prior raised to the power q in (0, 1]: Beta(a, b)^q is Beta(1 + q (a - 1), 1 + q (b - 1)) (spec A.3(b): the
/// fractional prior of one of M partitions, q = 1/M). std::invalid_argument for q outside (0, 1].
inline beta_prior fractional_prior(const beta_prior& prior, double power) {
  if (!(power > 0.0 && power <= 1.0)) throw_invalid("fractional_prior", "power", power, "a number in (0, 1]");
  return {1.0 + power * (prior.a() - 1.0), 1.0 + power * (prior.b() - 1.0)};
}

/// A Beta marginal with cdf and quantile (Boost.Math): the closed-form partition posterior of a proportion.
struct beta_marginal {
  /// Shape a.
  double a = 1.0;
  /// Shape b.
  double b = 1.0;
  /// Pr(theta <= x).
  double cdf(double x) const {
    if (x <= 0.0) return 0.0;
    if (x >= 1.0) return 1.0;
    return boost::math::cdf(boost::math::beta_distribution<double>(a, b), x);
  }
  /// The p-quantile.
  double quantile(double p) const { return boost::math::quantile(boost::math::beta_distribution<double>(a, b), p); }
};

/// The closed-form partition posterior of a Bernoulli proportion: the prior raised to task.prior_power (see
/// fractional_prior), the likelihood of the partition's records to task.likelihood_power w, so Beta(a' + w s_j,
/// b' + w (n_j - s_j)) with s_j the partition's successes. The records (each 0 or 1) are referenced, not copied.
class beta_partition_posterior {
 public:
  /// std::invalid_argument for a record that is not 0 or 1.
  beta_partition_posterior(const std::vector<double>& records, beta_prior prior) : records_(records), prior_(prior) {
    for (double r : records)
      if (!(r == 0.0 || r == 1.0)) throw_invalid("beta_partition_posterior", "record", r, "0 or 1");
  }

  /// The partition's marginal posterior.
  beta_marginal operator()(const partition_task& task, std::mt19937_64&) const {
    const beta_prior p = fractional_prior(prior_, task.prior_power);
    double s = 0.0;
    for (std::size_t i : task.members) s += records_[i];
    const double n = static_cast<double>(task.members.size());
    return {p.a() + task.likelihood_power * s, p.b() + task.likelihood_power * (n - s)};
  }

 private:
  const std::vector<double>& records_;
  beta_prior prior_;
};

/// The prior raised to the power q in (0, 1]: Gamma(shape, rate)^q is Gamma(1 + q (shape - 1), q rate) (the fractional
/// prior of one of M partitions, q = 1/M; the shape stays > 0 for any shape > 0). std::invalid_argument for q outside
/// (0, 1].
inline poisson_gamma_prior fractional_prior(const poisson_gamma_prior& prior, double power) {
  if (!(power > 0.0 && power <= 1.0)) throw_invalid("fractional_prior", "power", power, "a number in (0, 1]");
  return {1.0 + power * (prior.shape() - 1.0), power * prior.rate()};
}

/// The prior raised to the power q in (0, 1]: Dirichlet(alpha)^q is Dirichlet(1 + q (alpha - 1)) (the fractional
/// prior of one of M partitions, q = 1/M). std::invalid_argument for q outside (0, 1].
template <int K>
dirichlet_prior<K> fractional_prior(const dirichlet_prior<K>& prior, double power) {
  if (!(power > 0.0 && power <= 1.0)) throw_invalid("fractional_prior", "power", power, "a number in (0, 1]");
  return dirichlet_prior<K>((1.0 + power * (prior.alpha().array() - 1.0)).matrix());
}

/// A Gamma(shape, rate) marginal with cdf and quantile (Boost.Math): the closed-form partition posterior of a rate.
struct gamma_marginal {
  /// Shape (> 0).
  double shape = 1.0;
  /// Rate (> 0).
  double rate = 1.0;
  /// Pr(lambda <= x).
  double cdf(double x) const {
    if (x <= 0.0) return 0.0;
    return boost::math::cdf(boost::math::gamma_distribution<double>(shape, 1.0 / rate), x);
  }
  /// The p-quantile.
  double quantile(double p) const { return boost::math::quantile(boost::math::gamma_distribution<double>(shape, 1.0 / rate), p); }
};

/// The closed-form partition posterior of a Poisson rate: the prior raised to task.prior_power (see fractional_prior),
/// the likelihood of the partition's records to task.likelihood_power w, so Gamma(shape' + w s_j, rate' + w n_j) with
/// s_j the partition's total count. The records (non-negative integers) are referenced, not copied.
class poisson_partition_posterior {
 public:
  /// std::invalid_argument for a record that is not a finite non-negative integer.
  poisson_partition_posterior(const std::vector<double>& records, poisson_gamma_prior prior) : records_(records), prior_(prior) {
    for (double r : records)
      if (!(std::isfinite(r) && r >= 0.0 && r == std::floor(r)))
        throw_invalid("poisson_partition_posterior", "record", r, "a non-negative integer");
  }

  /// The partition's marginal posterior.
  gamma_marginal operator()(const partition_task& task, std::mt19937_64&) const {
    const poisson_gamma_prior p = fractional_prior(prior_, task.prior_power);
    double s = 0.0;
    for (std::size_t i : task.members) s += records_[i];
    const double n = static_cast<double>(task.members.size());
    return {p.shape() + task.likelihood_power * s, p.rate() + task.likelihood_power * n};
  }

 private:
  const std::vector<double>& records_;
  poisson_gamma_prior prior_;
};

/// The closed-form partition posterior of one category probability theta_k of a K-category multinomial: the
/// Dirichlet posterior Dirichlet(alpha' + w c_j) (alpha' the prior raised to task.prior_power, c_j the partition's
/// category counts, w = task.likelihood_power) has the marginal Beta(alpha'_k + w c_jk, sum(alpha') - alpha'_k +
/// w (n_j - c_jk)). The records (category indices) are referenced, not copied.
template <int K>
class dirichlet_partition_posterior {
 public:
  /// std::invalid_argument for a category outside [0, K) or a record outside [0, K).
  dirichlet_partition_posterior(const std::vector<int>& records, dirichlet_prior<K> prior, int category)
      : records_(records), prior_(prior), category_(category) {
    if (category < 0 || category >= K)
      throw_invalid("dirichlet_partition_posterior", "category", category, "an integer in [0, " + std::to_string(K - 1) + "]");
    for (int r : records)
      if (r < 0 || r >= K)
        throw_invalid("dirichlet_partition_posterior", "record", r, "a category in [0, " + std::to_string(K - 1) + "]");
  }

  /// The partition's marginal posterior of theta_category.
  beta_marginal operator()(const partition_task& task, std::mt19937_64&) const {
    const dirichlet_prior<K> p = fractional_prior(prior_, task.prior_power);
    double c = 0.0;
    for (std::size_t i : task.members) c += records_[i] == category_ ? 1.0 : 0.0;
    const double n = static_cast<double>(task.members.size());
    const double a = p.alpha()(category_);
    return {a + task.likelihood_power * c, p.alpha().sum() - a + task.likelihood_power * (n - c)};
  }

 private:
  const std::vector<int>& records_;
  dirichlet_prior<K> prior_;
  int category_;
};

/// A partition posterior that runs one of privpost's samplers through infer() on each partition: make(task) returns
/// the factory (g -> sampler) of the partition's sampler, built from task.members, task.likelihood_power and
/// task.prior_power; the partition's draws are coordinate `coordinate` of every chain's kept draws. The chains of a
/// partition run one after another in its worker thread (partitions are the unit of parallelism), seeded by a word of
/// the partition's engine, so the outputs do not depend on the thread count.
template <class MakeForPartition>
class sampler_partition_posterior {
 public:
  /// std::invalid_argument for options infer() refuses or a negative coordinate.
  sampler_partition_posterior(MakeForPartition make, inference_options options, Eigen::Index coordinate)
      : make_(std::move(make)), options_(options), coordinate_(coordinate) {
    detail::check_inference_options("sampler_partition_posterior", options_, 1);
    if (coordinate < 0)
      throw_invalid("sampler_partition_posterior", "coordinate", static_cast<double>(coordinate), "an index >= 0");
    options_.parallel = false;
  }

  /// The draws of the coordinate on the task's partition. std::invalid_argument when the sampler's parameter has no
  /// such coordinate.
  Eigen::VectorXd operator()(const partition_task& task, std::mt19937_64& g) const {
    inference_options o = options_;
    o.seed = g();
    const auto result = infer(make_(task), o);
    const auto& chains = result.draws.chains();
    if (chains.empty() || coordinate_ >= chains.front().cols())
      throw_invalid("sampler_partition_posterior", "coordinate", static_cast<double>(coordinate_),
                    "an index of the sampler's parameter");
    Eigen::VectorXd out(result.draws.size());
    Eigen::Index at = 0;
    for (const auto& c : chains) {
      out.segment(at, c.rows()) = c.col(coordinate_);
      at += c.rows();
    }
    return out;
  }

 private:
  MakeForPartition make_;
  inference_options options_;
  Eigen::Index coordinate_;
};

}  // namespace privpost
