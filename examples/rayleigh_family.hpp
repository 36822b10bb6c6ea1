// A user's family, as a user would write it: Weibull records with known shape 2 (Rayleigh) and unknown scale lambda, with
// an inverse-gamma prior on theta = lambda^2, which is conjugate: t(x) = x^2, eta = -1/theta. examples/custom_family.cpp
// runs the library's machinery on it, and privpost's tools take it as their model "rayleigh"
// (examples/tools/models/rayleigh.hpp; docs/model-rayleigh.md).
#pragma once

#include <privpost/core/errors.hpp>
#include <privpost/core/random/exponential.hpp>
#include <privpost/core/random/gamma.hpp>
#include <privpost/families/autodiff_family.hpp>
#include <privpost/families/special_functions.hpp>
#include <privpost/families/support.hpp>

#include <algorithm>
#include <array>
#include <boost/math/distributions/inverse_gamma.hpp>
#include <cmath>
#include <limits>

namespace my {

// The family in its defining members: p(x | theta) = (2x / theta) exp(-x^2 / theta), x >= 0.
struct rayleigh {
  using record_type = double;
  using parameter_type = double;  // theta = lambda^2
  static Eigen::Matrix<double, 1, 1> statistic(double x) { return Eigen::Matrix<double, 1, 1>(x * x); }
  static Eigen::Matrix<double, 1, 1> natural_parameter(double theta) { return Eigen::Matrix<double, 1, 1>(-1.0 / theta); }
  template <class T>
  static T log_partition(const std::array<T, 1>& eta) {  // A(eta) = -log(-eta): E[x^2] and Var[x^2] by autodiff
    using std::log;
    return -log(-eta[0]);
  }
  using support_type = privpost::nonnegative_orthant<1>;  // sums of x^2 are >= 0

  // Optional members, each unlocking a feature:
  // the truncated release's sensitivity from the declared bounds (doubles and privpost::interval),
  template <class T>
  static std::array<T, 1> generic_statistic(const T& x) {
    return {privpost::square(x)};
  }
  // truncation (Lemma 1): log P(v <= x <= w) = log(e^{eta v^2} - e^{eta w^2}),
  template <class T>
  static T log_region_probability(double, const std::array<T, 1>& eta, double v, double w) {
    const double lo = std::max(v, 0.0);
    if (!(w > lo)) return T(-std::numeric_limits<double>::infinity());
    if (std::isinf(w)) return eta[0] * (lo * lo);
    return eta[0] * (lo * lo) + privpost::log1mexp(eta[0] * (w * w - lo * lo));
  }
  // and simulation studies.
  template <class G>
  static double draw_record(double theta, G& g) {
    return std::sqrt(theta * privpost::draw_exponential(g));  // x^2 ~ Exp(mean theta)
  }
};
// Everything else (sizes, discreteness, the moments) is derived; declare any of them in the struct to override.
using rayleigh_family = privpost::complete_family<rayleigh>;

// Inverse-gamma(a, b) prior on theta: posterior IG(a + n, b + sum x^2).
struct rayleigh_prior {
  using family = rayleigh_family;
  double a, b;
  rayleigh_prior update(const rayleigh_family::vector_type& s, double n) const { return {a + n, b + s(0)}; }
  template <class G>
  double draw(G& g) const {
    return privpost::draw_inverse_gamma(g, a, b);
  }
  // Optional, for a partition release: the prior to a power q in (0, 1], IG(a, b)^q = IG(q (a + 1) - 1, q b) (proper
  // while q (a + 1) > 1) ...
  friend rayleigh_prior prior_power(const rayleigh_prior& p, double q) {
    privpost::check_prior_power(q);
    const double shape = q * (p.a + 1.0) - 1.0;
    if (!(shape > 0.0)) privpost::throw_domain("prior_power", "inverse-gamma shape q (a + 1) - 1", shape, "a number > 0");
    return {shape, q * p.b};
  }
  // ... and, to skip sampling, theta's closed-form law: Boost's distribution serves as it is.
  friend boost::math::inverse_gamma_distribution<double> parameter_marginal(const rayleigh_prior& p, int) { return {p.a, p.b}; }
};

}  // namespace my
