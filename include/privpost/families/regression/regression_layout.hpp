// privpost/families/regression/regression_layout.hpp
// regression_layout: which entries of [X^T X, X^T y, y^T y] a linear-regression release holds (001 Sec. 2; dissertation
// Ch. 5): the unique entries (upper triangle) of u u^T for a record u = (x~, y), x~ = (c, x) with an optional intercept
// column of known constant c whose (0, 0) entry n c^2 is public, so it carries no noise and no sensitivity.
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "privpost/core/errors.hpp"
#include "privpost/core/interval.hpp"

namespace privpost {

/// The layout of a linear regression's design and of its sufficient statistic: d covariates, an optional intercept column, and
/// the unique entries of (x~, y)(x~, y)^T.
class regression_layout {
 public:
  /// d >= 1 covariates; with an intercept the design has d + 1 columns, the first the constant `intercept_value`.
  regression_layout(int covariates, bool intercept, double intercept_value = 1.0)
      : d_(covariates), intercept_(intercept), c_(intercept_value) {
    if (covariates < 1 || covariates > 64)
      throw_invalid("regression_layout", "d (covariates)", covariates, "an integer in [1, 64]");
    if (intercept) check_positive_finite("regression_layout", "intercept value", intercept_value);
    const int q = columns() + 1;  // u = (x~, y)
    for (int i = 0; i < q; ++i)
      for (int j = i; j < q; ++j)
        if (!(intercept_ && i == 0 && j == 0)) pairs_.emplace_back(i, j);
  }

  /// d.
  int covariates() const noexcept { return d_; }
  /// Whether the design has an intercept column.
  bool intercept() const noexcept { return intercept_; }
  /// The intercept column's constant.
  double intercept_value() const noexcept { return c_; }
  /// Columns of the design matrix (covariates plus intercept).
  int columns() const noexcept { return d_ + (intercept_ ? 1 : 0); }
  /// Length of the released (and latent) statistic.
  int size() const noexcept { return static_cast<int>(pairs_.size()); }
  /// Entry k of the statistic is (u u^T)(i, j) with (i, j) = pair(k), i <= j; index columns() is y.
  const std::pair<int, int>& pair(int k) const { return pairs_[static_cast<std::size_t>(k)]; }

  /// The design row x~ = (c, x) or x.
  Eigen::VectorXd design_row(const Eigen::Ref<const Eigen::VectorXd>& x) const {
    check_size_match("regression_layout", "covariates", x.size(), "d", d_);
    Eigen::VectorXd r(columns());
    const int off = intercept_ ? 1 : 0;
    if (intercept_) r(0) = c_;
    // An element loop: GCC 12 at -O3 misreads Eigen's vectorised block copies here as out-of-bounds reads.
    for (int i = 0; i < d_; ++i) r(off + i) = x(i);
    return r;
  }

  /// t(x, y) for one record (finite values only).
  Eigen::VectorXd record_statistic(const Eigen::Ref<const Eigen::VectorXd>& x, double y) const {
    Eigen::VectorXd u(columns() + 1);
    u.head(columns()) = design_row(x);
    u(columns()) = y;
    for (Eigen::Index i = 0; i < u.size(); ++i) check_finite("regression_layout", "record value", u(i));
    Eigen::VectorXd t(size());
    for (int k = 0; k < size(); ++k) t(k) = u(pair(k).first) * u(pair(k).second);
    return t;
  }

  /// The (columns + 1) x (columns + 1) matrix B = [X y]^T [X y] from a statistic of n records.
  Eigen::MatrixXd gram(const Eigen::Ref<const Eigen::VectorXd>& s, double n) const {
    Eigen::MatrixXd b;
    gram(s, n, b);
    return b;
  }
  /// gram() into `b` (resized only if its size differs: a preallocated b is reused without allocating).
  void gram(const Eigen::Ref<const Eigen::VectorXd>& s, double n, Eigen::MatrixXd& b) const {
    check_size_match("regression_layout::gram", "statistic", s.size(), "layout size", size());
    const int q = columns() + 1;
    if (b.rows() != q || b.cols() != q) b.resize(q, q);
    if (intercept_) b(0, 0) = n * c_ * c_;
    for (int k = 0; k < size(); ++k) b(pair(k).first, pair(k).second) = b(pair(k).second, pair(k).first) = s(k);
  }

  /// The statistic held by a Gram matrix B (inverse of gram()).
  Eigen::VectorXd statistic_of(const Eigen::MatrixXd& b) const {
    Eigen::VectorXd s(size());
    statistic_of(b, s);
    return s;
  }
  /// statistic_of() into `s` (resized only if its size differs).
  void statistic_of(const Eigen::MatrixXd& b, Eigen::VectorXd& s) const {
    if (s.size() != size()) s.resize(size());
    for (int k = 0; k < size(); ++k) s(k) = b(pair(k).first, pair(k).second);
  }

  /// Per-coordinate ranges of one record's t over the declared box (covariate bounds, response bounds), by interval
  /// arithmetic: entry k of a sum of n records clamped into the box lies in n times range k. std::invalid_argument for a
  /// box of the wrong size or with an end that is not finite or not ordered.
  std::vector<interval> statistic_ranges(const std::vector<interval>& covariate_bounds, const interval& response_bounds) const {
    check_size_match("regression_layout::statistic_ranges", "covariate bounds",
                     static_cast<Eigen::Index>(covariate_bounds.size()), "d", d_);
    std::vector<interval> u;
    if (intercept_) u.emplace_back(c_);
    for (const auto& b : covariate_bounds) {
      check_finite("regression_layout::statistic_ranges", "covariate lower bound", b.lo);
      check_finite("regression_layout::statistic_ranges", "covariate upper bound", b.hi);
      if (!(b.lo < b.hi))
        throw_invalid("regression_layout::statistic_ranges", "covariate upper bound", b.hi, "a number > the lower bound");
      u.push_back(b);
    }
    if (!(std::isfinite(response_bounds.lo) && std::isfinite(response_bounds.hi) && response_bounds.lo < response_bounds.hi))
      throw_invalid("regression_layout::statistic_ranges", "response upper bound", response_bounds.hi,
                    "a finite number > the finite lower bound");
    u.push_back(response_bounds);
    std::vector<interval> ranges;
    ranges.reserve(static_cast<std::size_t>(size()));
    for (int k = 0; k < size(); ++k) {
      const auto [i, j] = pair(k);
      ranges.push_back((i == j) ? square(u[static_cast<std::size_t>(i)])
                                : u[static_cast<std::size_t>(i)] * u[static_cast<std::size_t>(j)]);
    }
    return ranges;
  }

  /// The L1 and L2 sensitivity from statistic_ranges (records are clamped into the box, or are known to lie in it).
  std::pair<double, double> sensitivity(const std::vector<interval>& covariate_bounds, const interval& response_bounds) const {
    double l1 = 0.0, l2 = 0.0;
    for (const interval& r : statistic_ranges(covariate_bounds, response_bounds)) {
      l1 += r.width();
      l2 += r.width() * r.width();
    }
    return {l1, std::sqrt(l2)};
  }

 private:
  int d_;
  bool intercept_;
  double c_;
  std::vector<std::pair<int, int>> pairs_;
};

}  // namespace privpost
