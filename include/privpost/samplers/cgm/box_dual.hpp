// privpost/samplers/cgm/box_dual.hpp
// The exact E-step of CGM-EM (docs/design-cgm.md Sec. 3.5, decision D2): the approximate MAP problem
//   max_{n in N M} theta^T n + H(n) + log p(y | n)
// solved through its dual
//   min_g D(g) = N A(theta + g) - <g, y> + q |g|^2 / 2,   |g_j| <= B,
// with B = 1/b, q = 0 for Laplace noise (Sion's minimax theorem) and B = inf, q = sigma^2 for Gaussian noise. The tilt g
// lives on the released (edge) cells. The primal point of a dual point is n(g) = N mu(theta + g), always in N M and
// strictly positive, and the duality gap D(g) - P(n(g)) reduces to the noise's duality_gap(y - n, g): no entropy is
// evaluated. Solver: FISTA (projected, step 1/L with L = N |E| + q, since t_R(x) has |E| ones) with gradient-based
// restart (O'Donoghue & Candes 2015), stopped when the gap <= gap_tol N (Laplace) or quadratic_gap_tol N (Gaussian).
// At the iteration cap it returns the in-box point of smallest gap it evaluated (the last iterate when none is smaller):
// with loopy_bp the dual need not be convex and FISTA can end far from its best point, which EM would take as a jump.
// With an exact back end a met stopping rule is a certificate of global optimality (`certified`).
// Why two tolerances: with q = sigma^2 > 0 the dual is strongly convex, and the error of n(g) shrinks only like the
// square root of the gap, so a gap of 1e-8 N leaves n off by about 1e-2 counts (N = 435, sigma = 4), and EM, warm-started
// E-step after E-step, drifts at |n_t - n_(t-1)|_1 / N ~ 2e-5 for ever instead of converging; at 1e-12 N the same
// fits converge in under 30 iterations (tests/samplers/cgm_em_test.cpp).
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/linalg/accelerated_momentum.hpp"
#include "privpost/families/graphical/pairwise_graph.hpp"

namespace privpost {

/// Settings of the box-dual E-step.
struct estep_options {
  double gap_tol = 1e-8;             ///< stop when the duality gap is at most gap_tol N (Laplace noise, q = 0)
  double quadratic_gap_tol = 1e-12;  ///< the same for noise with a quadratic dual term (Gaussian, q > 0; see above)
  int max_iterations = 1000;         ///< FISTA iterations (one inference call each); hitting the cap is reported, not thrown
};

/// What one E-step did.
struct estep_result {
  int iterations = 0;                        ///< inference calls made
  bool converged = false;                    ///< the gap rule was met
  bool certified = false;                    ///< converged with an exact back end: n is the global maximiser (to the gap)
  double gap = 0.0;                          ///< the duality gap at the returned point (>= 0)
  double log_partition = 0.0;                ///< A(theta + g) at the returned g (exact or the back end's approximation)
  std::uint64_t inference_nonconverged = 0;  ///< inference calls that reported no convergence
};

/// The box-dual E-step solver; owns its work vectors (no allocation per iteration once sized).
class box_dual_estep {
 public:
  /// graph: the model's graph (its edge count gives the Lipschitz bound); std::invalid_argument for gap_tol or
  /// quadratic_gap_tol not finite and > 0 or max_iterations < 1.
  explicit box_dual_estep(const pairwise_graph& graph, estep_options options = {})
      : tables_(graph.num_edges()), options_(options) {
    check_positive_finite("box_dual_estep", "gap_tol", options.gap_tol);
    check_positive_finite("box_dual_estep", "quadratic_gap_tol", options.quadratic_gap_tol);
    if (options.max_iterations < 1) throw_invalid("box_dual_estep", "max_iterations", options.max_iterations, "an integer >= 1");
  }

  /// The E-step's settings.
  const estep_options& options() const noexcept { return options_; }

  /// Solves the E-step for log-potentials theta (full layout), released tables y, N records and the noise. g is the
  /// dual point on the released cells: used as the warm start when it has y's size (clipped into the box), else
  /// started at 0; on return it is the final dual point, and n (full layout, each table summing to N) its primal point.
  /// tolerance_scale (> 0) multiplies the gap tolerance for this call (cgm_em's inexact early and tightened final
  /// E-steps).
  /// std::invalid_argument for mismatched sizes, non-finite y, theta or warm start, N not finite and > 0, or
  /// tolerance_scale not finite and > 0.
  template <marginal_inference Inference, cgm_noise Noise>
  estep_result solve(Inference& inference, const Eigen::VectorXd& theta, const Eigen::VectorXd& y, double n_records,
                     const Noise& noise, Eigen::VectorXd& g, Eigen::VectorXd& n, double tolerance_scale = 1.0) {
    constexpr const char* f = "box_dual_estep::solve";
    check_positive_finite(f, "tolerance_scale", tolerance_scale);
    const Eigen::Index size = inference.layout().size(), begin = inference.layout().edges_begin(), d = size - begin;
    check_size_match(f, "theta", theta.size(), "table_layout size", size);
    check_size_match(f, "y", y.size(), "released cells (edge tables)", d);
    check_positive_finite(f, "N", n_records);
    for (Eigen::Index j = 0; j < d; ++j) check_finite(f, "released count y_j", y(j));
    const double box = noise.dual_box(), q = noise.dual_quadratic();
    const double lipschitz = n_records * std::max(tables_, 1) + q;
    const double tol = (q > 0.0 ? options_.quadratic_gap_tol : options_.gap_tol) * n_records * tolerance_scale;
    if (g.size() != d) g.setZero(d);
    for (Eigen::Index j = 0; j < d; ++j) check_finite(f, "warm-start dual point g_j", g(j));
    x_prev_ = g.cwiseMax(-box).cwiseMin(box);
    v_ = x_prev_;
    accelerated_momentum momentum;
    estep_result out;
    auto evaluate = [&](const Eigen::VectorXd& point) {
      tilted_ = theta;
      tilted_.tail(d) += point;
      if (!inference.marginals(tilted_, mu_).converged) ++out.inference_nonconverged;
      ++out.iterations;
      n = n_records * mu_;
      r_ = y - n.tail(d);
      return noise.duality_gap(r_, point);
    };
    double best_gap = std::numeric_limits<double>::infinity();
    for (int k = 0; k < options_.max_iterations; ++k) {
      const double gap = evaluate(v_);
      const bool inside = (v_.array().abs() <= box).all();
      if (inside && gap < best_gap) {
        best_gap = gap;
        best_ = v_;
      }
      if (inside && gap <= tol) {
        g = v_;
        out.converged = true;
        out.certified = Inference::is_exact;
        out.gap = std::max(gap, 0.0);
        out.log_partition = inference.log_partition();
        return out;
      }
      // Gradient of D at v: N mu_R - y + q v = -r + q v; projected step; momentum with restart.
      x_ = (v_ + (r_ - q * v_) / lipschitz).cwiseMax(-box).cwiseMin(box);
      momentum.advance(v_, x_, x_prev_);
      x_prev_.swap(x_);
    }
    // Cap reached: report the last projected iterate or, when an earlier in-box point had a smaller gap, that point.
    double gap = evaluate(x_prev_);
    if (best_gap < gap) {
      gap = evaluate(best_);
      x_prev_ = best_;
    }
    out.gap = std::max(gap, 0.0);
    out.converged = gap <= tol;
    out.certified = out.converged && Inference::is_exact;
    g = x_prev_;
    out.log_partition = inference.log_partition();
    return out;
  }

 private:
  int tables_;
  estep_options options_;
  Eigen::VectorXd x_, x_prev_, v_, best_, tilted_, mu_, r_;
};

}  // namespace privpost
