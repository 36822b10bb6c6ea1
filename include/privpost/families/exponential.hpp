// privpost/families/exponential.hpp
// exponential_rate_family (records x >= 0 ~ Exp(rate lambda), t(x) = x, unbounded: truncated release) and its conjugate
// exponential_gamma_prior (dissertation Sec. 4.4, the exponential model). eta = -lambda, A(eta) = -log(-eta).
#pragma once

#include <Eigen/Core>
#include <array>
#include <cmath>
#include <limits>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/interval.hpp"
#include "privpost/core/random/exponential.hpp"
#include "privpost/core/random/gamma.hpp"
#include "privpost/families/detail/jet.hpp"
#include "privpost/families/support.hpp"

namespace privpost {

/// Exponential records x ~ Exp(lambda) (rate lambda > 0): t(x) = x, eta = -lambda, A(eta) = -log(-eta). Unbounded: released by
/// truncation.
struct exponential_rate_family {
  using support_type = nonnegative_orthant<1>;  ///< Sums of non-negative records.
  /// Length of t(x).
  static constexpr int dimension = 1;
  /// Length of the parameter vector.
  static constexpr int parameter_dimension = 1;
  /// Records are continuous.
  static constexpr bool discrete = false;
  using record_type = double;     ///< x >= 0
  using parameter_type = double;  ///< rate lambda > 0
  /// Type of t(x) and of eta.
  using vector_type = Eigen::Matrix<double, 1, 1>;

  /// t(x) generic in the scalar type (double or privpost::interval): sensitivities come from it by interval arithmetic.
  template <class T>
  static std::array<T, 1> generic_statistic(const T& x) {
    return {x};
  }
  /// t(x) = x.
  static vector_type statistic(double x) { return vector_type(x); }
  /// eta = -lambda.
  static vector_type natural_parameter(double lambda) { return vector_type(-lambda); }
  /// A(eta) = -log(-eta), generic in the scalar type.
  template <class T>
  static T log_partition(const std::array<T, 1>& eta) {
    using std::log;
    return -log(-eta[0]);
  }
  /// E[x | lambda] = 1 / lambda.
  static vector_type mean_statistic(double lambda) { return vector_type(1.0 / lambda); }
  /// Var[x | lambda] = 1 / lambda^2.
  static Eigen::Matrix<double, 1, 1> covariance_statistic(double lambda) {
    return Eigen::Matrix<double, 1, 1>(1.0 / (lambda * lambda));
  }
  /// log P(v <= x <= w) = log(e^{-lambda v'} - e^{-lambda w}) = eta v' + log(1 - e^{eta (w - v')}), v' = max(v, 0).
  template <class T>
  static T log_region_probability(double, const std::array<T, 1>& eta, double v, double w) {
    const double lo = std::max(v, 0.0);
    if (!(w > lo)) return T(-std::numeric_limits<double>::infinity());
    if (std::isinf(w)) return eta[0] * lo;
    return eta[0] * lo + detail::log1mexp(eta[0] * (w - lo));
  }
  /// CDF of one record.
  static double cdf(double x, double lambda) { return x <= 0.0 ? 0.0 : -std::expm1(-lambda * x); }
  /// A draw of one record.
  template <random_engine G>
  static double draw_record(double lambda, G& g) {
    return draw_exponential(g, lambda);
  }
};

/// Gamma(shape, rate) prior on the exponential rate.
class exponential_gamma_prior {
 public:
  /// The family this prior is conjugate to.
  using family = exponential_rate_family;
  /// Shape of the gamma prior on lambda.
  double shape() const noexcept { return shape_; }
  /// Rate of the gamma prior on lambda.
  double rate() const noexcept { return rate_; }

  /// Gamma(shape, rate) on lambda; std::invalid_argument unless both are finite and > 0.
  exponential_gamma_prior(double shape_in, double rate_in) : shape_(shape_in), rate_(rate_in) {
    check_positive_finite("exponential_gamma_prior", "shape", shape_);
    check_positive_finite("exponential_gamma_prior", "rate", rate_);
  }
  /// Conjugate-Update: Gamma(shape + n, rate + s). Requires n > 0, s >= 0.
  exponential_gamma_prior update(const exponential_rate_family::vector_type& s, double n) const {
    if (!(n > 0.0 && std::isfinite(n))) throw_invalid("exponential_gamma_prior::update", "n", n, "a finite number > 0");
    if (!(s(0) >= 0.0 && std::isfinite(s(0))))
      throw_invalid("exponential_gamma_prior::update", "s", s(0), "a finite number >= 0");
    return {shape_ + n, rate_ + s(0)};
  }
  /// A draw of lambda from the prior.
  template <random_engine G>
  double draw(G& g) const {
    const double lambda = draw_gamma(g, shape_, 1.0 / rate_);
    // An exponential rate must be positive and finite: a tiny shape underflows the draw to 0, a huge shape / rate
    // overflows it.
    if (!(lambda > 0.0 && std::isfinite(lambda)))
      throw_domain("exponential_gamma_prior::draw", "lambda", lambda,
                   "a positive finite rate (Gamma(shape, rate) under- or overflowed a double)");
    return lambda;
  }

  /// Gamma(shape, rate)^q = Gamma(1 + q (shape - 1), q rate) for q in (0, 1] (powered_prior).
  friend exponential_gamma_prior prior_power(const exponential_gamma_prior& p, double q) {
    check_prior_power(q);
    return {1.0 + q * (p.shape_ - 1.0), q * p.rate_};
  }

 private:
  double shape_ = 1.0;
  double rate_ = 1.0;
};

}  // namespace privpost
