// The pairwise-MRF core of CGM-EM (docs/design-cgm.md Sec. 5.5, first rows): graph validation and builders, the
// table layout, exact inference by enumeration, and tree belief propagation against it on random trees and forests
// (T <= 8, K in {2, 3, 4} mixed, theta ~ N(0, 1) and scaled up to 30: marginals within 1e-12, log Z within 1e-10).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <stdexcept>
#include <vector>

#include "privpost/families/graphical/brute_force.hpp"
#include "privpost/families/graphical/contingency_tables.hpp"
#include "privpost/families/graphical/junction_tree.hpp"
#include "privpost/families/graphical/loopy_bp.hpp"
#include "privpost/families/graphical/pairwise_graph.hpp"
#include "privpost/families/graphical/tree_bp.hpp"
#include "support/statistical.hpp"

using namespace privpost;

namespace {
// A random forest on t nodes with `components` trees: each node after a component's first attaches to a random
// earlier node of its component; then the nodes are relabelled at random and every edge's ends swapped at random
// (pairwise_graph normalises them), so that BFS order, edge order and orientation all vary.
pairwise_graph random_forest(std::mt19937_64& g, int t, int components) {
  std::vector<int> label(static_cast<std::size_t>(t));
  std::iota(label.begin(), label.end(), 0);
  std::shuffle(label.begin(), label.end(), g);
  std::vector<std::pair<int, int>> edges;
  const int per = (t + components - 1) / components;
  for (int v = 0; v < t; ++v) {
    const int first = (v / per) * per;
    if (v == first) continue;
    const int u = first + static_cast<int>(g() % static_cast<std::uint64_t>(v - first));
    if (g() % 2 == 0) {
      edges.emplace_back(label[static_cast<std::size_t>(u)], label[static_cast<std::size_t>(v)]);
    } else {
      edges.emplace_back(label[static_cast<std::size_t>(v)], label[static_cast<std::size_t>(u)]);
    }
  }
  std::shuffle(edges.begin(), edges.end(), g);
  std::vector<int> k(static_cast<std::size_t>(t));
  for (int& c : k) c = 2 + static_cast<int>(g() % 3);
  return pairwise_graph(k, edges);
}
}  // namespace

TEST_CASE("pairwise_graph validates its input and reports its structure", "[graphical]") {
  const pairwise_graph chain = chain_graph(4, 3);
  CHECK(chain.num_nodes() == 4);
  CHECK(chain.num_edges() == 3);
  CHECK(chain.is_tree());
  CHECK(chain.is_forest());
  CHECK(chain.edge(1) == std::pair<int, int>(1, 2));
  CHECK(chain.incident(1).size() == 2);
  CHECK(star_graph(5, 2).is_tree());
  CHECK(star_graph(5, 2).incident(0).size() == 4);
  const pairwise_graph third = kth_order_chain_graph(6, 3, 2);
  CHECK(third.num_edges() == 3 + 3 + 3 + 2 + 1);  // pairs with |i - j| <= 3
  CHECK_FALSE(third.is_forest());
  CHECK(third.is_connected());
  const pairwise_graph forest({2, 3, 2, 2}, {{2, 0}, {3, 1}});
  CHECK(forest.edge(0) == std::pair<int, int>(0, 2));  // normalised to (min, max)
  CHECK(forest.is_forest());
  CHECK_FALSE(forest.is_tree());
  CHECK_FALSE(forest.is_connected());
  CHECK_THROWS_WITH(pairwise_graph({2, 1}, {}), Catch::Contains("cardinality K_v") && Catch::Contains("[2, 2^20]"));
  CHECK_THROWS_WITH(pairwise_graph({}, {}), Catch::Contains("number of nodes"));
  CHECK_THROWS_WITH(pairwise_graph({2, 2}, {{0, 2}}), Catch::Contains("edge end") && Catch::Contains("[0, T)"));
  CHECK_THROWS_WITH(pairwise_graph({2, 2}, {{-1, 1}}), Catch::Contains("edge end"));
  CHECK_THROWS_WITH(pairwise_graph({2, 2}, {{1, 1}}), Catch::Contains("self loops"));
  CHECK_THROWS_WITH(pairwise_graph({2, 2}, {{0, 1}, {1, 0}}), Catch::Contains("duplicate edge"));
  CHECK_THROWS_AS(chain.edge(3), std::invalid_argument);
  CHECK_THROWS_AS(chain.cardinality(-1), std::invalid_argument);
  CHECK_THROWS_AS(chain_graph(0, 2), std::invalid_argument);
  CHECK_THROWS_AS(kth_order_chain_graph(5, 0, 2), std::invalid_argument);
}

TEST_CASE("connected_erdos_renyi_graph draws G(T, p) conditioned on connectivity", "[graphical]") {
  std::mt19937_64 g(2017);
  // T = 3, p = 1/2: the four connected graphs (three paths and the triangle) have probability 1/8 each unconditionally,
  // so 1/4 each given connectivity (chi-square over 8000 draws).
  std::map<std::vector<std::pair<int, int>>, std::size_t> index{
      {{{0, 1}, {0, 2}}, 0}, {{{0, 1}, {1, 2}}, 1}, {{{0, 2}, {1, 2}}, 2}, {{{0, 1}, {0, 2}, {1, 2}}, 3}};
  std::vector<double> observed(4, 0.0);
  for (int i = 0; i < 8000; ++i) {
    const pairwise_graph graph = connected_erdos_renyi_graph(3, 0.5, 2, g);
    std::vector<std::pair<int, int>> edges;
    for (int e = 0; e < graph.num_edges(); ++e) edges.push_back(graph.edge(e));
    observed[index.at(edges)] += 1.0;
  }
  REQUIRE(test::chi_square_p_value(observed, {0.25, 0.25, 0.25, 0.25}) > test::ks_level);
  // The study's graphs (T = 10, p = 0.3, K = 3): connected, edges in lexicographic order, the same graph from the same seed.
  for (int i = 0; i < 50; ++i) {
    std::mt19937_64 a(100 + i), b(100 + i);
    const pairwise_graph graph = connected_erdos_renyi_graph(10, 0.3, 3, a);
    REQUIRE(graph.is_connected());
    REQUIRE(graph.num_edges() >= 9);
    REQUIRE(graph.cardinality(9) == 3);
    for (int e = 1; e < graph.num_edges(); ++e) REQUIRE(graph.edge(e - 1) < graph.edge(e));
    REQUIRE(connected_erdos_renyi_graph(10, 0.3, 3, b).num_edges() == graph.num_edges());
  }
  REQUIRE(connected_erdos_renyi_graph(10, 1.0, 2, g).num_edges() == 45);
  REQUIRE(connected_erdos_renyi_graph(1, 0.5, 2, g).num_edges() == 0);
  // Bad input by name; an unlikely connection is a bounded failure.
  REQUIRE_THROWS_WITH(connected_erdos_renyi_graph(0, 0.5, 2, g), Catch::Contains("nodes"));
  REQUIRE_THROWS_WITH(connected_erdos_renyi_graph(5, 0.0, 2, g), Catch::Contains("edge probability p"));
  REQUIRE_THROWS_AS(connected_erdos_renyi_graph(5, std::numeric_limits<double>::quiet_NaN(), 2, g), std::invalid_argument);
  REQUIRE_THROWS_WITH(connected_erdos_renyi_graph(5, 0.5, 2, g, 0), Catch::Contains("max_tries"));
  REQUIRE_THROWS_AS(connected_erdos_renyi_graph(5, 0.5, 1, g), std::invalid_argument);  // K_v >= 2
  REQUIRE_THROWS_WITH(connected_erdos_renyi_graph(60, 0.001, 2, g, 20), Catch::Contains("no connected graph in 20 draws"));
}

TEST_CASE("table_layout puts node tables first, then edge tables row-major", "[graphical]") {
  const pairwise_graph graph({2, 3, 4}, {{0, 1}, {2, 1}});
  const table_layout layout(graph);
  CHECK(layout.node_offset(0) == 0);
  CHECK(layout.node_offset(1) == 2);
  CHECK(layout.node_offset(2) == 5);
  CHECK(layout.edges_begin() == 9);
  CHECK(layout.edge_offset(0) == 9);
  CHECK(layout.edge_offset(1) == 9 + 6);
  CHECK(layout.size() == 9 + 6 + 12);
  CHECK(layout.released_size() == 18);
  CHECK_THROWS_AS(layout.edge_offset(2), std::invalid_argument);
  CHECK_THROWS_AS(layout.node_offset(3), std::invalid_argument);
}

TEST_CASE("brute_force_inference: marginals of a two-node model by hand", "[graphical]") {
  // p(a, c) proportional to exp(theta_0(a) + theta_1(c) + theta_01(a, c)), K = (2, 3).
  const pairwise_graph graph({2, 3}, {{0, 1}});
  brute_force_inference bf(graph);
  Eigen::VectorXd theta(2 + 3 + 6), mu;
  theta << 0.3, -0.2, 0.1, 0.5, -1.0, 0.7, 0.0, -0.4, 1.2, 0.3, -0.6;
  bf.marginals(theta, mu);
  double z = 0.0;
  Eigen::MatrixXd joint(2, 3);
  for (int a = 0; a < 2; ++a)
    for (int c = 0; c < 3; ++c) z += (joint(a, c) = std::exp(theta(a) + theta(2 + c) + theta(5 + 3 * a + c)));
  joint /= z;
  CHECK(bf.log_partition() == Approx(std::log(z)).epsilon(1e-14));
  for (int a = 0; a < 2; ++a) {
    CHECK(mu(a) == Approx(joint.row(a).sum()).epsilon(1e-14));
    for (int c = 0; c < 3; ++c) CHECK(mu(5 + 3 * a + c) == Approx(joint(a, c)).epsilon(1e-14));
  }
  for (int c = 0; c < 3; ++c) CHECK(mu(2 + c) == Approx(joint.col(c).sum()).epsilon(1e-14));
  CHECK_THROWS_WITH(brute_force_inference(chain_graph(25, 2)), Catch::Contains("number of configurations"));
}

TEST_CASE("tree_bp equals enumeration on random trees and forests", "[graphical]") {
  std::mt19937_64 g(2026);
  std::normal_distribution<double> normal;
  int cases = 0;
  for (int t = 1; t <= 8; ++t) {
    for (const int components : {1, 2, 3}) {
      if (components > t) continue;
      for (const double scale : {1.0, 30.0}) {  // 30: potentials that would overflow exp without the max shift
        for (int rep = 0; rep < 5; ++rep) {
          const pairwise_graph graph = random_forest(g, t, components);
          REQUIRE(graph.is_forest());
          tree_bp bp(graph);
          brute_force_inference bf(graph);
          Eigen::VectorXd theta(bp.layout().size()), mu_bp, mu_bf;
          for (Eigen::Index i = 0; i < theta.size(); ++i) theta(i) = scale * normal(g);
          const inference_report report = bp.marginals(theta, mu_bp);
          bf.marginals(theta, mu_bf);
          INFO("T " << t << ", components " << components << ", scale " << scale << ", rep " << rep);
          CHECK(report.converged);
          CHECK((mu_bp - mu_bf).cwiseAbs().maxCoeff() < 1e-12);
          CHECK(std::abs(bp.log_partition() - bf.log_partition()) < 1e-10 * std::max(1.0, std::abs(bf.log_partition())));
          // Every table sums to 1 and edge tables agree with their node marginals.
          for (int e = 0; e < graph.num_edges(); ++e) {
            const auto [u, v] = graph.edge(e);
            const int ku = graph.cardinality(u), kv = graph.cardinality(v);
            const Eigen::Map<const Eigen::MatrixXd> table(mu_bp.data() + bp.layout().edge_offset(e), kv, ku);  // column a = x_u
            for (int a = 0; a < ku; ++a) CHECK(std::abs(table.col(a).sum() - mu_bp(bp.layout().node_offset(u) + a)) < 1e-12);
            for (int c = 0; c < kv; ++c) CHECK(std::abs(table.row(c).sum() - mu_bp(bp.layout().node_offset(v) + c)) < 1e-12);
          }
          ++cases;
        }
      }
    }
  }
  CHECK(cases == 2 * 5 * (1 + 2 + 3 * 6));
}

TEST_CASE("tree_bp refuses cycles and bad potentials", "[graphical]") {
  CHECK_THROWS_WITH(tree_bp(kth_order_chain_graph(4, 2, 2)), Catch::Contains("a forest"));
  CHECK_THROWS_WITH(tree_bp(pairwise_graph({2, 2, 2}, {{0, 1}, {1, 2}, {0, 2}})), Catch::Contains("junction_tree"));
  tree_bp bp(chain_graph(3, 2));
  Eigen::VectorXd mu, theta = Eigen::VectorXd::Zero(bp.layout().size());
  CHECK_THROWS_WITH(bp.marginals(Eigen::VectorXd::Zero(3), mu), Catch::Contains("theta"));
  theta(4) = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_WITH(bp.marginals(theta, mu), Catch::Contains("log-potential"));
  theta(4) = std::numeric_limits<double>::infinity();
  CHECK_THROWS_AS(bp.marginals(theta, mu), std::invalid_argument);
  brute_force_inference bf(chain_graph(3, 2));
  CHECK_THROWS_AS(bf.marginals(theta, mu), std::invalid_argument);
  // Uniform potentials: every marginal uniform, log Z = T log K.
  theta.setZero();
  bp.marginals(theta, mu);
  CHECK(bp.log_partition() == Approx(3.0 * std::log(2.0)).epsilon(1e-14));
  CHECK((mu.head(6).array() - 0.5).abs().maxCoeff() < 1e-15);
  CHECK((mu.tail(8).array() - 0.25).abs().maxCoeff() < 1e-15);
}

TEST_CASE("edge_tables counts records per edge; the sensitivity bounds every neighbour", "[graphical][release]") {
  const pairwise_graph graph({2, 3, 2, 4}, {{0, 1}, {1, 2}, {3, 1}});
  CHECK(contingency_l1_sensitivity(graph) == 6.0);
  CHECK(contingency_l1_sensitivity(graph, neighbour_relation::add_remove) == 3.0);
  CHECK(contingency_l2_sensitivity(graph) == Approx(std::sqrt(6.0)));
  CHECK(contingency_l2_sensitivity(graph, neighbour_relation::add_remove) == Approx(std::sqrt(3.0)));
  CHECK_THROWS_WITH(contingency_l1_sensitivity(pairwise_graph({2}, {})), Catch::Contains("number of edges"));
  std::mt19937_64 g(8);
  const int n = 50;
  Eigen::MatrixXi records(n, 4);
  auto draw_record = [&](Eigen::Index r) {
    for (int v = 0; v < 4; ++v) records(r, v) = static_cast<int>(g() % static_cast<std::uint64_t>(graph.cardinality(v)));
  };
  for (Eigen::Index r = 0; r < n; ++r) draw_record(r);
  const Eigen::VectorXd tables = edge_tables(graph, records);
  const table_layout layout(graph);
  REQUIRE(tables.size() == layout.released_size());
  for (int e = 0; e < graph.num_edges(); ++e) {
    const auto [u, v] = graph.edge(e);
    CHECK(tables.segment(layout.edge_offset(e) - layout.edges_begin(), graph.cardinality(u) * graph.cardinality(v)).sum() == n);
  }
  // Record 0's own cells, by hand: edge (1, 3) stores (x_1, x_3) at x_1 * 4 + x_3.
  Eigen::MatrixXi one = records.topRows(1);
  const Eigen::VectorXd t1 = edge_tables(graph, one);
  CHECK(t1(layout.edge_offset(2) - layout.edges_begin() + one(0, 1) * 4 + one(0, 3)) == 1.0);
  CHECK(t1.sum() == 3.0);
  // The full layout: node tables count each node's values and are the margins of every edge table touching the node.
  const Eigen::VectorXd all = contingency_tables(graph, records);
  REQUIRE(all.size() == layout.size());
  CHECK((all.tail(layout.released_size()) - tables).cwiseAbs().maxCoeff() == 0.0);
  for (int e = 0; e < graph.num_edges(); ++e) {
    const auto [u, v] = graph.edge(e);
    const int ku = graph.cardinality(u), kv = graph.cardinality(v);
    for (int a = 0; a < ku; ++a) {
      double row = 0.0;
      for (int c = 0; c < kv; ++c) row += all(layout.edge_offset(e) + a * kv + c);
      CHECK(row == all(layout.node_offset(u) + a));
    }
    for (int c = 0; c < kv; ++c) {
      double column = 0.0;
      for (int a = 0; a < ku; ++a) column += all(layout.edge_offset(e) + a * kv + c);
      CHECK(column == all(layout.node_offset(v) + c));
    }
  }
  // Replace-one neighbours never move the tables by more than 2|E| in L1, and reach it when every value changes.
  double largest = 0.0;
  for (int t = 0; t < 2000; ++t) {
    Eigen::MatrixXi other = records;
    const Eigen::Index r = static_cast<Eigen::Index>(g() % n);
    for (int v = 0; v < 4; ++v)
      other(r, v) = t % 2 == 0 ? (records(r, v) + 1) % graph.cardinality(v)
                               : static_cast<int>(g() % static_cast<std::uint64_t>(graph.cardinality(v)));
    largest = std::max(largest, (edge_tables(graph, other) - tables).lpNorm<1>());
  }
  CHECK(largest == contingency_l1_sensitivity(graph));
  // Removing one record moves them by exactly |E|.
  const Eigen::MatrixXi fewer = records.topRows(n - 1);
  CHECK((edge_tables(graph, fewer) - tables).lpNorm<1>() == contingency_l1_sensitivity(graph, neighbour_relation::add_remove));
  // Bad records.
  Eigen::MatrixXi bad = records;
  bad(7, 2) = 2;  // K_2 = 2
  CHECK_THROWS_WITH(edge_tables(graph, bad), Catch::Contains("record 7 at node 2") && Catch::Contains("[0, 1]"));
  bad(7, 2) = -1;
  CHECK_THROWS_AS(edge_tables(graph, bad), std::invalid_argument);
  CHECK_THROWS_WITH(edge_tables(graph, Eigen::MatrixXi::Zero(3, 5)), Catch::Contains("record columns"));
}

TEST_CASE("loopy_bp's exponentiated edge potentials: the log-domain path where a message's sums underflow",
          "[graphical][loopy]") {
  // A chain of 3 nodes with K = 3 whose edge (0, 1) puts -800 nats on the cells (a, 0) and (a, 1) for every a: the
  // messages into node 1 have exp(theta_e - max) = 0 in two of three entries (the log-domain fallback), and the edge
  // (1, 2) spans 1000 nats in one row. Exact on a tree: against enumeration.
  const pairwise_graph chain = chain_graph(3, 3);
  const table_layout layout(chain);
  std::mt19937_64 g(57);
  std::normal_distribution<double> z(0.0, 1.0);
  Eigen::VectorXd theta(layout.size()), mu_exact, mu_loopy;
  for (Eigen::Index i = 0; i < theta.size(); ++i) theta(i) = z(g);
  for (int a = 0; a < 3; ++a)
    for (int c = 0; c < 2; ++c) theta(layout.edge_offset(0) + a * 3 + c) -= 800.0;
  theta(layout.edge_offset(1) + 4) += 1000.0;
  brute_force_inference brute(chain);
  brute.marginals(theta, mu_exact);
  loopy_bp_options tight;
  tight.tol = 1e-13;
  loopy_bp loopy(chain, tight);
  const inference_report r = loopy.marginals(theta, mu_loopy);
  CHECK(r.converged);
  CHECK(mu_loopy.allFinite());
  CHECK((mu_loopy - mu_exact).cwiseAbs().maxCoeff() < 1e-10);
  CHECK(loopy.log_partition() == Approx(brute.log_partition()).epsilon(1e-12));
}

TEST_CASE("loopy_bp is exact on forests and close to enumeration on a weakly coupled 4-cycle", "[graphical][loopy]") {
  std::mt19937_64 g(55);
  std::normal_distribution<double> z(0.0, 1.0);
  loopy_bp_options tight;
  tight.tol = 1e-13;
  for (int trial = 0; trial < 40; ++trial) {
    const pairwise_graph graph = random_forest(g, 2 + trial % 7, 1 + trial % 2);
    const table_layout layout(graph);
    Eigen::VectorXd theta(layout.size()), mu_exact, mu_loopy;
    for (Eigen::Index i = 0; i < theta.size(); ++i) theta(i) = z(g);
    brute_force_inference brute(graph);
    brute.marginals(theta, mu_exact);
    loopy_bp loopy(graph, tight);
    const inference_report r = loopy.marginals(theta, mu_loopy);
    INFO("trial " << trial << ", sweeps " << r.iterations);
    CHECK(r.converged);
    CHECK((mu_loopy - mu_exact).cwiseAbs().maxCoeff() < 1e-10);
    CHECK(loopy.log_partition() == Approx(brute.log_partition()).margin(1e-9));
  }
  // A 4-cycle, K = 3, |theta_uv| <= 0.1: Bethe beliefs near the exact marginals, locally consistent at the fixed point.
  const pairwise_graph cycle(std::vector<int>{3, 3, 3, 3}, {{0, 1}, {1, 2}, {2, 3}, {0, 3}});
  const table_layout layout(cycle);
  std::uniform_real_distribution<double> small(-0.1, 0.1);
  for (int trial = 0; trial < 10; ++trial) {
    Eigen::VectorXd theta(layout.size()), mu_exact, mu_loopy;
    for (Eigen::Index i = 0; i < layout.edges_begin(); ++i) theta(i) = z(g);
    for (Eigen::Index i = layout.edges_begin(); i < theta.size(); ++i) theta(i) = small(g);
    brute_force_inference brute(cycle);
    brute.marginals(theta, mu_exact);
    loopy_bp loopy(cycle, tight);
    REQUIRE(loopy.marginals(theta, mu_loopy).converged);
    CHECK((mu_loopy - mu_exact).cwiseAbs().maxCoeff() < 1e-3);
    CHECK(loopy.log_partition() == Approx(brute.log_partition()).margin(1e-3));
    for (int e = 0; e < cycle.num_edges(); ++e) {
      const auto [u, v] = cycle.edge(e);
      for (int a = 0; a < 3; ++a) {
        double row = 0.0, column = 0.0;
        for (int c = 0; c < 3; ++c) {
          row += mu_loopy(layout.edge_offset(e) + a * 3 + c);
          column += mu_loopy(layout.edge_offset(e) + c * 3 + a);
        }
        CHECK(row == Approx(mu_loopy(layout.node_offset(u) + a)).margin(1e-10));
        CHECK(column == Approx(mu_loopy(layout.node_offset(v) + a)).margin(1e-10));
      }
    }
  }
  // Strong couplings on the cycle and one sweep: reported as not converged, never thrown.
  loopy_bp_options once;
  once.max_sweeps = 1;
  loopy_bp short_run(cycle, once);
  Eigen::VectorXd theta = Eigen::VectorXd::Constant(layout.size(), 0.0), mu;
  for (Eigen::Index i = layout.edges_begin(); i < theta.size(); i += 4) theta(i) = 3.0;
  CHECK_FALSE(short_run.marginals(theta, mu).converged);
  CHECK(mu.allFinite());
  CHECK_THROWS_WITH(loopy_bp(cycle, loopy_bp_options{0.0}), Catch::Contains("damping"));
  CHECK_THROWS_WITH(loopy_bp(cycle, loopy_bp_options{0.5, 1e-8, 0}), Catch::Contains("max_sweeps"));
  Eigen::VectorXd bad = theta;
  bad(2) = std::nan("");
  CHECK_THROWS_AS(short_run.marginals(bad, mu), std::invalid_argument);
}

// The damped messages are never renormalised (loopy_bp.hpp): their constant shifts must cancel. 200 warm-started calls
// on nearby thetas (the E-step's use) agree with cold calls from uniform messages, and the Bethe log Z with them.
TEST_CASE("loopy_bp warm-started over 200 calls agrees with cold calls (unnormalised damped messages)", "[graphical][loopy]") {
  std::mt19937_64 g(71);
  std::normal_distribution<double> z(0.0, 1.0);
  const pairwise_graph graph = kth_order_chain_graph(6, 2, 3);
  const table_layout layout(graph);
  loopy_bp_options tight;
  tight.tol = 1e-12;
  loopy_bp warm(graph, tight), cold(graph, tight);
  Eigen::VectorXd theta(layout.size()), mu_warm, mu_cold;
  for (Eigen::Index i = 0; i < theta.size(); ++i) theta(i) = 0.3 * z(g);
  double worst = 0.0, worst_log_z = 0.0;
  for (int call = 0; call < 200; ++call) {
    for (Eigen::Index i = 0; i < theta.size(); ++i) theta(i) += 0.02 * z(g);
    REQUIRE(warm.marginals(theta, mu_warm).converged);
    cold.reset();
    REQUIRE(cold.marginals(theta, mu_cold).converged);
    REQUIRE(mu_warm.allFinite());
    worst = std::max(worst, (mu_warm - mu_cold).cwiseAbs().maxCoeff());
    worst_log_z = std::max(worst_log_z, std::abs(warm.log_partition() - cold.log_partition()));
  }
  INFO("largest belief difference " << worst << ", log Z " << worst_log_z);
  CHECK(worst < 1e-9);
  CHECK(worst_log_z < 1e-9);
}

TEST_CASE("junction_tree equals enumeration on random loopy graphs, k-th order chains and forests", "[graphical]") {
  std::mt19937_64 g(2027);
  std::normal_distribution<double> normal;
  std::uniform_int_distribution<int> states(2, 3);
  auto check_against_enumeration = [&](const pairwise_graph& graph, junction_tree_options options, double scale) {
    junction_tree jt(graph, std::move(options));
    brute_force_inference bf(graph);
    Eigen::VectorXd theta(jt.layout().size()), mu_jt, mu_bf;
    for (Eigen::Index i = 0; i < theta.size(); ++i) theta(i) = scale * normal(g);
    CHECK(jt.marginals(theta, mu_jt).converged);
    bf.marginals(theta, mu_bf);
    CHECK((mu_jt - mu_bf).cwiseAbs().maxCoeff() < 1e-12);
    CHECK(std::abs(jt.log_partition() - bf.log_partition()) < 1e-10 * std::max(1.0, std::abs(bf.log_partition())));
    jt.marginals(theta, mu_jt);  // a second call on the same object gives the same answer
    CHECK((mu_jt - mu_bf).cwiseAbs().maxCoeff() < 1e-12);
  };
  for (int t = 1; t <= 8; ++t)
    for (const double p : {0.3, 0.6, 1.0})
      for (const double scale : {1.0, 30.0}) {
        // G(t, p), not necessarily connected, K_v in {2, 3}; then the same graph eliminated in reverse order.
        std::vector<int> k(static_cast<std::size_t>(t));
        for (int& kv : k) kv = states(g);
        std::vector<std::pair<int, int>> edges;
        for (int i = 0; i < t; ++i)
          for (int j = i + 1; j < t; ++j)
            if (std::uniform_real_distribution<double>(0.0, 1.0)(g) < p) edges.emplace_back(j, i);
        const pairwise_graph graph(k, edges);
        INFO("T " << t << ", p " << p << ", " << graph.num_edges() << " edges, scale " << scale);
        check_against_enumeration(graph, {}, scale);
        junction_tree_options reverse;
        for (int v = t - 1; v >= 0; --v) reverse.elimination_order.push_back(v);
        check_against_enumeration(graph, reverse, scale);
      }
  for (int order = 1; order <= 4; ++order) check_against_enumeration(kth_order_chain_graph(9, order, 2), {}, 1.0);
  check_against_enumeration(kth_order_chain_graph(8, 3, 3), {}, 1.0);
  check_against_enumeration(star_graph(7, 3), {}, 1.0);
}

TEST_CASE("junction_tree on the study's third-order chain: cliques {i, ..., i + 3}; on a long chain it equals tree_bp",
          "[graphical]") {
  const junction_tree jt(kth_order_chain_graph(10, 3, 3));
  REQUIRE(jt.num_cliques() == 10);
  REQUIRE(jt.largest_clique_cells() == 81);
  for (int i = 0; i < 7; ++i) {
    const auto c = jt.clique(i);
    REQUIRE(std::vector<int>(c.begin(), c.end()) == std::vector<int>{i, i + 1, i + 2, i + 3});
    REQUIRE(jt.parent(i) == i + 1);
  }
  REQUIRE(jt.parent(9) == -1);
  // Tree: the same answer as tree_bp on a 50-node chain of K = 4 (beyond enumeration).
  const pairwise_graph chain = chain_graph(50, 4);
  junction_tree on_chain(chain);
  tree_bp bp(chain);
  std::mt19937_64 g(5);
  std::normal_distribution<double> normal;
  Eigen::VectorXd theta(bp.layout().size()), mu_jt, mu_bp;
  for (Eigen::Index i = 0; i < theta.size(); ++i) theta(i) = normal(g);
  on_chain.marginals(theta, mu_jt);
  bp.marginals(theta, mu_bp);
  CHECK((mu_jt - mu_bp).cwiseAbs().maxCoeff() < 1e-12);
  CHECK(on_chain.log_partition() == Approx(bp.log_partition()).epsilon(1e-13));
}

TEST_CASE("junction_tree rejects bad elimination orders, too wide cliques and bad potentials by name", "[graphical][errors]") {
  const pairwise_graph graph = kth_order_chain_graph(6, 2, 3);
  junction_tree_options short_order;
  short_order.elimination_order = {0, 1, 2};
  CHECK_THROWS_WITH(junction_tree(graph, short_order), Catch::Contains("length of the elimination order"));
  junction_tree_options repeated;
  repeated.elimination_order = {0, 1, 2, 3, 4, 4};
  CHECK_THROWS_WITH(junction_tree(graph, repeated), Catch::Contains("node of the elimination order"));
  junction_tree_options narrow;
  narrow.max_clique_cells = 26;  // cliques of 3 nodes with K = 3 have 27 cells
  CHECK_THROWS_WITH(junction_tree(graph, narrow), Catch::Contains("cells of the largest clique") && Catch::Contains("loopy_bp"));
  CHECK_THROWS_AS(junction_tree(kth_order_chain_graph(30, 29, 3)), std::invalid_argument);  // complete graph: 3^30 cells
  junction_tree jt(graph);
  Eigen::VectorXd mu, theta = Eigen::VectorXd::Zero(jt.layout().size());
  CHECK_THROWS_AS(jt.marginals(theta.head(5).eval(), mu), std::invalid_argument);
  theta(3) = std::numeric_limits<double>::infinity();
  CHECK_THROWS_WITH(jt.marginals(theta, mu), Catch::Contains("theta"));
  CHECK_THROWS_AS(jt.clique(6), std::invalid_argument);
}
