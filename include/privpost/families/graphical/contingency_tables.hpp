// privpost/families/graphical/contingency_tables.hpp
// The released statistic of CGM (docs/design-cgm.md Sec. 1.2-1.3): the contingency table of every edge of a
// pairwise MRF, counted from discrete records, and its sensitivity under the library's replace-one-record neighbours
// (2|E| in L1: a replaced record moves one count from one cell to another in every table; decision D1) or, to
// reproduce the dissertation, add/remove neighbours (|E|). Release with any mechanism: mechanism.release(tables).
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <string>

#include "privpost/core/errors.hpp"
#include "privpost/families/graphical/pairwise_graph.hpp"

namespace privpost {

/// Which data sets are neighbours. replace_one (the library's relation, N public) is the default everywhere;
/// add_remove only reproduces the dissertation's experiments (its releases are then 2 epsilon-DP under replacement).
enum class neighbour_relation { replace_one, add_remove };

/// L1 sensitivity of all edge tables: 2|E| under replace_one, |E| under add_remove (std::invalid_argument for a graph
/// without edges: nothing would be released).
inline double contingency_l1_sensitivity(const pairwise_graph& graph,
                                         neighbour_relation relation = neighbour_relation::replace_one) {
  if (graph.num_edges() < 1)
    throw_invalid("contingency_l1_sensitivity", "number of edges", 0.0, "at least 1 (the released tables)");
  return (relation == neighbour_relation::replace_one ? 2.0 : 1.0) * graph.num_edges();
}

/// L2 sensitivity of all edge tables: sqrt(2|E|) under replace_one (-1 and +1 in one table each), sqrt(|E|) under
/// add_remove.
inline double contingency_l2_sensitivity(const pairwise_graph& graph,
                                         neighbour_relation relation = neighbour_relation::replace_one) {
  return std::sqrt(contingency_l1_sensitivity(graph, relation));
}

/// The node and edge tables of records (one row per record, one column per node, entries in [0, K_v)), in table_layout
/// order: node tables first (count of x_v = a at a), then for every edge (u, v) the K_u K_v counts of (x_u, x_v) = (a, c)
/// at a K_v + c. Throws std::invalid_argument naming the record and node of a value outside [0, K_v), or when the
/// column count is not T.
inline Eigen::VectorXd contingency_tables(const pairwise_graph& graph, const Eigen::MatrixXi& records) {
  constexpr const char* f = "contingency_tables";
  check_size_match(f, "record columns", records.cols(), "number of nodes T", graph.num_nodes());
  for (Eigen::Index r = 0; r < records.rows(); ++r)
    for (int v = 0; v < graph.num_nodes(); ++v) {
      const int x = records(r, v);
      if (x < 0 || x >= graph.cardinality(v))
        throw_invalid(f, "value of record " + std::to_string(r) + " at node " + std::to_string(v), x,
                      "a category in [0, K_v - 1] = [0, " + std::to_string(graph.cardinality(v) - 1) + "]");
    }
  const table_layout layout(graph);
  Eigen::VectorXd n = Eigen::VectorXd::Zero(layout.size());
  for (Eigen::Index r = 0; r < records.rows(); ++r) {
    for (int v = 0; v < graph.num_nodes(); ++v) n(layout.node_offset(v) + records(r, v)) += 1.0;
    for (int e = 0; e < graph.num_edges(); ++e) {
      const auto [u, v] = graph.edge(e);
      n(layout.edge_offset(e) + static_cast<Eigen::Index>(records(r, u)) * graph.cardinality(v) + records(r, v)) += 1.0;
    }
  }
  return n;
}

/// The released statistic: the edge tables of records (the tail of contingency_tables, table_layout(graph)
/// .released_size() entries), with the same checks.
inline Eigen::VectorXd edge_tables(const pairwise_graph& graph, const Eigen::MatrixXi& records) {
  const Eigen::VectorXd all = contingency_tables(graph, records);
  return all.tail(table_layout(graph).released_size());
}

}  // namespace privpost
