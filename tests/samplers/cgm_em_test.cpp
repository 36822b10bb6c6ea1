// CGM-EM (docs/design-cgm.md Sec. 3.5, 3.6, 5.5): the moment maps (pseudo-moment MLE, Bethe entropy, exact KL),
// the box-dual E-step (certified optimum: gap, KKT and the objective against 10^4 feasible points), EM's invariants
// (|y - n_t|_1 non-increasing and F non-decreasing for the literal Algorithm 2, the closed-form M-step equal to
// theta + g in distribution, the fixed point of a single table), MAP-EM without zeros, fit(), and the error paths.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "support/graphical_fixtures.hpp"

#include "privpost/families/graphical/brute_force.hpp"
#include "privpost/families/graphical/contingency_tables.hpp"
#include "privpost/families/graphical/junction_tree.hpp"
#include "privpost/families/graphical/loopy_bp.hpp"
#include "privpost/families/graphical/moments.hpp"
#include "privpost/families/graphical/pairwise_graph.hpp"
#include "privpost/families/graphical/tree_bp.hpp"
#include "privpost/inference/fit.hpp"
#include "privpost/mechanisms/gaussian.hpp"
#include "privpost/mechanisms/laplace.hpp"
#include "privpost/samplers/cgm/box_dual.hpp"
#include "privpost/samplers/cgm/cgm_em.hpp"
#include "privpost/samplers/cgm/cgm_noise.hpp"
#include "privpost/samplers/cgm/m_step.hpp"
#include "privpost/samplers/cgm/nlbp.hpp"
#include "privpost/testing/cgm_study.hpp"

using namespace privpost;

using privpost_test::chain_records;
using privpost_test::dirichlet_theta;
using privpost_test::random_theta;

namespace {
// The primal objective of the E-step on a tree: theta^T n + N H(n / N) + log p(y | n).
template <class Noise>
double estep_objective(const pairwise_graph& graph, const Eigen::VectorXd& theta, const Eigen::VectorXd& y, double n_rec,
                       const Noise& noise, const Eigen::VectorXd& n) {
  const Eigen::Index d = y.size();
  return theta.dot(n) + n_rec * bethe_entropy(graph, n / n_rec) + noise.log_likelihood(y, n.tail(d));
}

// One release of the study's chain (Dirichlet(1) edge potentials, n records counted exactly, every edge table released by
// Laplace at the relation's sensitivity / epsilon): the truth, the released tables and the Laplace scale.
struct chain_study_release {
  Eigen::VectorXd truth, y;
  double scale = 0.0;
};
chain_study_release release_study_chain(const pairwise_graph& chain, std::uint64_t seed, std::int64_t n,
                                        neighbour_relation relation, double epsilon) {
  const table_layout layout(chain);
  tree_bp bp(chain);
  tree_count_sampler counter(chain);
  std::mt19937_64 g(seed);
  Eigen::VectorXd mu, counts;
  chain_study_release out;
  out.truth = dirichlet_edge_potentials(chain, g);
  bp.marginals(out.truth, mu);
  counter.sample(g, mu, n, counts);
  const laplace_mechanism mechanism(contingency_l1_sensitivity(chain, relation), epsilon);
  out.y = mechanism.release(Eigen::VectorXd(counts.tail(layout.released_size())), g);
  out.scale = mechanism.scale();
  return out;
}
}  // namespace

TEST_CASE("pseudo-moment MLE inverts the moment map on trees; Bethe entropy and exact KL", "[cgm]") {
  std::mt19937_64 g(11);
  for (int trial = 0; trial < 40; ++trial) {
    const pairwise_graph graph = trial % 2 == 0 ? chain_graph(2 + trial % 5, 2 + trial % 3) : star_graph(2 + trial % 4, 3);
    const table_layout layout(graph);
    tree_bp bp(graph);
    brute_force_inference brute(graph);
    const Eigen::VectorXd theta = random_theta(layout, g, 1.0);
    Eigen::VectorXd mu, mu_hat, theta_hat;
    bp.marginals(theta, mu);
    const double a = bp.log_partition();
    CHECK(pseudo_moment_parameters(graph, mu, theta_hat) == 0);
    bp.marginals(theta_hat, mu_hat);
    CHECK((mu_hat - mu).cwiseAbs().maxCoeff() < 1e-10);
    CHECK(exact_kl(bp, theta, theta_hat) < 1e-12);
    // Entropy of the model: A - <theta, mu> (exact on trees) equals the Bethe entropy of its marginals.
    CHECK(bethe_entropy(graph, mu) == Approx(a - theta.dot(mu)).margin(1e-10));
    // KL by the two back ends agrees, and is > 0 for a different model.
    const Eigen::VectorXd other = random_theta(layout, g, 1.0);
    const double kl = exact_kl(bp, theta, other);
    CHECK(kl > 0.0);
    CHECK(exact_kl(brute, theta, other) == Approx(kl).epsilon(1e-10));
  }
  // Gauge move: add c(x_1) to edge (0,1) and subtract it from edge (1,2): same distribution, KL 0.
  const pairwise_graph chain = chain_graph(3, 3);
  const table_layout layout(chain);
  tree_bp bp(chain);
  std::mt19937_64 h(3);
  const Eigen::VectorXd theta = random_theta(layout, h, 1.0);
  Eigen::VectorXd moved = theta;
  for (int x1 = 0; x1 < 3; ++x1) {
    const double c = 0.7 * (x1 + 1);
    for (int a = 0; a < 3; ++a) {
      moved(layout.edge_offset(0) + a * 3 + x1) += c;
      moved(layout.edge_offset(1) + x1 * 3 + a) -= c;
    }
  }
  CHECK(exact_kl(bp, theta, moved) < 1e-12);
  // Zeros are floored and counted, never -inf.
  Eigen::VectorXd mu;
  bp.marginals(theta, mu);
  mu.segment(layout.edge_offset(0), 9).setZero();
  mu(layout.edge_offset(0)) = 1.0;
  Eigen::VectorXd theta_hat;
  CHECK(pseudo_moment_parameters(chain, mu, theta_hat) == 8);
  CHECK(theta_hat.allFinite());
  CHECK_THROWS_AS(pseudo_moment_parameters(kth_order_chain_graph(4, 2, 2), Eigen::VectorXd::Constant(16, 0.25), theta_hat),
                  std::invalid_argument);
  mu(0) = -0.1;
  CHECK_THROWS_AS(pseudo_moment_parameters(chain, mu, theta_hat), std::invalid_argument);
}

TEST_CASE("box-dual E-step: certified optimum of the Laplace MAP problem (chain T = 3, K = 2, N = 100, b = 5)", "[cgm]") {
  const pairwise_graph chain = chain_graph(3, 2);
  const table_layout layout(chain);
  tree_bp bp(chain);
  std::mt19937_64 g(5);
  const double n_rec = 100.0, b = 5.0;
  const auto noise = cgm_evidence::laplace(b);
  for (int trial = 0; trial < 5; ++trial) {
    const Eigen::VectorXd theta = random_theta(layout, g, 1.0);
    const Eigen::MatrixXi x = chain_records(chain, theta, 100, g);
    Eigen::VectorXd y = edge_tables(chain, x);
    std::exponential_distribution<double> e(1.0 / b);
    for (Eigen::Index j = 0; j < y.size(); ++j) y(j) += (g() % 2 == 0 ? 1.0 : -1.0) * e(g);
    box_dual_estep solver(chain);
    Eigen::VectorXd dual, n;
    const estep_result r = solver.solve(bp, theta, y, n_rec, noise, dual, n);
    INFO("trial " << trial << ", iterations " << r.iterations << ", gap " << r.gap);
    REQUIRE(r.converged);
    CHECK(r.certified);
    CHECK(r.gap <= 1e-8 * n_rec);
    // KKT: n = N mu(theta + g); |g_j| <= 1/b, and g_j = sign(y_j - n_j) / b wherever the residual is not tiny.
    Eigen::VectorXd tilted = theta, mu;
    tilted.tail(y.size()) += dual;
    bp.marginals(tilted, mu);
    CHECK((n - n_rec * mu).cwiseAbs().maxCoeff() < 1e-9);
    CHECK(r.log_partition == Approx(bp.log_partition()).epsilon(1e-14));
    for (Eigen::Index j = 0; j < y.size(); ++j) {
      CHECK(std::abs(dual(j)) <= 1.0 / b + 1e-15);
      const double res = y(j) - n(layout.edges_begin() + j);
      if (std::abs(res) > 1e-6 * n_rec) CHECK(dual(j) * b == Approx(res > 0 ? 1.0 : -1.0).epsilon(1e-6));
    }
    // The objective at n* is at least that at 10^4 random feasible points N mu(theta') and their convex combinations.
    const double best = estep_objective(chain, theta, y, n_rec, noise, n);
    std::uniform_real_distribution<double> u(0.0, 1.0);
    int worse = 0;
    Eigen::VectorXd prev = n;
    for (int k = 0; k < 10000; ++k) {
      bp.marginals(random_theta(layout, g, 2.0), mu);
      Eigen::VectorXd candidate = n_rec * mu;
      if (k % 2 == 1) {
        const double w = u(g);
        candidate = w * candidate + (1.0 - w) * (k % 4 == 1 ? prev : n);
      }
      prev = candidate;
      if (estep_objective(chain, theta, y, n_rec, noise, candidate) > best + 1e-7) ++worse;
    }
    CHECK(worse == 0);
    // Warm start from the solution: converged at the first evaluation.
    const estep_result again = solver.solve(bp, theta, y, n_rec, noise, dual, n);
    CHECK(again.iterations == 1);
    // The same problem through brute-force inference gives the same n.
    brute_force_inference brute(chain);
    Eigen::VectorXd dual2, n2;
    const estep_result r2 = box_dual_estep(chain).solve(brute, theta, y, n_rec, noise, dual2, n2);
    CHECK(r2.certified);
    CHECK((n2 - n).cwiseAbs().maxCoeff() < 1e-4 * n_rec);
  }
}

TEST_CASE("box-dual E-step with Gaussian noise: gap >= 0 at every point and KKT r = sigma^2 g at the optimum", "[cgm]") {
  const pairwise_graph graph = star_graph(4, 3);
  const table_layout layout(graph);
  tree_bp bp(graph);
  std::mt19937_64 g(17);
  const double n_rec = 500.0, sigma = 8.0;
  const auto noise = cgm_evidence::gaussian(sigma);
  const Eigen::VectorXd theta = random_theta(layout, g, 1.0);
  Eigen::VectorXd mu;
  bp.marginals(random_theta(layout, g, 1.0), mu);
  std::normal_distribution<double> z(0.0, sigma);
  Eigen::VectorXd y = n_rec * mu.tail(layout.released_size());
  for (Eigen::Index j = 0; j < y.size(); ++j) y(j) += z(g);
  Eigen::VectorXd dual, n;
  const estep_result r = box_dual_estep(graph).solve(bp, theta, y, n_rec, noise, dual, n);
  REQUIRE(r.converged);
  // The gap is sum_j (r_j - sigma^2 g_j)^2 / (2 sigma^2) <= 1e-8 N, so each |r_j - sigma^2 g_j| <= sqrt(2 sigma^2 1e-8 N).
  const Eigen::VectorXd res = y - n.tail(y.size());
  CHECK((res - sigma * sigma * dual).squaredNorm() / (2.0 * sigma * sigma) == Approx(r.gap).epsilon(1e-9));
  CHECK((res - sigma * sigma * dual).cwiseAbs().maxCoeff() <= std::sqrt(2.0 * sigma * sigma * 1e-8 * n_rec));
  CHECK(r.iterations < 1000);
  const double best = estep_objective(graph, theta, y, n_rec, noise, n);
  for (int k = 0; k < 2000; ++k) {
    const Eigen::VectorXd other = random_theta(layout, g, 1.5);
    bp.marginals(other, mu);
    CHECK(estep_objective(graph, theta, y, n_rec, noise, Eigen::VectorXd(n_rec * mu)) <= best + 1e-7);
    CHECK(noise.duality_gap(y - n_rec * mu.tail(y.size()), other.tail(y.size())) >= 0.0);
  }
}

TEST_CASE("literal EM: |y - n_t|_1 non-increasing, F non-decreasing, M-step = theta + g in distribution", "[cgm]") {
  const pairwise_graph chain = chain_graph(4, 3);
  const table_layout layout(chain);
  std::mt19937_64 g(23);
  const Eigen::VectorXd truth = dirichlet_theta(chain, g);
  const double n_rec = 1000.0, epsilon = 0.5;
  const laplace_mechanism mechanism(contingency_l1_sensitivity(chain), epsilon);
  const Eigen::VectorXd y = mechanism.release(edge_tables(chain, chain_records(chain, truth, 1000, g)), g);
  cgm_em_options options;
  options.pseudo_count = 0.0;
  cgm_em em(chain, y, n_rec, make_cgm_noise(mechanism), tree_bp(chain), options);
  tree_bp bp(chain);
  for (int t = 0; t < 60; ++t) {
    const Eigen::VectorXd before = em.parameter_vector();
    em.iterate();
    Eigen::VectorXd tilted = before;
    tilted.tail(layout.released_size()) += em.tilt();
    CHECK(exact_kl(bp, tilted, em.parameter_vector()) < 1e-12);
  }
  const auto& trace = em.trace();
  REQUIRE(trace.size() == 60);
  for (std::size_t t = 1; t < trace.size(); ++t) {
    INFO("iteration " << t);
    CHECK(trace[t].residual_l1 <= trace[t - 1].residual_l1 + 1e-5 * n_rec);
    CHECK(trace[t].objective >= trace[t - 1].objective - 1e-5 * n_rec);
  }
  CHECK(trace.back().residual_l1 < trace.front().residual_l1);
  CHECK(em.events().inner_solver_nonconverged == 0);
}

TEST_CASE("EM fixed point of one table: literal EM reaches n = y and mu-hat = y / N", "[cgm]") {
  const pairwise_graph edge = chain_graph(2, 2);
  const table_layout layout(edge);
  Eigen::VectorXd y(4);
  y << 40.0, 10.0, 20.0, 30.0;
  cgm_em_options options;
  options.pseudo_count = 0.0;  // default tol 1e-7: EM's change cannot fall below the E-step's gap precision
  cgm_em em(edge, y, 100.0, cgm_evidence::laplace(4.0), tree_bp(edge), options);
  const fit_result r = fit(em, fit_options{5000});
  CHECK(r.converged);
  tree_bp bp(edge);
  Eigen::VectorXd mu;
  bp.marginals(r.parameter, mu);
  CHECK((mu.tail(4) - y / 100.0).cwiseAbs().maxCoeff() < 1e-4);
  CHECK((em.counts().tail(4) - y).cwiseAbs().maxCoeff() < 1e-2);
}

TEST_CASE("MAP-EM: no zeros from a noisy release with negative cells; beats the literal EM run long", "[cgm]") {
  // Chain T = 6, K = 3, N = 1000, epsilon = 0.1 at the dissertation's scale b = |E| / epsilon = 50: the noise swamps
  // the tables (docs/design-cgm.md Sec. 3.6: literal EM overfits the L1 projection's zeros; MAP-EM keeps every cell positive).
  const pairwise_graph chain = chain_graph(6, 3);
  std::mt19937_64 g(29);
  const Eigen::VectorXd truth = dirichlet_theta(chain, g);
  const laplace_mechanism mechanism(contingency_l1_sensitivity(chain, neighbour_relation::add_remove), 0.1);
  tree_bp bp(chain);
  int map_better = 0;
  const int trials = 3;
  for (int trial = 0; trial < trials; ++trial) {
    const Eigen::VectorXd y = mechanism.release(edge_tables(chain, chain_records(chain, truth, 1000, g)), g);
    REQUIRE(y.minCoeff() < 0.0);
    cgm_em map(chain, y, 1000.0, make_cgm_noise(mechanism), tree_bp(chain));
    const fit_result m = fit(map, fit_options{1000});
    CHECK(m.events.log_floors == 0);
    CHECK(map.counts().minCoeff() > 0.0);
    cgm_em_options literal;
    literal.pseudo_count = 0.0;
    literal.keep_trace = false;
    cgm_em lit(chain, y, 1000.0, make_cgm_noise(mechanism), tree_bp(chain), literal);
    const fit_result l = fit(lit, fit_options{3000});
    const double kl_map = exact_kl(bp, truth, m.parameter), kl_lit = exact_kl(bp, truth, l.parameter);
    INFO("trial " << trial << ": KL MAP-EM " << kl_map << " (" << m.iterations << " it), literal EM " << kl_lit << " ("
                  << l.iterations << " it), uniform " << exact_kl(bp, truth, Eigen::VectorXd::Zero(truth.size())));
    CHECK(std::isfinite(kl_map));
    // And it learned something: closer than the uniform model (theta = 0).
    CHECK(kl_map < exact_kl(bp, truth, Eigen::VectorXd::Zero(truth.size())));
    if (kl_map < kl_lit) ++map_better;
  }
  CHECK(map_better == trials);
}

TEST_CASE("cgm_em on a graph with cycles (exact back end, literal EM) and its refusals", "[cgm]") {
  const pairwise_graph triangle(std::vector<int>{2, 2, 2}, {{0, 1}, {1, 2}, {0, 2}});
  Eigen::VectorXd y(12);
  y << 30, 20, 10, 40, 25, 15, 35, 25, 28, 12, 22, 38;
  cgm_em_options options;
  options.pseudo_count = 0.0;
  cgm_em em(triangle, y, 100.0, cgm_evidence::laplace(6.0), brute_force_inference(triangle), options);
  const fit_result r = fit(em, fit_options{200});
  CHECK(r.iterations >= 1);
  CHECK(r.parameter.allFinite());
  for (std::size_t t = 1; t < em.trace().size(); ++t) CHECK(em.trace()[t].residual_l1 <= em.trace()[t - 1].residual_l1 + 1e-3);
  // MAP-EM (pseudo-count 10) on the cycle: the exact M-step leaves theta-hat at the MLE of the smoothed tables n_t.
  cgm_em map_em(triangle, y, 100.0, cgm_evidence::laplace(6.0), brute_force_inference(triangle));
  const fit_result m = fit(map_em, fit_options{500});
  CHECK(m.converged);
  CHECK(m.events.inner_solver_nonconverged == 0);
  Eigen::VectorXd smoothed, fitted;
  pseudo_count_marginals(triangle, map_em.counts(), 100.0, 10.0, smoothed);
  brute_force_inference brute(triangle);
  brute.marginals(m.parameter, fitted);
  CHECK((fitted - smoothed).cwiseAbs().maxCoeff() < 1e-8);
}

TEST_CASE("a capped box-dual E-step returns a consistent point no worse than its start", "[cgm]") {
  // At the cap the solver returns the in-box point of smallest duality gap it evaluated: for every cap the returned
  // (g, n) is consistent (n = N mu(theta + g), g in the box, the reported gap is that pair's) and its gap is at most
  // the warm start's, so an EM iteration whose E-step is capped never moves to a worse dual point than the last one.
  const pairwise_graph chain = chain_graph(10, 3);
  const table_layout layout(chain);
  std::mt19937_64 g(71);
  const Eigen::VectorXd theta = dirichlet_theta(chain, g);
  tree_bp bp(chain);
  Eigen::VectorXd mu;
  bp.marginals(theta, mu);
  const double n_rec = 1e4, b = 90.0;
  const auto noise = cgm_evidence::laplace(b);
  Eigen::VectorXd y = n_rec * mu.tail(layout.released_size());
  std::exponential_distribution<double> e(1.0 / b);
  for (Eigen::Index j = 0; j < y.size(); ++j) y(j) += (g() % 2 == 0 ? 1.0 : -1.0) * e(g);
  const Eigen::VectorXd start = Eigen::VectorXd::Constant(y.size(), 0.5 / b);
  bp.marginals(
      Eigen::VectorXd(theta + (Eigen::VectorXd(layout.size()) << Eigen::VectorXd::Zero(layout.edges_begin()), start).finished()),
      mu);
  const double start_gap = noise.duality_gap(Eigen::VectorXd(y - n_rec * mu.tail(y.size())), start);
  for (int cap = 1; cap <= 40; ++cap) {
    Eigen::VectorXd dual = start, n;
    const estep_result r = box_dual_estep(chain, estep_options{1e-16, 1e-12, cap}).solve(bp, theta, y, n_rec, noise, dual, n);
    Eigen::VectorXd tilted = theta;
    tilted.tail(y.size()) += dual;
    bp.marginals(tilted, mu);
    INFO("cap " << cap << ": gap " << r.gap << ", start " << start_gap);
    CHECK_FALSE(r.converged);
    CHECK(r.iterations >= cap + 1);  // the cap's iterations, the last iterate's evaluation and the best point's
    CHECK(r.iterations <= cap + 2);
    CHECK(dual.cwiseAbs().maxCoeff() <= 1.0 / b);
    CHECK((n - n_rec * mu).cwiseAbs().maxCoeff() < 1e-9 * n_rec);
    CHECK(r.gap == Approx(noise.duality_gap(Eigen::VectorXd(y - n.tail(y.size())), dual)).epsilon(1e-12));
    CHECK(r.gap <= start_gap);
  }
}

TEST_CASE("MAP-EM where the noise dominates: the stall watch tightens the E-steps and the fit converges", "[cgm]") {
  // The study's chain (T = 10, K = 3, Dirichlet(1) potentials, N = 10^4 counted exactly) at epsilon = 0.01 (b = 900):
  // with E-steps at gap_tol = 1e-8 N, EM's change settles at about 5e-7 > tol = 1e-7, the E-step's own error, and
  // the fit never converges (estep_tighten = 1 disables the watch: still moving after 14000 iterations); with the
  // watch the E-steps tighten (to 0.01 gap_tol) and the fit converges at the same KL (plain EM: 10849 iterations
  // measured; with SQUAREM, the default, fewer).
  const pairwise_graph chain = chain_graph(10, 3);
  tree_bp bp(chain);
  const chain_study_release release = release_study_chain(chain, 2017, 10000, neighbour_relation::add_remove, 0.01);
  const Eigen::VectorXd& truth = release.truth;
  const Eigen::VectorXd& y = release.y;
  const auto noise = cgm_evidence::laplace(release.scale);
  cgm_em_options options;
  options.keep_trace = false;
  cgm_em watched(chain, y, 1e4, noise, tree_bp(chain), options);
  const fit_result r = fit(watched, fit_options{14000});
  options.estep_tighten = 1.0;
  cgm_em unwatched(chain, y, 1e4, noise, tree_bp(chain), options);
  const fit_result plain = fit(unwatched, fit_options{14000});
  const double kl = exact_kl(bp, truth, r.parameter), kl_plain = exact_kl(bp, truth, plain.parameter);
  INFO("watched: " << r.iterations << " iterations, " << watched.estep_tightenings() << " tightenings, KL " << kl
                   << "; unwatched: converged " << plain.converged << ", KL " << kl_plain);
  CHECK(r.converged);
  CHECK(watched.estep_tightenings() >= 1);
  CHECK(watched.estep_tightenings() <= 2);
  CHECK_FALSE(plain.converged);
  CHECK(unwatched.estep_tightenings() == 0);
  CHECK(std::abs(kl - kl_plain) < 1e-4 * kl);
}

TEST_CASE("CGM-EM error paths name the value", "[cgm]") {
  const pairwise_graph chain = chain_graph(3, 2);
  const Eigen::VectorXd y = Eigen::VectorXd::Constant(8, 25.0);
  using em_t = cgm_em<tree_bp, cgm_evidence>;
  CHECK_THROWS_AS(em_t(chain, Eigen::VectorXd::Constant(7, 1.0), 100.0, cgm_evidence::laplace(1.0), tree_bp(chain)),
                  std::invalid_argument);
  Eigen::VectorXd bad = y;
  bad(3) = std::nan("");
  CHECK_THROWS_WITH(em_t(chain, bad, 100.0, cgm_evidence::laplace(1.0), tree_bp(chain)), Catch::Contains("y_j"));
  CHECK_THROWS_WITH(em_t(chain, y, 0.0, cgm_evidence::laplace(1.0), tree_bp(chain)), Catch::Contains("N"));
  cgm_em_options negative;
  negative.pseudo_count = -1.0;
  CHECK_THROWS_WITH(em_t(chain, y, 100.0, cgm_evidence::laplace(1.0), tree_bp(chain), negative), Catch::Contains("pseudo_count"));
  CHECK_THROWS_AS(em_t(chain, y, 100.0, cgm_evidence::laplace(1.0), tree_bp(chain_graph(4, 2))), std::invalid_argument);
  cgm_em_options relax;
  relax.estep_relax = -0.5;
  CHECK_THROWS_WITH(em_t(chain, y, 100.0, cgm_evidence::laplace(1.0), tree_bp(chain), relax), Catch::Contains("estep_relax"));
  relax.estep_relax = std::nan("");
  CHECK_THROWS_WITH(em_t(chain, y, 100.0, cgm_evidence::laplace(1.0), tree_bp(chain), relax), Catch::Contains("estep_relax"));
  CHECK_THROWS_AS(cgm_evidence::laplace(0.0), std::invalid_argument);
  CHECK_THROWS_AS(cgm_evidence::gaussian(std::nan("")), std::invalid_argument);
  CHECK_THROWS_AS(box_dual_estep(chain, estep_options{0.0, 10}), std::invalid_argument);
  CHECK_THROWS_AS(box_dual_estep(chain, estep_options{1e-8, 0}), std::invalid_argument);
  {
    tree_bp bp(chain);
    Eigen::VectorXd warm = Eigen::VectorXd::Zero(8), n;
    warm(2) = std::nan("");
    CHECK_THROWS_WITH(box_dual_estep(chain).solve(bp, Eigen::VectorXd::Zero(14), y, 100.0, cgm_evidence::laplace(1.0), warm, n),
                      Catch::Contains("g_j"));
    warm.setZero();
    for (const double scale : {0.0, -0.5, std::nan(""), std::numeric_limits<double>::infinity()})
      CHECK_THROWS_WITH(
          box_dual_estep(chain).solve(bp, Eigen::VectorXd::Zero(14), y, 100.0, cgm_evidence::laplace(1.0), warm, n, scale),
          Catch::Contains("tolerance_scale") && Catch::Contains("> 0"));
  }
  cgm_em_options tighten;
  for (const double bad : {0.0, 1.5, std::nan("")}) {
    tighten.estep_tighten = bad;
    CHECK_THROWS_WITH(em_t(chain, y, 100.0, cgm_evidence::laplace(1.0), tree_bp(chain), tighten),
                      Catch::Contains("estep_tighten"));
  }
  em_t em(chain, y, 100.0, cgm_evidence::laplace(1.0), tree_bp(chain));
  CHECK_THROWS_AS(fit(em, fit_options{0}), std::invalid_argument);
  // A capped E-step is counted, not thrown; fit reports the cap.
  cgm_em_options capped;
  capped.estep.max_iterations = 1;
  Eigen::VectorXd skewed = y;
  skewed(0) = 90.0;
  em_t short_em(chain, skewed, 100.0, cgm_evidence::laplace(1.0), tree_bp(chain), capped);
  int calls = 0;
  const fit_result r = fit(short_em, fit_options{3}, [&](const fit_progress& p) { calls = p.iteration; });
  CHECK(calls == 3);
  CHECK_FALSE(r.converged);
  CHECK(r.iterations == 3);
  CHECK(r.events.inner_solver_nonconverged >= 1);
}

TEST_CASE("NLBP (the text's E-step) agrees with the box dual; a constant damping chatters", "[cgm]") {
  // Two instances of docs/design-cgm.md Sec. 5.5: chain T = 3, K = 2, N = 100, b = 5 (random theta), and the study's 10-chain,
  // K = 3, N = 10^4, b = 90 at the true theta. NLBP with the diminishing damping, 2000 iterations: within 1e-3 N in L1
  // and 1e-4 relative in the objective of the certified box-dual optimum, and never above it.
  std::mt19937_64 g(37);
  struct instance {
    pairwise_graph graph;
    double n_rec, b;
    bool dirichlet;
  };
  for (const instance& in : {instance{chain_graph(3, 2), 100.0, 5.0, false}, instance{chain_graph(10, 3), 1e4, 90.0, true}}) {
    const table_layout layout(in.graph);
    tree_bp bp(in.graph);
    const Eigen::VectorXd theta = in.dirichlet ? dirichlet_theta(in.graph, g) : random_theta(layout, g, 1.0);
    const auto noise = cgm_evidence::laplace(in.b);
    Eigen::VectorXd y = edge_tables(in.graph, chain_records(in.graph, theta, static_cast<int>(in.n_rec), g));
    std::exponential_distribution<double> e(1.0 / in.b);
    for (Eigen::Index j = 0; j < y.size(); ++j) y(j) += (g() % 2 == 0 ? 1.0 : -1.0) * e(g);
    Eigen::VectorXd dual, n_dual;
    REQUIRE(box_dual_estep(in.graph).solve(bp, theta, y, in.n_rec, noise, dual, n_dual).certified);
    const double best = estep_objective(in.graph, theta, y, in.n_rec, noise, n_dual);
    Eigen::VectorXd n;
    const nlbp_result r = nlbp_estep(in.graph).solve(bp, theta, y, in.n_rec, noise, n);
    const double objective = estep_objective(in.graph, theta, y, in.n_rec, noise, n);
    INFO("N " << in.n_rec << ": L1 distance " << (n - n_dual).lpNorm<1>() << ", objective " << objective << " vs " << best
              << ", iterations " << r.iterations);
    CHECK(r.iterations == 2000);
    CHECK((n - n_dual).lpNorm<1>() <= 1e-3 * in.n_rec);
    CHECK(objective <= best + 1e-9 * std::abs(best));
    CHECK(best - objective <= 1e-4 * std::abs(best));
    // Every NLBP iterate is in N M: tables sum to N and are consistent with the node tables.
    CHECK(n.head(in.graph.cardinality(0)).sum() == Approx(in.n_rec));
    CHECK(n.tail(layout.released_size()).minCoeff() > 0.0);
    if (in.dirichlet) {
      nlbp_options constant;
      constant.diminishing = false;
      Eigen::VectorXd n_constant;
      nlbp_estep(in.graph, constant).solve(bp, theta, y, in.n_rec, noise, n_constant);
      const double chatter = (n_constant - n_dual).cwiseAbs().maxCoeff(), averaged = (n - n_dual).cwiseAbs().maxCoeff();
      INFO("largest cell distance: constant alpha 0.5 " << chatter << ", diminishing " << averaged);
      CHECK(chatter > 2.0 * averaged);
    }
  }
  CHECK_THROWS_WITH(nlbp_estep(chain_graph(3, 2), nlbp_options{1.5}), Catch::Contains("alpha0"));
  CHECK_THROWS_WITH(nlbp_estep(chain_graph(3, 2), nlbp_options{0.5, 0.0}), Catch::Contains("kappa"));
}

TEST_CASE("cgm_em with the NLBP E-step lands near the box-dual fit", "[cgm]") {
  const pairwise_graph chain = chain_graph(5, 3);
  std::mt19937_64 g(41);
  const Eigen::VectorXd truth = dirichlet_theta(chain, g);
  const laplace_mechanism mechanism(contingency_l1_sensitivity(chain), 0.5);
  const Eigen::VectorXd y = mechanism.release(edge_tables(chain, chain_records(chain, truth, 2000, g)), g);
  cgm_em box(chain, y, 2000.0, make_cgm_noise(mechanism), tree_bp(chain));
  cgm_em_options options;
  options.method = estep_method::nlbp;
  options.nlbp.max_iterations = 300;
  cgm_em nlbp(chain, y, 2000.0, make_cgm_noise(mechanism), tree_bp(chain), options);
  for (int t = 0; t < 100; ++t) {
    box.iterate();
    nlbp.iterate();
  }
  tree_bp bp(chain);
  const double between = exact_kl(bp, box.parameter_vector(), nlbp.parameter_vector());
  const double to_truth = exact_kl(bp, truth, box.parameter_vector());
  INFO("KL(box-dual fit || NLBP fit) " << between << ", KL(truth || box-dual fit) " << to_truth);
  CHECK(between < 0.05 * to_truth);
  CHECK(nlbp.trace().back().objective == Approx(box.trace().back().objective).epsilon(1e-3));
}

TEST_CASE("NLBP on graphs with cycles: the exact E-step with an exact back end, the Bethe one with loopy BP", "[cgm][loopy]") {
  // A third-order chain T = 6, K = 2 (12 edges, cycles), N = 2000, b = 12, a random theta. With brute force and the
  // junction tree NLBP's fixed point is the exact E-step's optimum, which the certified box dual gives: NLBP (2000
  // iterations, diminishing damping) within 1 count in every cell and 1e-2 N in L1 of it (measured 0.53 and 7.7 counts;
  // the diminishing damping averages the Laplace kink's chatter slowly: 5.5 counts after 32000 iterations). With loopy BP
  // both find a Bethe stationary point: the same bounds against the box dual through loopy BP (measured 0.67 and 13.1),
  // whose point is 557 counts from the exact one. Every NLBP iterate keeps positive, N-summing tables.
  std::mt19937_64 g(67);
  const pairwise_graph third = kth_order_chain_graph(6, 3, 2);
  const table_layout layout(third);
  const double n_rec = 2000.0;
  const Eigen::VectorXd theta = random_theta(layout, g, 0.5);
  brute_force_inference brute(third);
  Eigen::VectorXd mu;
  brute.marginals(theta, mu);
  const auto noise = cgm_evidence::laplace(12.0);
  Eigen::VectorXd y = n_rec * mu.tail(layout.released_size());
  std::exponential_distribution<double> e(1.0 / 12.0);
  for (Eigen::Index j = 0; j < y.size(); ++j) y(j) += (g() % 2 == 0 ? 1.0 : -1.0) * e(g);
  Eigen::VectorXd dual, n_dual;
  REQUIRE(box_dual_estep(third).solve(brute, theta, y, n_rec, noise, dual, n_dual).certified);
  auto check_nlbp = [&](auto& inference, const Eigen::VectorXd& reference, const char* name) {
    Eigen::VectorXd n;
    const nlbp_result r = nlbp_estep(third).solve(inference, theta, y, n_rec, noise, n);
    INFO(name << ": L1 distance to the box dual " << (n - reference).lpNorm<1>() << " after " << r.iterations << " iterations");
    CHECK((n - reference).cwiseAbs().maxCoeff() <= 1.0);
    CHECK((n - reference).lpNorm<1>() <= 1e-2 * n_rec);
    CHECK(n.tail(layout.released_size()).minCoeff() > 0.0);
    CHECK(n.head(third.cardinality(0)).sum() == Approx(n_rec));
    CHECK(r.inference_nonconverged == 0);
  };
  check_nlbp(brute, n_dual, "brute force");
  junction_tree jt(third);
  check_nlbp(jt, n_dual, "junction tree");
  loopy_bp_options tight;
  tight.tol = 1e-12;
  loopy_bp loopy(third, tight);
  Eigen::VectorXd dual_bethe, n_bethe;
  const estep_result bethe = box_dual_estep(third).solve(loopy, theta, y, n_rec, noise, dual_bethe, n_bethe);
  REQUIRE(bethe.converged);
  CHECK_FALSE(bethe.certified);
  check_nlbp(loopy, n_bethe, "loopy BP");
  INFO("Bethe against exact E-step: L1 " << (n_bethe - n_dual).lpNorm<1>());
  CHECK((n_bethe - n_dual).lpNorm<1>() > 1e-1 * n_rec);  // the two problems differ: the comparison above is not vacuous

  // cgm_em with NLBP on this graph: MAP-EM and the literal algorithm (pseudo-count 0, where NLBP keeps the moment-matching
  // M-step) through the junction tree land near the box-dual fits after 60 iterations; through loopy BP with the Bethe
  // M-step too.
  const laplace_mechanism mechanism(contingency_l1_sensitivity(third), 1.0);
  const Eigen::VectorXd released = mechanism.release(Eigen::VectorXd(n_rec * mu.tail(layout.released_size())), g);
  for (const double pseudo_count : {10.0, 0.0}) {
    cgm_em_options box_options, nlbp_options_em;
    box_options.pseudo_count = nlbp_options_em.pseudo_count = pseudo_count;
    nlbp_options_em.method = estep_method::nlbp;
    nlbp_options_em.nlbp.max_iterations = 300;
    cgm_em box(third, released, n_rec, make_cgm_noise(mechanism), junction_tree(third), box_options);
    cgm_em nlbp(third, released, n_rec, make_cgm_noise(mechanism), junction_tree(third), nlbp_options_em);
    cgm_em box_bethe(third, released, n_rec, make_cgm_noise(mechanism), loopy_bp(third), box_options);
    cgm_em nlbp_bethe(third, released, n_rec, make_cgm_noise(mechanism), loopy_bp(third), nlbp_options_em);
    for (int t = 0; t < 60; ++t) {
      box.iterate();
      nlbp.iterate();
      box_bethe.iterate();
      nlbp_bethe.iterate();
    }
    const double to_truth = exact_kl(brute, theta, box.parameter_vector());
    const double between = exact_kl(brute, box.parameter_vector(), nlbp.parameter_vector());
    const double between_bethe = exact_kl(brute, box_bethe.parameter_vector(), nlbp_bethe.parameter_vector());
    INFO("pseudo-count " << pseudo_count << ": KL(truth || box-dual fit) " << to_truth << ", KL(box || NLBP) exact " << between
                         << ", Bethe " << between_bethe);
    CHECK(between < 0.05 * to_truth);
    CHECK(between_bethe < 0.05 * to_truth);
    CHECK(nlbp.counts().minCoeff() > 0.0);
    CHECK(nlbp.events().log_floors == 0);
  }
}

TEST_CASE("box dual and CGM-EM through loopy BP: uncertified on cycles, equal to tree BP on a tree", "[cgm][loopy]") {
  std::mt19937_64 g(61);
  // On a tree, loopy BP reproduces the certified tree result (and is itself not certified).
  const pairwise_graph chain = chain_graph(5, 3);
  const table_layout layout(chain);
  const Eigen::VectorXd theta = random_theta(layout, g, 1.0);
  Eigen::VectorXd y = edge_tables(chain, chain_records(chain, theta, 500, g));
  y(3) += 25.0;
  y(20) -= 30.0;
  tree_bp tree(chain);
  loopy_bp_options tight;
  tight.tol = 1e-13;
  loopy_bp loopy(chain, tight);
  Eigen::VectorXd g_tree, n_tree, g_loopy, n_loopy;
  const estep_result rt = box_dual_estep(chain).solve(tree, theta, y, 500.0, cgm_evidence::laplace(8.0), g_tree, n_tree);
  const estep_result rl = box_dual_estep(chain).solve(loopy, theta, y, 500.0, cgm_evidence::laplace(8.0), g_loopy, n_loopy);
  CHECK(rt.certified);
  CHECK(rl.converged);
  CHECK_FALSE(rl.certified);
  CHECK((n_tree - n_loopy).cwiseAbs().maxCoeff() < 1e-6 * 500.0);
  // A third-order chain (cycles), MAP-EM with the Bethe M-step: runs, keeps every cell positive, and beats the uniform
  // model in exact KL (brute force over 3^6 states).
  const pairwise_graph third = kth_order_chain_graph(6, 3, 2);
  const table_layout third_layout(third);
  Eigen::VectorXd truth = Eigen::VectorXd::Zero(third_layout.size());
  std::normal_distribution<double> z(0.0, 0.5);
  for (Eigen::Index i = third_layout.edges_begin(); i < truth.size(); ++i) truth(i) = z(g);
  brute_force_inference brute(third);
  Eigen::VectorXd mu;
  brute.marginals(truth, mu);
  const laplace_mechanism mechanism(contingency_l1_sensitivity(third), 2.0);
  const Eigen::VectorXd released = mechanism.release(Eigen::VectorXd(5000.0 * mu.tail(third_layout.released_size())), g);
  cgm_em em(third, released, 5000.0, make_cgm_noise(mechanism), loopy_bp(third));
  const fit_result r = fit(em, fit_options{500});
  const double kl = exact_kl(brute, truth, r.parameter), kl_uniform = exact_kl(brute, truth, Eigen::VectorXd::Zero(truth.size()));
  INFO("KL " << kl << " (" << r.iterations << " iterations), uniform " << kl_uniform);
  CHECK(em.counts().minCoeff() > 0.0);
  CHECK(kl < 0.5 * kl_uniform);
  CHECK(r.events.log_floors == 0);
}

TEST_CASE("box dual and literal EM through the junction tree equal enumeration on a third-order chain", "[cgm]") {
  const pairwise_graph third = kth_order_chain_graph(7, 3, 2);
  const table_layout layout(third);
  std::mt19937_64 g(77);
  const Eigen::VectorXd truth = random_theta(layout, g, 0.7);
  brute_force_inference brute(third);
  Eigen::VectorXd mu;
  brute.marginals(truth, mu);
  const laplace_mechanism mechanism(contingency_l1_sensitivity(third), 1.0);
  const Eigen::VectorXd y = mechanism.release(Eigen::VectorXd(2000.0 * mu.tail(layout.released_size())), g);
  junction_tree jt(third);
  Eigen::VectorXd g_jt, n_jt, g_bf, n_bf;
  const estep_result rj = box_dual_estep(third).solve(jt, truth, y, 2000.0, make_cgm_noise(mechanism), g_jt, n_jt);
  const estep_result rb = box_dual_estep(third).solve(brute, truth, y, 2000.0, make_cgm_noise(mechanism), g_bf, n_bf);
  CHECK(rj.certified);
  CHECK(rj.iterations == rb.iterations);
  CHECK((n_jt - n_bf).cwiseAbs().maxCoeff() < 1e-8);
  cgm_em_options options;
  options.pseudo_count = 0.0;
  cgm_em em_jt(third, y, 2000.0, make_cgm_noise(mechanism), junction_tree(third), options);
  cgm_em em_bf(third, y, 2000.0, make_cgm_noise(mechanism), brute_force_inference(third), options);
  const fit_result fj = fit(em_jt, fit_options{50}), fb = fit(em_bf, fit_options{50});
  CHECK(fj.iterations == fb.iterations);
  CHECK((em_jt.counts() - em_bf.counts()).cwiseAbs().maxCoeff() < 1e-6);
}

TEST_CASE("exact moment matching: the MLE of any graph's marginals, equal to the closed form on trees", "[cgm]") {
  std::mt19937_64 g(78);
  // Third-order chain through the junction tree: from theta = 0 to the model whose marginals were given.
  const pairwise_graph third = kth_order_chain_graph(7, 3, 2);
  junction_tree jt(third);
  const Eigen::VectorXd truth = random_theta(table_layout(third), g, 0.7);
  Eigen::VectorXd target, theta = Eigen::VectorXd::Zero(truth.size()), mu;
  jt.marginals(truth, target);
  exact_moment_matching solver(third);
  const moment_matching_result r = solver.solve(jt, target, theta);
  INFO(r.iterations << " iterations, error " << r.max_error);
  CHECK(r.converged);
  CHECK(r.max_error < 1e-9);
  jt.marginals(theta, mu);
  CHECK((mu - target).cwiseAbs().maxCoeff() < 1e-9);
  CHECK(exact_kl(jt, truth, theta) < 1e-12);
  // Warm start at the answer: one inference call.
  CHECK(solver.solve(jt, target, theta).iterations == 1);
  // A tree: the same marginals as the closed-form pseudo-moment MLE.
  const pairwise_graph star = star_graph(5, 3);
  tree_bp bp(star);
  Eigen::VectorXd star_target, closed, iterative = Eigen::VectorXd::Zero(table_layout(star).size()), mu_closed, mu_iter;
  bp.marginals(random_theta(table_layout(star), g, 1.0), star_target);
  pseudo_moment_parameters(star, star_target, closed);
  CHECK(exact_moment_matching(star).solve(bp, star_target, iterative).converged);
  bp.marginals(closed, mu_closed);
  bp.marginals(iterative, mu_iter);
  CHECK((mu_closed - mu_iter).cwiseAbs().maxCoeff() < 1e-9);
  // The cap is reported with the error reached, not thrown; bad input is named.
  moment_matching_options short_run;
  short_run.max_iterations = 3;
  theta.setZero();
  const moment_matching_result capped = exact_moment_matching(third, short_run).solve(jt, target, theta);
  CHECK_FALSE(capped.converged);
  CHECK(capped.iterations == 3);
  CHECK(capped.max_error > 1e-9);
  Eigen::VectorXd zero_cell = target;
  zero_cell(0) = 0.0;
  CHECK_THROWS_WITH(solver.solve(jt, zero_cell, theta), Catch::Contains("target marginal"));
  CHECK_THROWS_AS(solver.solve(jt, target.head(3).eval(), theta), std::invalid_argument);
  moment_matching_options bad;
  bad.tol = 0.0;
  CHECK_THROWS_WITH(exact_moment_matching(third, bad), Catch::Contains("tol"));
}

TEST_CASE("CGM-EM with Gaussian noise converges: the E-step's gap tolerance for a strongly convex dual", "[cgm]") {
  // N = 435, sigma = 4 (House votes sized), K = 3: a chain (tree BP) and a 4-cycle (junction tree, exact M-step).
  auto fit_gaussian = [](const pairwise_graph& graph, auto inference, double quadratic_gap_tol) {
    const table_layout layout(graph);
    std::mt19937_64 g(5);
    const Eigen::VectorXd truth = dirichlet_theta(graph, g);
    Eigen::VectorXd y = privpost_test::enumerated_tables(graph, truth, 435, g).tail(layout.released_size());
    std::normal_distribution<double> noise(0.0, 4.0);
    for (Eigen::Index j = 0; j < y.size(); ++j) y(j) += noise(g);
    cgm_em_options options;
    options.estep.quadratic_gap_tol = quadratic_gap_tol;
    cgm_em em(graph, y, 435.0, cgm_evidence::gaussian(4.0), std::move(inference), options);
    return fit(em, fit_options{500});
  };
  const pairwise_graph chain = chain_graph(4, 3);
  const pairwise_graph cycle(std::vector<int>(4, 3), {{0, 1}, {1, 2}, {2, 3}, {0, 3}});
  const fit_result on_chain = fit_gaussian(chain, tree_bp(chain), 1e-12);
  const fit_result on_cycle = fit_gaussian(cycle, junction_tree(cycle), 1e-12);
  INFO("iterations: chain " << on_chain.iterations << ", cycle " << on_cycle.iterations);
  CHECK(on_chain.converged);
  CHECK(on_cycle.converged);
  CHECK(on_chain.iterations < 100);
  CHECK(on_cycle.iterations < 100);
  // Negative control: Laplace's tolerance (1e-8 N) for the Gaussian dual leaves EM drifting, never converged.
  CHECK_FALSE(fit_gaussian(chain, tree_bp(chain), 1e-8).converged);
  CHECK_FALSE(fit_gaussian(cycle, junction_tree(cycle), 1e-8).converged);
  estep_options bad;
  bad.quadratic_gap_tol = 0.0;
  CHECK_THROWS_WITH(box_dual_estep(chain, bad), Catch::Contains("quadratic_gap_tol"));
}

TEST_CASE("MAP-EM's inexact early E-steps: the fit of exact E-steps with fewer inference calls", "[cgm]") {
  // The study's 10-chain, K = 3, N = 10^4, Laplace at the dissertation's |E| / epsilon, epsilon 1 and 0.1 (where EM needs
  // hundreds to thousands of iterations). estep_relax = 0 (every E-step at the gap tolerance) is the reference: the
  // same fit (KL within 1e-4 relative, tables within 1e-3 N in L1) at both, with fewer inference calls at epsilon 1
  // (measured 28733 against 44455) and fewer than half at epsilon 0.1, where the noise dominates and EM is slow
  // (19042 against 107714).
  const pairwise_graph chain = chain_graph(10, 3);
  const table_layout layout(chain);
  tree_bp bp(chain);
  std::mt19937_64 g(41);
  const Eigen::VectorXd truth = dirichlet_theta(chain, g);
  const Eigen::VectorXd y0 = edge_tables(chain, chain_records(chain, truth, 10000, g));
  for (const double epsilon : {1.0, 0.1}) {
    const laplace_mechanism mechanism(contingency_l1_sensitivity(chain, neighbour_relation::add_remove), epsilon);
    const Eigen::VectorXd y = mechanism.release(y0, g);
    cgm_em_options exact;
    exact.estep_relax = 0.0;
    exact.keep_trace = false;
    exact.accelerate = false;  // plain EM: the E-steps' cost alone
    cgm_em_options relaxed;
    relaxed.keep_trace = false;
    relaxed.accelerate = false;
    cgm_em reference(chain, y, 1e4, make_cgm_noise(mechanism), tree_bp(chain), exact);
    cgm_em fast(chain, y, 1e4, make_cgm_noise(mechanism), tree_bp(chain), relaxed);
    const fit_result r = fit(reference, fit_options{5000});
    const fit_result f = fit(fast, fit_options{5000});
    const double kl_reference = exact_kl(bp, truth, reference.parameter_vector());
    const double kl_fast = exact_kl(bp, truth, fast.parameter_vector());
    INFO("epsilon " << epsilon << ": exact E-steps " << r.iterations << " iterations, " << r.inner_iterations
                    << " inference calls, KL " << kl_reference << "; inexact early E-steps " << f.iterations << ", "
                    << f.inner_iterations << ", KL " << kl_fast);
    REQUIRE(r.converged);
    REQUIRE(f.converged);
    CHECK(std::abs(kl_fast - kl_reference) <= 1e-4 * kl_reference);
    CHECK((fast.counts() - reference.counts()).lpNorm<1>() <= 1e-3 * 1e4);
    CHECK(f.inner_iterations < r.inner_iterations);
    if (epsilon < 0.5) CHECK(f.inner_iterations * 2 < r.inner_iterations);
  }
}

TEST_CASE("SQUAREM: MAP-EM's fixed point in fewer iterations; the Gaussian surrogate's rule", "[cgm]") {
  // The study's 10-chain, K = 3, N = 10^5, Laplace at 2|E| / epsilon = 180 (epsilon 0.1): plain EM is slow here (the
  // latent tables carry most of the information). Through the Gaussian surrogate (map_em_prefers_gaussian: N / 9 =
  // 62 b), plain EM and SQUAREM must reach the same fit, SQUAREM in fewer than half the iterations.
  const pairwise_graph chain = chain_graph(10, 3);
  tree_bp bp(chain);
  const chain_study_release release = release_study_chain(chain, 2017, 100000, neighbour_relation::replace_one, 0.1);
  const Eigen::VectorXd& truth = release.truth;
  const Eigen::VectorXd& y = release.y;
  REQUIRE(map_em_prefers_gaussian(chain, 1e5, release.scale, true));
  const cgm_evidence surrogate = laplace_gaussian_surrogate(cgm_evidence::laplace(release.scale));
  CHECK(surrogate.is_gaussian());
  CHECK(surrogate.scale() == Approx(std::sqrt(2.0) * release.scale));
  CHECK_THROWS_AS(laplace_gaussian_surrogate(surrogate), std::invalid_argument);
  cgm_em_options options;
  options.keep_trace = false;
  options.accelerate = false;
  cgm_em plain(chain, y, 1e5, surrogate, tree_bp(chain), options);
  options.accelerate = true;
  cgm_em squarem(chain, y, 1e5, surrogate, tree_bp(chain), options);
  const fit_result p = fit(plain, fit_options{20000});
  const fit_result s = fit(squarem, fit_options{20000});
  const double kl_plain = exact_kl(bp, truth, p.parameter), kl_squarem = exact_kl(bp, truth, s.parameter);
  INFO("plain EM " << p.iterations << " iterations, KL " << kl_plain << "; SQUAREM " << s.iterations << " iterations ("
                   << squarem.rejected_extrapolations() << " rejected extrapolations), KL " << kl_squarem);
  REQUIRE(p.converged);
  REQUIRE(s.converged);
  CHECK(2 * s.iterations < p.iterations);
  CHECK(std::abs(kl_squarem - kl_plain) <= 1e-3 * kl_plain);
  CHECK((squarem.counts() - plain.counts()).lpNorm<1>() <= 1e-3 * 1e5);

  // with_map_em_evidence's callable takes the evidence term it chose.
  auto generic = [](const cgm_evidence& noise) { return noise.dual_quadratic(); };
  auto by_number = [](double scale) { return scale; };
  static_assert(map_em_fit<decltype(generic)>);
  static_assert(!map_em_fit<decltype(by_number)>);
  CHECK(with_map_em_evidence(map_em_evidence::gaussian_surrogate, cgm_evidence::laplace(release.scale), chain, 1e5, true,
                             generic) == Approx(2.0 * release.scale * release.scale));

  // The rule: exact back ends only, every table's mean cell count at least 2 b.
  CHECK(map_em_prefers_gaussian(chain, 1e5, 5555.0, true));
  CHECK_FALSE(map_em_prefers_gaussian(chain, 1e5, 5556.0, true));
  CHECK_FALSE(map_em_prefers_gaussian(chain, 1e5, 1.0, false));
  CHECK_THROWS_WITH(map_em_prefers_gaussian(chain, 0.0, 1.0, true), Catch::Contains("N"));
  CHECK_THROWS_WITH(map_em_prefers_gaussian(chain, 1e5, std::numeric_limits<double>::quiet_NaN(), true),
                    Catch::Contains("Laplace scale b"));
}
