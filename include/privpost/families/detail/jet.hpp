// privpost/families/detail/jet.hpp
// Second-order composition of special functions with Boost autodiff variables: f(x) = f0 + f1 dx + f2 dx^2 / 2 is exact
// for order-2 fvars, so functions autodiff lacks (log(1 - e^u), log(Phi(b) - Phi(a)) in log space) get exact derivatives.
#pragma once

#include <boost/math/differentiation/autodiff.hpp>
#include <cmath>
#include <limits>
#include <numbers>
#include <type_traits>

#include "privpost/core/math/normal_tail.hpp"

namespace privpost::detail {

template <class T>
inline double value_of(const T& x) {
  if constexpr (std::is_arithmetic_v<T>) {
    return static_cast<double>(x);
  } else {
    return static_cast<double>(x);  // the root value (derivative(0) would also multiply by 0!, see sqrt_jet)
  }
}

// f(x) given f(x0), f'(x0), f''(x0) at x0 = value_of(x).
template <class T>
inline T compose1(const T& x, double f0, double f1, double f2) {
  if constexpr (std::is_arithmetic_v<T>) {
    return T(f0);
  } else {
    const T dx = x - value_of(x);
    return f0 + f1 * dx + (0.5 * f2) * dx * dx;
  }
}

// f(x, y) from its value, gradient and Hessian at (value_of(x), value_of(y)).
template <class T>
inline T compose2(const T& x, const T& y, double f0, double fx, double fy, double fxx, double fxy, double fyy) {
  if constexpr (std::is_arithmetic_v<T>) {
    return T(f0);
  } else {
    const T dx = x - value_of(x);
    const T dy = y - value_of(y);
    return f0 + fx * dx + fy * dy + (0.5 * fxx) * dx * dx + fxy * dx * dy + (0.5 * fyy) * dy * dy;
  }
}

// log(1 - e^u) with derivatives f' = -e^u / (1 - e^u), f'' = f' (1 - f') (privpost::log1mexp for doubles).
using privpost::log1mexp;

template <class T>
inline T log1mexp(const T& u) {
  const double u0 = value_of(u);
  const double f1 = -1.0 / std::expm1(-u0);
  return compose1(u, log1mexp(u0), f1, f1 * (1.0 - f1));
}

// sqrt(x) for x > 0 with f' = 1 / (2 sqrt x), f'' = -1 / (4 x sqrt x). Boost autodiff's own sqrt divides by
// boost::math::factorial<double>(i), which Boost reads from a long double table built on the stack at every call: that
// was a third of the time of a truncated-normal sweep, which calls sqrt in every Lemma 1 derivative.
template <class T>
inline T sqrt_jet(const T& x) {
  const double x0 = value_of(x);
  const double s = std::sqrt(x0);
  if constexpr (std::is_arithmetic_v<T>) {
    return T(s);
  } else {
    return compose1(x, s, 0.5 / s, -0.25 / (s * x0));
  }
}

using privpost::inverse_mills;
using privpost::log_normal_cdf;
using privpost::log_normal_interval;

// log(Phi(b) - Phi(a)) with exact first and second partial derivatives in (a, b); infinite ends stay constant.
// With D = Phi(b) - Phi(a), r_a = phi(a)/D, r_b = phi(b)/D: dL/da = -r_a, dL/db = r_b, d2L/da2 = r_a (a - r_a),
// d2L/db2 = -r_b (b + r_b), d2L/dadb = r_a r_b. In a tail r_a, r_b come from the inverse Mills ratio, never from
// exp(-x^2/2 - log D), whose rounding would cost digits in the truncated variance (Lemma 1 deep in a tail).
template <class T>
inline T log_normal_interval(const T& a, const T& b, bool a_infinite, bool b_infinite) {
  const double a0 = a_infinite ? -std::numeric_limits<double>::infinity() : value_of(a);
  const double b0 = b_infinite ? std::numeric_limits<double>::infinity() : value_of(b);
  const double l = log_normal_interval(a0, b0);
  if constexpr (std::is_arithmetic_v<T>) {
    return T(l);
  } else {
    double ra = 0.0, rb = 0.0;
    if (b0 < 0.0) {
      const double ratio = a_infinite ? 0.0 : std::exp(log_normal_cdf(a0) - log_normal_cdf(b0));
      rb = inverse_mills(b0) / (1.0 - ratio);
      ra = a_infinite ? 0.0 : std::exp(0.5 * (b0 - a0) * (b0 + a0)) * rb;
    } else if (a0 > 0.0) {
      const double ratio = b_infinite ? 0.0 : std::exp(log_normal_cdf(-b0) - log_normal_cdf(-a0));
      ra = inverse_mills(-a0) / (1.0 - ratio);
      rb = b_infinite ? 0.0 : std::exp(0.5 * (a0 - b0) * (a0 + b0)) * ra;
    } else {
      ra = a_infinite ? 0.0 : std::exp(-0.5 * a0 * a0 - log_sqrt_2pi - l);
      rb = b_infinite ? 0.0 : std::exp(-0.5 * b0 * b0 - log_sqrt_2pi - l);
    }
    const double faa = a_infinite ? 0.0 : ra * (a0 - ra);
    const double fbb = b_infinite ? 0.0 : -rb * (b0 + rb);
    return compose2(a, b, l, -ra, rb, faa, ra * rb, fbb);
  }
}

}  // namespace privpost::detail
