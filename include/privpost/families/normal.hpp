// privpost/families/normal.hpp
// normal_family (x ~ N(mu, sigma^2), both unknown, t(x) = (x, x^2), unbounded: truncated release) and its conjugate
// normal_inverse_gamma_prior. eta = (mu / sigma^2, -1 / (2 sigma^2)); valid sums satisfy s2 >= s1^2 / n.
#pragma once

#include <Eigen/Core>
#include <array>
#include <cmath>
#include <limits>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/interval.hpp"
#include "privpost/core/random/gamma.hpp"
#include "privpost/core/random/normal.hpp"
#include "privpost/families/detail/jet.hpp"
#include "privpost/families/support.hpp"

namespace privpost {

/// Parameter of normal_family: the mean and variance of the records.
struct normal_parameter {
  /// Mean mu.
  double mean = 0.0;
  /// Variance sigma^2 (> 0).
  double variance = 1.0;
};

/// Normal records x ~ N(mu, sigma^2), both unknown: t(x) = (x, x^2), eta = (mu / sigma^2, -1 / (2 sigma^2)). Unbounded: released
/// by truncation.
struct normal_family {
  /// Length of t(x).
  static constexpr int dimension = 2;
  /// Length of the parameter vector (mu, sigma^2).
  static constexpr int parameter_dimension = 2;
  /// Records are continuous.
  static constexpr bool discrete = false;
  /// A record is one real number.
  using record_type = double;
  /// The parameter (mu, sigma^2).
  using parameter_type = normal_parameter;
  /// Type of t(x) and of eta.
  using vector_type = Eigen::Vector2d;

  /// t(x) generic in the scalar type (double or privpost::interval): sensitivities come from it by interval arithmetic.
  template <class T>
  static std::array<T, 2> generic_statistic(const T& x) {
    return {x, square(x)};
  }
  /// t(x) = (x, x^2).
  static vector_type statistic(double x) { return {x, x * x}; }
  /// eta = (mu / sigma^2, -1 / (2 sigma^2)).
  static vector_type natural_parameter(const parameter_type& p) { return {p.mean / p.variance, -0.5 / p.variance}; }
  /// A(eta) = -eta_1^2 / (4 eta_2) - log(-2 eta_2) / 2, generic in the scalar type.
  template <class T>
  static T log_partition(const std::array<T, 2>& eta) {
    using std::log;
    return -eta[0] * eta[0] / (4.0 * eta[1]) - 0.5 * log(-2.0 * eta[1]);
  }
  /// E[t(x)] = (mu, mu^2 + sigma^2).
  static vector_type mean_statistic(const parameter_type& p) { return {p.mean, p.mean * p.mean + p.variance}; }
  /// Cov[t(x)] of the normal moments.
  static Eigen::Matrix2d covariance_statistic(const parameter_type& p) {
    const double m = p.mean, v = p.variance;
    Eigen::Matrix2d c;
    c << v, 2.0 * m * v, 2.0 * m * v, 4.0 * m * m * v + 2.0 * v * v;
    return c;
  }
  /// log P(v <= x <= w) with mu = -eta1 / (2 eta2), sd = sqrt(-1 / (2 eta2)), in log space.
  template <class T>
  static T log_region_probability(const parameter_type&, const std::array<T, 2>& eta, double v, double w) {
    if (!(w > v)) return T(-std::numeric_limits<double>::infinity());
    const T mu = -eta[0] / (2.0 * eta[1]);
    const T sd = detail::sqrt_jet(T(-1.0 / (2.0 * eta[1])));
    const T a = std::isinf(v) ? T(0.0) : (v - mu) / sd;
    const T b = std::isinf(w) ? T(0.0) : (w - mu) / sd;
    return detail::log_normal_interval(a, b, std::isinf(v), std::isinf(w));
  }
  /// P(x' <= x) under the parameter.
  static double cdf(double x, const parameter_type& p) { return normal_cdf((x - p.mean) / std::sqrt(p.variance)); }
  /// Sums of n records satisfy s2 >= s1^2 / n (Cauchy-Schwarz).
  using support_type = mean_square_support;  // s2 >= s1^2 / n
  /// The parameter vector (mu, sigma^2).
  static vector_type to_vector(const parameter_type& p) { return {p.mean, p.variance}; }
  /// The parameter from its vector (synthetic records from posterior draws, inference/synthetic.hpp).
  static parameter_type from_vector(const Eigen::VectorXd& v) { return {v(0), v(1)}; }
  /// A draw of one record.
  template <random_engine G>
  static double draw_record(const parameter_type& p, G& g) {
    return p.mean + std::sqrt(p.variance) * draw_normal(g);
  }
};

/// Normal-inverse-gamma prior: sigma^2 ~ InverseGamma(a, b), mu | sigma^2 ~ N(m, sigma^2 / kappa).
class normal_inverse_gamma_prior {
 public:
  /// The family this prior is conjugate to.
  using family = normal_family;
  /// Prior mean m of mu.
  double m() const noexcept { return m_; }
  /// Prior sample size kappa of mu.
  double kappa() const noexcept { return kappa_; }
  /// Shape a of the inverse gamma on sigma^2.
  double a() const noexcept { return a_; }
  /// Scale b of the inverse gamma on sigma^2.
  double b() const noexcept { return b_; }

  /// NIG(m, kappa, a, b); std::invalid_argument unless m is finite and kappa, a, b are finite and > 0.
  normal_inverse_gamma_prior(double m_in, double kappa_in, double a_in, double b_in)
      : m_(m_in), kappa_(kappa_in), a_(a_in), b_(b_in) {
    check_finite("normal_inverse_gamma_prior", "m", m_);
    check_positive_finite("normal_inverse_gamma_prior", "kappa", kappa_);
    check_positive_finite("normal_inverse_gamma_prior", "a", a_);
    check_positive_finite("normal_inverse_gamma_prior", "b", b_);
  }
  /// Conjugate-Update with s = (sum x, sum x^2): kappa + n, (kappa m + s1) / (kappa + n), a + n/2,
  /// b + (s2 - s1^2/n)/2 + kappa n (s1/n - m)^2 / (2 (kappa + n)). Requires s2 >= s1^2 / n.
  normal_inverse_gamma_prior update(const normal_family::vector_type& s, double n) const {
    if (!(n > 0.0 && std::isfinite(n))) throw_invalid("normal_inverse_gamma_prior::update", "n", n, "a finite number > 0");
    if (!mean_square_support::contains(s, n))
      throw_invalid("normal_inverse_gamma_prior::update", "s2", s(1), "a finite number >= s1^2 / n");
    const double xbar = s(0) / n;
    const double kn = kappa_ + n;
    const double scatter = std::max(0.0, s(1) - s(0) * xbar);
    return {(kappa_ * m_ + s(0)) / kn, kn, a_ + 0.5 * n, b_ + 0.5 * scatter + 0.5 * kappa_ * n * (xbar - m_) * (xbar - m_) / kn};
  }
  /// A draw of (mu, sigma^2) from the prior.
  template <random_engine G>
  normal_parameter draw(G& g) const {
    const double variance = draw_inverse_gamma(g, a_, b_);
    return {m_ + std::sqrt(variance / kappa_) * draw_normal(g), variance};
  }

 private:
  double m_ = 0.0;
  double kappa_ = 1.0;
  double a_ = 1.0;
  double b_ = 1.0;
};

}  // namespace privpost
