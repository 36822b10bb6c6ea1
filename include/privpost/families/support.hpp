// privpost/families/support.hpp
// Support policies: the valid sets of sums of n records' statistics that a family picks instead of writing its own
// bounds, membership test and projection (docs/concepts.md): scaled simplex, non-negative orthant, real space, and
// the mean-square set of the normal family. The regression Gram set is families/regression/gram_support.hpp.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "privpost/core/linalg/simplex_projection.hpp"
#include "privpost/core/numerical_events.hpp"

namespace privpost {

namespace detail {
// Draws outside a multi-dimensional valid set are retried this often before the projection (counted either way).
inline constexpr int default_rejection_tries = 100;
// Passes of a 1e-15 shrink that put a projected simplex point, a few ulps outside after rounding, back inside.
inline constexpr int simplex_rounding_passes = 8;
}  // namespace detail

/// {s : s_j >= 0, sum_j s_j <= n}: counts of n records in D of D + 1 categories (binomial: D = 1, [0, n]; multinomial:
/// the first K - 1 counts). Projection: Euclidean (clip at 0; if the sum still exceeds n, onto the scaled simplex face).
/// For D = 1 this is the clamp to [0, n].
template <int D>
struct simplex_support {
  /// Tries of rejection sampling before projecting.
  static constexpr int rejection_tries = detail::default_rejection_tries;
  /// Type of the statistic sums.
  using vector_type = Eigen::Matrix<double, D, 1>;

  /// Lower bound of each coordinate: 0.
  static double lower(double) { return 0.0; }
  /// Upper bound of each coordinate: n.
  static double upper(double n) { return n; }
  /// Whether s is in the set.
  static bool contains(const vector_type& s, double n) { return (s.array() >= 0.0).all() && s.sum() <= n; }
  /// Projects s onto the set as the struct comment says; false when it was already there.
  static bool project(vector_type& s, double n, numerical_events&) {
    if (contains(s, n)) return false;
    const vector_type clipped = s.cwiseMax(0.0);
    if (clipped.sum() <= n) {
      s = clipped;
      return true;
    }
    // Onto the face {s >= 0, sum s = n}.
    project_simplex(s, n);
    // Rounding can leave the sum a few ulps above n; scale it back onto the set.
    const double total = s.sum();
    if (total > n) s *= n / total;
    for (int pass = 0; pass < detail::simplex_rounding_passes && s.sum() > n; ++pass) s *= (1.0 - 1e-15);  // ~5 ulps each
    return true;
  }
};

/// {s : s_j >= 0}: sums of non-negative records (Poisson counts, exponential times). Projection clips at 0.
template <int D>
struct nonnegative_orthant {
  /// Tries of rejection sampling before projecting.
  static constexpr int rejection_tries = detail::default_rejection_tries;
  /// Type of the statistic sums.
  using vector_type = Eigen::Matrix<double, D, 1>;

  /// Lower bound of each coordinate: 0.
  static double lower(double) { return 0.0; }
  /// No upper bound.
  static double upper(double) { return std::numeric_limits<double>::infinity(); }
  /// Whether s is in the set.
  static bool contains(const vector_type& s, double) { return (s.array() >= 0.0).all(); }
  /// Clips s at 0; false when it was already in the set.
  static bool project(vector_type& s, double n, numerical_events&) {
    if (contains(s, n)) return false;
    s = s.cwiseMax(0.0);
    return true;
  }
};

/// Every finite vector (the normal mean with known variance).
template <int D>
struct real_space {
  /// Tries of rejection sampling before projecting (never needed: every finite vector is in the set).
  static constexpr int rejection_tries = detail::default_rejection_tries;
  /// Type of the statistic sums.
  using vector_type = Eigen::Matrix<double, D, 1>;

  /// No lower bound.
  static double lower(double) { return -std::numeric_limits<double>::infinity(); }
  /// No upper bound.
  static double upper(double) { return std::numeric_limits<double>::infinity(); }
  /// Whether s is finite.
  static bool contains(const vector_type& s, double) { return s.allFinite(); }
  /// Nothing to project: false.
  static bool project(vector_type&, double, numerical_events&) { return false; }
};

/// {(s1, s2) : s2 >= s1^2 / n}: the sum and the sum of squares of n reals (Cauchy-Schwarz; the normal family). The
/// projection raises s2 to s1^2 / n (along s2, not the Euclidean one).
struct mean_square_support {
  /// Tries of rejection sampling before projecting.
  static constexpr int rejection_tries = detail::default_rejection_tries;
  /// Type of the statistic sums (s1, s2).
  using vector_type = Eigen::Vector2d;

  /// Whether s is finite with s2 >= s1^2 / n.
  static bool contains(const vector_type& s, double n) {
    return std::isfinite(s(0)) && std::isfinite(s(1)) && s(1) >= s(0) * s(0) / n;
  }
  /// Raises s2 to s1^2 / n; false when s was already in the set.
  static bool project(vector_type& s, double n, numerical_events&) {
    if (contains(s, n)) return false;
    s(1) = std::max(s(1), s(0) * s(0) / n);
    return true;
  }
};

}  // namespace privpost
