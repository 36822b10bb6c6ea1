// privpost/families/graphical/junction_tree.hpp
// junction_tree: exact marginals and log Z of a pairwise MRF on any graph of small treewidth (docs/design-cgm.md
// Sec. 3.7, 5.1), the exact back end for the dissertation's third-order chains. Construction eliminates the variables
// in a given order or by greedy min-fill (ties to the smaller id); variable v's elimination clique C_v = {v} and its
// remaining neighbours, with the separator C_v \ {v} shared with the clique of the separator's first-eliminated
// variable (the elimination tree, which has the running-intersection property). Each node table goes to its own
// clique, each edge table to the clique of its first-eliminated end. marginals() is two-pass sum-product in log space
// over the clique tables (mixed radix, the clique's smallest node slowest), allocation-free once constructed.
//
// On a k-th order chain the natural order 0, 1, ..., T - 1 (also min-fill's) gives cliques {i, ..., i + k} of
// K^(k + 1) cells: 81 for the third-order chain with K = 3.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <span>
#include <utility>
#include <vector>

#include "privpost/core/errors.hpp"
#include "privpost/families/graphical/brute_force.hpp"
#include "privpost/families/graphical/pairwise_graph.hpp"

namespace privpost {

/// Options of junction_tree.
struct junction_tree_options {
  /// Elimination order, a permutation of the nodes; empty (the default): greedy min-fill.
  std::vector<int> elimination_order;
  /// Largest clique table accepted (cells, the product of its nodes' K_v); larger treewidth throws, pointing to loopy_bp.
  std::int64_t max_clique_cells = std::int64_t{1} << 22;
};

/// Exact inference on a clique tree (see the file comment); a marginal_inference back end with is_exact = true.
class junction_tree {
 public:
  /// Exact marginals.
  static constexpr bool is_exact = true;

  /// Throws std::invalid_argument for an elimination order that is not a permutation of the nodes, or when a clique
  /// would exceed options.max_clique_cells (naming its size).
  explicit junction_tree(pairwise_graph graph, junction_tree_options options = {}) : graph_(std::move(graph)), layout_(graph_) {
    const int t = graph_.num_nodes();
    const std::vector<int> order =
        options.elimination_order.empty() ? min_fill_order() : checked_order(options.elimination_order);
    std::vector<int> position(static_cast<std::size_t>(t));
    for (int i = 0; i < t; ++i) position[static_cast<std::size_t>(order[static_cast<std::size_t>(i)])] = i;
    // Eliminate in order: clique i = {order[i]} and its remaining neighbours (fill edges added among them).
    std::vector<std::vector<int>> adjacent = neighbour_lists();
    cliques_.resize(static_cast<std::size_t>(t));
    parent_.assign(static_cast<std::size_t>(t), -1);
    for (int i = 0; i < t; ++i) {
      const int v = order[static_cast<std::size_t>(i)];
      std::vector<int> separator = eliminate(adjacent, v);
      int first = -1;
      for (const int a : separator)
        if (first < 0 || position[static_cast<std::size_t>(a)] < first) first = position[static_cast<std::size_t>(a)];
      parent_[static_cast<std::size_t>(i)] = first;
      std::vector<int> clique = separator;
      clique.insert(std::lower_bound(clique.begin(), clique.end(), v), v);
      double cells = 1.0;
      for (const int a : clique) cells *= graph_.cardinality(a);
      if (cells > static_cast<double>(options.max_clique_cells))
        throw_invalid("junction_tree", "cells of the largest clique", cells,
                      "at most max_clique_cells (2^22 by default; a graph of large treewidth needs loopy_bp)");
      cliques_[static_cast<std::size_t>(i)].nodes = std::move(clique);
      cliques_[static_cast<std::size_t>(i)].separator = std::move(separator);
    }
    // Tables and maps: clique cells, separator cells, clique cell -> own separator cell, parent cell -> separator cell,
    // and clique cell -> theta index of each factor assigned to the clique.
    Eigen::Index cell_at = 0, sep_at = 0;
    for (int i = 0; i < t; ++i) {
      clique_info& c = cliques_[static_cast<std::size_t>(i)];
      c.cell_offset = cell_at;
      c.cells = cells_of(c.nodes);
      cell_at += c.cells;
      c.sep_offset = sep_at;
      c.sep_cells = cells_of(c.separator);
      sep_at += c.sep_cells;
      largest_ = std::max(largest_, c.cells);
    }
    for (int i = 0; i < t; ++i) {
      clique_info& c = cliques_[static_cast<std::size_t>(i)];
      c.to_separator = project(c.nodes, c.separator);
      const int p = parent_[static_cast<std::size_t>(i)];
      if (p >= 0) {
        c.parent_to_separator = project(cliques_[static_cast<std::size_t>(p)].nodes, c.separator);
        cliques_[static_cast<std::size_t>(p)].children.push_back(i);
      }
    }
    for (int v = 0; v < t; ++v) assign_factor(position[static_cast<std::size_t>(v)], {v}, -1);
    for (int e = 0; e < graph_.num_edges(); ++e) {
      const auto [u, v] = graph_.edge(e);
      assign_factor(std::min(position[static_cast<std::size_t>(u)], position[static_cast<std::size_t>(v)]), {u, v}, e);
    }
    belief_.setZero(cell_at);
    up_.setZero(sep_at);
    down_.setZero(sep_at);
    sum_.setZero(sep_at);
    probability_.setZero(largest_);
  }

  /// Node and edge marginals of p(x) proportional to exp(<theta, phi(x)>) into mu (table_layout order); theta must have
  /// layout().size() finite entries (std::invalid_argument otherwise). Exact: one upward and one downward pass.
  inference_report marginals(const Eigen::VectorXd& theta, Eigen::VectorXd& mu) {
    detail::check_log_potentials("junction_tree::marginals", layout_, theta);
    const auto t = static_cast<int>(cliques_.size());
    up_.setZero();
    down_.setZero();
    // Upward, in elimination order (children first): belief = potentials + children's messages; message to the parent
    // = log-sum-exp over the cells of each separator cell.
    for (int i = 0; i < t; ++i) {
      const clique_info& c = cliques_[static_cast<std::size_t>(i)];
      auto b = belief_.segment(c.cell_offset, c.cells);
      b.setZero();
      for (const factor_map& f : c.factors)
        for (Eigen::Index x = 0; x < c.cells; ++x) b(x) += theta(f.theta_index[static_cast<std::size_t>(x)]);
      for (const int j : c.children) {  // children have smaller indices: their messages are ready
        const clique_info& ch = cliques_[static_cast<std::size_t>(j)];
        for (Eigen::Index x = 0; x < c.cells; ++x)
          b(x) += up_(ch.sep_offset + ch.parent_to_separator[static_cast<std::size_t>(x)]);
      }
      marginalise(b, c.to_separator, up_.segment(c.sep_offset, c.sep_cells), sum_.segment(c.sep_offset, c.sep_cells));
    }
    log_z_ = 0.0;
    for (int i = 0; i < t; ++i)
      if (parent_[static_cast<std::size_t>(i)] < 0) log_z_ += up_(cliques_[static_cast<std::size_t>(i)].sep_offset);
    // Downward, parents first: full belief = belief + message from the parent; a child's message = the parent's full
    // belief less the child's own upward message, marginalised onto the separator.
    mu.setZero(layout_.size());
    for (int i = t - 1; i >= 0; --i) {
      const clique_info& c = cliques_[static_cast<std::size_t>(i)];
      auto b = belief_.segment(c.cell_offset, c.cells);
      const int p = parent_[static_cast<std::size_t>(i)];
      if (p >= 0) {
        const clique_info& pc = cliques_[static_cast<std::size_t>(p)];
        auto from = belief_.segment(pc.cell_offset, pc.cells);
        auto msg = down_.segment(c.sep_offset, c.sep_cells);
        // down(s) = LSE over parent cells x with s(x) = s of [full_p(x) - up_c(s)]
        marginalise(from, c.parent_to_separator, msg, sum_.segment(c.sep_offset, c.sep_cells));
        msg -= up_.segment(c.sep_offset, c.sep_cells);
        for (Eigen::Index x = 0; x < c.cells; ++x) b(x) += msg(c.to_separator[static_cast<std::size_t>(x)]);
      }
      const double lz = detail::log_sum_exp(b);
      auto p_x = probability_.head(c.cells);
      p_x = (b.array() - lz).exp().matrix();  // once per cell, shared by the clique's factors
      for (const factor_map& f : c.factors)
        for (Eigen::Index x = 0; x < c.cells; ++x) mu(f.theta_index[static_cast<std::size_t>(x)]) += p_x(x);
    }
    return {1, true, 0.0};
  }

  /// log Z of the last marginals() call (exact).
  double log_partition() const noexcept { return log_z_; }
  /// The graph.
  const pairwise_graph& graph() const noexcept { return graph_; }
  /// The layout of the marginal vector.
  const table_layout& layout() const noexcept { return layout_; }
  /// One clique per node (its elimination clique); clique i belongs to the i-th eliminated node.
  int num_cliques() const noexcept { return static_cast<int>(cliques_.size()); }
  /// The nodes of clique i, ascending (std::invalid_argument for i outside [0, num_cliques())).
  std::span<const int> clique(int i) const {
    if (i < 0 || i >= num_cliques()) throw_invalid("junction_tree::clique", "clique id", i, "an integer in [0, num_cliques())");
    return cliques_[static_cast<std::size_t>(i)].nodes;
  }
  /// The parent of clique i in the clique tree, -1 at a root (one root per connected component).
  int parent(int i) const {
    if (i < 0 || i >= num_cliques()) throw_invalid("junction_tree::parent", "clique id", i, "an integer in [0, num_cliques())");
    return parent_[static_cast<std::size_t>(i)];
  }
  /// Cells of the largest clique table (the cost of a pass is about the sum of the clique cells).
  Eigen::Index largest_clique_cells() const noexcept { return largest_; }

 private:
  struct factor_map {
    std::vector<Eigen::Index> theta_index;  // clique cell -> index of the factor's cell in theta / mu
  };
  struct clique_info {
    std::vector<int> nodes, separator, children;
    Eigen::Index cell_offset = 0, cells = 1, sep_offset = 0, sep_cells = 1;
    std::vector<Eigen::Index> to_separator, parent_to_separator;
    std::vector<factor_map> factors;
  };

  // out(s) = LSE over cells x with map(x) = s of b(x): the largest term of each group first, then one exp per cell and
  // one log per group (a pairwise log-add costs an exp and a log1p per cell, most of a pass). sum is scratch space of
  // out's size. A group without cells stays -inf.
  template <class In, class Out, class Sum>
  static void marginalise(const In& b, const std::vector<Eigen::Index>& map, Out&& out, Sum&& sum) {
    out.setConstant(-std::numeric_limits<double>::infinity());
    for (Eigen::Index x = 0; x < b.size(); ++x) {
      const Eigen::Index s = map[static_cast<std::size_t>(x)];
      out(s) = std::max(out(s), b(x));
    }
    sum.setZero();
    for (Eigen::Index x = 0; x < b.size(); ++x) {
      const Eigen::Index s = map[static_cast<std::size_t>(x)];
      sum(s) += std::exp(b(x) - out(s));
    }
    for (Eigen::Index s = 0; s < out.size(); ++s)
      if (sum(s) > 0.0) out(s) += std::log(sum(s));
  }

  Eigen::Index cells_of(const std::vector<int>& nodes) const {
    Eigen::Index n = 1;
    for (const int v : nodes) n *= graph_.cardinality(v);
    return n;
  }

  // Walks the cells of `nodes` (ascending, last fastest) and calls f(cell, states) with the state of every node.
  template <class F>
  void for_each_cell(const std::vector<int>& nodes, F&& f) const {
    std::vector<int> x(nodes.size(), 0);
    const Eigen::Index cells = cells_of(nodes);
    for (Eigen::Index cell = 0; cell < cells; ++cell) {
      f(cell, x);
      for (std::size_t j = nodes.size(); j-- > 0;) {
        if (++x[j] < graph_.cardinality(nodes[j])) break;
        x[j] = 0;
      }
    }
  }

  // Map from the cells of `from` to the cells of `to` (a subset of `from`, both ascending).
  std::vector<Eigen::Index> project(const std::vector<int>& from, const std::vector<int>& to) const {
    std::vector<Eigen::Index> map(static_cast<std::size_t>(cells_of(from)));
    for_each_cell(from, [&](Eigen::Index cell, const std::vector<int>& x) {
      Eigen::Index s = 0;
      std::size_t k = 0;
      for (std::size_t j = 0; j < from.size(); ++j)
        if (k < to.size() && from[j] == to[k]) {
          s = s * graph_.cardinality(to[k]) + x[j];
          ++k;
        }
      map[static_cast<std::size_t>(cell)] = s;
    });
    return map;
  }

  // Assigns the node table (edge < 0, ends = {v}) or edge table e (ends = {u, v}, u < v) to clique i.
  void assign_factor(int i, std::vector<int> ends, int edge) {
    clique_info& c = cliques_[static_cast<std::size_t>(i)];
    factor_map f;
    f.theta_index.resize(static_cast<std::size_t>(c.cells));
    std::vector<std::size_t> where;
    for (const int v : ends)
      where.push_back(static_cast<std::size_t>(std::lower_bound(c.nodes.begin(), c.nodes.end(), v) - c.nodes.begin()));
    for_each_cell(c.nodes, [&](Eigen::Index cell, const std::vector<int>& x) {
      f.theta_index[static_cast<std::size_t>(cell)] =
          edge < 0
              ? layout_.node_offset(ends[0]) + x[where[0]]
              : layout_.edge_offset(edge) + static_cast<Eigen::Index>(x[where[0]]) * graph_.cardinality(ends[1]) + x[where[1]];
    });
    c.factors.push_back(std::move(f));
  }

  // Removes v from the elimination graph (sorted neighbour lists), joining its remaining neighbours pairwise (fill
  // edges); returns those neighbours, ascending.
  static std::vector<int> eliminate(std::vector<std::vector<int>>& adjacent, int v) {
    std::vector<int> separator = std::move(adjacent[static_cast<std::size_t>(v)]);
    adjacent[static_cast<std::size_t>(v)].clear();
    for (const int a : separator) {
      auto& na = adjacent[static_cast<std::size_t>(a)];
      na.erase(std::remove(na.begin(), na.end(), v), na.end());
      for (const int b : separator)
        if (b != a && !std::binary_search(na.begin(), na.end(), b)) na.insert(std::lower_bound(na.begin(), na.end(), b), b);
    }
    return separator;
  }

  std::vector<std::vector<int>> neighbour_lists() const {
    std::vector<std::vector<int>> adjacent(static_cast<std::size_t>(graph_.num_nodes()));
    for (int v = 0; v < graph_.num_nodes(); ++v) {
      for (const incidence& i : graph_.incident(v)) adjacent[static_cast<std::size_t>(v)].push_back(i.neighbour);
      std::sort(adjacent[static_cast<std::size_t>(v)].begin(), adjacent[static_cast<std::size_t>(v)].end());
    }
    return adjacent;
  }

  std::vector<int> checked_order(const std::vector<int>& order) const {
    const int t = graph_.num_nodes();
    if (static_cast<int>(order.size()) != t)
      throw_invalid("junction_tree", "length of the elimination order", static_cast<double>(order.size()), "the number of nodes");
    std::vector<char> seen(static_cast<std::size_t>(t), 0);
    for (const int v : order) {
      if (v < 0 || v >= t || seen[static_cast<std::size_t>(v)])
        throw_invalid("junction_tree", "node of the elimination order", v, "each node id in [0, T) exactly once");
      seen[static_cast<std::size_t>(v)] = 1;
    }
    return order;
  }

  // Greedy min-fill: eliminate next the node whose remaining neighbours lack the fewest edges among themselves (ties:
  // fewer neighbours, then the smaller id). O(T^2 d^2 log d) for degree d, fine for the small graphs this back end is for.
  std::vector<int> min_fill_order() const {
    const int t = graph_.num_nodes();
    std::vector<std::vector<int>> adjacent = neighbour_lists();
    std::vector<char> gone(static_cast<std::size_t>(t), 0);
    std::vector<int> order;
    order.reserve(static_cast<std::size_t>(t));
    for (int step = 0; step < t; ++step) {
      int best = -1;
      std::int64_t best_fill = 0;
      std::size_t best_degree = 0;
      for (int v = 0; v < t; ++v) {
        if (gone[static_cast<std::size_t>(v)]) continue;
        const auto& nv = adjacent[static_cast<std::size_t>(v)];
        std::int64_t fill = 0;
        for (std::size_t a = 0; a < nv.size(); ++a)
          for (std::size_t b = a + 1; b < nv.size(); ++b)
            if (!std::binary_search(adjacent[static_cast<std::size_t>(nv[a])].begin(),
                                    adjacent[static_cast<std::size_t>(nv[a])].end(), nv[b]))
              ++fill;
        if (best < 0 || fill < best_fill || (fill == best_fill && nv.size() < best_degree)) {
          best = v;
          best_fill = fill;
          best_degree = nv.size();
        }
      }
      eliminate(adjacent, best);
      gone[static_cast<std::size_t>(best)] = 1;
      order.push_back(best);
    }
    return order;
  }

  pairwise_graph graph_;
  table_layout layout_;
  std::vector<clique_info> cliques_;
  std::vector<int> parent_;
  Eigen::VectorXd belief_, up_, down_, sum_, probability_;
  Eigen::Index largest_ = 1;
  double log_z_ = 0.0;
};

}  // namespace privpost
