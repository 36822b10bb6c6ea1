// privpost/samplers/cgm/m_step.hpp
// exact_moment_matching: the exact MLE of a pairwise MRF on any graph, theta = argmax <theta, mu_bar> - A(theta), for
// target marginals mu_bar in the interior of the marginal polytope (docs/design-cgm.md Sec. 3.6-3.7: CGM's M-step with
// pseudo-counts on graphs with cycles, run with an exact back end such as junction_tree). On forests the closed form of
// moments.hpp is exact and this solver is not needed; with loopy_bp the closed form is the Bethe MLE.
//
// Method: accelerated gradient ascent (FISTA with gradient restart, core/linalg/accelerated_momentum.hpp) over all node
// and edge log-potentials; the gradient is mu_bar - mu(theta), Lipschitz with constant at most T + |E| (the
// sufficient statistic is T + |E| one-hot indicators), so the step is 1 / (T + |E|). Warm-started from the theta passed
// in (CGM-EM passes the previous iterate). Stops when the largest |mu(theta) - mu_bar| over all cells is below tol, or
// after max_iterations (reported, not thrown).
#pragma once

#include <Eigen/Core>
#include <cmath>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/linalg/accelerated_momentum.hpp"
#include "privpost/families/graphical/pairwise_graph.hpp"

namespace privpost {

/// Settings of exact_moment_matching.
struct moment_matching_options {
  double tol = 1e-9;           ///< stop when max |mu(theta) - mu_bar| < tol (all node and edge cells)
  int max_iterations = 20000;  ///< cap on gradient steps (one inference call each)
};

/// What one solve reports.
struct moment_matching_result {
  /// Iterations run.
  int iterations = 0;
  /// Whether the tolerance was met before the cap.
  bool converged = false;
  double max_error = 0.0;          ///< max |mu(theta) - mu_bar| at the returned theta
  int inference_nonconverged = 0;  ///< inference calls that reported non-convergence (approximate back ends)
};

/// The exact moment-matching M-step (see the file comment). solve() allocates nothing once its vectors are sized.
class exact_moment_matching {
 public:
  /// The M-step for graph's model with these settings.
  explicit exact_moment_matching(const pairwise_graph& graph, moment_matching_options options = {})
      : layout_(graph), step_(1.0 / (graph.num_nodes() + graph.num_edges())), options_(options) {
    check_positive_finite("exact_moment_matching", "tol", options_.tol);
    if (options_.max_iterations < 1)
      throw_invalid("exact_moment_matching", "max_iterations", options_.max_iterations, "an integer >= 1");
  }

  /// theta (in: the start, layout size, finite; out: the MLE) for target marginals mu_bar (layout size, every cell
  /// finite and > 0, as CGM's pseudo-count marginals are). std::invalid_argument for wrong sizes or bad values.
  template <marginal_inference Inference>
  moment_matching_result solve(Inference& inference, const Eigen::VectorXd& mu_bar, Eigen::VectorXd& theta) {
    constexpr const char* f = "exact_moment_matching::solve";
    check_size_match(f, "mu_bar", mu_bar.size(), "table_layout size", layout_.size());
    check_size_match(f, "theta", theta.size(), "table_layout size", layout_.size());
    check_size_match(f, "inference layout", inference.layout().size(), "table_layout size", layout_.size());
    for (Eigen::Index i = 0; i < mu_bar.size(); ++i)
      if (!(mu_bar(i) > 0.0 && mu_bar(i) <= 1.0)) throw_invalid(f, "target marginal mu_bar_i", mu_bar(i), "a number in (0, 1]");
    for (Eigen::Index i = 0; i < theta.size(); ++i) check_finite(f, "theta_i", theta(i));
    moment_matching_result r;
    momentum_.reset();
    x_ = theta;
    v_ = theta;
    for (r.iterations = 1; r.iterations <= options_.max_iterations; ++r.iterations) {
      if (!inference.marginals(v_, mu_).converged) ++r.inference_nonconverged;
      grad_ = mu_bar - mu_;
      r.max_error = grad_.cwiseAbs().maxCoeff();
      if (r.max_error < options_.tol) {
        r.converged = true;
        theta = v_;
        return r;
      }
      x_next_ = v_ + step_ * grad_;
      momentum_.advance(v_, x_next_, x_);
      x_.swap(x_next_);
    }
    // Capped: return the last gradient-step result and its error (one more inference call).
    r.iterations = options_.max_iterations;
    theta = x_;
    if (!inference.marginals(theta, mu_).converged) ++r.inference_nonconverged;
    r.max_error = (mu_bar - mu_).cwiseAbs().maxCoeff();
    return r;
  }

  /// The settings.
  const moment_matching_options& options() const noexcept { return options_; }

 private:
  table_layout layout_;
  double step_;
  moment_matching_options options_;
  accelerated_momentum momentum_;
  Eigen::VectorXd x_, x_next_, v_, mu_, grad_;
};

}  // namespace privpost
