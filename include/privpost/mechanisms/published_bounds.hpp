// privpost/mechanisms/published_bounds.hpp
// The sensitivity bounds as published, for comparison with bounded_statistic's interval bound:
// the dissertation's truncated-release bound (000 Sec. 4.3.1, App. B.3) and the regression paper's (001 Sec. 3.1).
#pragma once

#include <cmath>
#include <cstddef>
#include <span>

#include "privpost/core/errors.hpp"
#include "privpost/core/interval.hpp"

namespace privpost {

/// App. B.3: sum_j max{ max_{x in box} |t_j(x)|, max_{x, y in box} |t_j(x) - t_j(y)| }, given the range of each
/// t_j over the box (bounded_statistic::image()).
inline double dissertation_truncated_sensitivity(std::span<const interval> image) {
  double total = 0.0;
  for (const interval& r : image) total += std::max(r.magnitude(), r.width());
  return total;
}

/// 001 Sec. 3.1: w_x^2 d(d+1)/2 + w_x w_y d + w_y^2 for [X^T X, X^T y, y^T y] with d covariates, every covariate
/// in an interval of width w_x and the response in one of width w_y. Note: it bounds each product's range by
/// w_x^2, which holds when every interval contains 0 and can fail otherwise (x in [1, 2]: x_1 x_2 ranges over
/// [1, 4], width 3 > w_x^2 = 1); bounded_statistic's interval rule makes no such assumption.
inline double regression_paper_sensitivity(double width_x, double width_y, std::size_t d) {
  check_positive_finite("regression_paper_sensitivity", "width_x", width_x);
  check_positive_finite("regression_paper_sensitivity", "width_y", width_y);
  if (d == 0) throw_invalid("regression_paper_sensitivity", "d", 0.0, "an integer >= 1");
  const double dd = static_cast<double>(d);
  return width_x * width_x * dd * (dd + 1.0) / 2.0 + width_x * width_y * dd + width_y * width_y;
}

}  // namespace privpost
