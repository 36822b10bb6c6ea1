// Tests of privpost/samplers/gibbs_ss.hpp and the driver in privpost/inference/infer.hpp, beyond calibration:
//  1. NormProduct agrees with the textbook precision form (S^-1 + W^-1)^-1 where that is well conditioned;
//  2. chains are reproducible from the seed, differ across seeds, and serial and parallel runs agree;
//  3. the progress callback reaches the total; thinning keeps the requested number of draws;
//  4. with negligible noise Gibbs-SS recovers the non-private posterior (means within 0.003, sds within 10%);
//  5. bad input: release of the wrong dimension or non-finite, n <= 0, bad driver options;
//  6. collapsed moves (set_collapsed_moves): the same posterior as plain Gibbs-SS, far larger ESS per sweep where the
//     noise dominates, and their bad counts.
#include <catch2/catch.hpp>

#include <Eigen/LU>  // inverse()
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "privpost/core/linalg/norm_product.hpp"
#include "privpost/diagnostics/convergence.hpp"
#include "privpost/families/binomial.hpp"
#include "privpost/families/multinomial.hpp"
#include "privpost/inference/infer.hpp"
#include "privpost/mechanisms/gaussian.hpp"
#include "privpost/mechanisms/laplace.hpp"
#include "privpost/samplers/conjugate.hpp"
#include "privpost/samplers/gibbs_ss.hpp"

using namespace privpost;

TEST_CASE("norm_product matches the precision form", "[gibbs_ss]") {
  Eigen::Matrix2d s;
  s << 4.0, 1.0, 1.0, 3.0;
  const Eigen::Vector2d m(1.0, 2.0), z(3.0, -1.0), w(2.0, 0.5);
  Eigen::Vector2d mean;
  Eigen::Matrix2d chol;
  numerical_events ev;
  norm_product<2>(m, s, z, w, mean, chol, ev);
  const Eigen::Matrix2d winv = w.cwiseInverse().asDiagonal();
  const Eigen::Matrix2d cov = (s.inverse() + winv).inverse();
  CHECK((chol * chol.transpose() - cov).norm() < 1e-12);
  CHECK((mean - cov * (s.inverse() * m + winv * z)).norm() < 1e-12);
  CHECK(ev == numerical_events{});
  Eigen::Matrix<double, 1, 1> m1(2.0), s1(3.0), z1(5.0), w1(1.0), mean1, chol1;
  norm_product<1>(m1, s1, z1, w1, mean1, chol1, ev);
  CHECK(mean1(0) == Approx(2.0 + 0.75 * 3.0));
  CHECK(chol1(0, 0) == Approx(std::sqrt(0.75)));
}

TEST_CASE("driver: reproducible, parallel equals serial, progress, thinning", "[infer]") {
  Eigen::VectorXd z(1);
  z << 37.5;
  const laplace_mechanism mech(1.0, 0.5);
  auto make = [&](auto& g) { return gibbs_ss(beta_prior(1.0, 1.0), mech, z, 100.0, g); };
  inference_options o;
  o.chains = 3;
  o.burnin = 50;
  o.draws = 200;
  o.thin = 2;
  o.seed = 42;
  std::int64_t last = 0, total = 0;
  const auto a = infer(make, o, [&](const inference_progress& p) {
    last = p.done;
    total = p.total;
  });
  CHECK(last == total);
  CHECK(total == 3 * (50 + 200 * 2));
  CHECK(a.draws.draws_per_chain() == 200);
  o.parallel = true;
  const auto b = infer(make, o);
  for (int c = 0; c < 3; ++c) CHECK(a.draws.chains()[c] == b.draws.chains()[c]);
  o.seed = 43;
  const auto c = infer(make, o);
  CHECK(a.draws.chains()[0] != c.draws.chains()[0]);
  CHECK(a.draws.rhat() < 1.05);
}

TEST_CASE("Gibbs-SS with negligible noise recovers the non-private posterior", "[gibbs_ss]") {
  // Laplace noise with scale 1e-4 on a count of 300 out of 1000.
  const laplace_mechanism mech(1.0, 1e4);
  Eigen::VectorXd z(1);
  z << 300.0;
  inference_options o;
  o.chains = 2;
  o.draws = 4000;
  const auto r = infer([&](auto& g) { return gibbs_ss(beta_prior(1.0, 1.0), mech, z, 1000.0, g); }, o);
  CHECK(r.draws.mean() == Approx(301.0 / 1002.0).margin(0.003));
  CHECK(r.draws.sd() == Approx(std::sqrt(301.0 * 701.0 / (1002.0 * 1002.0 * 1003.0))).epsilon(0.1));
}

TEST_CASE("Gibbs-SS and driver: bad input", "[gibbs_ss][errors]") {
  std::mt19937_64 g(1);
  const laplace_mechanism mech(1.0, 1.0);
  Eigen::VectorXd two(2);
  two << 1.0, 2.0;
  CHECK_THROWS_AS(gibbs_ss(beta_prior(1.0, 1.0), mech, two, 10.0, g), std::invalid_argument);
  Eigen::VectorXd bad(1);
  bad << std::nan("");
  CHECK_THROWS_WITH(gibbs_ss(beta_prior(1.0, 1.0), mech, bad, 10.0, g), Catch::Contains("z[0] is nan"));
  Eigen::VectorXd one(1);
  one << 3.0;
  CHECK_THROWS_AS(gibbs_ss(beta_prior(1.0, 1.0), mech, one, 0.0, g), std::invalid_argument);
  CHECK_THROWS_AS(gibbs_ss(beta_prior(1.0, 1.0), mech, one, -5.0, g), std::invalid_argument);
  CHECK_THROWS_AS(conjugate_sampler(dirichlet_prior<3>(Eigen::Vector3d::Ones()), one, 10.0, g), std::invalid_argument);
  inference_options o;
  o.draws = 0;
  auto make = [&](auto& cg) { return gibbs_ss(beta_prior(1.0, 1.0), mech, one, 10.0, cg); };
  CHECK_THROWS_AS(infer(make, o), std::invalid_argument);
  o.draws = 10;
  o.thin = 0;
  CHECK_THROWS_AS(infer(make, o), std::invalid_argument);
  o.thin = 1;
  o.chains = 0;
  CHECK_THROWS_AS(infer(make, o), std::invalid_argument);
  // An exception inside a chain reaches the caller, also from a thread.
  o.chains = 2;
  o.parallel = true;
  auto throwing = [&](auto& cg) { return gibbs_ss(beta_prior(1.0, 1.0), mech, one, -1.0, cg); };
  CHECK_THROWS_AS(infer(throwing, o), std::invalid_argument);
}

namespace {
// Draws of theta_0 from `chains` chains of `sweeps` sweeps after `burnin`, with `moves` collapsed moves per sweep; the
// acceptance rate of the moves in `acceptance`.
template <class Prior>
Eigen::MatrixXd collapsed_chains(const Prior& prior, const laplace_mechanism& mech, const Eigen::VectorXd& z, double n, int moves,
                                 int chains, int burnin, int sweeps, double& acceptance) {
  Eigen::MatrixXd x(sweeps, chains);
  double accepted = 0.0, proposed = 0.0;
  for (int c = 0; c < chains; ++c) {
    std::mt19937_64 g(900 + static_cast<std::uint64_t>(c));
    gibbs_ss chain(prior, mech, z, n, g);
    chain.set_collapsed_moves(moves);
    CHECK(chain.collapsed_moves() == moves);
    for (int i = 0; i < burnin; ++i) chain.step(g);
    for (int i = 0; i < sweeps; ++i) {
      chain.step(g);
      x(i, c) = chain.parameter_vector()(0);
    }
    accepted += static_cast<double>(chain.collapsed_accepted());
    proposed += static_cast<double>(chain.collapsed_proposals());
  }
  acceptance = proposed > 0.0 ? accepted / proposed : 0.0;
  return x;
}

double quantile(Eigen::MatrixXd x, double p) {
  std::vector<double> v(x.data(), x.data() + x.size());
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(p * static_cast<double>(v.size() - 1))];
}
}  // namespace

// n = 1000, epsilon = 0.01 (Laplace b = 100, noise sd 141 against sd(s | theta) <= 16): theta | s is about 9 times
// narrower than theta's posterior, so plain Gibbs-SS moves theta by small steps. One collapsed move per sweep proposes
// from the Beta(1, 1) prior and accepts by the integrated likelihood. Same target: the plain chain (4 x 200000 sweeps,
// bulk ESS ~ 5000, measured) gives the reference; the collapsed chain's mean and 5/50/95% quantiles must agree within
// 4 combined Monte Carlo standard errors (quantiles: 0.01, about 4 standard errors of a 5% quantile at the plain
// chain's ESS). ESS per sweep must be at least 20 times the plain chain's (measured ~60x: bulk ESS ~30000 vs ~500 per
// 4 x 20000 sweeps); wall-clock ESS per second is in benchmarks/samplers_bench.cpp.
TEST_CASE("collapsed moves: same posterior as Gibbs-SS, far larger ESS where the noise dominates", "[gibbs_ss][collapsed]") {
  const laplace_mechanism mech(1.0, 0.01);
  Eigen::VectorXd z(1);
  z << 357.0;
  double plain_acceptance = 0.0, acceptance = 0.0;
  const Eigen::MatrixXd reference = collapsed_chains(beta_prior(1.0, 1.0), mech, z, 1000.0, 0, 4, 1000, 200000, plain_acceptance);
  const Eigen::MatrixXd plain = reference.topRows(20000);
  const Eigen::MatrixXd moved = collapsed_chains(beta_prior(1.0, 1.0), mech, z, 1000.0, 1, 4, 1000, 20000, acceptance);
  const double ess_reference = ess_bulk(reference), ess_plain = ess_bulk(plain), ess_moved = ess_bulk(moved);
  const double sd = std::sqrt((moved.array() - moved.mean()).square().mean());
  const double mcse = sd * std::sqrt(1.0 / ess_reference + 1.0 / ess_moved);
  INFO("plain: mean " << reference.mean() << ", bulk ESS " << ess_reference << " per 800000 sweeps, " << ess_plain
                      << " per 80000; collapsed: mean " << moved.mean() << ", bulk ESS " << ess_moved << " per 80000, acceptance "
                      << acceptance << ", R-hat " << rhat(moved) << "; posterior sd " << sd);
  CHECK(plain_acceptance == 0.0);
  CHECK(std::abs(moved.mean() - reference.mean()) < 4.0 * mcse);
  for (const double p : {0.05, 0.5, 0.95}) {
    INFO("quantile " << p << ": plain " << quantile(reference, p) << ", collapsed " << quantile(moved, p));
    CHECK(std::abs(quantile(moved, p) - quantile(reference, p)) < 0.01);
  }
  CHECK(ess_moved >= 20.0 * ess_plain);
  CHECK(rhat(moved) < 1.01);
  CHECK(acceptance > 0.2);
  CHECK(acceptance < 0.6);
}

TEST_CASE("collapsed moves: multinomial (K = 3) and the Gaussian mechanism; bad counts", "[gibbs_ss][collapsed][errors]") {
  // The multinomial at n = 1000, epsilon = 0.01 (sensitivity 2, b = 200): the collapsed chain mixes (R-hat, ESS per
  // sweep at least 20 times the plain chain's) and agrees with a long plain chain on every coordinate's mean.
  const laplace_mechanism mech(2.0, 0.01);
  Eigen::VectorXd z(2);  // the first K - 1 counts (multinomial_family's statistic)
  z << 520.0, 180.0;
  const dirichlet_prior<3> prior(Eigen::Vector3d::Ones());
  double acceptance = 0.0, plain_acceptance = 0.0;
  const Eigen::MatrixXd reference = collapsed_chains(prior, mech, z, 1000.0, 0, 4, 1000, 200000, plain_acceptance);
  const Eigen::MatrixXd moved = collapsed_chains(prior, mech, z, 1000.0, 1, 4, 1000, 20000, acceptance);
  const double sd = std::sqrt((moved.array() - moved.mean()).square().mean());
  INFO("theta_0: plain mean " << reference.mean() << " (ESS " << ess_bulk(reference) << "), collapsed " << moved.mean()
                              << " (ESS " << ess_bulk(moved) << ", R-hat " << rhat(moved) << "), acceptance " << acceptance);
  CHECK(std::abs(moved.mean() - reference.mean()) < 4.0 * sd * std::sqrt(1.0 / ess_bulk(reference) + 1.0 / ess_bulk(moved)));
  CHECK(ess_bulk(moved) >= 20.0 * ess_bulk(Eigen::MatrixXd(reference.topRows(20000))));
  CHECK(rhat(moved) < 1.01);

  // The Gaussian mechanism (fixed variances): the move runs and is accepted at a sensible rate.
  std::mt19937_64 g(3);
  const auto gauss = gaussian_mechanism::analytic(1.0, 0.05, 1e-6);
  Eigen::VectorXd one(1);
  one << 357.0;
  gibbs_ss chain(beta_prior(1.0, 1.0), gauss, one, 1000.0, g);
  chain.set_collapsed_moves(2);
  for (int i = 0; i < 2000; ++i) chain.step(g);
  CHECK(chain.collapsed_proposals() == 4000);
  const double rate = static_cast<double>(chain.collapsed_accepted()) / 4000.0;
  INFO("Gaussian mechanism: acceptance " << rate);
  CHECK(rate > 0.05);
  CHECK(rate < 0.9);

  CHECK_THROWS_WITH(chain.set_collapsed_moves(-1), Catch::Contains("moves") && Catch::Contains("[0, 1000]"));
  CHECK_THROWS_AS(chain.set_collapsed_moves(1001), std::invalid_argument);
  CHECK(chain.collapsed_moves() == 2);
}
