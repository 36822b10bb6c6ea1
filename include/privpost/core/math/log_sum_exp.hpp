// privpost/core/math/log_sum_exp.hpp
// log sum_i exp(x_i) with the largest term factored out, so that no term overflows and the largest underflows to 1:
// the normalisers of the graphical back ends' messages and of the exponential mechanism's softmax.
#pragma once

#include <cmath>

namespace privpost::detail {

// x non-empty; a largest entry of -infinity or +infinity (or NaN) is returned as it is.
template <class V>
double log_sum_exp(const V& x) {
  const double top = x.maxCoeff();
  if (!std::isfinite(top)) return top;
  return top + std::log((x.array() - top).exp().sum());
}

}  // namespace privpost::detail
