// Fixtures of the CGM tests: random log-potentials, the study's Dirichlet(1) edge potentials, and records
// of a chain model by forward sampling; the tables of N records of any small model by enumeration.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "privpost/core/random/binomial.hpp"

#include "privpost/families/graphical/pairwise_graph.hpp"
#include "privpost/families/graphical/tree_bp.hpp"
#include "privpost/testing/cgm_study.hpp"

namespace privpost_test {
using privpost::pairwise_graph;
using privpost::table_layout;
using privpost::tree_bp;

inline Eigen::VectorXd random_theta(const table_layout& layout, std::mt19937_64& g, double sd) {
  std::normal_distribution<double> z(0.0, sd);
  Eigen::VectorXd theta(layout.size());
  for (Eigen::Index i = 0; i < theta.size(); ++i) theta(i) = z(g);
  return theta;
}

// Edge log-potentials log Dirichlet(1) per table, node potentials 0 (the study models of docs/design-cgm.md Sec. 4.1).
inline Eigen::VectorXd dirichlet_theta(const pairwise_graph& graph, std::mt19937_64& g) {
  return privpost::dirichlet_edge_potentials(graph, g);
}

// N records of a chain model by forward sampling (x_0 from its marginal, then x_(v+1) | x_v from the edge marginal).
inline Eigen::MatrixXi chain_records(const pairwise_graph& chain, const Eigen::VectorXd& theta, int n, std::mt19937_64& g) {
  tree_bp bp(chain);
  Eigen::VectorXd mu;
  bp.marginals(theta, mu);
  const table_layout layout(chain);
  Eigen::MatrixXi x(n, chain.num_nodes());
  std::uniform_real_distribution<double> u(0.0, 1.0);
  auto draw = [&](auto&& weight, int k) {
    double total = 0.0;
    for (int a = 0; a < k; ++a) total += weight(a);
    double target = u(g) * total;
    for (int a = 0; a < k - 1; ++a) {
      target -= weight(a);
      if (target < 0.0) return a;
    }
    return k - 1;
  };
  for (int r = 0; r < n; ++r) {
    x(r, 0) = draw([&](int a) { return mu(layout.node_offset(0) + a); }, chain.cardinality(0));
    for (int v = 0; v + 1 < chain.num_nodes(); ++v) {
      const int k = chain.cardinality(v + 1), prev = x(r, v);
      x(r, v + 1) = draw([&](int c) { return mu(layout.edge_offset(v) + static_cast<Eigen::Index>(prev) * k + c); }, k);
    }
  }
  return x;
}

// Calls f(cells) for every configuration x of the graph's nodes (node 0 varying fastest): cells holds the table_layout
// indices of x's T node cells (in node order) followed by its |E| edge cells (in edge order). The one enumeration of the
// CGM tests' exact references.
template <class F>
void for_each_configuration(const pairwise_graph& graph, F&& f) {
  const table_layout layout(graph);
  const int t = graph.num_nodes();
  std::vector<int> x(static_cast<std::size_t>(t), 0);
  std::vector<Eigen::Index> cells(static_cast<std::size_t>(t + graph.num_edges()));
  while (true) {
    for (int v = 0; v < t; ++v) cells[static_cast<std::size_t>(v)] = layout.node_offset(v) + x[static_cast<std::size_t>(v)];
    for (int e = 0; e < graph.num_edges(); ++e) {
      const auto [u, v] = graph.edge(e);
      cells[static_cast<std::size_t>(t + e)] = layout.edge_offset(e) +
                                               static_cast<Eigen::Index>(x[static_cast<std::size_t>(u)]) * graph.cardinality(v) +
                                               x[static_cast<std::size_t>(v)];
    }
    f(static_cast<const std::vector<Eigen::Index>&>(cells));
    int v = 0;
    while (v < t && ++x[static_cast<std::size_t>(v)] == graph.cardinality(v)) x[static_cast<std::size_t>(v++)] = 0;
    if (v == t) break;
  }
}

// The node and edge tables (table_layout order) of n records of p(x) ~ exp(<theta, phi(x)>) on any graph, by one
// multinomial draw over all prod_v K_v configurations (docs/design-cgm.md Sec. 5.6, loopy graphs; 3^10 cells for the study).
template <class G>
Eigen::VectorXd enumerated_tables(const pairwise_graph& graph, const Eigen::VectorXd& theta, std::int64_t n, G& g) {
  const table_layout layout(graph);
  std::vector<std::vector<Eigen::Index>> cells;
  std::vector<double> log_w;
  for_each_configuration(graph, [&](const std::vector<Eigen::Index>& phi) {
    double w = 0.0;
    for (const Eigen::Index i : phi) w += theta(i);
    cells.push_back(phi);
    log_w.push_back(w);
  });
  const double top = *std::max_element(log_w.begin(), log_w.end());
  Eigen::VectorXd weight(static_cast<Eigen::Index>(log_w.size())), count(weight.size());
  for (Eigen::Index i = 0; i < weight.size(); ++i) weight(i) = std::exp(log_w[static_cast<std::size_t>(i)] - top);
  privpost::draw_multinomial(g, n, weight, count);
  Eigen::VectorXd tables = Eigen::VectorXd::Zero(layout.size());
  for (Eigen::Index i = 0; i < count.size(); ++i)
    if (count(i) > 0.0)
      for (const Eigen::Index c : cells[static_cast<std::size_t>(i)]) tables(c) += count(i);
  return tables;
}

}  // namespace privpost_test
