// The Bayesian tree CGM's pieces (docs/design-cgm.md Sec. 6): hyper_dirichlet, tree_cgm_model's CLT moments
// against enumeration and its draws of their normal law, the valid set and its repair, and Matheron's rule
// (core/linalg/norm_product.hpp) against NormProduct's mean and covariance. All seeds fixed.
#include <catch2/catch.hpp>

#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include "privpost/core/linalg/norm_product.hpp"
#include "privpost/families/graphical/contingency_tables.hpp"
#include "privpost/families/graphical/count_sampling.hpp"
#include "privpost/families/graphical/hyper_dirichlet.hpp"
#include "privpost/families/graphical/tree_cgm_model.hpp"
#include "privpost/mechanisms/laplace.hpp"
#include "support/graphical_fixtures.hpp"

using namespace privpost;

namespace {

// A tree with unequal cardinalities whose stored edges point both ways from the breadth-first root (node 0):
// 0 - 1, 2 - 1 (stored (1, 2)), 3 - 1 (stored (1, 3)), 0 - 4; K = 2, 3, 2, 2, 3.
pairwise_graph mixed_tree() { return pairwise_graph({2, 3, 2, 2, 3}, {{0, 1}, {2, 1}, {1, 3}, {4, 0}}); }

// p(x) = prod_e mu_e(x_e) / prod_v mu_v(x_v)^(deg v - 1) on a tree, for every configuration: the exact mean and
// covariance of one record's stacked one-hot edge indicators.
void enumerated_moments(const pairwise_graph& graph, const Eigen::VectorXd& mu, Eigen::VectorXd& mean, Eigen::MatrixXd& cov) {
  const table_layout layout(graph);
  const Eigen::Index begin = layout.edges_begin(), d = layout.released_size();
  mean = Eigen::VectorXd::Zero(d);
  Eigen::MatrixXd second = Eigen::MatrixXd::Zero(d, d);
  double total = 0.0;
  const auto t = static_cast<std::size_t>(graph.num_nodes());
  privpost_test::for_each_configuration(graph, [&](const std::vector<Eigen::Index>& cells) {
    double p = 1.0;
    for (std::size_t k = t; k < cells.size(); ++k) p *= mu(cells[k]);
    for (std::size_t v = 0; v < t; ++v)
      p /= std::pow(mu(cells[v]), static_cast<double>(graph.incident(static_cast<int>(v)).size()) - 1.0);
    total += p;
    for (std::size_t i = t; i < cells.size(); ++i) {
      mean(cells[i] - begin) += p;
      for (std::size_t j = t; j < cells.size(); ++j) second(cells[i] - begin, cells[j] - begin) += p;
    }
  });
  REQUIRE(total == Approx(1.0).epsilon(1e-12));
  cov = second - mean * mean.transpose();
}

// Consistent marginals: node tables sum to 1, every edge's rows and columns give its ends' marginals.
void require_consistent(const pairwise_graph& graph, const Eigen::VectorXd& mu) {
  const table_layout layout(graph);
  for (int v = 0; v < graph.num_nodes(); ++v)
    REQUIRE(mu.segment(layout.node_offset(v), graph.cardinality(v)).sum() == Approx(1.0).margin(1e-12));
  for (int e = 0; e < graph.num_edges(); ++e) {
    const auto [u, v] = graph.edge(e);
    const int ku = graph.cardinality(u), kv = graph.cardinality(v);
    for (int a = 0; a < ku; ++a)
      REQUIRE(mu.segment(layout.edge_offset(e) + a * kv, kv).sum() == Approx(mu(layout.node_offset(u) + a)).margin(1e-12));
    for (int c = 0; c < kv; ++c) {
      double column = 0.0;
      for (int a = 0; a < ku; ++a) column += mu(layout.edge_offset(e) + a * kv + c);
      REQUIRE(column == Approx(mu(layout.node_offset(v) + c)).margin(1e-12));
    }
  }
}

// Sums of `draws` draws of the marginals against the prior of total pseudo-count A = 6: every cell of every table
// (node or edge) is marginally Beta(a, A - a), mean a / A and variance a (A - a) / (A^2 (A + 1)). Mean within 5 Monte
// Carlo standard errors, variance within 6% (its MC error ~2% at 20000 draws).
void check_prior_moments(const hyper_dirichlet& prior, const Eigen::VectorXd& sum, const Eigen::VectorXd& sum2, int draws) {
  REQUIRE(prior.total() == Approx(6.0));
  const Eigen::VectorXd expected = prior.mean();
  for (Eigen::Index i = 0; i < expected.size(); ++i) {
    const double m = expected(i), var = m * (1.0 - m) / 7.0;
    const double mean = sum(i) / draws, sample_var = sum2(i) / draws - mean * mean;
    INFO("cell " << i << ": mean " << mean << " vs " << m << ", variance " << sample_var << " vs " << var);
    CHECK(std::abs(mean - m) < 5.0 * std::sqrt(var / draws));
    CHECK(sample_var == Approx(var).epsilon(0.06));
  }
}

}  // namespace

TEST_CASE("hyper_dirichlet draws consistent marginals whose every edge table is Dir(its pseudo-counts)", "[graphical][bayes]") {
  const pairwise_graph graph = mixed_tree();
  const hyper_dirichlet prior(graph, 6.0);
  const table_layout layout(graph);
  CHECK(prior.total() == Approx(6.0));
  std::mt19937_64 g(11);
  constexpr int draws = 20000;
  Eigen::VectorXd sum = Eigen::VectorXd::Zero(layout.size()), sum2 = sum, mu;
  for (int i = 0; i < draws; ++i) {
    prior.draw(g, mu);
    require_consistent(graph, mu);
    sum += mu;
    sum2 += mu.cwiseProduct(mu);
  }
  check_prior_moments(prior, sum, sum2, draws);
  // The prior mean is alpha_0 / (K_u K_v) / alpha_0 per edge cell, 1 / K_v per node cell.
  CHECK(prior.mean()(layout.node_offset(1)) == Approx(1.0 / 3.0));
  CHECK(prior.mean()(layout.edge_offset(3)) == Approx(1.0 / 6.0));
}

TEST_CASE("hyper_dirichlet's block redraws change one block, keep the marginals consistent and leave the prior invariant",
          "[graphical][bayes]") {
  // mixed_tree() (K = 2, 3, 2, 2, 3; root 0): one root marginal and one conditional row per parent state of every
  // oriented edge: 1 + 2 (0 -> 1) + 2 (0 -> 4) + 3 (1 -> 2) + 3 (1 -> 3) = 11 blocks.
  const pairwise_graph graph = mixed_tree();
  const hyper_dirichlet prior(graph, 6.0);
  const table_layout layout(graph);
  REQUIRE(prior.blocks() == 11);
  std::mt19937_64 g(21);
  Eigen::VectorXd mu = prior.draw(g);
  // Each edge's conditional table mu_uv / mu_u, for either orientation of the stored edge: the blocks other than the
  // redrawn one keep theirs. Block b's change shows in the rows of its edge (or in the root's marginal).
  auto conditionals = [&](const Eigen::VectorXd& m) {
    Eigen::VectorXd c(layout.size() - layout.edges_begin());
    for (int e = 0; e < graph.num_edges(); ++e) {
      const auto [u, v] = graph.edge(e);
      const int ku = graph.cardinality(u), kv = graph.cardinality(v);
      for (int a = 0; a < ku; ++a)
        for (int b = 0; b < kv; ++b) {
          const Eigen::Index cell = layout.edge_offset(e) + a * kv + b;
          c(cell - layout.edges_begin()) = m(cell) / m(layout.node_offset(u) + a);
        }
    }
    return c;
  };
  for (int b = 0; b < prior.blocks(); ++b) {
    const Eigen::VectorXd before = mu, c_before = conditionals(mu);
    prior.draw_block(g, b, mu);
    require_consistent(graph, mu);
    // Block 0 is the root's marginal: node 0's table changes and every conditional given a parent stays. Blocks 1-2 are
    // the rows of 0 -> 1 (stored (0, 1)): the conditionals of edges 1 -> 2 and 1 -> 3 given node 1 stay, and the root's
    // marginal stays.
    if (b == 0) {
      CHECK((mu.segment(layout.node_offset(0), 2) - before.segment(layout.node_offset(0), 2)).cwiseAbs().maxCoeff() > 1e-6);
      const Eigen::VectorXd c_after = conditionals(mu);
      // Stored edges whose first end is the parent (0 -> 1 and 1 -> 3) keep mu_uv / mu_u exactly.
      for (const int e : {0, 2}) {
        const auto [u, v] = graph.edge(e);
        const Eigen::Index at = layout.edge_offset(e) - layout.edges_begin();
        const int cells = graph.cardinality(u) * graph.cardinality(v);
        CHECK((c_after.segment(at, cells) - c_before.segment(at, cells)).cwiseAbs().maxCoeff() < 1e-12);
      }
    }
    if (b == 1 || b == 2) {
      CHECK((mu.segment(layout.node_offset(0), 2) - before.segment(layout.node_offset(0), 2)).cwiseAbs().maxCoeff() < 1e-15);
      CHECK((mu.segment(layout.edge_offset(0), 6) - before.segment(layout.edge_offset(0), 6)).cwiseAbs().maxCoeff() > 1e-6);
    }
  }
  // Invariance: cycling the block redraws from one prior draw is a Gibbs sampler of the prior itself, so every cell
  // keeps its Beta law (check_prior_moments). 20000 cycles; each redraws every block, and the blocks are independent a
  // priori, so successive states are independent and the Monte Carlo errors are those of independent draws.
  constexpr int cycles = 20000;
  Eigen::VectorXd sum = Eigen::VectorXd::Zero(layout.size()), sum2 = sum;
  for (int i = 0; i < cycles; ++i) {
    for (int b = 0; b < prior.blocks(); ++b) prior.draw_block(g, b, mu);
    sum += mu;
    sum2 += mu.cwiseProduct(mu);
  }
  check_prior_moments(prior, sum, sum2, cycles);
  CHECK_THROWS_WITH(prior.draw_block(g, -1, mu), Catch::Contains("block"));
  CHECK_THROWS_WITH(prior.draw_block(g, prior.blocks(), mu), Catch::Contains("[0, blocks())"));
  Eigen::VectorXd short_mu = mu.head(5);
  CHECK_THROWS_WITH(prior.draw_block(g, 0, short_mu), Catch::Contains("marginals mu"));
}

TEST_CASE("hyper_dirichlet's posterior adds the tables; bad input is rejected by name", "[graphical][bayes][errors]") {
  const pairwise_graph graph = chain_graph(3, 2);
  const hyper_dirichlet prior(graph, 4.0);
  Eigen::VectorXd s(8);
  s << 10, 5, 3, 2, 8, 5, 4, 3;
  const hyper_dirichlet post = prior.posterior(s);
  CHECK((post.pseudo_counts() - prior.pseudo_counts() - s).cwiseAbs().maxCoeff() == 0.0);
  CHECK(post.total() == Approx(24.0));
  hyper_dirichlet into = prior;
  prior.posterior(s, into);
  CHECK(into.pseudo_counts() == post.pseudo_counts());

  CHECK_THROWS_WITH(hyper_dirichlet(graph, 0.0), Catch::Contains("alpha_0"));
  CHECK_THROWS_AS(hyper_dirichlet(graph, std::numeric_limits<double>::quiet_NaN()), std::invalid_argument);
  CHECK_THROWS_WITH(hyper_dirichlet(pairwise_graph({2, 2, 2}, {{0, 1}, {1, 2}, {0, 2}}), 1.0), Catch::Contains("forest"));
  CHECK_THROWS_WITH(hyper_dirichlet(pairwise_graph({2, 2, 2}, {{0, 1}}), 1.0), Catch::Contains("node in no edge"));
  CHECK_THROWS_WITH(tree_cgm_model(pairwise_graph({2, 2, 2}, {{0, 1}})), Catch::Contains("node in no edge"));
  Eigen::VectorXd bad = s;
  bad(2) = -1.0;
  CHECK_THROWS_WITH(prior.posterior(bad), Catch::Contains("s_2"));
  bad(2) = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_AS(prior.posterior(bad), std::invalid_argument);
  CHECK_THROWS_WITH(prior.posterior(s.head(7)), Catch::Contains("edge tables s"));
  // A prior of another graph with as many released cells (a star instead of the chain) is refused by the model.
  const tree_cgm_model model(chain_graph(4, 2));
  const Eigen::VectorXd twelve = Eigen::VectorXd::Ones(12);  // every table of 4 records, one per cell
  CHECK_THROWS_WITH(model.update(hyper_dirichlet(star_graph(4, 2), 4.0), twelve, 4.0), Catch::Contains("model's own graph"));
  CHECK(model.update(hyper_dirichlet(chain_graph(4, 2), 4.0), twelve, 4.0).total() == Approx(8.0));
}

TEST_CASE("tree_cgm_model's moments are N times the exact mean and covariance of a record's edge indicators",
          "[graphical][bayes]") {
  // The forest's second tree makes every cross-tree covariance 0 (a record's trees are independent).
  for (const pairwise_graph& graph :
       {mixed_tree(), chain_graph(5, 3), star_graph(4, 2), pairwise_graph({2, 3, 3, 2, 2}, {{0, 1}, {2, 3}, {4, 3}})}) {
    const tree_cgm_model model(graph);
    const hyper_dirichlet prior(graph, 3.0);
    std::mt19937_64 g(5);
    for (int rep = 0; rep < 5; ++rep) {
      const Eigen::VectorXd mu = prior.draw(g);
      Eigen::VectorXd mean, exact_mean;
      Eigen::MatrixXd cov, exact_cov;
      model.moments(mu, 250.0, mean, cov);
      enumerated_moments(graph, mu, exact_mean, exact_cov);
      CHECK((mean - 250.0 * exact_mean).cwiseAbs().maxCoeff() < 1e-10);
      CHECK((cov - 250.0 * exact_cov).cwiseAbs().maxCoeff() < 1e-10);
      // Rank: the tangent space of the consistent tables, sum_e (K_u K_v - 1) - sum_v (deg v - 1)(K_v - 1).
      int rank = 0;
      for (int e = 0; e < graph.num_edges(); ++e) {
        const auto [u, v] = graph.edge(e);
        rank += graph.cardinality(u) * graph.cardinality(v) - 1;
      }
      for (int v = 0; v < graph.num_nodes(); ++v)
        rank -= (static_cast<int>(graph.incident(v).size()) - 1) * (graph.cardinality(v) - 1);
      const Eigen::VectorXd ev = Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(cov).eigenvalues();
      int positive = 0;
      for (Eigen::Index i = 0; i < ev.size(); ++i) positive += ev(i) > 1e-9 * ev.maxCoeff();
      CHECK(positive == rank);
      CHECK(ev.minCoeff() > -1e-9 * ev.maxCoeff());
    }
  }
  // The 10-chain with K = 3 of the spec: d = 81, rank 56.
  const tree_cgm_model chain(chain_graph(10, 3));
  std::mt19937_64 g(6);
  Eigen::VectorXd mean;
  Eigen::MatrixXd cov;
  chain.moments(hyper_dirichlet(chain_graph(10, 3), 9.0).draw(g), 1.0, mean, cov);
  const Eigen::VectorXd ev = Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(cov).eigenvalues();
  CHECK((ev.array() > 1e-9 * ev.maxCoeff()).count() == 56);
  CHECK(chain.size() == 81);
  CHECK_THROWS_WITH(chain.moments(mean, 1.0, mean, cov), Catch::Contains("marginals mu"));
}

TEST_CASE("tree_cgm_model's draw_normal_statistic has the moments' mean and covariance and keeps to their range",
          "[graphical][bayes]") {
  // 40000 draws on the mixed tree and on a forest of two trees: every mean within 5 Monte Carlo standard errors
  // (sqrt(S_ii / M)) and every covariance entry within 5 of its estimator's (sqrt((S_ii S_jj + S_ij^2) / M), the
  // normal case); each draw's departure from the mean orthogonal to S's null space (the tables consistent and each
  // summing to n), to 1e-9 n.
  const int draws = 40000;
  const double n = 300.0;
  for (const pairwise_graph& graph : {mixed_tree(), pairwise_graph({2, 3, 3, 2}, {{0, 1}, {2, 3}})}) {
    const tree_cgm_model model(graph);
    std::mt19937_64 g(17);
    const Eigen::VectorXd mu = hyper_dirichlet(graph, 6.0).draw(g);
    Eigen::VectorXd mean, x;
    Eigen::MatrixXd cov;
    model.moments(mu, n, mean, cov);
    const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eigen(cov);
    const Eigen::Index nulls = (eigen.eigenvalues().array() < 1e-9 * eigen.eigenvalues().maxCoeff()).count();
    REQUIRE(nulls > 0);
    const Eigen::MatrixXd null_space = eigen.eigenvectors().leftCols(nulls);
    Eigen::VectorXd sum = Eigen::VectorXd::Zero(model.size());
    Eigen::MatrixXd outer = Eigen::MatrixXd::Zero(model.size(), model.size());
    double worst_off_range = 0.0;
    for (int k = 0; k < draws; ++k) {
      model.draw_normal_statistic(mu, n, g, x);
      const Eigen::VectorXd departure = x - mean;
      worst_off_range = std::max(worst_off_range, (null_space.transpose() * departure).cwiseAbs().maxCoeff());
      sum += departure;
      outer.noalias() += departure * departure.transpose();
    }
    CHECK(worst_off_range < 1e-9 * n);
    const Eigen::VectorXd sample_mean = sum / draws;
    const Eigen::MatrixXd sample_cov = outer / draws - sample_mean * sample_mean.transpose();
    for (Eigen::Index i = 0; i < model.size(); ++i) {
      INFO("cell " << i << ": mean departure " << sample_mean(i) << ", variance " << sample_cov(i, i) << " vs " << cov(i, i));
      CHECK(std::abs(sample_mean(i)) <= 5.0 * std::sqrt(cov(i, i) / draws) + 1e-12);
      for (Eigen::Index j = 0; j < model.size(); ++j)
        CHECK(std::abs(sample_cov(i, j) - cov(i, j)) <=
              5.0 * std::sqrt((cov(i, i) * cov(j, j) + cov(i, j) * cov(i, j)) / draws) + 1e-12);
    }
  }
  const tree_cgm_model model(mixed_tree());
  std::mt19937_64 g(1);
  Eigen::VectorXd x;
  const Eigen::VectorXd mu = hyper_dirichlet(mixed_tree(), 6.0).draw(g);
  CHECK_THROWS_WITH(model.draw_normal_statistic(Eigen::VectorXd(mu.head(3)), 10.0, g, x), Catch::Contains("marginals mu"));
  CHECK_THROWS_WITH(model.draw_normal_statistic(mu, -1.0, g, x), Catch::Contains("records n"));
  Eigen::VectorXd bad = mu;
  bad(0) = -0.1;
  CHECK_THROWS_WITH(model.draw_normal_statistic(bad, 10.0, g, x), Catch::Contains("marginal mu_0"));
}

TEST_CASE("tree_table_support accepts exact tables and repairs anything into consistent non-negative tables",
          "[graphical][bayes]") {
  const pairwise_graph graph = mixed_tree();
  const tree_cgm_model model(graph);
  const table_layout layout(graph);
  std::mt19937_64 g(8);
  const Eigen::VectorXd mu = hyper_dirichlet(graph, 5.0).draw(g);
  tree_count_sampler sampler(graph);
  Eigen::VectorXd counts;
  sampler.sample(g, mu, 500, counts);
  Eigen::VectorXd s = counts.tail(layout.released_size());
  numerical_events events;
  CHECK(model.support().contains(s, 500.0));
  CHECK_FALSE(model.support().project(s, 500.0, events));
  CHECK(s == counts.tail(layout.released_size()));
  CHECK_FALSE(model.support().contains(s, 501.0));  // tables of 500 records are not tables of 501

  std::normal_distribution<double> noise(0.0, 30.0);
  for (int rep = 0; rep < 50; ++rep) {
    Eigen::VectorXd y = s;
    for (Eigen::Index i = 0; i < y.size(); ++i) y(i) += noise(g);
    if (rep == 0) y(3) = std::numeric_limits<double>::quiet_NaN();
    if (rep == 1) y.setConstant(-1.0);  // nothing left: uniform tables
    CHECK_FALSE(model.support().contains(y, 500.0));
    CHECK(model.support().project(y, 500.0, events));
    INFO("repetition " << rep);
    CHECK(model.support().contains(y, 500.0));
    CHECK(y.minCoeff() >= 0.0);
    if (rep == 1) CHECK(y(0) == Approx(500.0 / 6.0));
  }
}

TEST_CASE("Matheron's rule draws from NormProduct's law, and stays in a singular covariance's range", "[linalg][bayes]") {
  std::mt19937_64 g(21);
  std::normal_distribution<double> z01(0.0, 1.0);
  const Eigen::Index d = 5;
  for (const int rank : {5, 3}) {
    Eigen::MatrixXd f(d, rank);
    for (Eigen::Index i = 0; i < f.size(); ++i) f(i) = z01(g);
    const Eigen::MatrixXd s = f * f.transpose();
    Eigen::VectorXd m(d), z(d), w(d);
    for (Eigen::Index i = 0; i < d; ++i) {
      m(i) = z01(g);
      z(i) = m(i) + 2.0 * z01(g);
      w(i) = 0.5 + i;
    }
    // NormProduct's mean and covariance: S - S (S + W)^{-1} S, m + S (S + W)^{-1} (z - m).
    const Eigen::MatrixXd a = (s + Eigen::MatrixXd(w.asDiagonal())).inverse();
    const Eigen::VectorXd mean = m + s * a * (z - m);
    const Eigen::MatrixXd cov = s - s * a * s;
    numerical_events events;
    matheron_workspace ws;
    matheron_prepare(s, w, events, ws);
    constexpr int draws = 40000;
    Eigen::VectorXd x(d), sum = Eigen::VectorXd::Zero(d);
    Eigen::MatrixXd sum2 = Eigen::MatrixXd::Zero(d, d);
    // Directions orthogonal to S's range: x - m must have no component there.
    const Eigen::MatrixXd null = Eigen::MatrixXd::Identity(d, d) - f * (f.transpose() * f).inverse() * f.transpose();
    double off_range = 0.0;
    for (int i = 0; i < draws; ++i) {
      matheron_draw(g, m, s, z, w, ws, x);
      sum += x;
      sum2 += x * x.transpose();
      off_range = std::max(off_range, (null * (x - m)).cwiseAbs().maxCoeff());
    }
    const Eigen::VectorXd sample_mean = sum / draws;
    const Eigen::MatrixXd sample_cov = sum2 / draws - sample_mean * sample_mean.transpose();
    INFO("rank " << rank);
    for (Eigen::Index i = 0; i < d; ++i) {
      CHECK(std::abs(sample_mean(i) - mean(i)) < 5.0 * std::sqrt(cov(i, i) / draws) + 1e-12);
      for (Eigen::Index j = 0; j < d; ++j)
        CHECK(std::abs(sample_cov(i, j) - cov(i, j)) <
              6.0 * std::sqrt((cov(i, i) * cov(j, j) + cov(i, j) * cov(i, j)) / draws) + 1e-12);
    }
    CHECK(off_range < 1e-9);
    CHECK(events.jitter == 0);
  }
  numerical_events events;
  matheron_workspace ws;
  CHECK_THROWS_WITH(matheron_prepare(Eigen::MatrixXd::Identity(3, 3), Eigen::VectorXd::Ones(2), events, ws),
                    Catch::Contains("variances w"));
  Eigen::MatrixXd nan = Eigen::MatrixXd::Identity(2, 2);
  nan(1, 0) = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_AS(matheron_prepare(nan, Eigen::VectorXd::Ones(2), events, ws), std::domain_error);
}

TEST_CASE("tree_cgm_model's shift moves translate the tables with the marginals, keep both valid and refuse bad input",
          "[graphical][bayes][errors]") {
  // mixed_tree() (11 blocks): N = 500 records, Laplace noise at epsilon 0.05 (the noise dominates: moves are accepted).
  const pairwise_graph graph = mixed_tree();
  const table_layout layout(graph);
  const tree_cgm_model model(graph);
  const hyper_dirichlet prior(graph, 6.0);
  const laplace_mechanism mechanism(contingency_l1_sensitivity(graph), 0.05);
  std::mt19937_64 g(31);
  Eigen::VectorXd mu = prior.draw(g), counts;
  tree_count_sampler(graph).sample(g, mu, 500, counts);
  Eigen::VectorXd s = counts.tail(layout.released_size());
  const Eigen::VectorXd z = mechanism.release(s, g);
  const double n = 500.0;
  int accepted = 0;
  for (int pass = 0; pass < 50; ++pass) {
    const Eigen::VectorXd residual = s - n * mu.tail(layout.released_size());
    const move_tally tally = model.shift_move(prior, mu, s, z, mechanism, n, g);
    CHECK(tally.proposed == prior.blocks());
    CHECK(tally.accepted >= 0);
    CHECK(tally.accepted <= tally.proposed);
    accepted += tally.accepted;
    // A translation: the tables' departure from their mean is kept (to rounding), and both stay valid.
    CHECK((s - n * mu.tail(layout.released_size()) - residual).cwiseAbs().maxCoeff() < 1e-8 * n);
    require_consistent(graph, mu);
    CHECK(model.support().contains(s, n));
  }
  INFO("accepted " << accepted << " of " << 50 * prior.blocks());
  CHECK(accepted > 50);  // the moves do move
  // Errors by name.
  Eigen::VectorXd short_mu = mu.head(3), short_s = s.head(3), short_z = z.head(3);
  CHECK_THROWS_WITH(model.shift_move(prior, short_mu, s, z, mechanism, n, g), Catch::Contains("marginals mu"));
  CHECK_THROWS_WITH(model.shift_move(prior, mu, short_s, z, mechanism, n, g), Catch::Contains("edge tables s"));
  CHECK_THROWS_WITH(model.shift_move(prior, mu, s, short_z, mechanism, n, g), Catch::Contains("release z"));
  const hyper_dirichlet other(chain_graph(3, 2), 4.0);
  CHECK_THROWS_WITH(model.shift_move(other, mu, s, z, mechanism, n, g), Catch::Contains("own graph"));
  // A node state of probability 0 leaves the state as it is (its rows are undetermined).
  Eigen::VectorXd degenerate = mu;
  degenerate(layout.node_offset(0)) = 0.0;
  const Eigen::VectorXd s_before = s;
  CHECK(model.shift_move(prior, degenerate, s, z, mechanism, n, g).proposed == 0);
  CHECK(s == s_before);
}
