// privpost/diagnostics/mmd.hpp
// mmd2: the unbiased estimate of the squared maximum mean discrepancy with a Gaussian kernel (Gretton et al. 2012),
// the utility measure of dissertation Sec. 4.4 (distance of a private posterior to the non-private one).
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "privpost/core/errors.hpp"

namespace privpost {

namespace detail {
// Rows of each sample pooled for the median heuristic (the cost is quadratic in them).
inline constexpr Eigen::Index median_heuristic_max_rows = 1000;
}  // namespace detail

/// The median of the pairwise Euclidean distances of the pooled rows of x and y (the median heuristic).
/// Pools at most the first 1000 rows of each sample to bound the cost; returns 1 if every distance is zero.
inline double median_heuristic_bandwidth(const Eigen::MatrixXd& x, const Eigen::MatrixXd& y) {
  const Eigen::Index nx = std::min(x.rows(), detail::median_heuristic_max_rows),
                     ny = std::min(y.rows(), detail::median_heuristic_max_rows);
  Eigen::MatrixXd pooled(nx + ny, x.cols());
  pooled << x.topRows(nx), y.topRows(ny);
  std::vector<double> d;
  d.reserve(static_cast<std::size_t>(pooled.rows() * (pooled.rows() - 1) / 2));
  for (Eigen::Index i = 0; i < pooled.rows(); ++i)
    for (Eigen::Index j = i + 1; j < pooled.rows(); ++j) d.push_back((pooled.row(i) - pooled.row(j)).norm());
  if (d.empty()) return 1.0;
  auto mid = d.begin() + static_cast<std::ptrdiff_t>(d.size() / 2);
  std::nth_element(d.begin(), mid, d.end());
  return *mid > 0.0 ? *mid : 1.0;
}

/// Unbiased MMD^2 between samples x and y (rows are draws, equal column counts, >= 2 rows each) with kernel
/// k(a, b) = exp(-||a - b||^2 / (2 h^2)); h defaults to the median heuristic. Can be slightly negative when the
/// distributions are equal (it is unbiased).
inline double mmd2(const Eigen::MatrixXd& x, const Eigen::MatrixXd& y, std::optional<double> bandwidth = std::nullopt) {
  if (x.rows() < 2) throw_invalid("mmd2", "rows of x", static_cast<double>(x.rows()), "at least 2");
  if (y.rows() < 2) throw_invalid("mmd2", "rows of y", static_cast<double>(y.rows()), "at least 2");
  check_size_match("mmd2", "x columns", x.cols(), "y columns", y.cols());
  check_finite("mmd2", "x", x);
  check_finite("mmd2", "y", y);
  const double h = bandwidth ? *bandwidth : median_heuristic_bandwidth(x, y);
  check_positive_finite("mmd2", "bandwidth", h);
  const double scale = -1.0 / (2.0 * h * h);
  auto k = [&](const auto& a, const auto& b) { return std::exp(scale * (a - b).squaredNorm()); };
  double kxx = 0.0, kyy = 0.0, kxy = 0.0;
  for (Eigen::Index i = 0; i < x.rows(); ++i)
    for (Eigen::Index j = i + 1; j < x.rows(); ++j) kxx += 2.0 * k(x.row(i), x.row(j));
  for (Eigen::Index i = 0; i < y.rows(); ++i)
    for (Eigen::Index j = i + 1; j < y.rows(); ++j) kyy += 2.0 * k(y.row(i), y.row(j));
  for (Eigen::Index i = 0; i < x.rows(); ++i)
    for (Eigen::Index j = 0; j < y.rows(); ++j) kxy += k(x.row(i), y.row(j));
  const double m = static_cast<double>(x.rows()), n = static_cast<double>(y.rows());
  return kxx / (m * (m - 1.0)) + kyy / (n * (n - 1.0)) - 2.0 * kxy / (m * n);
}

}  // namespace privpost
