// privpost/families/graphical/tree_bp.hpp
// tree_bp: exact sum-product belief propagation on a forest (docs/design-cgm.md Sec. 5.1-5.4): one upward and one downward
// pass of log-space messages (log-sum-exp with a max shift), node and edge marginals and the exact log partition
// function. Messages and beliefs live in buffers sized at construction: marginals() allocates nothing once mu has its
// size.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "privpost/core/errors.hpp"
#include "privpost/families/graphical/brute_force.hpp"
#include "privpost/families/graphical/pairwise_graph.hpp"

namespace privpost {

/// Exact marginals and log Z of a pairwise MRF whose graph is a forest (std::invalid_argument for a graph with a
/// cycle). Each component is rooted at its smallest node and visited breadth first.
class tree_bp {
 public:
  /// Exact marginals on a forest.
  static constexpr bool is_exact = true;

  /// The back end for a forest graph; std::invalid_argument when graph is not a forest.
  explicit tree_bp(pairwise_graph graph) : graph_(std::move(graph)), layout_(graph_) {
    forest_traversal f = breadth_first_forest(graph_, "tree_bp");
    order_ = std::move(f.order);
    roots_ = std::move(f.roots);
    parent_ = std::move(f.parent);
    parent_edge_ = std::move(f.parent_edge);
    const int t = graph_.num_nodes();
    // up: the message of each non-root node to its parent (K_parent entries); acc, full, down: per node (K_v).
    up_offset_.assign(static_cast<std::size_t>(t), 0);
    Eigen::Index at = 0;
    for (int v = 0; v < t; ++v) {
      up_offset_[static_cast<std::size_t>(v)] = at;
      if (parent_[static_cast<std::size_t>(v)] >= 0) at += graph_.cardinality(parent_[static_cast<std::size_t>(v)]);
    }
    up_.setZero(at);
    const Eigen::Index nodes = layout_.edges_begin();
    acc_.setZero(nodes);
    full_.setZero(nodes);
    down_.setZero(nodes);
  }

  /// Node and edge marginals of p(x) proportional to exp(sum_v theta_v(x_v) + sum_(u,v) theta_uv(x_u, x_v)) into mu
  /// (table_layout order); theta must have layout().size() finite entries (std::invalid_argument otherwise).
  inference_report marginals(const Eigen::VectorXd& theta, Eigen::VectorXd& mu) {
    detail::check_log_potentials("tree_bp::marginals", layout_, theta);
    const Eigen::Index nodes = layout_.edges_begin();
    acc_ = theta.head(nodes);
    // Upward pass, leaves first: up_v(x_p) = LSE_{x_v} [theta_pv(x_p, x_v) + acc_v(x_v)].
    for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
      const int v = *it, p = parent_[static_cast<std::size_t>(v)];
      if (p < 0) continue;
      const int kv = graph_.cardinality(v), kp = graph_.cardinality(p);
      const Eigen::Index av = layout_.node_offset(v), ap = layout_.node_offset(p), uo = up_offset_[static_cast<std::size_t>(v)];
      for (int xp = 0; xp < kp; ++xp) {
        double top = -std::numeric_limits<double>::infinity();
        for (int xv = 0; xv < kv; ++xv) top = std::max(top, edge_potential(theta, v, xp, xv) + acc_(av + xv));
        double sum = 0.0;
        for (int xv = 0; xv < kv; ++xv) sum += std::exp(edge_potential(theta, v, xp, xv) + acc_(av + xv) - top);
        up_(uo + xp) = top + std::log(sum);
        acc_(ap + xp) += up_(uo + xp);
      }
    }
    log_z_ = 0.0;
    for (const int r : roots_) log_z_ += detail::log_sum_exp(acc_.segment(layout_.node_offset(r), graph_.cardinality(r)));
    // Downward pass, roots first: full_v = acc_v + down_v, down_v(x_v) = LSE_{x_p} [theta_pv + full_p - up_v].
    for (const int v : order_) {
      const int p = parent_[static_cast<std::size_t>(v)];
      const int kv = graph_.cardinality(v);
      const Eigen::Index av = layout_.node_offset(v);
      if (p < 0) {
        full_.segment(av, kv) = acc_.segment(av, kv);
        continue;
      }
      const int kp = graph_.cardinality(p);
      const Eigen::Index ap = layout_.node_offset(p), uo = up_offset_[static_cast<std::size_t>(v)];
      for (int xv = 0; xv < kv; ++xv) {
        double top = -std::numeric_limits<double>::infinity();
        for (int xp = 0; xp < kp; ++xp) top = std::max(top, edge_potential(theta, v, xp, xv) + full_(ap + xp) - up_(uo + xp));
        double sum = 0.0;
        for (int xp = 0; xp < kp; ++xp) sum += std::exp(edge_potential(theta, v, xp, xv) + full_(ap + xp) - up_(uo + xp) - top);
        down_(av + xv) = top + std::log(sum);
        full_(av + xv) = acc_(av + xv) + down_(av + xv);
      }
    }
    // Marginals: node beliefs full_v; edge beliefs theta_pv + (full_p - up_v) + acc_v, each normalised.
    mu.resize(layout_.size());
    for (int v = 0; v < graph_.num_nodes(); ++v) {
      const Eigen::Index av = layout_.node_offset(v);
      const int kv = graph_.cardinality(v);
      const double lz = detail::log_sum_exp(full_.segment(av, kv));
      for (int x = 0; x < kv; ++x) mu(av + x) = std::exp(full_(av + x) - lz);
    }
    for (const int v : order_) {
      const int p = parent_[static_cast<std::size_t>(v)];
      if (p < 0) continue;
      const int e = parent_edge_[static_cast<std::size_t>(v)], kv = graph_.cardinality(v), kp = graph_.cardinality(p);
      const Eigen::Index av = layout_.node_offset(v), ap = layout_.node_offset(p), uo = up_offset_[static_cast<std::size_t>(v)];
      const bool parent_first = graph_.edge(e).first == p;
      const Eigen::Index eo = layout_.edge_offset(e);
      auto at = [&](int xp, int xv) { return eo + (parent_first ? xp * kv + xv : xv * kp + xp); };
      double top = -std::numeric_limits<double>::infinity();
      for (int xp = 0; xp < kp; ++xp)
        for (int xv = 0; xv < kv; ++xv) {
          const double b = theta(at(xp, xv)) + full_(ap + xp) - up_(uo + xp) + acc_(av + xv);
          mu(at(xp, xv)) = b;
          top = std::max(top, b);
        }
      double sum = 0.0;
      for (int xp = 0; xp < kp; ++xp)
        for (int xv = 0; xv < kv; ++xv) sum += std::exp(mu(at(xp, xv)) - top);
      const double lz = top + std::log(sum);
      for (int xp = 0; xp < kp; ++xp)
        for (int xv = 0; xv < kv; ++xv) mu(at(xp, xv)) = std::exp(mu(at(xp, xv)) - lz);
    }
    return {1, true, 0.0};
  }

  /// log Z of the last marginals() call (exact).
  double log_partition() const noexcept { return log_z_; }
  /// The graph.
  const pairwise_graph& graph() const noexcept { return graph_; }
  /// The layout of the marginal vector.
  const table_layout& layout() const noexcept { return layout_; }

 private:
  // theta_e(x_p, x_v) for the edge joining non-root v to its parent p.
  double edge_potential(const Eigen::VectorXd& theta, int v, int xp, int xv) const {
    const int e = parent_edge_[static_cast<std::size_t>(v)];
    const int p = parent_[static_cast<std::size_t>(v)];
    const Eigen::Index eo = layout_.edge_offset(e);
    return graph_.edge(e).first == p ? theta(eo + static_cast<Eigen::Index>(xp) * graph_.cardinality(v) + xv)
                                     : theta(eo + static_cast<Eigen::Index>(xv) * graph_.cardinality(p) + xp);
  }

  pairwise_graph graph_;
  table_layout layout_;
  std::vector<int> order_, roots_, parent_, parent_edge_;
  std::vector<Eigen::Index> up_offset_;
  Eigen::VectorXd up_, acc_, full_, down_;
  double log_z_ = 0.0;
};

}  // namespace privpost
