// tree_count_sampler (families/graphical/count_sampling.hpp, docs/design-cgm.md Sec. 5.6) and acceptance test AT-1 (Sec. 4.4):
//  1. the exact joint law of the tables of N = 2 records of a forest (a tree with a parent at either end of its edges,
//     plus an isolated node), against enumeration over pairs of configurations (chi-square, 40,000 draws; power: the
//     marginals of a perturbed model are rejected);
//  2. at N = 10^7 on the study's 10-chain (K = 3): whole numbers, local consistency, cell means within 5 standard errors;
//  3. AT-1 (Prop. 3): per-cell MSE of y / N for a Laplace release of the edge tables equals mu (1 - mu) / N + 2 b^2 / N^2
//     within 6% over 20,000 population and release replicates (chain T = 3, K = 2, N = 1000, epsilon = 0.5); the same
//     data reject the formula with b^2 for 2 b^2;
//  4. bad input.
#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <random>
#include <stdexcept>
#include <utility>
#include <vector>

#include "privpost/families/graphical/contingency_tables.hpp"
#include "privpost/families/graphical/count_sampling.hpp"
#include "privpost/families/graphical/pairwise_graph.hpp"
#include "privpost/families/graphical/tree_bp.hpp"
#include "privpost/mechanisms/laplace.hpp"
#include "support/graphical_fixtures.hpp"
#include "support/statistical.hpp"

using namespace privpost;

namespace {
// The exact law of the full tables (table_layout order) of two independent records of p(x) ~ exp(<theta, phi(x)>),
// by enumeration over ordered pairs of configurations (node 0 fastest).
std::map<std::vector<int>, double> two_record_law(const pairwise_graph& graph, const Eigen::VectorXd& theta) {
  const table_layout layout(graph);
  std::vector<std::vector<int>> tables;
  std::vector<double> weight;
  privpost_test::for_each_configuration(graph, [&](const std::vector<Eigen::Index>& cells) {
    std::vector<int> phi(static_cast<std::size_t>(layout.size()), 0);
    double w = 0.0;
    for (const Eigen::Index i : cells) {
      phi[static_cast<std::size_t>(i)] = 1;
      w += theta(i);
    }
    tables.push_back(std::move(phi));
    weight.push_back(std::exp(w));
  });
  double z = 0.0;
  for (const double w : weight) z += w;
  std::map<std::vector<int>, double> law;
  for (std::size_t a = 0; a < tables.size(); ++a)
    for (std::size_t b = 0; b < tables.size(); ++b) {
      std::vector<int> sum = tables[a];
      for (std::size_t i = 0; i < sum.size(); ++i) sum[i] += tables[b][i];
      law[sum] += weight[a] * weight[b] / (z * z);
    }
  return law;
}

// Chi-square p-value of 40,000 draws of the sampler at marginals mu (N = 2) against `law`.
double two_record_p_value(tree_count_sampler& sampler, const Eigen::VectorXd& mu, const std::map<std::vector<int>, double>& law,
                          std::mt19937_64& g) {
  std::map<std::vector<int>, std::size_t> index;
  std::vector<double> probability;
  for (const auto& [tables, p] : law) {
    index[tables] = probability.size();
    probability.push_back(p);
  }
  std::vector<double> observed(probability.size(), 0.0);
  Eigen::VectorXd counts;
  std::vector<int> key(static_cast<std::size_t>(sampler.layout().size()));
  for (int i = 0; i < 40000; ++i) {
    sampler.sample(g, mu, 2, counts);
    for (std::size_t j = 0; j < key.size(); ++j) key[j] = static_cast<int>(counts(static_cast<Eigen::Index>(j)));
    const auto at = index.find(key);
    REQUIRE(at != index.end());  // every drawn table is a possible table of two records
    observed[at->second] += 1.0;
  }
  return test::chi_square_p_value(observed, probability);
}

// Node tables sum to n; every edge table's rows and columns sum to its end nodes' tables; whole numbers >= 0.
void require_consistent_tables(const pairwise_graph& graph, const Eigen::VectorXd& counts, double n) {
  const table_layout layout(graph);
  REQUIRE(counts.size() == layout.size());
  REQUIRE((counts.array() >= 0.0).all());
  REQUIRE((counts.array() == counts.array().floor()).all());
  for (int v = 0; v < graph.num_nodes(); ++v) REQUIRE(counts.segment(layout.node_offset(v), graph.cardinality(v)).sum() == n);
  for (int e = 0; e < graph.num_edges(); ++e) {
    const auto [u, v] = graph.edge(e);
    const int ku = graph.cardinality(u), kv = graph.cardinality(v);
    for (int a = 0; a < ku; ++a)
      REQUIRE(counts.segment(layout.edge_offset(e) + static_cast<Eigen::Index>(a) * kv, kv).sum() ==
              counts(layout.node_offset(u) + a));
    for (int c = 0; c < kv; ++c) {
      double column = 0.0;
      for (int a = 0; a < ku; ++a) column += counts(layout.edge_offset(e) + static_cast<Eigen::Index>(a) * kv + c);
      REQUIRE(column == counts(layout.node_offset(v) + c));
    }
  }
}
}  // namespace

TEST_CASE("tree_count_sampler draws the exact law of the tables of two records of a forest (chi-square)", "[graphical][draws]") {
  // Root 0 -> 2 (parent at the edge's first end), 2 -> 1 (parent at the second end), node 3 isolated; K = 2, 2, 3, 2.
  const pairwise_graph forest({2, 2, 3, 2}, {{0, 2}, {1, 2}});
  std::mt19937_64 g(2017);
  const Eigen::VectorXd theta = privpost_test::random_theta(table_layout(forest), g, 1.0);
  tree_bp bp(forest);
  Eigen::VectorXd mu;
  bp.marginals(theta, mu);
  tree_count_sampler sampler(forest);
  const auto law = two_record_law(forest, theta);
  const double p_value = two_record_p_value(sampler, mu, law, g);
  INFO("chi-square p " << p_value << " over " << law.size() << " possible tables");
  REQUIRE(p_value > test::ks_level);
  // Power: the tables drawn from a perturbed model's marginals are told apart from the model's law.
  Eigen::VectorXd perturbed_mu;
  bp.marginals(theta + privpost_test::random_theta(table_layout(forest), g, 0.3), perturbed_mu);
  REQUIRE(two_record_p_value(sampler, perturbed_mu, law, g) < test::power_level);
}

TEST_CASE("tree_count_sampler at N = 10^7: consistent whole-number tables with the model's cell means", "[graphical][draws]") {
  const pairwise_graph chain = chain_graph(10, 3);
  std::mt19937_64 g(7);
  const Eigen::VectorXd theta = privpost_test::dirichlet_theta(chain, g);
  tree_bp bp(chain);
  Eigen::VectorXd mu, counts;
  bp.marginals(theta, mu);
  tree_count_sampler sampler(chain);
  const double n = 1e7;
  const int reps = 400;
  Eigen::VectorXd mean = Eigen::VectorXd::Zero(mu.size());
  for (int r = 0; r < reps; ++r) {
    sampler.sample(g, mu, static_cast<std::int64_t>(n), counts);
    require_consistent_tables(chain, counts, n);
    mean += counts / reps;
  }
  // Each cell is Binomial(N, mu): the mean of 400 draws has standard error sqrt(N mu (1 - mu) / 400).
  double worst = 0.0;
  for (Eigen::Index i = 0; i < mu.size(); ++i)
    if (mu(i) > 0.0) worst = std::max(worst, std::abs(mean(i) - n * mu(i)) / std::sqrt(n * mu(i) * (1.0 - mu(i)) / reps));
  INFO("largest |z| over " << mu.size() << " cells: " << worst);
  REQUIRE(worst < 5.0);
}

TEST_CASE("AT-1: the MSE of y / N is mu (1 - mu) / N + 2 b^2 / N^2 per cell (Prop. 3)", "[graphical][cgm]") {
  const pairwise_graph chain = chain_graph(3, 2);
  std::mt19937_64 g(31);
  const Eigen::VectorXd theta = privpost_test::dirichlet_theta(chain, g);
  tree_bp bp(chain);
  Eigen::VectorXd mu, counts;
  bp.marginals(theta, mu);
  const table_layout layout(chain);
  const Eigen::VectorXd mu_edges = mu.tail(layout.released_size());
  const double n = 1000.0, epsilon = 0.5;
  const laplace_mechanism mechanism(contingency_l1_sensitivity(chain), epsilon);  // replace_one: b = 2 |E| / eps = 8
  const double b = mechanism.scale();
  REQUIRE(b == Approx(8.0));
  tree_count_sampler sampler(chain);
  const int reps = 20000;
  Eigen::VectorXd mse = Eigen::VectorXd::Zero(mu_edges.size());
  for (int r = 0; r < reps; ++r) {
    sampler.sample(g, mu, static_cast<std::int64_t>(n), counts);
    const Eigen::VectorXd y = mechanism.release(counts.tail(layout.released_size()).eval(), g);
    mse.array() += (y / n - mu_edges).array().square() / reps;
  }
  const Eigen::ArrayXd var_counts = mu_edges.array() * (1.0 - mu_edges.array()) / n;
  const Eigen::ArrayXd predicted = var_counts + 2.0 * b * b / (n * n);
  const Eigen::ArrayXd ratio = mse.array() / predicted;
  INFO("MSE / prediction per cell: " << ratio.transpose());
  REQUIRE((ratio - 1.0).abs().maxCoeff() < 0.06);
  // Negative control: the Laplace variance taken as b^2 (not 2 b^2) is off by far more than the tolerance.
  const Eigen::ArrayXd wrong = mse.array() / (var_counts + b * b / (n * n));
  REQUIRE((wrong - 1.0).abs().minCoeff() > 0.06);
}

TEST_CASE("tree_count_sampler rejects graphs with cycles, bad marginals and bad n by name", "[graphical][errors]") {
  REQUIRE_THROWS_WITH(tree_count_sampler(kth_order_chain_graph(4, 2, 2)),
                      Catch::Contains("tree_count_sampler") && Catch::Contains("forest"));
  const pairwise_graph chain = chain_graph(3, 2);
  tree_count_sampler sampler(chain);
  tree_bp bp(chain);
  std::mt19937_64 g(8);
  Eigen::VectorXd mu, counts;
  bp.marginals(Eigen::VectorXd::Zero(table_layout(chain).size()), mu);
  REQUIRE_NOTHROW(sampler.sample(g, mu, 10, counts));
  REQUIRE_THROWS_WITH(sampler.sample(g, mu.head(4).eval(), 10, counts), Catch::Contains("size of the marginals"));
  REQUIRE_THROWS_WITH(sampler.sample(g, mu, -1, counts), Catch::Contains("n") && Catch::Contains("2^53"));
  Eigen::VectorXd bad = mu;
  bad(0) = std::numeric_limits<double>::quiet_NaN();
  REQUIRE_THROWS_WITH(sampler.sample(g, bad, 10, counts), Catch::Contains("marginal"));
  bad = mu;
  bad(0) += 0.1;  // node 0 no longer sums to 1
  REQUIRE_THROWS_WITH(sampler.sample(g, bad, 10, counts), Catch::Contains("does not sum to 1"));
  bad = mu;
  bad(table_layout(chain).edge_offset(1)) += 0.1;  // edge 1's first row moves off node 1's marginal
  bad(table_layout(chain).edge_offset(1) + 1) -= 0.1;
  REQUIRE_THROWS_WITH(sampler.sample(g, bad, 10, counts), Catch::Contains("columns do not sum"));
}
