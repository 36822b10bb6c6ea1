// privpost/families/detail/jet.hpp
// Second-order composition of special functions with Boost autodiff variables: f(x) = f0 + f1 dx + f2 dx^2 / 2 is exact
// for order-2 fvars, so functions autodiff lacks (log(1 - e^u), log(Phi(b) - Phi(a)) in log space) get exact derivatives.
#pragma once

#include <boost/math/differentiation/autodiff.hpp>
#include <cmath>
#include <limits>
#include <numbers>
#include <type_traits>

#include "privpost/mechanisms/analytic_gaussian.hpp"

namespace privpost::detail {

template <class T>
inline double value_of(const T& x) {
  if constexpr (std::is_arithmetic_v<T>) {
    return static_cast<double>(x);
  } else {
    return static_cast<double>(x.derivative(0));
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

// log(1 - e^u) for u < 0, accurate for u near 0 and far below it (Maechler 2012), with derivatives
// f' = -e^u / (1 - e^u), f'' = f' (1 - f').
inline double log1mexp(double u) { return u > -0.6931471805599453 ? std::log(-std::expm1(u)) : std::log1p(-std::exp(u)); }

template <class T>
inline T log1mexp(const T& u) {
  const double u0 = value_of(u);
  const double f1 = -1.0 / std::expm1(-u0);
  return compose1(u, log1mexp(u0), f1, f1 * (1.0 - f1));
}

// log Phi(x) and log of the upper tail Q(x) = Phi(-x), accurate in the far tails.
inline double log_upper_normal(double x) { return log_normal_cdf(-x); }

// log(Phi(b) - Phi(a)) for a <= b, without cancellation: both in the upper tail use Q, both in the lower tail use Phi.
inline double log_normal_interval(double a, double b) {
  if (a >= b) return -std::numeric_limits<double>::infinity();
  if (a > 0.0) {
    const double la = log_upper_normal(a);
    return std::isinf(b) ? la : la + log1mexp(log_upper_normal(b) - la);
  }
  if (b < 0.0) {
    const double lb = log_normal_cdf(b);
    return std::isinf(a) ? lb : lb + log1mexp(log_normal_cdf(a) - lb);
  }
  const double pa = std::isinf(a) ? 0.0 : std::exp(log_normal_cdf(a));
  const double qb = std::isinf(b) ? 0.0 : std::exp(log_upper_normal(b));
  return std::log1p(-(pa + qb));
}

// The inverse Mills ratio phi(x) / Phi(x); for x < -3 by the continued fraction of erfc (A&S 7.1.14, depth 60,
// relative error < 1e-16 there), so that no exp of a large negative number loses digits.
inline double inverse_mills(double x) {
  if (x < -3.0) {
    const double y = -x / std::numbers::sqrt2;
    double t = y;
    for (int k = 60; k >= 1; --k) t = y + (0.5 * k) / t;
    return std::numbers::sqrt2 * t;
  }
  constexpr double log_sqrt_2pi = 0.91893853320467274;
  return std::exp(-0.5 * x * x - log_sqrt_2pi - log_normal_cdf(x));
}

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
    constexpr double log_sqrt_2pi = 0.91893853320467274;
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
