// Tests of privpost/samplers/gibbs_ss.hpp and the driver in privpost/inference/infer.hpp, beyond calibration:
//  1. NormProduct agrees with the textbook precision form (S^-1 + W^-1)^-1 where that is well conditioned;
//  2. chains are reproducible from the seed, differ across seeds, and serial and parallel runs agree;
//  3. the progress callback reaches the total; thinning keeps the requested number of draws;
//  4. with negligible noise Gibbs-SS recovers the non-private posterior (means within 0.003, sds within 10%);
//  5. bad input: release of the wrong dimension or non-finite, n <= 0, bad driver options.
#include <catch2/catch.hpp>

#include <random>

#include "privpost/core/linalg/norm_product.hpp"
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
