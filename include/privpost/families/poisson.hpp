// privpost/families/poisson.hpp
// poisson_family (count records x ~ Poisson(lambda), t(x) = x, unbounded: truncated release) and its conjugate
// poisson_gamma_prior. eta = log lambda, A(eta) = e^eta; region probabilities are finite sums over the integers.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/interval.hpp"
#include "privpost/core/math/log_gamma.hpp"
#include "privpost/core/random/gamma.hpp"
#include "privpost/core/random/poisson.hpp"
#include "privpost/families/detail/jet.hpp"
#include "privpost/families/support.hpp"

namespace privpost {

/// Poisson records x ~ Poisson(lambda): t(x) = x, eta = log lambda, A(eta) = e^eta. Unbounded: released by truncation.
struct poisson_family {
  using support_type = nonnegative_orthant<1>;  ///< Sums of non-negative records.
  /// Length of t(x).
  static constexpr int dimension = 1;
  /// Length of the parameter vector.
  static constexpr int parameter_dimension = 1;
  /// Records are counts.
  static constexpr bool discrete = true;
  using record_type = double;     ///< a count 0, 1, 2, ...
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
  /// eta = log lambda.
  static vector_type natural_parameter(double lambda) { return vector_type(std::log(lambda)); }
  /// A(eta) = e^eta, generic in the scalar type.
  template <class T>
  static T log_partition(const std::array<T, 1>& eta) {
    using std::exp;
    return exp(eta[0]);
  }
  /// E[x] = lambda.
  static vector_type mean_statistic(double lambda) { return vector_type(lambda); }
  /// Var[x] = lambda.
  static Eigen::Matrix<double, 1, 1> covariance_statistic(double lambda) { return Eigen::Matrix<double, 1, 1>(lambda); }

  /// log P(v <= x <= w) = log sum_{k = ceil(v)}^{floor(w)} exp(eta k - e^eta - log k!). The sum runs outward from the
  /// term nearest the mode until terms fall below e^-50 of the largest (at most 100000 terms): exact to rounding.
  template <class T>
  static T log_region_probability(double, const std::array<T, 1>& eta, double v, double w) {
    const double k_lo = std::max(0.0, std::ceil(v));
    const double k_hi = std::floor(w);  // may be +inf
    if (!(k_hi >= k_lo)) return T(-std::numeric_limits<double>::infinity());
    const double e0 = detail::value_of(eta[0]);
    const double lambda = std::exp(e0);
    const double mode = std::clamp(std::floor(lambda), k_lo, std::isinf(k_hi) ? std::max(k_lo, std::floor(lambda)) : k_hi);
    const double top = e0 * mode - lambda - log_gamma(mode + 1.0);
    // Weights w_k = exp(term_k - top) by the ratio w_{k+1} / w_k = lambda / (k + 1), outward from the mode, where every
    // step away lowers the weight (w <= 1: no overflow; no log or lgamma per term). With total = sum w_k,
    // d log(total) / d eta = E[k] - lambda and d^2 / d eta^2 = Var[k] - lambda under the weights (weighted incremental
    // mean and variance, West 1979); the jet carries them to autodiff variables (autodiff's exp would cost a factorial
    // table per term).
    const double floor_weight = std::exp(-50.0);
    double total = 1.0, mean = mode, sum_sq = 0.0;
    auto add = [&](double k, double wk) {
      total += wk;
      const double delta = k - mean;
      mean += (wk / total) * delta;
      sum_sq += wk * delta * (k - mean);
    };
    double wk = 1.0;
    for (double k = mode; k > k_lo && mode - k < 50000.0; k -= 1.0) {
      wk *= k / lambda;
      if (!(wk > floor_weight)) break;
      add(k - 1.0, wk);
    }
    wk = 1.0;
    for (double k = mode; k < k_hi && k - mode < 50000.0; k += 1.0) {
      wk *= lambda / (k + 1.0);
      if (!(wk > floor_weight)) break;
      add(k + 1.0, wk);
    }
    return detail::compose1(eta[0], std::log(total) + top, mean - lambda, sum_sq / total - lambda);
  }
  /// log P(S = s) for the sum S of n records, Poisson(n lambda): s log(n lambda) - n lambda - log s! (s a whole number
  /// >= 0; 0 at s = 0 when n lambda = 0). The law gibbs_ss_window enumerates (core/concepts.hpp integer_sum_family).
  static double log_sum_probability(double s, double n, double lambda) {
    const double mean = n * lambda;
    if (s == 0.0) return -mean;
    return s * std::log(mean) - mean - log_gamma(s + 1.0);
  }
  /// P(x' <= x) under lambda.
  static double cdf(double x, double lambda) {
    if (x < 0.0) return 0.0;
    std::array<double, 1> e{std::log(lambda)};
    return std::exp(log_region_probability(lambda, e, 0.0, std::floor(x)));
  }
  /// A draw of one record.
  template <random_engine G>
  static double draw_record(double lambda, G& g) {
    return draw_poisson(g, lambda);
  }
};

/// Gamma(shape, rate) prior on the Poisson rate.
class poisson_gamma_prior {
 public:
  /// The family this prior is conjugate to.
  using family = poisson_family;
  /// Shape of the gamma prior on lambda.
  double shape() const noexcept { return shape_; }
  /// Rate of the gamma prior on lambda.
  double rate() const noexcept { return rate_; }

  /// Gamma(shape, rate) on lambda; std::invalid_argument unless both are finite and > 0.
  poisson_gamma_prior(double shape_in, double rate_in) : shape_(shape_in), rate_(rate_in) {
    check_positive_finite("poisson_gamma_prior", "shape", shape_);
    check_positive_finite("poisson_gamma_prior", "rate", rate_);
  }
  /// Conjugate-Update: Gamma(shape + s, rate + n). Requires n > 0, s >= 0.
  poisson_gamma_prior update(const poisson_family::vector_type& s, double n) const {
    if (!(n > 0.0 && std::isfinite(n))) throw_invalid("poisson_gamma_prior::update", "n", n, "a finite number > 0");
    if (!(s(0) >= 0.0 && std::isfinite(s(0)))) throw_invalid("poisson_gamma_prior::update", "s", s(0), "a finite number >= 0");
    return {shape_ + s(0), rate_ + n};
  }
  /// A draw of lambda from the prior.
  template <random_engine G>
  double draw(G& g) const {
    const double lambda = draw_gamma(g, shape_, 1.0 / rate_);
    // shape / rate beyond the largest double (found by fuzzing: shape 5.6e199, rate 5.6e-308) overflows the draw.
    if (!std::isfinite(lambda))
      throw_domain("poisson_gamma_prior::draw", "lambda", lambda, "a finite rate (Gamma(shape, rate) overflowed a double)");
    return lambda;
  }

  /// Gamma(shape, rate)^q = Gamma(1 + q (shape - 1), q rate) for q in (0, 1] (powered_prior).
  friend poisson_gamma_prior prior_power(const poisson_gamma_prior& p, double q) {
    check_prior_power(q);
    return {1.0 + q * (p.shape_ - 1.0), q * p.rate_};
  }

 private:
  double shape_ = 1.0;
  double rate_ = 1.0;
};

}  // namespace privpost
