// privpost/samplers/cgm/naive_mle.hpp
// The naive baseline of CGM (docs/design-cgm.md Sec. 2.1-2.2, 5.4): the noisy tables y are used as if they were
// the true counts. Targets mu~ = y / N per edge table, raw or (default) each table projected onto the probability simplex
// (Duchi et al. 2008); then the edge log-potentials maximise the per-record objective
//   f(theta) = <theta, mu~> - A(theta) - lambda |theta|^2,   lambda > 0 (required: without it f is unbounded along gauge
// directions whenever the targets are inconsistent, and unbounded at zero cells),
// with node log-potentials held at 0 (only the clique parameters of Eq. 3.1 exist). Solver: accelerated gradient
// ascent, step 1/(|E| + 2 lambda) (a Lipschitz bound: t_R(x) has |E| ones), with gradient-based restart (O'Donoghue &
// Candes 2015). Converged when the model's marginals stop moving, |mu(theta_k) - mu(theta_(k-1))|_inf < tol for
// `patience` consecutive iterations; never on theta (its gauge part drifts at rate lambda while p has converged).
// Given the true tables it is the non-private reference of the experiments (with the same lambda).
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <limits>
#include <utility>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/linalg/accelerated_momentum.hpp"
#include "privpost/core/linalg/simplex_projection.hpp"
#include "privpost/core/numerical_events.hpp"
#include "privpost/families/graphical/pairwise_graph.hpp"

namespace privpost {

/// What the naive MLE fits to: y / N as released, or each table projected onto the simplex first.
enum class naive_targets { projected, raw };

/// Settings of naive_mle.
struct naive_mle_options {
  double lambda = 1e-3;  ///< the L2 regulariser (> 0)
  /// What the fit targets: projected or raw y / N.
  naive_targets targets = naive_targets::projected;
  double tol = 1e-11;  ///< on |mu_k - mu_(k-1)|_inf
  int patience = 10;   ///< consecutive iterations below tol
};

/// The naive MLE as an iterative_estimator for fit().
template <marginal_inference Inference>
class naive_mle {
 public:
  /// graph: the model; y: released edge tables (table_layout(graph).released_size() finite entries); n_records: the
  /// public N; inference: a back end over the same graph. std::invalid_argument for mismatched sizes or bad values
  /// (lambda must be finite and > 0, tol finite and > 0, patience >= 1).
  naive_mle(pairwise_graph graph, const Eigen::VectorXd& y, double n_records, Inference inference, naive_mle_options options = {})
      : graph_(std::move(graph)), layout_(graph_), inference_(std::move(inference)), options_(options) {
    constexpr const char* f = "naive_mle";
    detail::check_edge_release(f, layout_, inference_.layout().size(), y, n_records);
    check_positive_finite(f, "lambda", options_.lambda);
    check_positive_finite(f, "tol", options_.tol);
    if (options_.patience < 1) throw_invalid(f, "patience", options_.patience, "an integer >= 1");
    target_ = y / n_records;
    if (options_.targets == naive_targets::projected) {
      for (int e = 0; e < graph_.num_edges(); ++e) {
        const auto [u, v] = graph_.edge(e);
        const Eigen::Index cells = static_cast<Eigen::Index>(graph_.cardinality(u)) * graph_.cardinality(v);
        project_simplex(target_.segment(layout_.edge_offset(e) - layout_.edges_begin(), cells), 1.0);
      }
    }
    step_ = 1.0 / (graph_.num_edges() + 2.0 * options_.lambda);
    x_.setZero(layout_.size());
    v_ = x_;
  }

  /// One accelerated gradient step.
  iteration_status iterate() {
    const Eigen::Index d = layout_.released_size();
    if (!inference_.marginals(v_, mu_).converged) ++events_.message_passing_nonconverged;
    const double change = iterations_ == 0 ? std::numeric_limits<double>::infinity() : (mu_ - mu_prev_).cwiseAbs().maxCoeff();
    mu_prev_ = mu_;
    ++iterations_;
    streak_ = change < options_.tol ? streak_ + 1 : 0;
    grad_ = target_ - mu_.tail(d) - 2.0 * options_.lambda * v_.tail(d);
    x_next_ = v_;
    x_next_.tail(d) += step_ * grad_;
    momentum_.advance(v_, x_next_, x_);
    x_.swap(x_next_);
    return {converged(), change, 1};
  }

  /// Whether options().patience consecutive iterations stayed below options().tol.
  bool converged() const noexcept { return streak_ >= options_.patience; }
  /// Iterations run.
  int iterations() const noexcept { return iterations_; }
  /// theta-hat, full layout (node log-potentials 0).
  const Eigen::VectorXd& parameter_vector() const noexcept { return x_; }
  /// The targets mu~ (released cells): y / N, projected per table when asked.
  const Eigen::VectorXd& targets() const noexcept { return target_; }
  /// The numerical events so far.
  const numerical_events& events() const noexcept { return events_; }
  /// The settings.
  const naive_mle_options& options() const noexcept { return options_; }

 private:
  pairwise_graph graph_;
  table_layout layout_;
  Inference inference_;
  naive_mle_options options_;
  Eigen::VectorXd target_, x_, x_next_, v_, mu_, mu_prev_, grad_;
  double step_ = 1.0;
  accelerated_momentum momentum_;
  int iterations_ = 0, streak_ = 0;
  numerical_events events_;
};

}  // namespace privpost
