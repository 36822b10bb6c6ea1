// privpost/core/linalg/simplex_projection.hpp
// project_simplex: the Euclidean projection of a vector onto the scaled probability simplex {w : w_j >= 0,
// sum_j w_j = total} by the sort-based algorithm of Held, Wolfe & Crowder (1974), as in Duchi et al. (2008): u = v sorted
// descending, rho = max{j : u_j - (sum_{r <= j} u_r - total) / j > 0}, tau = (sum_{r <= rho} u_r - total) / rho,
// w = max(v - tau, 0). One implementation for the library (simplex_support::project and CGM's naive MLE use it).
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <functional>

#include "privpost/core/errors.hpp"

namespace privpost {

/// Projects v in place onto {w >= 0, sum w = total}. O(m log m); allocation-free for fixed-size vectors (a dynamic one
/// sorts a copy). std::invalid_argument for an empty v, a non-finite entry, or total not finite and > 0.
template <class Derived>
void project_simplex(Eigen::MatrixBase<Derived>& v, double total) {
  constexpr const char* f = "project_simplex";
  if (v.size() < 1) throw_invalid(f, "vector size", 0.0, "at least 1");
  check_positive_finite(f, "total", total);
  for (Eigen::Index j = 0; j < v.size(); ++j) check_finite(f, "entry v_j", v(j));
  // The projection is shift-equivariant (v + c 1 has the threshold tau + c), so the search runs on v - max v: entries
  // far above total no longer absorb it (a table of y / N near 5e306 left tau at 0 and the
  // "projection" unchanged, summing to 1e307). An entry more than the largest double below the maximum becomes
  // -infinity and gets 0, as it must.
  const double top = v.maxCoeff();
  typename Derived::PlainObject u = v;
  u.array() -= top;
  std::sort(u.data(), u.data() + u.size(), std::greater<>());
  double cumulative = 0.0, tau = -total;  // u(0) = 0 always passes the test below, with t = -total
  for (Eigen::Index j = 0; j < u.size(); ++j) {
    cumulative += u(j);
    const double t = (cumulative - total) / static_cast<double>(j + 1);
    if (u(j) - t > 0.0) tau = t;
  }
  v = ((v.array() - top) - tau).cwiseMax(0.0).matrix();
}

/// The same for an Eigen block or segment (a temporary expression).
template <class Derived>
void project_simplex(Eigen::MatrixBase<Derived>&& v, double total) {
  project_simplex(v, total);
}

}  // namespace privpost
