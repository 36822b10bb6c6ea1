// privpost/families/multinomial.hpp
// multinomial_family<K> (categorical records, t(x) = one-hot of the first K-1 categories, s_k >= 0, sum s <= n) and its
// conjugate dirichlet_prior<K> (dissertation Sec. 4.4, the multinomial model). The K-th count is n - sum s (n is public).
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <cmath>
#include <string>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/random/dirichlet.hpp"
#include "privpost/core/random/uniform.hpp"
#include "privpost/families/support.hpp"

namespace privpost {

/// Categorical records with K >= 2 categories 0..K-1.
template <int K>
struct multinomial_family {
  static_assert(K >= 2, "multinomial_family needs at least two categories");
  /// Length of t(x): the first K - 1 category indicators.
  static constexpr int dimension = K - 1;
  /// Length of the parameter vector: the K category probabilities.
  static constexpr int parameter_dimension = K;
  using record_type = int;                             ///< category index in [0, K)
  using parameter_type = Eigen::Matrix<double, K, 1>;  ///< probabilities, summing to 1
  /// Type of t(x) and of eta.
  using vector_type = Eigen::Matrix<double, K - 1, 1>;
  /// Type of Cov[t(x)].
  using matrix_type = Eigen::Matrix<double, K - 1, K - 1>;

  /// t(x): the indicator of category x among the first K - 1 (all zero for the last).
  static vector_type statistic(int x) {
    if (x < 0 || x >= K)
      throw_invalid("multinomial_family::statistic", "category", x, "an integer in [0, " + std::to_string(K - 1) + "]");
    vector_type t = vector_type::Zero();
    if (x < K - 1) t(x) = 1.0;
    return t;
  }
  /// eta_k = log(theta_k / theta_K), k < K.
  static vector_type natural_parameter(const parameter_type& theta) {
    return (theta.template head<K - 1>().array() / theta(K - 1)).log().matrix();
  }
  /// A(eta) = log(1 + sum_k e^{eta_k}).
  template <class T>
  static T log_partition(const std::array<T, K - 1>& eta) {
    using std::exp;
    using std::log;
    T total = T(1.0);
    for (const T& e : eta) total = total + exp(e);
    return log(total);
  }
  /// E[t(x) | theta]: the first K - 1 probabilities.
  static vector_type mean_statistic(const parameter_type& theta) { return theta.template head<K - 1>(); }
  /// Cov[t(x) | theta] = diag(p) - p p^T over the first K - 1 probabilities p.
  static matrix_type covariance_statistic(const parameter_type& theta) {
    const vector_type p = theta.template head<K - 1>();
    matrix_type c = -p * p.transpose();
    c.diagonal() += p;
    return c;
  }
  using support_type = simplex_support<K - 1>;  ///< Counts of n records in the first K - 1 categories.
  /// The parameter vector: theta itself.
  static parameter_type to_vector(const parameter_type& theta) { return theta; }
  /// The parameter from its vector (synthetic records from posterior draws, inference/synthetic.hpp).
  static parameter_type from_vector(const Eigen::VectorXd& v) { return v.head<K>(); }
  /// One record drawn from the model (simulation studies), by inversion of the cumulative probabilities.
  template <random_engine G>
  static int draw_record(const parameter_type& theta, G& g) {
    double u = draw_uniform(g);
    for (int k = 0; k < K - 1; ++k) {
      if (u < theta(k)) return k;
      u -= theta(k);
    }
    return K - 1;
  }
  /// @{
  /// A record moving from category i to j changes at most two coordinates of t by 1: L1 = 2, L2 = sqrt(2).
  static constexpr double l1_sensitivity = 2.0;
  static constexpr double l2_sensitivity = 1.4142135623730951;
  /// @}
};

/// Dirichlet(alpha) prior on the K category probabilities.
template <int K>
class dirichlet_prior {
 public:
  /// The family this prior is conjugate to.
  using family = multinomial_family<K>;
  /// The concentration parameters.
  const Eigen::Matrix<double, K, 1>& alpha() const noexcept { return alpha_; }

  /// Dirichlet(alpha); std::invalid_argument unless every alpha_k is finite and > 0.
  explicit dirichlet_prior(const Eigen::Matrix<double, K, 1>& alpha_in) : alpha_(alpha_in) {
    for (int k = 0; k < K; ++k) check_positive_finite("dirichlet_prior", "alpha[" + std::to_string(k) + "]", alpha_(k));
  }

  /// Conjugate-Update: alpha_k + s_k for k < K, alpha_K + n - sum s. Requires s valid for n.
  dirichlet_prior update(const typename family::vector_type& s, double n) const {
    if (!(n > 0.0 && std::isfinite(n))) throw_invalid("dirichlet_prior::update", "n", n, "a finite number > 0");
    if (!family::support_type::contains(s, n))
      throw_invalid("dirichlet_prior::update", "sum of s", s.sum(), "s_k >= 0 and sum s <= n");
    Eigen::Matrix<double, K, 1> a = alpha_;
    a.template head<K - 1>() += s;
    a(K - 1) += n - s.sum();
    return dirichlet_prior(a, unchecked{});
  }

  /// A draw of the category probabilities from the prior.
  template <random_engine G>
  Eigen::Matrix<double, K, 1> draw(G& g) const {
    Eigen::Matrix<double, K, 1> out;
    draw_dirichlet(g, alpha_, out);
    return out;
  }

  /// Dirichlet(alpha)^q = Dirichlet(1 + q (alpha - 1)) for q in (0, 1] (powered_prior).
  friend dirichlet_prior prior_power(const dirichlet_prior& p, double q) {
    check_prior_power(q);
    return dirichlet_prior((1.0 + q * (p.alpha_.array() - 1.0)).matrix());
  }

 private:
  Eigen::Matrix<double, K, 1> alpha_;
  struct unchecked {};
  dirichlet_prior(const Eigen::Matrix<double, K, 1>& a, unchecked) : alpha_(a) {}
};

}  // namespace privpost
