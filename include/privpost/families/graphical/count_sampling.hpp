// privpost/families/graphical/count_sampling.hpp
// tree_count_sampler: exact node and edge tables of N records of a tree (forest) MRF, drawn without drawing records, by
// conditional multinomials (docs/design-cgm.md Sec. 5.6): each component's root table ~ Multinomial(N, mu_root), then for every
// edge (u -> v) in breadth-first order and every state a of u, the row n_uv(a, .) ~ Multinomial(n_u(a), mu_uv(a, .)).
// The law is exactly that of the tables of N independent records of the model (a tree MRF is the Markov chain along its
// breadth-first edges), at O(sum over edges of K_u K_v) binomial draws whatever N: the studies at N = 10^7 cost what
// N = 10^3 costs.
//
//   tree_bp bp(graph);  Eigen::VectorXd mu, counts;
//   bp.marginals(theta, mu);
//   tree_count_sampler sampler(graph);
//   sampler.sample(engine, mu, 1'000'000, counts);   // counts: table_layout(graph) order, whole numbers
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/random/binomial.hpp"
#include "privpost/families/graphical/pairwise_graph.hpp"

namespace privpost {

/// Draws the contingency tables of N records of a forest MRF from its marginals (see the file comment). Construction
/// throws std::invalid_argument for a graph with a cycle. sample() allocates nothing once constructed.
class tree_count_sampler {
 public:
  /// Tolerance of the marginal checks of sample(): node tables sum to 1 and edge tables' row and column sums equal the
  /// node marginals within this (tree_bp's marginals meet it to about 1e-15).
  static constexpr double marginal_tolerance = 1e-9;

  /// The sampler for a forest graph; std::invalid_argument when graph is not a forest.
  explicit tree_count_sampler(pairwise_graph graph)
      : graph_(std::move(graph)),
        layout_(graph_),
        visit_(breadth_first_forest(graph_, "tree_count_sampler")),
        edges_(oriented_edges(graph_, layout_, visit_)) {
    int k_max = 0;
    for (const int k : graph_.cardinalities()) k_max = k > k_max ? k : k_max;
    weights_.setZero(k_max);
    row_.setZero(k_max);
  }

  /// The graph.
  const pairwise_graph& graph() const noexcept { return graph_; }
  /// The layout of the count vector.
  const table_layout& layout() const noexcept { return layout_; }

  /// The node and edge tables (table_layout order, whole numbers; every node table sums to n, every edge table's rows
  /// and columns to its end nodes' tables) of n records drawn from the model with marginals mu (table_layout order, for
  /// example tree_bp::marginals). Throws std::invalid_argument for n outside [0, 2^53], a mu of the wrong size, with a
  /// negative or non-finite entry, or whose tables are not locally consistent within marginal_tolerance (naming the
  /// node or edge).
  template <random_engine G>
  void sample(G& g, const Eigen::VectorXd& mu, std::int64_t n, Eigen::VectorXd& counts) {
    check_marginals(mu);
    if (n < 0 || n > detail::binomial_max_trials)
      throw_invalid("tree_count_sampler::sample", "n", static_cast<double>(n), "an integer in [0, 2^53]");
    counts.setZero(layout_.size());
    for (const int r : visit_.roots) {
      const int k = graph_.cardinality(r);
      draw_multinomial(g, n, mu.segment(layout_.node_offset(r), k), counts.segment(layout_.node_offset(r), k));
    }
    for (const oriented_edge& oe : edges_) {
      const Eigen::Index node_u = layout_.node_offset(oe.parent), node_v = layout_.node_offset(oe.child);
      for (int a = 0; a < oe.k_parent; ++a) {
        const auto rows = static_cast<std::int64_t>(counts(node_u + a));
        if (rows == 0) continue;
        for (int c = 0; c < oe.k_child; ++c) weights_(c) = mu(oe.cell(a, c));
        draw_multinomial(g, rows, weights_.head(oe.k_child), row_.head(oe.k_child));
        for (int c = 0; c < oe.k_child; ++c) {
          counts(oe.cell(a, c)) = row_(c);
          counts(node_v + c) += row_(c);
        }
      }
    }
  }

 private:
  void check_marginals(const Eigen::VectorXd& mu) const {
    constexpr const char* f = "tree_count_sampler::sample";
    if (mu.size() != layout_.size())
      throw_invalid(f, "size of the marginals", static_cast<double>(mu.size()), "table_layout(graph).size()");
    for (Eigen::Index i = 0; i < mu.size(); ++i)
      if (!(mu(i) >= 0.0 && std::isfinite(mu(i)))) throw_invalid(f, "marginal", mu(i), "a finite probability >= 0");
    for (int v = 0; v < graph_.num_nodes(); ++v)
      if (std::abs(mu.segment(layout_.node_offset(v), graph_.cardinality(v)).sum() - 1.0) > marginal_tolerance)
        throw_invalid(f, "node whose marginal does not sum to 1", v, "node tables summing to 1 within 1e-9");
    for (int e = 0; e < graph_.num_edges(); ++e) {
      const auto [u, v] = graph_.edge(e);
      const int ku = graph_.cardinality(u), kv = graph_.cardinality(v);
      const Eigen::Index at = layout_.edge_offset(e);
      for (int a = 0; a < ku; ++a)
        if (std::abs(mu.segment(at + static_cast<Eigen::Index>(a) * kv, kv).sum() - mu(layout_.node_offset(u) + a)) >
            marginal_tolerance)
          throw_invalid(f, "edge whose rows do not sum to its first node's marginal", e, "locally consistent marginals (1e-9)");
      for (int c = 0; c < kv; ++c) {
        double column = 0.0;
        for (int a = 0; a < ku; ++a) column += mu(at + static_cast<Eigen::Index>(a) * kv + c);
        if (std::abs(column - mu(layout_.node_offset(v) + c)) > marginal_tolerance)
          throw_invalid(f, "edge whose columns do not sum to its second node's marginal", e,
                        "locally consistent marginals (1e-9)");
      }
    }
  }

  pairwise_graph graph_;
  table_layout layout_;
  forest_traversal visit_;
  std::vector<oriented_edge> edges_;
  Eigen::VectorXd weights_, row_;
};

}  // namespace privpost
