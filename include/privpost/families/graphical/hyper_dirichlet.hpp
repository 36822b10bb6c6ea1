// privpost/families/graphical/hyper_dirichlet.hpp
// hyper_dirichlet: the conjugate prior of a tree (forest) MRF's marginals (Dawid & Lauritzen 1993; docs/design-cgm.md Sec. 6),
// the prior of the Bayesian CGM (families/graphical/tree_cgm_model.hpp). With equivalent sample size alpha_0 every
// edge cell carries the pseudo-count alpha_0 / (K_u K_v) (so every node cell alpha_0 / K_v, consistently across edges);
// a draw takes each component's root marginal ~ Dir(its pseudo-counts) and, for every edge (u -> v) directed away from
// the root and every state a of u, the conditional row P(x_v = . | x_u = a) ~ Dir(alpha_uv(a, .)). By the Dirichlet's
// aggregation property the root's first edge table is then Dir(alpha_root edge), the spec's form. Edge tables of N
// records add to the pseudo-counts (posterior()), which stay consistent.
//
//   hyper_dirichlet prior(chain_graph(4, 2), 4.0);                 // alpha_0 = K^2
//   Eigen::VectorXd mu = prior.draw(engine);                       // node and edge marginals, table_layout order
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/random/dirichlet.hpp"
#include "privpost/families/graphical/pairwise_graph.hpp"

namespace privpost {

namespace detail {
// What the tree CGM's prior, model and support share about one forest: its graph, table layout and edges directed
// away from the roots. Built once and shared (copies of the prior and the model cost a pointer, not the graph).
struct forest_tables {
  pairwise_graph graph;
  table_layout layout;
  forest_traversal visit;
  std::vector<oriented_edge> edges;  // breadth-first; a root's first entry is its "root edge"
  std::vector<char> root_edge;       // per entry of edges: 1 when it is its root's first edge
  int k_max = 0;

  forest_tables(pairwise_graph g, std::string_view who)
      : graph(std::move(g)), layout(graph), visit(breadth_first_forest(graph, who)), edges(oriented_edges(graph, layout, visit)) {
    for (int v = 0; v < graph.num_nodes(); ++v) {
      if (graph.incident(v).empty())
        throw_invalid(who, "node in no edge", v,
                      "a forest whose every node is in an edge (an isolated node's table is not released)");
      k_max = std::max(k_max, graph.cardinality(v));
    }
    root_edge.assign(edges.size(), 0);
    std::vector<char> seen(static_cast<std::size_t>(graph.num_nodes()), 0);
    for (std::size_t i = 0; i < edges.size(); ++i) {
      const int u = edges[i].parent;
      if (visit.parent[static_cast<std::size_t>(u)] < 0 && !seen[static_cast<std::size_t>(u)]) {
        seen[static_cast<std::size_t>(u)] = 1;
        root_edge[i] = 1;
      }
    }
  }
  // Released (edge) cells.
  Eigen::Index released() const noexcept { return layout.released_size(); }
  // The index in the released vector of a cell given in table_layout order.
  Eigen::Index released_index(Eigen::Index cell) const noexcept { return cell - layout.edges_begin(); }
  // The count of x_u = a read off an edge table `t` (released order) whose parent or child end is u.
  double parent_margin(const Eigen::VectorXd& t, const oriented_edge& oe, int a) const {
    double total = 0.0;
    for (int c = 0; c < oe.k_child; ++c) total += t(released_index(oe.cell(a, c)));
    return total;
  }
  double child_margin(const Eigen::VectorXd& t, const oriented_edge& oe, int c) const {
    double total = 0.0;
    for (int a = 0; a < oe.k_parent; ++a) total += t(released_index(oe.cell(a, c)));
    return total;
  }
};
}  // namespace detail

/// The hyper-Dirichlet prior (or posterior) of a forest MRF's marginals. Value type; copies share the graph. draw() is
/// const but uses per-object scratch: one object must not be drawn from by two threads at once (each chain has its own).
class hyper_dirichlet {
 public:
  /// The prior with equivalent sample size alpha_0 (> 0, finite): pseudo-count alpha_0 / (K_u K_v) in every edge cell.
  /// std::invalid_argument for alpha_0 outside (0, inf), a graph with a cycle, or a node in no edge.
  hyper_dirichlet(pairwise_graph graph, double alpha0)
      : tables_(std::make_shared<const detail::forest_tables>(std::move(graph), "hyper_dirichlet")) {
    check_positive_finite("hyper_dirichlet", "alpha_0 (equivalent sample size)", alpha0);
    pseudo_counts_.resize(tables_->released());
    for (int e = 0; e < tables_->graph.num_edges(); ++e) {
      const auto [u, v] = tables_->graph.edge(e);
      const int cells = tables_->graph.cardinality(u) * tables_->graph.cardinality(v);
      pseudo_counts_.segment(tables_->released_index(tables_->layout.edge_offset(e)), cells)
          .setConstant(alpha0 / static_cast<double>(cells));
    }
    size_scratch();
  }

  /// @{
  /// The graph, its table layout, and the pseudo-count tables (edge tables in table_layout order, released part).
  const pairwise_graph& graph() const noexcept { return tables_->graph; }
  const table_layout& layout() const noexcept { return tables_->layout; }
  const Eigen::VectorXd& pseudo_counts() const noexcept { return pseudo_counts_; }
  /// @}
  /// The total pseudo-count of every table (alpha_0 for the prior, alpha_0 + N for a posterior).
  double total() const noexcept {
    const auto& oe = tables_->edges.front();
    return pseudo_counts_.segment(tables_->released_index(oe.offset), oe.k_parent * oe.k_child).sum();
  }

  /// The posterior given the edge tables s of n records (released order, every entry >= 0 and finite): the pseudo-counts
  /// plus s. std::invalid_argument for a size mismatch or a negative or non-finite count.
  hyper_dirichlet posterior(const Eigen::VectorXd& s) const {
    hyper_dirichlet out = *this;
    posterior(s, out);
    return out;
  }
  /// The posterior written into `out` (a copy of a prior of the same graph), reusing its storage.
  void posterior(const Eigen::VectorXd& s, hyper_dirichlet& out) const {
    constexpr const char* f = "hyper_dirichlet::posterior";
    check_size_match(f, "edge tables s", s.size(), "released cells of the graph", pseudo_counts_.size());
    for (Eigen::Index i = 0; i < s.size(); ++i)
      if (!(s(i) >= 0.0 && std::isfinite(s(i)))) throw_invalid(f, "count s_" + std::to_string(i), s(i), "a finite count >= 0");
    if (out.tables_ != tables_) {
      out.tables_ = tables_;
      out.size_scratch();
    }
    out.pseudo_counts_ = pseudo_counts_ + s;
  }

  /// The posterior mean of the marginals (table_layout order): every table's pseudo-counts over total().
  Eigen::VectorXd mean() const {
    Eigen::VectorXd mu = Eigen::VectorXd::Zero(tables_->layout.size());
    const double t = total();
    mu.tail(tables_->released()) = pseudo_counts_ / t;
    for (const oriented_edge& oe : tables_->edges)
      for (int c = 0; c < oe.k_child; ++c)
        mu(tables_->layout.node_offset(oe.child) + c) = tables_->child_margin(pseudo_counts_, oe, c) / t;
    for (std::size_t i = 0; i < tables_->edges.size(); ++i) {
      if (!tables_->root_edge[i]) continue;
      const oriented_edge& oe = tables_->edges[i];
      for (int a = 0; a < oe.k_parent; ++a)
        mu(tables_->layout.node_offset(oe.parent) + a) = tables_->parent_margin(pseudo_counts_, oe, a) / t;
    }
    return mu;
  }

  /// The prior's independent blocks (blocked_prior): every component's root marginal and every conditional row
  /// P(x_v = . | x_u = a) of an edge directed away from its root.
  int blocks() const noexcept { return static_cast<int>(blocks_.size()); }

  /// Redraws block b of the marginals mu (a consistent table_layout vector, as draw() writes) from its Dirichlet and
  /// keeps every other block: the other conditional rows are read off mu (mu_uv(a, .) / mu_u(a)), and mu is rebuilt from
  /// the root down. A row whose parent state has probability 0 in mu is undetermined by it and is drawn from its
  /// Dirichlet too. std::invalid_argument for b outside [0, blocks()) or mu of the wrong size.
  template <random_engine G>
  void draw_block(G& g, int b, Eigen::VectorXd& mu) const {
    constexpr const char* f = "hyper_dirichlet::draw_block";
    if (b < 0 || b >= blocks()) throw_invalid(f, "block", b, "an index in [0, blocks())");
    const auto& t = *tables_;
    check_size_match(f, "marginals mu", mu.size(), "the graph's table layout", t.layout.size());
    old_ = mu;
    const block target = blocks_[static_cast<std::size_t>(b)];
    forward_pass(g, mu, [&](std::size_t i, int a) {
      if (target.edge == static_cast<int>(i) && target.parent_state == a) return true;
      return a >= 0 && !(old_(t.layout.node_offset(t.edges[i].parent) + a) > 0.0);  // an undetermined row
    });
  }

  /// One draw of the node and edge marginals (table_layout order; consistent, every table sums to 1).
  template <random_engine G>
  Eigen::VectorXd draw(G& g) const {
    Eigen::VectorXd mu;
    draw(g, mu);
    return mu;
  }
  /// One draw written into mu (resized once; no allocation afterwards).
  template <random_engine G>
  void draw(G& g, Eigen::VectorXd& mu) const {
    if (mu.size() != tables_->layout.size()) mu.resize(tables_->layout.size());
    forward_pass(g, mu, [](std::size_t, int) { return true; });
  }

 private:
  friend class tree_cgm_model;
  void size_scratch() {
    alpha_.setZero(tables_->k_max);
    row_.setZero(tables_->k_max);
    blocks_.clear();
    for (std::size_t i = 0; i < tables_->edges.size(); ++i) {
      if (tables_->root_edge[i]) blocks_.push_back({static_cast<int>(i), -1});
      for (int a = 0; a < tables_->edges[i].k_parent; ++a) blocks_.push_back({static_cast<int>(i), a});
    }
  }
  // The forward pass draw() and draw_block() share: edge by edge (roots first, as edges are ordered), the root marginal
  // (a = -1, root edges only) and then every conditional row P(x_v = . | x_u = a), each drawn from its Dirichlet where
  // redraw(edge, a) is true and otherwise read off old_ (the root's marginal, or mu_uv(a, .) / mu_u(a)); mu is rebuilt
  // from the root down. The random draws come in the same order as ever (fixed-seed results depend on it).
  template <random_engine G, class Redraw>
  void forward_pass(G& g, Eigen::VectorXd& mu, Redraw redraw) const {
    const auto& t = *tables_;
    mu.head(t.layout.edges_begin()).setZero();
    for (std::size_t i = 0; i < t.edges.size(); ++i) {
      const oriented_edge& oe = t.edges[i];
      const Eigen::Index u_at = t.layout.node_offset(oe.parent), v_at = t.layout.node_offset(oe.child);
      if (t.root_edge[i]) {  // the component's root marginal from the root edge's pseudo-count margin
        if (redraw(i, -1)) {
          for (int a = 0; a < oe.k_parent; ++a) alpha_(a) = t.parent_margin(pseudo_counts_, oe, a);
          auto root = row_.head(oe.k_parent);
          draw_dirichlet(g, alpha_.head(oe.k_parent), root);
          mu.segment(u_at, oe.k_parent) = root;
        } else {
          mu.segment(u_at, oe.k_parent) = old_.segment(u_at, oe.k_parent);
        }
      }
      for (int a = 0; a < oe.k_parent; ++a) {
        auto row = row_.head(oe.k_child);
        if (redraw(i, a)) {
          for (int c = 0; c < oe.k_child; ++c) alpha_(c) = pseudo_counts_(t.released_index(oe.cell(a, c)));
          draw_dirichlet(g, alpha_.head(oe.k_child), row);
        } else {
          const double old_pa = old_(u_at + a);
          for (int c = 0; c < oe.k_child; ++c) row(c) = old_(oe.cell(a, c)) / old_pa;
        }
        const double pa = mu(u_at + a);
        for (int c = 0; c < oe.k_child; ++c) {
          mu(oe.cell(a, c)) = pa * row(c);
          mu(v_at + c) += pa * row(c);
        }
      }
    }
  }

  // One independent block: the root marginal of edges[edge]'s root (parent_state -1) or the row P(. | x_u = parent_state).
  struct block {
    int edge;
    int parent_state;
  };

  std::shared_ptr<const detail::forest_tables> tables_;
  Eigen::VectorXd pseudo_counts_;
  std::vector<block> blocks_;
  mutable Eigen::VectorXd alpha_, row_, old_;  // draw()'s and draw_block()'s scratch
};

}  // namespace privpost
