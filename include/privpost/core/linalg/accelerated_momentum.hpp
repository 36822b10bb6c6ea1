// privpost/core/linalg/accelerated_momentum.hpp
// Nesterov's momentum for accelerated (projected) gradient methods (FISTA, Beck & Teboulle 2009) with the gradient
// restart of O'Donoghue & Candes (2015): the momentum is dropped whenever the last step (from v to x) points against
// the direction of travel (x - x_prev). One implementation for the library's first-order solvers (CGM's box-dual
// E-step and naive MLE).
#pragma once

#include <cmath>

namespace privpost {

/// The momentum state of one accelerated run.
class accelerated_momentum {
 public:
  /// v: the point the (projected) gradient step was taken from; x: its result; x_prev: the previous iterate. Writes the
  /// next evaluation point into v: x itself after a restart, else x + (t_k - 1)/t_(k+1) (x - x_prev). Works for
  /// minimisation and maximisation alike (the step direction is x - v either way). Allocation-free for sized vectors.
  template <class V>
  void advance(V& v, const V& x, const V& x_prev) {
    if ((v - x).dot(x - x_prev) > 0.0) {
      t_ = 1.0;
      v = x;
      return;
    }
    const double t_next = 0.5 * (1.0 + std::sqrt(1.0 + 4.0 * t_ * t_));
    v = x + ((t_ - 1.0) / t_next) * (x - x_prev);
    t_ = t_next;
  }
  /// Forget the momentum (a fresh start).
  void reset() noexcept { t_ = 1.0; }

 private:
  double t_ = 1.0;
};

}  // namespace privpost
