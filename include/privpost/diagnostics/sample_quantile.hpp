// privpost/diagnostics/sample_quantile.hpp
// sample_quantile: the p-quantile of a sample by linear interpolation between order statistics (Hyndman & Fan type 7,
// the default of R and NumPy), used for posterior summaries, credible intervals and the tail ESS.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <vector>

#include "privpost/core/errors.hpp"

namespace privpost {

/// The p-quantile (type 7) of an already sorted, non-empty sample.
inline double sorted_sample_quantile(const std::vector<double>& sorted, double p) {
  check_bounded("sample_quantile", "p", p, 0.0, 1.0);
  if (sorted.empty()) throw_invalid("sample_quantile", "sample size", 0.0, "at least 1 draw");
  const double h = (static_cast<double>(sorted.size()) - 1.0) * p;
  const auto lo = static_cast<std::size_t>(std::floor(h));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (h - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

/// The p-quantile (type 7) of a non-empty sample of finite values.
inline double sample_quantile(const Eigen::Ref<const Eigen::VectorXd>& x, double p) {
  std::vector<double> v(x.data(), x.data() + x.size());
  for (double e : v) check_finite("sample_quantile", "draw", e);
  std::sort(v.begin(), v.end());
  return sorted_sample_quantile(v, p);
}

}  // namespace privpost
