// privpost/families/normal_known_variance.hpp
// normal_known_variance_family (x ~ N(mu, sigma^2) with sigma known, t(x) = x, unbounded: truncated release) and its
// conjugate normal_mean_prior. eta = mu / sigma^2; the parameter carries the known sigma so every formula can see it.
#pragma once

#include <Eigen/Core>
#include <array>
#include <cmath>
#include <limits>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/interval.hpp"
#include "privpost/core/random/normal.hpp"
#include "privpost/families/detail/jet.hpp"
#include "privpost/families/support.hpp"

namespace privpost {

/// The mean of a normal with known standard deviation `sd` (sd is fixed by the prior, not inferred).
struct normal_mean_parameter {
  /// Mean mu (unknown).
  double mean = 0.0;
  /// Known standard deviation sigma (> 0).
  double sd = 1.0;
};

/// Normal records x ~ N(mu, sigma^2) with sigma known: t(x) = x, eta = mu / sigma^2. Unbounded: released by truncation.
struct normal_known_variance_family {
  /// Length of t(x).
  static constexpr int dimension = 1;
  /// Length of the parameter vector (mu).
  static constexpr int parameter_dimension = 1;
  /// Records are continuous.
  static constexpr bool discrete = false;
  /// A record is one real number.
  using record_type = double;
  /// The parameter (mu, with the known sd).
  using parameter_type = normal_mean_parameter;
  /// Type of t(x) and of eta.
  using vector_type = Eigen::Matrix<double, 1, 1>;

  /// t(x) generic in the scalar type (double or privpost::interval): sensitivities come from it by interval arithmetic.
  template <class T>
  static std::array<T, 1> generic_statistic(const T& x) {
    return {x};
  }
  /// t(x) = x.
  static vector_type statistic(double x) { return vector_type(x); }
  /// eta = mu / sigma^2.
  static vector_type natural_parameter(const parameter_type& p) { return vector_type(p.mean / (p.sd * p.sd)); }
  /// A(eta) = sd^2 eta^2 / 2 (sd known, carried by the parameter).
  template <class T>
  static T log_partition(const parameter_type& p, const std::array<T, 1>& eta) {
    return 0.5 * (p.sd * p.sd) * eta[0] * eta[0];
  }
  /// E[x] = mu.
  static vector_type mean_statistic(const parameter_type& p) { return vector_type(p.mean); }
  /// Var[x] = sigma^2.
  static Eigen::Matrix<double, 1, 1> covariance_statistic(const parameter_type& p) {
    return Eigen::Matrix<double, 1, 1>(p.sd * p.sd);
  }
  /// log P(v <= x <= w) = log(Phi((w - mu)/sd) - Phi((v - mu)/sd)) with mu = eta sd^2, in log space (exact in tails).
  template <class T>
  static T log_region_probability(const parameter_type& p, const std::array<T, 1>& eta, double v, double w) {
    if (!(w > v)) return T(-std::numeric_limits<double>::infinity());
    const T mu = eta[0] * (p.sd * p.sd);
    const T a = std::isinf(v) ? T(0.0) : (v - mu) / p.sd;
    const T b = std::isinf(w) ? T(0.0) : (w - mu) / p.sd;
    return detail::log_normal_interval(a, b, std::isinf(v), std::isinf(w));
  }
  /// P(x' <= x) under the parameter.
  static double cdf(double x, const parameter_type& p) { return normal_cdf((x - p.mean) / p.sd); }
  /// Sums of reals: every finite value.
  using support_type = real_space<1>;
  /// The parameter vector (mu).
  static Eigen::Matrix<double, 1, 1> to_vector(const parameter_type& p) { return Eigen::Matrix<double, 1, 1>(p.mean); }
  /// A draw of one record.
  template <random_engine G>
  static double draw_record(const parameter_type& p, G& g) {
    return p.mean + p.sd * draw_normal(g);
  }
};

/// N(mean0, sd0^2) prior on mu, with the known record standard deviation sigma.
class normal_mean_prior {
 public:
  /// The family this prior is conjugate to.
  using family = normal_known_variance_family;
  /// Prior mean of mu.
  double mean0() const noexcept { return mean0_; }
  /// Prior standard deviation of mu.
  double sd0() const noexcept { return sd0_; }
  /// The records' known standard deviation.
  double sigma() const noexcept { return sigma_; }

  /// mu ~ N(mean0, sd0^2) for records of known sd sigma; std::invalid_argument unless mean0 is finite and sd0, sigma are finite
  /// and > 0.
  normal_mean_prior(double mean0_in, double sd0_in, double sigma_in) : mean0_(mean0_in), sd0_(sd0_in), sigma_(sigma_in) {
    check_finite("normal_mean_prior", "mean0", mean0_);
    check_positive_finite("normal_mean_prior", "sd0", sd0_);
    check_positive_finite("normal_mean_prior", "sigma", sigma_);
  }
  /// Conjugate-Update: precision 1/sd0^2 + n/sigma^2, mean (mean0/sd0^2 + s/sigma^2) / precision.
  normal_mean_prior update(const normal_known_variance_family::vector_type& s, double n) const {
    if (!(n > 0.0 && std::isfinite(n))) throw_invalid("normal_mean_prior::update", "n", n, "a finite number > 0");
    check_finite("normal_mean_prior::update", "s", s(0));
    const double precision = 1.0 / (sd0_ * sd0_) + n / (sigma_ * sigma_);
    const double mean = (mean0_ / (sd0_ * sd0_) + s(0) / (sigma_ * sigma_)) / precision;
    return {mean, 1.0 / std::sqrt(precision), sigma_};
  }
  /// A draw of mu from the prior (with the known sd).
  template <random_engine G>
  normal_mean_parameter draw(G& g) const {
    return {mean0_ + sd0_ * draw_normal(g), sigma_};
  }

  /// N(mean0, sd0^2)^q = N(mean0, sd0^2 / q) for q in (0, 1] (powered_prior).
  friend normal_mean_prior prior_power(const normal_mean_prior& p, double q) {
    check_prior_power(q);
    return {p.mean0_, p.sd0_ / std::sqrt(q), p.sigma_};
  }

 private:
  double mean0_ = 0.0;
  double sd0_ = 1.0;
  double sigma_ = 1.0;
};

}  // namespace privpost
