// privpost/core/random/multivariate_normal.hpp
// draw_multivariate_normal: x = mean + L e for a lower Cholesky factor L of the covariance and standard normal e;
// written into a caller-provided vector so samplers can reuse storage inside a sweep.
#pragma once

#include <Eigen/Core>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/random/normal.hpp"

namespace privpost {

/// out = mean + L e with e ~ N(0, I): a draw of N(mean, L L^T). Only the lower triangle of L is read.
template <random_engine G, class DerivedM, class DerivedL, class DerivedOut>
inline void draw_multivariate_normal(G& g, const Eigen::MatrixBase<DerivedM>& mean,
                                     const Eigen::MatrixBase<DerivedL>& cholesky_lower, Eigen::MatrixBase<DerivedOut>& out) {
  const Eigen::Index d = mean.size();
  check_size_match("draw_multivariate_normal", "mean", d, "cholesky_lower rows", cholesky_lower.rows());
  check_size_match("draw_multivariate_normal", "mean", d, "cholesky_lower cols", cholesky_lower.cols());
  out.derived().resize(d);
  for (Eigen::Index i = 0; i < d; ++i) out(i) = draw_normal(g);
  out = mean + cholesky_lower.template triangularView<Eigen::Lower>() * out;
}

/// Returns a draw of N(mean, L L^T).
template <random_engine G, class DerivedM, class DerivedL>
inline typename DerivedM::PlainObject draw_multivariate_normal(G& g, const Eigen::MatrixBase<DerivedM>& mean,
                                                               const Eigen::MatrixBase<DerivedL>& cholesky_lower) {
  typename DerivedM::PlainObject out(mean.size());
  draw_multivariate_normal(g, mean, cholesky_lower, out);
  return out;
}

}  // namespace privpost
