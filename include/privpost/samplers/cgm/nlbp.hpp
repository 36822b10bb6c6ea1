// privpost/samplers/cgm/nlbp.hpp
// Non-linear belief propagation, the E-step of the text (docs/design-cgm.md Sec. 3.4, Algorithm 1; Sun et al. 2015),
// kept as the paper's method beside the exact box dual (box_dual.hpp, the default, decision D2):
//   theta' = theta + grad_n log p(y | n)     (released cells only; Laplace: sign(y - n)/b, 0 at ties)
//   n'     = N mu(theta')                    (one inference call)
//   n      = (1 - alpha_k) n + alpha_k n'
// Every iterate stays in N M (a convex combination of inference outputs; in the local polytope with loopy_bp). Its fixed
// points n = N mu(theta + g), g in the evidence's superdifferential at n, are the KKT conditions of the E-step for the
// back end's entropy: the exact one with an exact back end (tree_bp, junction_tree, brute force) on any graph, the Bethe
// one with loopy_bp (docs/design-cgm.md Sec. 3.4, 3.7). With the Laplace kink a constant alpha
// chatters around cells where n_j = y_j and never settles; the diminishing alpha_k = alpha_0 / (1 + k / kappa) (default)
// averages the chatter. Stops when max over tables |n_(k+1),C - n_k,C|_1 / N < tol or at max_iterations (reported, not
// thrown). Nothing certifies the result: compare it with the box dual.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cstdint>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/families/graphical/pairwise_graph.hpp"

namespace privpost {

/// Settings of the NLBP E-step (the spec's defaults).
struct nlbp_options {
  double alpha0 = 0.5;        ///< damping alpha_0 in (0, 1]
  double kappa = 20.0;        ///< the diminishing rule's time scale (> 0)
  bool diminishing = true;    ///< alpha_k = alpha_0 / (1 + k / kappa); false: constant alpha_0 (the text, literally)
  double tol = 1e-9;          ///< on the largest per-table L1 change divided by N
  int max_iterations = 2000;  ///< inference calls at most
};

/// What one NLBP solve did.
struct nlbp_result {
  int iterations = 0;      ///< inference calls made
  bool converged = false;  ///< the change rule was met
  double change = 0.0;     ///< the last largest per-table L1 change / N
  /// Inference calls that reported non-convergence.
  std::uint64_t inference_nonconverged = 0;
};

/// The NLBP E-step solver; owns its work vectors.
class nlbp_estep {
 public:
  /// std::invalid_argument for alpha0 outside (0, 1], kappa not finite and > 0, tol not finite and > 0, or
  /// max_iterations < 1.
  explicit nlbp_estep(const pairwise_graph& graph, nlbp_options options = {})
      : graph_(graph), layout_(graph_), options_(options) {
    constexpr const char* f = "nlbp_estep";
    if (!(options.alpha0 > 0.0 && options.alpha0 <= 1.0)) throw_invalid(f, "alpha0", options.alpha0, "a number in (0, 1]");
    check_positive_finite(f, "kappa", options.kappa);
    check_positive_finite(f, "tol", options.tol);
    if (options.max_iterations < 1) throw_invalid(f, "max_iterations", options.max_iterations, "an integer >= 1");
  }

  /// The settings.
  const nlbp_options& options() const noexcept { return options_; }

  /// Runs NLBP for log-potentials theta (full layout), released tables y, N records and the noise. n (full layout) is
  /// the warm start when it has the layout's size, else NLBP starts at N mu(theta); on return it holds the last
  /// iterate. std::invalid_argument for mismatched sizes, non-finite y or N not finite and > 0.
  template <marginal_inference Inference, cgm_noise Noise>
  nlbp_result solve(Inference& inference, const Eigen::VectorXd& theta, const Eigen::VectorXd& y, double n_records,
                    const Noise& noise, Eigen::VectorXd& n) {
    constexpr const char* f = "nlbp_estep::solve";
    const Eigen::Index size = inference.layout().size(), begin = inference.layout().edges_begin(), d = size - begin;
    check_size_match(f, "inference layout", size, "table_layout(graph) size", layout_.size());
    check_size_match(f, "theta", theta.size(), "table_layout size", size);
    check_size_match(f, "y", y.size(), "released cells (edge tables)", d);
    check_positive_finite(f, "N", n_records);
    for (Eigen::Index j = 0; j < d; ++j) check_finite(f, "released count y_j", y(j));
    nlbp_result out;
    if (n.size() != size) {
      if (!inference.marginals(theta, mu_).converged) ++out.inference_nonconverged;
      ++out.iterations;
      n = n_records * mu_;
    }
    for (int k = 0; out.iterations < options_.max_iterations; ++k) {
      noise.supergradient(y, n.tail(d), tilt_);
      tilted_ = theta;
      tilted_.tail(d) += tilt_;
      if (!inference.marginals(tilted_, mu_).converged) ++out.inference_nonconverged;
      ++out.iterations;
      const double alpha = options_.diminishing ? options_.alpha0 / (1.0 + k / options_.kappa) : options_.alpha0;
      step_ = alpha * (n_records * mu_ - n);
      n += step_;
      out.change = largest_table_change() / n_records;
      if (out.change < options_.tol) {
        out.converged = true;
        break;
      }
    }
    return out;
  }

 private:
  double largest_table_change() const {
    double largest = 0.0;
    for (int v = 0; v < graph_.num_nodes(); ++v)
      largest = std::max(largest, step_.segment(layout_.node_offset(v), graph_.cardinality(v)).lpNorm<1>());
    for (int e = 0; e < graph_.num_edges(); ++e) {
      const auto [u, v] = graph_.edge(e);
      const Eigen::Index cells = static_cast<Eigen::Index>(graph_.cardinality(u)) * graph_.cardinality(v);
      largest = std::max(largest, step_.segment(layout_.edge_offset(e), cells).lpNorm<1>());
    }
    return largest;
  }

  pairwise_graph graph_;
  table_layout layout_;
  nlbp_options options_;
  Eigen::VectorXd tilt_, tilted_, mu_, step_;
};

}  // namespace privpost
