// privpost/families/graphical/pairwise_graph.hpp
// pairwise_graph: the structure of a discrete pairwise Markov random field (docs/design-cgm.md Sec. 1.1, 5.2):
// nodes with cardinalities K_v >= 2 and undirected edges, each edge stored as (u, v) with u < v; builders for chains,
// stars, k-th order chains and connected Erdos-Renyi graphs; the breadth-first traversal of a forest; and table_layout,
// the offsets of the node and edge tables in one flat parameter or marginal vector (node tables first, then edge tables; an edge
// table's cell (a, c) at a * K_v + c, u slowest).
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/random/uniform.hpp"

namespace privpost {

/// One entry of a node's incidence list: the neighbour, the edge's index, and whether the node is the edge's first
/// (smaller) end.
struct incidence {
  /// The node at the edge's other end.
  int neighbour = 0;
  /// The edge's index.
  int edge = 0;
  /// Whether this node is the edge's first end.
  bool first = false;
};

/// A graph of T nodes with cardinalities K_v and undirected edges. A value type; construction validates: at least one
/// node, K_v in [2, 2^20], node ids in [0, T), no self loops, no duplicate edges (std::invalid_argument naming the
/// offending value otherwise). Edges keep their given order, each normalised to (min, max).
class pairwise_graph {
 public:
  /// Nodes with these cardinalities and these edges, checked as the class comment says (std::invalid_argument).
  pairwise_graph(std::vector<int> cardinalities, std::vector<std::pair<int, int>> edges)
      : cardinalities_(std::move(cardinalities)), edges_(std::move(edges)) {
    constexpr const char* f = "pairwise_graph";
    const auto t = static_cast<std::int64_t>(cardinalities_.size());
    if (t < 1) throw_invalid(f, "number of nodes", 0.0, "at least 1");
    if (t > (1 << 24)) throw_invalid(f, "number of nodes", static_cast<double>(t), "at most 2^24");
    for (const int k : cardinalities_)
      if (k < 2 || k > (1 << 20)) throw_invalid(f, "cardinality K_v", k, "an integer in [2, 2^20]");
    incident_.assign(cardinalities_.size(), {});
    for (std::size_t e = 0; e < edges_.size(); ++e) {
      auto& [u, v] = edges_[e];
      if (u < 0 || u >= t) throw_invalid(f, "edge end", u, "a node id in [0, T)");
      if (v < 0 || v >= t) throw_invalid(f, "edge end", v, "a node id in [0, T)");
      if (u == v) throw_invalid(f, "edge with both ends at node", u, "two different nodes (no self loops)");
      if (u > v) std::swap(u, v);
      for (const incidence& i : incident_[static_cast<std::size_t>(u)])
        if (i.neighbour == v) throw_invalid(f, "duplicate edge at node", u, "each pair of nodes joined at most once");
      incident_[static_cast<std::size_t>(u)].push_back({v, static_cast<int>(e), true});
      incident_[static_cast<std::size_t>(v)].push_back({u, static_cast<int>(e), false});
    }
  }

  /// Number of nodes.
  int num_nodes() const noexcept { return static_cast<int>(cardinalities_.size()); }
  /// Number of edges.
  int num_edges() const noexcept { return static_cast<int>(edges_.size()); }
  /// K_v; throws std::invalid_argument for a node outside [0, T).
  int cardinality(int v) const {
    check_node(v);
    return cardinalities_[static_cast<std::size_t>(v)];
  }
  /// (u, v) with u < v; throws std::invalid_argument for an edge outside [0, E).
  std::pair<int, int> edge(int e) const {
    if (e < 0 || e >= num_edges()) throw_invalid("pairwise_graph::edge", "edge id", e, "an integer in [0, number of edges)");
    return edges_[static_cast<std::size_t>(e)];
  }
  /// The edges at node v, in the order they were given.
  std::span<const incidence> incident(int v) const {
    check_node(v);
    return incident_[static_cast<std::size_t>(v)];
  }
  /// Each node's number of states.
  const std::vector<int>& cardinalities() const noexcept { return cardinalities_; }

  /// True when every node is reachable from node 0.
  bool is_connected() const { return components() == 1; }
  /// True for a forest: no cycle (E = T - number of connected components).
  bool is_forest() const { return num_edges() == num_nodes() - components(); }
  /// True for a tree: connected and without cycles.
  bool is_tree() const { return num_edges() == num_nodes() - 1 && is_connected(); }
  /// The same nodes, cardinalities and edges in the same order (so the same table_layout).
  friend bool operator==(const pairwise_graph& a, const pairwise_graph& b) {
    return a.cardinalities_ == b.cardinalities_ && a.edges_ == b.edges_;
  }

 private:
  void check_node(int v) const {
    if (v < 0 || v >= num_nodes()) throw_invalid("pairwise_graph", "node id", v, "an integer in [0, number of nodes)");
  }
  int components() const {
    std::vector<int> seen(cardinalities_.size(), 0), stack;
    int count = 0;
    for (int s = 0; s < num_nodes(); ++s) {
      if (seen[static_cast<std::size_t>(s)]) continue;
      ++count;
      seen[static_cast<std::size_t>(s)] = 1;
      stack.push_back(s);
      while (!stack.empty()) {
        const int v = stack.back();
        stack.pop_back();
        for (const incidence& i : incident_[static_cast<std::size_t>(v)])
          if (!seen[static_cast<std::size_t>(i.neighbour)]) {
            seen[static_cast<std::size_t>(i.neighbour)] = 1;
            stack.push_back(i.neighbour);
          }
      }
    }
    return count;
  }

  std::vector<int> cardinalities_;
  std::vector<std::pair<int, int>> edges_;
  std::vector<std::vector<incidence>> incident_;
};

/// The chain 0 - 1 - ... - (nodes - 1), every node with k states.
inline pairwise_graph chain_graph(int nodes, int k) {
  if (nodes < 1) throw_invalid("chain_graph", "nodes", nodes, "an integer >= 1");
  std::vector<std::pair<int, int>> edges;
  for (int v = 0; v + 1 < nodes; ++v) edges.emplace_back(v, v + 1);
  return pairwise_graph(std::vector<int>(static_cast<std::size_t>(nodes), k), std::move(edges));
}

/// The star with centre 0 and leaves 1..nodes-1, every node with k states.
inline pairwise_graph star_graph(int nodes, int k) {
  if (nodes < 1) throw_invalid("star_graph", "nodes", nodes, "an integer >= 1");
  std::vector<std::pair<int, int>> edges;
  for (int v = 1; v < nodes; ++v) edges.emplace_back(0, v);
  return pairwise_graph(std::vector<int>(static_cast<std::size_t>(nodes), k), std::move(edges));
}

/// The k-th order chain: nodes i and j joined when 1 <= |i - j| <= order (order 1 is chain_graph; the dissertation's
/// "third-order chains" are order 3). Loopy for order >= 2.
inline pairwise_graph kth_order_chain_graph(int nodes, int order, int k) {
  if (nodes < 1) throw_invalid("kth_order_chain_graph", "nodes", nodes, "an integer >= 1");
  if (order < 1) throw_invalid("kth_order_chain_graph", "order", order, "an integer >= 1");
  std::vector<std::pair<int, int>> edges;
  for (int i = 0; i < nodes; ++i)
    for (int j = i + 1; j < nodes && j - i <= order; ++j) edges.emplace_back(i, j);
  return pairwise_graph(std::vector<int>(static_cast<std::size_t>(nodes), k), std::move(edges));
}

/// A connected Erdos-Renyi graph (the dissertation's third graph family, docs/design-cgm.md Sec. 4.1): every pair i < j joined
/// independently with probability p, redrawn until connected (rejection, so the law is G(nodes, p) conditioned on
/// connectivity), every node with k states; edges in lexicographic order. At most max_tries draws: throws
/// retry_limit_exceeded when none is connected (for example a small p on many nodes), std::invalid_argument for nodes
/// outside [1, 4096], p outside (0, 1] or max_tries < 1.
template <random_engine G>
inline pairwise_graph connected_erdos_renyi_graph(int nodes, double p, int k, G& g, int max_tries = 10000) {
  constexpr const char* f = "connected_erdos_renyi_graph";
  if (nodes < 1 || nodes > 4096) throw_invalid(f, "nodes", nodes, "an integer in [1, 4096]");
  if (!(p > 0.0 && p <= 1.0)) throw_invalid(f, "edge probability p", p, "a number in (0, 1]");
  if (max_tries < 1) throw_invalid(f, "max_tries", max_tries, "an integer >= 1");
  const std::vector<int> cardinalities(static_cast<std::size_t>(nodes), k);
  for (int tries = 0; tries < max_tries; ++tries) {
    std::vector<std::pair<int, int>> edges;
    for (int i = 0; i < nodes; ++i)
      for (int j = i + 1; j < nodes; ++j)
        if (draw_uniform(g) < p) edges.emplace_back(i, j);
    pairwise_graph graph(cardinalities, std::move(edges));
    if (graph.is_connected()) return graph;
  }
  throw retry_limit_exceeded(std::string(f) + ": no connected graph in " + std::to_string(max_tries) + " draws (nodes " +
                             std::to_string(nodes) + ", p " + std::to_string(p) + "); raise p or max_tries");
}

/// A breadth-first visit of a forest: each component rooted at its smallest node. order lists every node with parents
/// before children; parent[v] and parent_edge[v] are -1 at the roots.
struct forest_traversal {
  /// @{
  /// Nodes in traversal order, the roots, each node's parent (-1 at a root) and the edge to it.
  std::vector<int> order, roots, parent, parent_edge;
  /// @}
};

/// The breadth-first traversal of a forest (std::invalid_argument naming the edge count for a graph with a cycle;
/// `who` names the caller in that message).
inline forest_traversal breadth_first_forest(const pairwise_graph& graph, std::string_view who = "breadth_first_forest") {
  if (!graph.is_forest())
    throw_invalid(who, "number of edges", graph.num_edges(),
                  "a forest (no cycle; use junction_tree or loopy_bp for graphs with cycles)");
  const auto t = static_cast<std::size_t>(graph.num_nodes());
  forest_traversal f;
  f.parent.assign(t, -1);
  f.parent_edge.assign(t, -1);
  f.order.reserve(t);
  std::vector<char> seen(t, 0);
  for (int r = 0; r < graph.num_nodes(); ++r) {
    if (seen[static_cast<std::size_t>(r)]) continue;
    f.roots.push_back(r);
    seen[static_cast<std::size_t>(r)] = 1;
    std::size_t head = f.order.size();
    f.order.push_back(r);
    while (head < f.order.size()) {
      const int v = f.order[head++];
      for (const incidence& i : graph.incident(v)) {
        if (seen[static_cast<std::size_t>(i.neighbour)]) continue;
        seen[static_cast<std::size_t>(i.neighbour)] = 1;
        f.parent[static_cast<std::size_t>(i.neighbour)] = v;
        f.parent_edge[static_cast<std::size_t>(i.neighbour)] = i.edge;
        f.order.push_back(i.neighbour);
      }
    }
  }
  return f;
}

/// Offsets of the node tables (K_v cells each) and edge tables (K_u K_v cells each) in one flat vector: node tables
/// first in node order, then edge tables in edge order. The released tables are the edge tables (docs/design-cgm.md Sec. 1.3).
class table_layout {
 public:
  /// The layout of graph's node and edge tables.
  explicit table_layout(const pairwise_graph& graph) {
    Eigen::Index at = 0;
    for (int v = 0; v < graph.num_nodes(); ++v) {
      node_offsets_.push_back(at);
      at += graph.cardinality(v);
    }
    edges_begin_ = at;
    for (int e = 0; e < graph.num_edges(); ++e) {
      const auto [u, v] = graph.edge(e);
      edge_offsets_.push_back(at);
      at += static_cast<Eigen::Index>(graph.cardinality(u)) * graph.cardinality(v);
    }
    size_ = at;
  }
  /// Index of node v's first cell.
  Eigen::Index node_offset(int v) const {
    if (v < 0 || static_cast<std::size_t>(v) >= node_offsets_.size())
      throw_invalid("table_layout::node_offset", "node id", v, "an integer in [0, number of nodes)");
    return node_offsets_[static_cast<std::size_t>(v)];
  }
  /// Index of edge e's first cell.
  Eigen::Index edge_offset(int e) const {
    if (e < 0 || static_cast<std::size_t>(e) >= edge_offsets_.size())
      throw_invalid("table_layout::edge_offset", "edge id", e, "an integer in [0, number of edges)");
    return edge_offsets_[static_cast<std::size_t>(e)];
  }
  /// Cells of all node and edge tables.
  Eigen::Index size() const noexcept { return size_; }
  /// Cells of the released (edge) tables: size() less the node tables.
  Eigen::Index released_size() const noexcept { return size_ - edges_begin_; }
  /// Where the edge tables begin.
  Eigen::Index edges_begin() const noexcept { return edges_begin_; }

 private:
  std::vector<Eigen::Index> node_offsets_, edge_offsets_;
  Eigen::Index edges_begin_ = 0, size_ = 0;
};

/// One edge of a forest directed away from its component's root (breadth-first): parent u, child v, the edge's index
/// and where its table starts in table_layout order. cell(a, c) is the table cell of (x_u, x_v) = (a, c), whichever
/// end of the stored edge (u, v) or (v, u) the parent is.
struct oriented_edge {
  /// @{
  /// The edge's parent and child nodes and index, their cardinalities, the edge table's offset and whether the parent is the
  /// edge's first end.
  int parent = 0, child = 0, edge = 0;
  int k_parent = 0, k_child = 0;
  Eigen::Index offset = 0;
  bool parent_first = true;
  /// @}
  /// Index of the cell (parent state a, child state c) in the marginal vector.
  Eigen::Index cell(int a, int c) const noexcept {
    return offset + (parent_first ? static_cast<Eigen::Index>(a) * k_child + c : static_cast<Eigen::Index>(c) * k_parent + a);
  }
};

/// The edges of a forest directed away from the roots, in the breadth-first order of `visit` (parents' edges before
/// children's; a root's first entry is its edge to its first child).
inline std::vector<oriented_edge> oriented_edges(const pairwise_graph& graph, const table_layout& layout,
                                                 const forest_traversal& visit) {
  std::vector<oriented_edge> out;
  out.reserve(static_cast<std::size_t>(graph.num_edges()));
  for (const int v : visit.order) {
    const int u = visit.parent[static_cast<std::size_t>(v)];
    if (u < 0) continue;
    const int e = visit.parent_edge[static_cast<std::size_t>(v)];
    out.push_back({u, v, e, graph.cardinality(u), graph.cardinality(v), layout.edge_offset(e), graph.edge(e).first == u});
  }
  return out;
}

namespace detail {
// What a fit of released edge tables checks first: its inference back end over this layout, one finite released count
// per edge-table cell, and a positive finite public N.
inline void check_edge_release(const char* f, const table_layout& layout, std::int64_t inference_size, const Eigen::VectorXd& y,
                               double n_records) {
  check_size_match(f, "inference layout", inference_size, "table_layout(graph) size", layout.size());
  check_size_match(f, "y", y.size(), "released cells (edge tables)", layout.released_size());
  for (Eigen::Index j = 0; j < y.size(); ++j) check_finite(f, "released count y_j", y(j));
  check_positive_finite(f, "N", n_records);
}
}  // namespace detail

}  // namespace privpost
