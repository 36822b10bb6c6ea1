// privpost/families/binomial.hpp
// binomial_family (Bernoulli records, t(x) = x, s in [0, n]) and its conjugate beta_prior (dissertation Sec. 4.4:
// the binomial model of the calibration experiments). Bounded statistic: Gibbs-SS Algorithm 3 applies directly.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/math/log_gamma.hpp"
#include "privpost/core/random/beta.hpp"
#include "privpost/core/random/uniform.hpp"
#include "privpost/families/support.hpp"

namespace privpost {

/// Bernoulli(theta) records; the sum of n records is Binomial(n, theta).
struct binomial_family {
  /// Length of t(x).
  static constexpr int dimension = 1;
  /// Length of the parameter vector.
  static constexpr int parameter_dimension = 1;
  using record_type = double;     ///< 0 or 1
  using parameter_type = double;  ///< success probability in [0, 1]
  /// Type of t(x) and of eta.
  using vector_type = Eigen::Matrix<double, 1, 1>;

  /// t(x) = x, for a record x in {0, 1}.
  static vector_type statistic(double x) { return vector_type(x); }
  /// Natural parameter eta = log(theta / (1 - theta)).
  static vector_type natural_parameter(double theta) { return vector_type(std::log(theta / (1.0 - theta))); }
  /// A(eta) = log(1 + e^eta), as a template over the scalar type (autodiff gives mean and variance).
  template <class T>
  static T log_partition(const std::array<T, 1>& eta) {
    using std::exp;
    using std::log;
    return log(1.0 + exp(eta[0]));
  }
  /// E[t(x) | theta] = theta.
  static vector_type mean_statistic(double theta) { return vector_type(theta); }
  /// Var[t(x) | theta] = theta (1 - theta).
  static Eigen::Matrix<double, 1, 1> covariance_statistic(double theta) {
    return Eigen::Matrix<double, 1, 1>(theta * (1.0 - theta));
  }
  using support_type = simplex_support<1>;  ///< A count of n records: [0, n].
  /// One record drawn from the model (simulation studies).
  template <random_engine G>
  static double draw_record(double theta, G& g) {
    return draw_uniform(g) < theta ? 1.0 : 0.0;
  }
  /// @{
  /// max ||t(x) - t(x')|| over two records, L1 and L2: t is 0 or 1.
  static constexpr double l1_sensitivity = 1.0;
  static constexpr double l2_sensitivity = 1.0;
  /// @}
  /// The largest sum of n records, n (finite_sum_family).
  static double sum_upper(double n) { return n; }
  /// The exact law of the sum of n records (finite_sum_family): log Binomial(s; n, theta) for s in {0, ..., n}, with
  /// 0 log 0 = 0 at theta = 0 or 1 (-infinity where the probability is 0).
  static double log_sum_probability(double s, double n, double theta) {
    const double log_choose = log_gamma(n + 1.0) - log_gamma(s + 1.0) - log_gamma(n - s + 1.0);
    const double ninf = -std::numeric_limits<double>::infinity();
    const double success = s > 0.0 ? (theta > 0.0 ? s * std::log(theta) : ninf) : 0.0;
    const double failure = n - s > 0.0 ? (theta < 1.0 ? (n - s) * std::log1p(-theta) : ninf) : 0.0;
    return log_choose + success + failure;
  }
};

/// Beta(a, b) prior on the success probability.
class beta_prior {
 public:
  /// The family this prior is conjugate to.
  using family = binomial_family;
  /// Shape a (> 0).
  double a() const noexcept { return a_; }
  /// Shape b (> 0).
  double b() const noexcept { return b_; }

  /// Beta(a, b); std::invalid_argument unless both are finite and > 0.
  beta_prior(double a_in, double b_in) : a_(a_in), b_(b_in) {
    check_positive_finite("beta_prior", "a", a_);
    check_positive_finite("beta_prior", "b", b_);
  }

  /// Conjugate-Update: Beta(a + s, b + n - s). Requires n > 0 and s in [0, n].
  beta_prior update(const binomial_family::vector_type& s, double n) const {
    if (!(n > 0.0 && std::isfinite(n))) throw_invalid("beta_prior::update", "n", n, "a finite number > 0");
    if (!(s(0) >= 0.0 && s(0) <= n)) throw_invalid("beta_prior::update", "s", s(0), "a number in [0, n]");
    return {a_ + s(0), b_ + n - s(0)};
  }

  /// A draw of theta from the prior.
  template <random_engine G>
  double draw(G& g) const {
    return draw_beta(g, a_, b_);
  }

  /// Prior mean a / (a + b).
  double mean() const { return a_ / (a_ + b_); }

  /// Beta(a, b)^q = Beta(1 + q (a - 1), 1 + q (b - 1)) for q in (0, 1] (powered_prior).
  friend beta_prior prior_power(const beta_prior& p, double q) {
    check_prior_power(q);
    return {1.0 + q * (p.a_ - 1.0), 1.0 + q * (p.b_ - 1.0)};
  }

 private:
  double a_ = 1.0;
  double b_ = 1.0;
};

}  // namespace privpost
