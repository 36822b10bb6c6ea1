// Checks that a sweep of every sampler allocates nothing on the heap ("no heap allocation inside a sweep";
// Regression sweeps too).
// This executable replaces the global operator new with a counting one, and counts Eigen's heap allocations too (Eigen
// allocates with malloc, not operator new: EIGEN_RUNTIME_NO_MALLOC makes every Eigen allocation call eigen_assert, which
// counts here while the measured sweeps run); the counts are read around 1000 sweeps.
#include <atomic>

namespace {
std::atomic<long> eigen_malloc_checks_failed{0};  // Eigen allocations (or other Eigen asserts) while forbidden
}
#define EIGEN_RUNTIME_NO_MALLOC
#define eigen_assert(x)                     \
  do {                                      \
    if (!(x)) ++eigen_malloc_checks_failed; \
  } while (false)

#include <catch2/catch.hpp>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <new>
#include <random>
#include <vector>

#include "privpost/families/binomial.hpp"
#include "privpost/families/exponential.hpp"
#include "privpost/families/glm/glm_statistic.hpp"
#include "privpost/families/graphical/contingency_tables.hpp"
#include "privpost/families/graphical/count_sampling.hpp"
#include "privpost/families/graphical/hyper_dirichlet.hpp"
#include "privpost/families/graphical/junction_tree.hpp"
#include "privpost/families/graphical/loopy_bp.hpp"
#include "privpost/families/graphical/tree_bp.hpp"
#include "privpost/families/graphical/tree_cgm_model.hpp"
#include "privpost/families/multinomial.hpp"
#include "privpost/families/normal.hpp"
#include "privpost/families/poisson.hpp"
#include "privpost/families/regression/covariate_models.hpp"
#include "privpost/families/regression/covariate_moments.hpp"
#include "privpost/families/regression/linear_regression_model.hpp"
#include "privpost/mechanisms/gaussian.hpp"
#include "privpost/mechanisms/laplace.hpp"
#include "privpost/samplers/cgm/box_dual.hpp"
#include "privpost/samplers/cgm/cgm_noise.hpp"
#include "privpost/samplers/cgm/m_step.hpp"
#include "privpost/samplers/cgm/naive_mle.hpp"
#include "privpost/samplers/gibbs_ss.hpp"
#include "privpost/samplers/gibbs_ss_exact.hpp"
#include "privpost/samplers/gibbs_ss_truncated.hpp"
#include "privpost/samplers/glm/glm_collapsed_gibbs.hpp"
#include "privpost/samplers/glm/logistic_moment_model.hpp"
#include "privpost/samplers/glm/logistic_record_model.hpp"
#include "privpost/samplers/glm/poisson_moment_model.hpp"
#include "privpost/samplers/glm/poisson_record_model.hpp"
#include "privpost/samplers/nuts.hpp"
#include "privpost/samplers/record_augmented.hpp"
#include "privpost/samplers/record_fem.hpp"
#include "privpost/samplers/record_frame.hpp"
#include "privpost/samplers/record_histogram.hpp"
#include "privpost/samplers/record_regression.hpp"
#include "privpost/samplers/record_releases.hpp"
#include "privpost/samplers/record_sharded.hpp"
#include "privpost/samplers/record_sharded_histogram.hpp"
#include "support/fem_coin.hpp"

#include "../../examples/dapper_model.hpp"

// The replacement operators below pair malloc with free on purpose; GCC 12 sees the inlined std::allocator calls of the
// test bodies and reports a mismatch it cannot see through.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif

namespace {
std::atomic<long> allocations{0};
}

void* operator new(std::size_t size) {
  ++allocations;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }

using namespace privpost;

namespace {
// operator new calls plus Eigen heap allocations while f runs.
template <class F>
long allocations_in(F&& f) {
  const long before = allocations.load(), eigen_before = eigen_malloc_checks_failed.load();
  Eigen::internal::set_is_malloc_allowed(false);
  f();
  Eigen::internal::set_is_malloc_allowed(true);
  return allocations.load() - before + eigen_malloc_checks_failed.load() - eigen_before;
}

template <class Sampler>
long allocations_in_sweeps(Sampler& s, std::mt19937_64& g) {
  s.step(g);  // warm-up
  return allocations_in([&] {
    for (int i = 0; i < 1000; ++i) s.step(g);
  });
}
}  // namespace

TEST_CASE("Gibbs-SS sweeps allocate nothing", "[allocation]") {
  std::mt19937_64 g(1);
  Eigen::VectorXd z1(1), z2(2);
  z1 << 310.0;
  z2 << 310.0, 420.0;
  gibbs_ss binomial(beta_prior(1.0, 1.0), laplace_mechanism(1.0, 0.1), z1, 1000.0, g);
  CHECK(allocations_in_sweeps(binomial, g) == 0);
  gibbs_ss multinomial(dirichlet_prior<3>(Eigen::Vector3d::Ones()), gaussian_mechanism::analytic(1.5, 0.1, 1e-5), z2, 1000.0, g);
  CHECK(allocations_in_sweeps(multinomial, g) == 0);
  // With collapsed moves (prior proposals, an LLT of the fixed-size covariance per move).
  binomial.set_collapsed_moves(2);
  multinomial.set_collapsed_moves(2);
  CHECK(allocations_in_sweeps(binomial, g) == 0);
  CHECK(allocations_in_sweeps(multinomial, g) == 0);
  // The exact sampler: the enumeration's buffers are sized at construction.
  gibbs_ss_exact exact(beta_prior(1.0, 1.0), laplace_mechanism(1.0, 0.1), z1, 1000.0, g);
  CHECK(allocations_in_sweeps(exact, g) == 0);
  // The record-level sampler: the records and their contributions are sized at construction.
  record_gibbs records(beta_prior(1.0, 1.0), laplace_mechanism(1.0, 0.1), z1, 1000.0, g);
  CHECK(allocations_in_sweeps(records, g) == 0);
  // And with its records in 8 shards, in one process.
  sharded_record_gibbs sharded(beta_prior(1.0, 1.0), laplace_mechanism(1.0, 0.1), z1, 1000.0, g, record_sharding{8});
  CHECK(allocations_in_sweeps(sharded, g) == 0);
  // The record-level frame with contributions of run-time size (the factored exponential mechanism's score vectors,
  // written in place) and a user's model with the transport move (its slice evaluations reuse the release's buffers).
  fem_record_gibbs fem(beta_prior(1.0, 1.0), test::coin_mechanism<test::rescaled_coin_score>(0.1), 6, 100.0, g);
  CHECK(allocations_in_sweeps(fem, g) == 0);
  record_frame dapper(my::normal_mean_model{100.0}, 100.0, g,
                      record_release(my::mean_noise{1.0 / 3.0}, Eigen::VectorXd::Constant(1, -2.0)));
  CHECK(allocations_in_sweeps(dapper, g) == 0);
}

TEST_CASE("truncated Gibbs-SS sweeps allocate nothing", "[allocation]") {
  std::mt19937_64 g(2);
  Eigen::VectorXd z1(1), z2(2);
  z1 << 450.0;
  gibbs_ss_truncated exponential(exponential_gamma_prior(20.0, 20.0), laplace_mechanism(4.0, 0.5), z1, 500.0, 0.0, 4.0, g);
  CHECK(allocations_in_sweeps(exponential, g) == 0);
  z1 << 2400.0;
  gibbs_ss_truncated poisson(poisson_gamma_prior(10.0, 2.0), laplace_mechanism(11.0, 0.5), z1, 500.0, 1.0, 11.0, g);
  CHECK(allocations_in_sweeps(poisson, g) == 0);
  // Record-level, truncated: real-valued exponential records (the sums re-summed every sweep) and Poisson counts.
  z1 << 450.0;
  record_gibbs exponential_records(exponential_gamma_prior(20.0, 20.0), laplace_mechanism(4.0, 0.5), z1, 500.0, g,
                                   dropped_contribution<exponential_rate_family>(0.0, 4.0));
  CHECK(allocations_in_sweeps(exponential_records, g) == 0);
  z1 << 2400.0;
  record_gibbs poisson_records(poisson_gamma_prior(10.0, 2.0), laplace_mechanism(11.0, 0.5), z1, 500.0, g,
                               clamped_contribution<poisson_family>(1.0, 11.0));
  CHECK(allocations_in_sweeps(poisson_records, g) == 0);
  // Two releases of the same Poisson records (clamped and dropped) and of real-valued exponential records.
  record_gibbs_releases two_poisson(
      poisson_gamma_prior(10.0, 2.0), 500.0, g,
      record_release(laplace_mechanism(11.0, 0.5), z1, clamped_contribution<poisson_family>(1.0, 11.0)),
      record_release(laplace_mechanism(11.0, 0.5), z1, dropped_contribution<poisson_family>(1.0, 11.0)));
  CHECK(allocations_in_sweeps(two_poisson, g) == 0);
  z1 << 450.0;
  record_gibbs_releases two_exponential(
      exponential_gamma_prior(20.0, 20.0), 500.0, g, record_release(laplace_mechanism(4.0, 0.5), z1),
      record_release(gaussian_mechanism::analytic(4.0, 0.5, 1e-5), z1, dropped_contribution<exponential_rate_family>(0.0, 4.0)));
  CHECK(allocations_in_sweeps(two_exponential, g) == 0);
  // The histogram sampler: a 3 x 4 table's two 1-way marginals and, released later, its 2-way table (the alias table
  // and the query sums are rebuilt in place every sweep).
  {
    const auto ones = linear_queries::marginals({3, 4}, {{0}, {1}});
    const auto both = linear_queries::marginals({3, 4}, {{0, 1}});
    std::vector<histogram_measurement> m;
    m.emplace_back(ones, laplace_mechanism(4.0, 0.5), ones.apply(Eigen::VectorXd::Constant(12, 20.0)));
    m.emplace_back(both, laplace_mechanism(2.0, 0.5), both.apply(Eigen::VectorXd::Constant(12, 20.0)));
    histogram_gibbs table(Eigen::VectorXd::Ones(12), 240.0, m, g);
    CHECK(allocations_in_sweeps(table, g) == 0);
    // The same records in 5 shards (the noise split's buffers are sized at construction).
    sharded_histogram_gibbs sharded(Eigen::VectorXd::Ones(12), 240.0, m, g, record_sharding{5});
    CHECK(allocations_in_sweeps(sharded, g) == 0);
  }
  z2 << 10.0, 480.0;
  gibbs_ss_truncated normal(normal_inverse_gamma_prior(0.0, 1.0, 10.0, 10.0), laplace_mechanism(12.0, 0.5), z2, 500.0, -3.0, 3.0,
                            g);
  CHECK(allocations_in_sweeps(normal, g) == 0);
}

// Linear regression: Gibbs-SS-Prior (fixed covariate moments; Gibbs-SS-Noisy runs the same code) and
// Gibbs-SS-Update (the covariates' normal-inverse-Wishart block) with an intercept and d = 1, 2, 4 covariates. The model
// keeps its workspace and the NIG prior updates and draws in place, so after the first sweep nothing is allocated. A PSD repair
// of the latent Gram matrix would allocate (Eigen's eigensolver does): the release is a plausible one (n = 1000, x ~ N(0, I /
// 49)), where none happens, and the test checks that too.
TEST_CASE("regression Gibbs-SS sweeps allocate nothing", "[allocation]") {
  for (const int d : {1, 2, 4}) {
    CAPTURE(d);
    std::mt19937_64 g(static_cast<std::uint64_t>(10 + d));
    const int columns = d + 1;
    const double n = 1000.0;
    const regression_layout layout(d, true);
    const nig_regression_prior prior(Eigen::VectorXd::Zero(columns), Eigen::MatrixXd::Identity(columns, columns) * 38.0, 20.0,
                                     0.5);
    const auto moments = normal_covariate_moments(layout, Eigen::VectorXd::Zero(d), Eigen::MatrixXd::Identity(d, d) / 49.0);
    Eigen::MatrixXd b = n * Eigen::MatrixXd::Identity(columns + 1, columns + 1) * 0.02;
    b(0, 0) = n;
    const laplace_mechanism mechanism(
        layout.sensitivity(std::vector<interval>(static_cast<std::size_t>(d), interval(-1, 1)), interval(-1, 1)).first, 1.0);
    const Eigen::VectorXd z = mechanism.release(layout.statistic_of(b), g);
    gibbs_ss prior_moments(linear_regression_model(layout, fixed_covariates(moments)), prior, mechanism, z, n, g);
    const auto repairs_before = prior_moments.events().psd_repairs;
    CHECK(allocations_in_sweeps(prior_moments, g) == 0);
    CHECK(prior_moments.events().psd_repairs == repairs_before);
    const niw_hyperprior h{Eigen::VectorXd::Zero(d), 1.0, Eigen::MatrixXd::Identity(d, d), 50.0};
    gibbs_ss update(linear_regression_model(layout, hierarchical_normal_covariates(layout, h, g)), prior, mechanism, z, n, g);
    const auto update_repairs_before = update.events().psd_repairs;
    CHECK(allocations_in_sweeps(update, g) == 0);
    CHECK(update.events().psd_repairs == update_repairs_before);
    // The record-level regression sampler (clamped records; fixed and NIW covariate laws) at n = 200.
    const std::vector<interval> box(static_cast<std::size_t>(d), interval(-1, 1));
    record_regression fixed_records(layout, prior,
                                    normal_covariate_law{Eigen::VectorXd::Zero(d), Eigen::MatrixXd::Identity(d, d)}, box,
                                    interval(-1, 1), mechanism, z / 5.0, 200.0, g);
    CHECK(allocations_in_sweeps(fixed_records, g) == 0);
    record_regression niw_records(layout, prior, h, box, interval(-1, 1), mechanism, z / 5.0, 200.0, g);
    CHECK(allocations_in_sweeps(niw_records, g) == 0);
  }
}

namespace {
// A 5-dimensional Gaussian with unequal scales: the trajectories reach several tree depths.
struct scaled_gaussian {
  Eigen::Index dimension() const { return 5; }
  double log_density_gradient(const Eigen::VectorXd& u, Eigen::VectorXd& grad) const {
    double lp = 0.0;
    for (Eigen::Index i = 0; i < 5; ++i) {
      const double v = static_cast<double>((i + 1) * (i + 1));
      grad(i) = -u(i) / v;
      lp -= 0.5 * u(i) * u(i) / v;
    }
    return lp;
  }
};
}  // namespace

TEST_CASE("NUTS transitions allocate nothing, in warm-up and after", "[allocation]") {
  std::mt19937_64 g(3);
  nuts_options options;
  options.warmup = 500;
  nuts_sampler<scaled_gaussian> s(scaled_gaussian{}, options, g);
  // 1000 transitions: the first 499 adapt (metric windows end, the step-size heuristic reruns), the rest do not.
  CHECK(allocations_in_sweeps(s, g) == 0);
  CHECK_FALSE(s.adapting());
  // The dense metric: its covariance windows, Cholesky factor and momentum solves reuse storage sized at construction.
  options.dense_metric = true;
  nuts_sampler<scaled_gaussian> dense(scaled_gaussian{}, options, g);
  CHECK(allocations_in_sweeps(dense, g) == 0);
  CHECK_FALSE(dense.adapting());
}

TEST_CASE("the DP-GLM logistic model and NUTS on it allocate nothing per evaluation and transition", "[allocation]") {
  std::mt19937_64 g(4);
  const int d = 3;
  const glm_prior prior{9.0, 0.5, 2.0};
  // A release from the model's normal approximation at N = 1000, sigma = 10.
  logistic_moment_model<> sim(Eigen::VectorXd::Zero(9), 1000.0, 10.0, d, prior);
  const glm_parameters truth = draw_glm_prior(g, d, prior);
  Eigen::VectorXd mu;
  Eigen::MatrixXd v;
  sim.moments(truth, mu, v);
  Eigen::VectorXd z = 1000.0 * mu;
  for (Eigen::Index i = 0; i < z.size(); ++i) z(i) += draw_normal(g) * std::sqrt(1000.0 * v(i, i) + 100.0);
  logistic_moment_model<> m(z, 1000.0, 10.0, d, prior);
  Eigen::VectorXd u(m.dimension()), grad(m.dimension());
  for (Eigen::Index i = 0; i < u.size(); ++i) u(i) = 0.3 * draw_normal(g);
  double lp = 0.0;
  CHECK(allocations_in([&] {
          for (int i = 0; i < 100; ++i) lp += m.log_density_gradient(u, grad);
        }) == 0);
  CHECK(std::isfinite(lp));
  nuts_options options;
  options.warmup = 300;
  nuts_sampler<logistic_moment_model<>> s(logistic_moment_model<>(z, 1000.0, 10.0, d, prior), options, g);
  CHECK(allocations_in_sweeps(s, g) == 0);
  // Under Laplace noise: the partially collapsed Gibbs sampler (NUTS, s, w and update_model) at L1 sensitivity.
  const laplace_mechanism lap(glm_statistic::logistic(d, 1.0).l1_sensitivity(), 1.0);
  glm_collapsed_gibbs<logistic_moment_map<exact_logistic_link>, laplace_mechanism> c(z, 1000.0, lap, d, prior, {}, options, g);
  CHECK(allocations_in_sweeps(c, g) == 0);
  // The record-level baseline on 200 simulated records.
  const logistic_records rec = simulate_logistic_records(g, truth, 200);
  nuts_sampler<logistic_record_model> r(logistic_record_model(rec.x, rec.y, prior.s_max), options, g);
  CHECK(allocations_in_sweeps(r, g) == 0);
}

TEST_CASE("NUTS on the Poisson DP-GLM and its record-level baseline allocates nothing per transition", "[allocation][glm]") {
  std::mt19937_64 g(13);
  const int d = 2;
  const glm_prior prior{4.0, 0.5, 2.0, 0.5};
  const glm_model_options design{1.0, true};
  const poisson_moment_model sim(Eigen::VectorXd::Zero(11), 500.0, 5.0, d, prior, design);
  const glm_parameters truth = draw_glm_prior(g, d, prior, design);
  const Eigen::VectorXd z = simulate_glm_release(sim, truth, g);
  poisson_moment_model m(z, 500.0, 5.0, d, prior, design);
  Eigen::VectorXd u(m.dimension()), grad(m.dimension());
  m.initial_point(g, 2.0, u);
  double lp = 0.0;
  CHECK(allocations_in([&] {
          for (int i = 0; i < 100; ++i) lp += m.log_density_gradient(u, grad);
        }) == 0);
  CHECK(std::isfinite(lp));
  nuts_options options;
  options.warmup = 300;
  nuts_sampler<poisson_moment_model> s(poisson_moment_model(z, 500.0, 5.0, d, prior, design), options, g);
  CHECK(allocations_in_sweeps(s, g) == 0);
  const glm_records rec = simulate_poisson_records(g, truth, 200, 1.0);
  Eigen::MatrixXd xa(200, d + 1);
  xa << Eigen::VectorXd::Ones(200), rec.x;
  nuts_sampler<poisson_record_model> r(poisson_record_model(xa, rec.y, prior.s_max), options, g);
  CHECK(allocations_in_sweeps(r, g) == 0);
}

TEST_CASE("tree belief propagation allocates nothing once mu has its size", "[allocation][graphical]") {
  std::mt19937_64 g(21);
  tree_bp bp(star_graph(8, 3));
  Eigen::VectorXd theta(bp.layout().size()), mu(bp.layout().size());
  for (Eigen::Index i = 0; i < theta.size(); ++i) theta(i) = draw_normal(g);
  CHECK(allocations_in([&] {
          for (int i = 0; i < 100; ++i) bp.marginals(theta, mu);
        }) == 0);
  CHECK(std::abs(mu.head(3).sum() - 1.0) < 1e-12);
}

TEST_CASE("Gibbs-SS sweeps of the Bayesian tree CGM allocate nothing (Matheron draws, repairs included)",
          "[allocation][graphical]") {
  std::mt19937_64 g(23);
  const pairwise_graph tree = star_graph(5, 3);
  const hyper_dirichlet prior(tree, 9.0);
  Eigen::VectorXd counts;
  tree_count_sampler sampler(tree);
  sampler.sample(g, prior.draw(g), 2000, counts);
  const laplace_mechanism mechanism(contingency_l1_sensitivity(tree), 0.05);  // strong noise: rejections happen
  const Eigen::VectorXd y = mechanism.release(Eigen::VectorXd(counts.tail(table_layout(tree).released_size())), g);
  gibbs_ss chain(tree_cgm_model(tree), prior, mechanism, y, 2000.0, g);
  CHECK(allocations_in_sweeps(chain, g) == 0);
  // Collapsed moves with the hyper-Dirichlet's block proposals: their workspace is sized by the first sweep.
  chain.set_collapsed_moves(1);
  CHECK(allocations_in_sweeps(chain, g) == 0);
  // Shift moves: their scratch is sized by the model's construction and first move.
  chain.set_collapsed_moves(0);
  chain.set_shift_moves(2);
  CHECK(allocations_in_sweeps(chain, g) == 0);
  Eigen::VectorXd bad = y;
  numerical_events events;
  bad.setConstant(-5.0);
  CHECK(allocations_in([&] { chain.model().support().project(bad, 2000.0, events); }) == 0);
  INFO("rejected draws " << chain.events().rejected_draws << ", projections " << chain.events().projections);
  CHECK(chain.statistic().minCoeff() >= 0.0);
}

TEST_CASE("exact count tables of a tree allocate nothing once the tables have their size", "[allocation][graphical]") {
  std::mt19937_64 g(22);
  const pairwise_graph tree = star_graph(6, 3);
  tree_bp bp(tree);
  Eigen::VectorXd theta(bp.layout().size()), mu(bp.layout().size()), counts(bp.layout().size());
  for (Eigen::Index i = 0; i < theta.size(); ++i) theta(i) = draw_normal(g);
  bp.marginals(theta, mu);
  tree_count_sampler sampler(tree);
  CHECK(allocations_in([&] {
          for (int i = 0; i < 100; ++i) sampler.sample(g, mu, 1'000'000, counts);
        }) == 0);
  CHECK(counts.head(3).sum() == 1e6);
}

TEST_CASE("box-dual E-steps and naive MLE iterations allocate nothing once their vectors are sized", "[allocation][graphical]") {
  std::mt19937_64 g(22);
  const pairwise_graph chain = chain_graph(6, 3);
  tree_bp bp(chain);
  Eigen::VectorXd theta(bp.layout().size());
  for (Eigen::Index i = 0; i < theta.size(); ++i) theta(i) = draw_normal(g);
  Eigen::VectorXd y(bp.layout().released_size());
  for (Eigen::Index j = 0; j < y.size(); ++j) y(j) = 100.0 + 20.0 * draw_normal(g);
  box_dual_estep solver(chain);
  const auto noise = cgm_evidence::laplace(10.0);
  Eigen::VectorXd dual, n;
  solver.solve(bp, theta, y, 900.0, noise, dual, n);  // sizes the work vectors
  dual.setZero();
  int iterations = 0;
  CHECK(allocations_in([&] { iterations = solver.solve(bp, theta, y, 900.0, noise, dual, n).iterations; }) == 0);
  CHECK(iterations > 5);
  naive_mle naive(chain, y, 900.0, tree_bp(chain));
  naive.iterate();
  naive.iterate();
  CHECK(allocations_in([&] {
          for (int i = 0; i < 50; ++i) naive.iterate();
        }) == 0);
}

TEST_CASE("junction-tree inference and the exact M-step on it allocate nothing once sized", "[allocation][graphical]") {
  std::mt19937_64 g(24);
  junction_tree jt(kth_order_chain_graph(8, 3, 3));
  Eigen::VectorXd theta(jt.layout().size()), mu(jt.layout().size());
  for (Eigen::Index i = 0; i < theta.size(); ++i) theta(i) = draw_normal(g);
  CHECK(allocations_in([&] {
          for (int i = 0; i < 20; ++i) jt.marginals(theta, mu);
        }) == 0);
  CHECK(std::abs(mu.head(3).sum() - 1.0) < 1e-12);
  // The exact moment-matching M-step on it, once its work vectors are sized by a first solve.
  exact_moment_matching m_step(jt.graph());
  Eigen::VectorXd fitted = Eigen::VectorXd::Zero(theta.size());
  m_step.solve(jt, mu, fitted);
  fitted.setZero();
  int steps = 0;
  CHECK(allocations_in([&] { steps = m_step.solve(jt, mu, fitted).iterations; }) == 0);
  CHECK(steps > 10);
}

TEST_CASE("loopy belief propagation allocates nothing once mu has its size", "[allocation][graphical]") {
  std::mt19937_64 g(23);
  loopy_bp bp(kth_order_chain_graph(6, 3, 2));
  Eigen::VectorXd theta(bp.layout().size()), mu(bp.layout().size());
  for (Eigen::Index i = 0; i < theta.size(); ++i) theta(i) = 0.3 * draw_normal(g);
  bp.marginals(theta, mu);
  int sweeps = 0;
  bp.reset();
  CHECK(allocations_in([&] { sweeps = bp.marginals(theta, mu).iterations; }) == 0);
  CHECK(sweeps > 3);
}
