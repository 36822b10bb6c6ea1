// privpost/families/detail/autodiff_moments.hpp
// Gradient and Hessian of a scalar function of D variables by Boost.Math forward-mode autodiff, exact to rounding:
// each second derivative is a univariate order-2 derivative along e_i or e_i + e_j (Eq. 4.1: mean = dA, cov = d^2 A).
#pragma once

#include <Eigen/Core>
#include <array>
#include <boost/math/differentiation/autodiff.hpp>

namespace privpost::detail {

// f(std::array<T, D>) -> T for T = double and for autodiff variables. Writes grad f(x) and the Hessian of f at x.
template <int D, class Function>
void autodiff_gradient_hessian(const Function& f, const Eigen::Matrix<double, D, 1>& x, Eigen::Matrix<double, D, 1>& grad,
                               Eigen::Matrix<double, D, D>& hessian) {
  using boost::math::differentiation::make_fvar;
  using var = decltype(make_fvar<double, 2>(0.0));
  // Second directional derivative along direction u (and, for u = e_i, the first derivative too).
  auto along = [&](const Eigen::Matrix<double, D, 1>& u, double& first, double& second) {
    const var t = make_fvar<double, 2>(0.0);
    std::array<var, static_cast<std::size_t>(D)> point;
    for (int k = 0; k < D; ++k) point[static_cast<std::size_t>(k)] = x(k) + u(k) * t;
    const var y = f(point);
    // Taylor coefficients: f' = y[1], f'' = 2! y[2] (derivative(k) multiplies by boost::math::factorial<double>(k),
    // which Boost reads from a long double table built on the stack at each call: most of a truncated sweep's time).
    first = y[1];
    second = 2.0 * y[2];
  };
  for (int i = 0; i < D; ++i) {
    along(Eigen::Matrix<double, D, 1>::Unit(i), grad(i), hessian(i, i));
  }
  for (int i = 0; i < D; ++i) {
    for (int j = i + 1; j < D; ++j) {
      double first = 0.0, second = 0.0;
      along(Eigen::Matrix<double, D, 1>::Unit(i) + Eigen::Matrix<double, D, 1>::Unit(j), first, second);
      hessian(i, j) = hessian(j, i) = 0.5 * (second - hessian(i, i) - hessian(j, j));
    }
  }
}

}  // namespace privpost::detail
