// privpost/families/graphical/brute_force.hpp
// brute_force_inference: exact log partition function and node and edge marginals of a pairwise MRF by enumerating
// every configuration (docs/design-cgm.md Sec. 5.1; the reference the other inference back ends are tested against). For
// small models: prod_v K_v <= 2^24.
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "privpost/core/errors.hpp"
#include "privpost/core/math/log_sum_exp.hpp"
#include "privpost/families/graphical/pairwise_graph.hpp"

namespace privpost {

/// What a marginal-inference call reports (exact back ends: one pass, converged).
struct inference_report {
  /// Iterations run (0 for the exact back ends).
  int iterations = 0;
  /// Whether the back end converged (always for the exact ones).
  bool converged = true;
  /// Largest message change at the last iteration (0 for the exact back ends).
  double max_residual = 0.0;
};

namespace detail {
// Checks theta's size against the layout and that every entry is finite (std::invalid_argument otherwise).
inline void check_log_potentials(const char* f, const table_layout& layout, const Eigen::VectorXd& theta) {
  check_size_match(f, "theta", theta.size(), "table_layout size (node and edge tables)", layout.size());
  for (Eigen::Index i = 0; i < theta.size(); ++i)
    if (!std::isfinite(theta(i))) throw_invalid(f, "log-potential theta_i", theta(i), "a finite number");
}
}  // namespace detail

/// Exact inference by enumeration: marginals(theta, mu) writes p(x_v = a) and p(x_u = a, x_v = c) into mu (layout of
/// table_layout) for p(x) proportional to exp(sum_v theta_v(x_v) + sum_(u,v) theta_uv(x_u, x_v)), and log_partition()
/// gives log Z of that call. The constructor throws std::invalid_argument when prod_v K_v exceeds 2^24.
class brute_force_inference {
 public:
  /// Exact marginals.
  static constexpr bool is_exact = true;

  /// The back end for graph; std::invalid_argument when it has more than 2^24 joint configurations.
  explicit brute_force_inference(pairwise_graph graph) : graph_(std::move(graph)), layout_(graph_) {
    double states = 1.0;
    for (int v = 0; v < graph_.num_nodes(); ++v) states *= graph_.cardinality(v);
    if (states > static_cast<double>(1 << 24))
      throw_invalid("brute_force_inference", "number of configurations", states, "at most 2^24 (prod_v K_v)");
    x_.assign(static_cast<std::size_t>(graph_.num_nodes()), 0);
  }

  /// The marginals mu of the model with log-potentials theta, by enumeration of every joint state.
  inference_report marginals(const Eigen::VectorXd& theta, Eigen::VectorXd& mu) {
    detail::check_log_potentials("brute_force_inference::marginals", layout_, theta);
    mu.setZero(layout_.size());
    // Two passes: the largest log weight first (a shift that keeps exp finite), then the sums.
    double top = -std::numeric_limits<double>::infinity();
    enumerate(theta, [&](double w) { top = std::max(top, w); });
    double total = 0.0;
    enumerate(theta, [&](double w) {
      const double p = std::exp(w - top);
      total += p;
      for (int v = 0; v < graph_.num_nodes(); ++v) mu(layout_.node_offset(v) + x_[static_cast<std::size_t>(v)]) += p;
      for (int e = 0; e < graph_.num_edges(); ++e) mu(cell(e)) += p;
    });
    mu /= total;
    log_z_ = top + std::log(total);
    return {1, true, 0.0};
  }

  /// log Z of the last marginals() call.
  double log_partition() const noexcept { return log_z_; }
  /// The graph.
  const pairwise_graph& graph() const noexcept { return graph_; }
  /// The layout of the marginal vector.
  const table_layout& layout() const noexcept { return layout_; }

 private:
  Eigen::Index cell(int e) const {
    const auto [u, v] = graph_.edge(e);
    return layout_.edge_offset(e) + static_cast<Eigen::Index>(x_[static_cast<std::size_t>(u)]) * graph_.cardinality(v) +
           x_[static_cast<std::size_t>(v)];
  }
  // Calls f(log weight) for every configuration x_ in odometer order (node 0 fastest).
  template <class F>
  void enumerate(const Eigen::VectorXd& theta, F&& f) {
    std::fill(x_.begin(), x_.end(), 0);
    while (true) {
      f(log_weight(theta));
      int v = 0;
      while (v < graph_.num_nodes() && ++x_[static_cast<std::size_t>(v)] == graph_.cardinality(v))
        x_[static_cast<std::size_t>(v++)] = 0;
      if (v == graph_.num_nodes()) return;
    }
  }
  double log_weight(const Eigen::VectorXd& t) const {
    double w = 0.0;
    for (int v = 0; v < graph_.num_nodes(); ++v) w += t(layout_.node_offset(v) + x_[static_cast<std::size_t>(v)]);
    for (int e = 0; e < graph_.num_edges(); ++e) w += t(cell(e));
    return w;
  }

  pairwise_graph graph_;
  table_layout layout_;
  std::vector<int> x_;
  double log_z_ = 0.0;
};

}  // namespace privpost
