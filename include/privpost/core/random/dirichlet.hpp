// privpost/core/random/dirichlet.hpp
// draw_dirichlet: Dirichlet(alpha) as normalised gamma draws, normalised in log space (log-sum-exp),
// written into a caller-provided vector so that samplers allocate nothing inside a sweep.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/random/gamma.hpp"

namespace privpost {

/// Writes a Dirichlet(alpha) draw into out (resized to alpha's size if it is dynamic). Every alpha_k must be
/// finite and > 0 and alpha must have at least two entries.
template <random_engine G, class DerivedA, class DerivedOut>
inline void draw_dirichlet(G& g, const Eigen::MatrixBase<DerivedA>& alpha, Eigen::MatrixBase<DerivedOut>& out) {
  const Eigen::Index k = alpha.size();
  if (k < 2) throw_invalid("draw_dirichlet", "size of alpha", static_cast<double>(k), "at least 2");
  for (Eigen::Index i = 0; i < k; ++i) check_positive_finite("draw_dirichlet", "alpha", alpha(i));
  out.derived().resize(k);
  double mx = -std::numeric_limits<double>::infinity();
  for (Eigen::Index i = 0; i < k; ++i) {
    out(i) = draw_log_gamma(g, alpha(i));
    mx = std::max(mx, out(i));
  }
  double total = 0.0;
  for (Eigen::Index i = 0; i < k; ++i) {
    out(i) = std::exp(out(i) - mx);
    total += out(i);
  }
  out /= total;
}

/// Returns a Dirichlet(alpha) draw as a new vector of alpha's size.
template <random_engine G, class DerivedA>
inline typename DerivedA::PlainObject draw_dirichlet(G& g, const Eigen::MatrixBase<DerivedA>& alpha) {
  typename DerivedA::PlainObject out(alpha.size());
  draw_dirichlet(g, alpha, out);
  return out;
}

}  // namespace privpost
