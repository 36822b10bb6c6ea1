// Tests of privpost/families/regression and the regression model in gibbs_ss (model pieces). Properties:
//  1. the layout holds the unique entries of [X^T X, X^T y, y^T y] (no duplicates; the intercept's n c^2 is public),
//     gram() and statistic_of() are inverse, and the interval sensitivity is never above the paper's bound for boxes
//     containing 0 (and is reported beside it);
//  2. second and fourth moments of N(mu, Sigma) covariates in closed form (Isserlis) equal Monte Carlo (d = 3);
//  3. the mean and covariance of t(x, y) (Eqs. 2-3 generalised) equal Monte Carlo of simulated records (d = 2 + intercept);
//  4. the NIG update equals the textbook formulas and its draws have the posterior mean;
//  5. the PSD projection keeps n c^2 and the sums and yields a PSD Gram matrix;
//  6. bad input: d = 0, non-finite data, a release of the wrong length, a non-PD prior precision;
//  7. noisy covariate moments that no distribution has are repaired (valid_covariate_moments), valid ones untouched.
#include <catch2/catch.hpp>

#include <Eigen/Eigenvalues>
#include <cmath>
#include <random>

#include "privpost/core/random/multivariate_normal.hpp"
#include "privpost/core/random/normal.hpp"
#include "privpost/core/random/wishart.hpp"
#include "privpost/families/regression/covariate_models.hpp"
#include "privpost/families/regression/covariate_moments.hpp"
#include "privpost/families/regression/gram_support.hpp"
#include "privpost/families/regression/linear_regression_model.hpp"
#include "privpost/families/regression/noisy_moments.hpp"
#include "privpost/families/regression/normal_inverse_gamma_regression.hpp"
#include "privpost/families/regression/regression_layout.hpp"
#include "privpost/families/regression/regression_moments.hpp"
#include "privpost/inference/predictive.hpp"
#include "privpost/mechanisms/laplace.hpp"
#include "privpost/mechanisms/published_bounds.hpp"
#include "privpost/samplers/gibbs_ss.hpp"

using namespace privpost;

TEST_CASE("regression layout: unique entries, public intercept entry, sensitivity", "[regression]") {
  const regression_layout with(2, true), without(2, false);
  CHECK(with.columns() == 3);
  CHECK(with.size() == 9);  // unique entries of the 4 x 4 matrix u u^T (10), minus the public (0, 0)
  CHECK(without.size() == 6);
  Eigen::VectorXd s(9);
  s << 1, 2, 3, 4, 5, 6, 7, 8, 9;
  const Eigen::MatrixXd b = with.gram(s, 10.0);
  CHECK(b(0, 0) == 10.0);
  CHECK((b - b.transpose()).norm() == 0.0);
  CHECK(with.statistic_of(b) == s);
  // Sensitivity by intervals for x, y in [-1, 1], one covariate and an intercept: x (2) + x^2 (1) + y (2) + x y (2) +
  // y^2 (1) = 8; the paper's bound for d = 2 columns of width 2 (the intercept counted as a covariate) is 24.
  const regression_layout one(1, true);
  const auto [l1, l2] = one.sensitivity({interval(-1.0, 1.0)}, interval(-1.0, 1.0));
  CHECK(l1 == 8.0);
  CHECK(l2 == Approx(std::sqrt(4.0 + 1.0 + 4.0 + 4.0 + 1.0)));
  CHECK(l1 <= regression_paper_sensitivity(2.0, 2.0, 2));
  for (int d = 1; d <= 6; ++d) {
    const regression_layout layout(d, false);
    const std::vector<interval> box(static_cast<std::size_t>(d), interval(-1.0, 1.0));
    CHECK(layout.sensitivity(box, interval(-2.0, 3.0)).first <=
          regression_paper_sensitivity(2.0, 5.0, static_cast<std::size_t>(d)));
  }
}

TEST_CASE("Isserlis fourth moments equal Monte Carlo", "[regression]") {
  const regression_layout layout(3, true, 1.0);
  Eigen::Vector3d mu(0.3, -0.5, 1.0);
  Eigen::Matrix3d sigma;
  sigma << 1.0, 0.3, -0.2, 0.3, 0.5, 0.1, -0.2, 0.1, 0.8;
  const auto exact = normal_covariate_moments(layout, mu, sigma);
  const Eigen::Matrix3d l = sigma.llt().matrixL();
  const auto mc = monte_carlo_covariate_moments(
      layout, [&](auto& g) { return Eigen::VectorXd(draw_multivariate_normal(g, mu, l)); }, 400000, 17);
  CHECK((exact.m2 - mc.m2).cwiseAbs().maxCoeff() < 0.02);
  double worst = 0.0;
  for (std::size_t i = 0; i < exact.m4.size(); ++i)
    worst = std::max(worst, std::abs(exact.m4[i] - mc.m4[i]) / (1.0 + std::abs(exact.m4[i])));
  INFO("largest relative difference of a fourth moment " << worst);
  CHECK(worst < 0.03);
}

TEST_CASE("moments of t(x, y) equal Monte Carlo of records", "[regression]") {
  const regression_layout layout(2, true);
  const Eigen::Vector2d mu(0.2, -0.1);
  Eigen::Matrix2d sigma;
  sigma << 0.5, 0.1, 0.1, 0.3;
  const Eigen::Vector3d theta(0.5, -1.0, 2.0);
  const double s2 = 0.4;
  Eigen::VectorXd mean;
  Eigen::MatrixXd cov;
  regression_statistic_moments(layout, theta, s2, normal_covariate_moments(layout, mu, sigma), mean, cov);
  std::mt19937_64 g(19);
  const Eigen::Matrix2d l = sigma.llt().matrixL();
  const int draws = 400000;
  Eigen::VectorXd m = Eigen::VectorXd::Zero(layout.size());
  Eigen::MatrixXd c = Eigen::MatrixXd::Zero(layout.size(), layout.size());
  for (int i = 0; i < draws; ++i) {
    const Eigen::VectorXd x = draw_multivariate_normal(g, mu, l);
    const double y = theta.dot(layout.design_row(x)) + std::sqrt(s2) * draw_normal(g);
    const Eigen::VectorXd t = layout.record_statistic(x, y);
    m += t;
    c += t * t.transpose();
  }
  m /= draws;
  c = c / draws - m * m.transpose();
  INFO("mean " << mean.transpose() << "\nMC   " << m.transpose());
  CHECK((mean - m).cwiseAbs().maxCoeff() < 0.02 * (1.0 + mean.cwiseAbs().maxCoeff()));
  CHECK((cov - c).cwiseAbs().maxCoeff() < 0.03 * (1.0 + cov.cwiseAbs().maxCoeff()));
  // The covariance of the unique entries is positive definite (no duplicated entries).
  CHECK(Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(cov).eigenvalues().minCoeff() > 0.0);
}

TEST_CASE("NIG update equals the textbook formulas", "[regression]") {
  const Eigen::Vector2d mu0(0.5, -0.5);
  Eigen::Matrix2d lambda0;
  lambda0 << 2.0, 0.5, 0.5, 1.0;
  const nig_regression_prior prior(mu0, lambda0, 3.0, 2.0);
  Eigen::Matrix2d xtx;
  xtx << 10.0, 4.0, 4.0, 6.0;
  const Eigen::Vector2d xty(3.0, 2.0);
  const double yty = 5.0;
  const auto post = prior.update(xtx, xty, yty, 10.0);
  const Eigen::Matrix2d ln = xtx + lambda0;
  const Eigen::Vector2d mn = ln.inverse() * (xty + lambda0 * mu0);
  CHECK((post.mu() - mn).norm() < 1e-12);
  CHECK(post.a() == 8.0);
  CHECK(post.b() == Approx(2.0 + 0.5 * (yty + mu0.dot(lambda0 * mu0) - mn.dot(ln * mn))));
  std::mt19937_64 g(23);
  Eigen::Vector2d total = Eigen::Vector2d::Zero();
  for (int i = 0; i < 40000; ++i) total += post.draw(g).theta;
  CHECK((total / 40000.0 - mn).norm() < 0.01);
}

TEST_CASE("NIG in-place update and draw equal the value forms; two updates equal one on the sums", "[regression]") {
  const Eigen::Vector2d mu0(0.5, -0.5);
  Eigen::Matrix2d lambda0;
  lambda0 << 2.0, 0.5, 0.5, 1.0;
  const nig_regression_prior prior(mu0, lambda0, 3.0, 2.0);
  Eigen::MatrixXd xtx1(2, 2), xtx2(2, 2);
  xtx1 << 10.0, 4.0, 4.0, 6.0;
  xtx2 << 7.0, -1.0, -1.0, 3.0;
  const Eigen::VectorXd xty1 = Eigen::Vector2d(3.0, 2.0), xty2 = Eigen::Vector2d(-1.0, 0.5);
  const double yty1 = 5.0, yty2 = 2.5;
  nig_regression_prior in_place = prior;
  prior.update(xtx1, xty1, yty1, 10.0, in_place);
  const auto value = prior.update(xtx1, xty1, yty1, 10.0);
  CHECK((in_place.mu() - value.mu()).norm() < 1e-14);
  CHECK(in_place.lambda() == value.lambda());
  CHECK(in_place.b() == Approx(value.b()).epsilon(1e-14));
  // The posterior updated again (its own mu^T Lambda mu carried over) equals one update on the summed statistics.
  const auto twice = value.update(xtx2, xty2, yty2, 7.0);
  const auto once = prior.update(xtx1 + xtx2, xty1 + xty2, yty1 + yty2, 17.0);
  CHECK((twice.mu() - once.mu()).norm() < 1e-12);
  CHECK(twice.a() == once.a());
  CHECK(twice.b() == Approx(once.b()).epsilon(1e-12));
  // An update into the prior itself reads the prior before it writes.
  nig_regression_prior self = prior;
  self.update(xtx1, xty1, yty1, 10.0, self);
  CHECK((self.mu() - value.mu()).norm() < 1e-14);
  CHECK(self.b() == Approx(value.b()).epsilon(1e-14));
  std::mt19937_64 g1(5), g2(5);
  regression_parameter theta;
  value.draw(g1, theta);
  const auto drawn = value.draw(g2);
  CHECK(theta.variance == drawn.variance);
  CHECK(theta.theta == drawn.theta);
}

TEST_CASE("workspace forms equal the value forms: Gram matrix, covariate moments, inverse Wishart", "[regression]") {
  const regression_layout layout(2, true);
  Eigen::VectorXd s(9);
  s << 3.0, -1.0, 0.1, 4.0, 0.1, 2.0, 1.0, 0.5, 6.0;
  Eigen::MatrixXd b;
  layout.gram(s, 10.0, b);
  CHECK(b == layout.gram(s, 10.0));
  Eigen::VectorXd back;
  layout.statistic_of(b, back);
  CHECK(back == s);
  const Eigen::Vector2d mu(0.3, -0.2);
  Eigen::Matrix2d sigma;
  sigma << 0.5, 0.1, 0.1, 0.3;
  covariate_moments cm;
  normal_covariate_moments(layout, mu, sigma, cm);
  normal_covariate_moments(layout, mu, sigma, cm);  // reused storage
  const auto value = normal_covariate_moments(layout, mu, sigma);
  CHECK(cm.m2 == value.m2);
  CHECK(cm.m4 == value.m4);
  std::mt19937_64 g1(9), g2(9);
  Eigen::MatrixXd w;
  inverse_wishart_workspace ws;
  draw_inverse_wishart(g1, 6.0, Eigen::MatrixXd(sigma), w, ws);
  const Eigen::MatrixXd w2 = draw_inverse_wishart(g2, 6.0, sigma);
  CHECK((w - w2).norm() < 1e-12 * w2.norm());
  CHECK_THROWS_AS(draw_inverse_wishart(g1, 0.5, Eigen::MatrixXd(sigma), w, ws), std::invalid_argument);
  CHECK_THROWS_AS(draw_inverse_wishart(g1, 6.0, Eigen::MatrixXd(-sigma), w, ws), std::domain_error);
}

TEST_CASE("PSD projection of the Gram matrix keeps the public entry and the sums", "[regression]") {
  const regression_layout layout(2, true);
  Eigen::VectorXd s(9);
  s << 3.0, -1.0, 0.1, 0.0, 0.1, 2.0, 1.0, 0.5, -4.0;  // y^T y < 0: not PSD
  Eigen::MatrixXd b = layout.gram(s, 10.0);
  numerical_events ev;
  REQUIRE(project_gram(layout, b, ev));
  CHECK(ev.psd_repairs == 1);
  CHECK(b(0, 0) == 10.0);
  CHECK(b.row(0).tail(3).transpose() == layout.gram(s, 10.0).row(0).tail(3).transpose());
  CHECK(Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(b).eigenvalues().minCoeff() > -1e-9);
}

TEST_CASE("regression: bad input", "[regression][errors]") {
  CHECK_THROWS_AS(regression_layout(0, true), std::invalid_argument);
  CHECK_THROWS_AS(regression_layout(2, true, 0.0), std::invalid_argument);
  const regression_layout layout(1, true);
  CHECK_THROWS_AS(layout.record_statistic(Eigen::VectorXd::Constant(1, std::nan("")), 1.0), std::invalid_argument);
  CHECK_THROWS_AS(layout.record_statistic(Eigen::VectorXd::Zero(1), std::numeric_limits<double>::infinity()),
                  std::invalid_argument);
  CHECK_THROWS_AS(layout.sensitivity({interval(-1.0, 1.0)}, interval(1.0, 1.0)), std::invalid_argument);
  Eigen::Matrix2d not_pd;
  not_pd << 1.0, 2.0, 2.0, 1.0;
  CHECK_THROWS_AS(nig_regression_prior(Eigen::Vector2d::Zero(), not_pd, 1.0, 1.0), std::invalid_argument);
  const nig_regression_prior prior(Eigen::Vector2d::Zero(), Eigen::Matrix2d::Identity(), 2.0, 1.0);
  std::mt19937_64 g(1);
  const laplace_mechanism m(8.0, 0.1);
  const auto cm = normal_covariate_moments(layout, Eigen::VectorXd::Zero(1), Eigen::MatrixXd::Identity(1, 1));
  CHECK_THROWS_AS(gibbs_ss(linear_regression_model(layout, fixed_covariates(cm)), prior, m, Eigen::VectorXd::Zero(4), 10.0, g),
                  std::invalid_argument);
  CHECK_THROWS_AS(gibbs_ss(linear_regression_model(layout, fixed_covariates(cm)), prior, m, Eigen::VectorXd::Zero(5), 0.0, g),
                  std::invalid_argument);
  Eigen::VectorXd z = Eigen::VectorXd::Zero(5);
  z(2) = std::nan("");
  CHECK_THROWS_AS(gibbs_ss(linear_regression_model(layout, fixed_covariates(cm)), prior, m, z, 10.0, g), std::invalid_argument);
  niw_hyperprior h{Eigen::VectorXd::Zero(1), 1.0, Eigen::MatrixXd::Identity(1, 1), 5.0};
  CHECK_THROWS_AS(hierarchical_normal_covariates(regression_layout(1, false), h, g), std::invalid_argument);
}

TEST_CASE("Gibbs-SS-Noisy uses the released (noisy, normalised) moments, not the exact ones", "[regression]") {
  const regression_layout layout(1, true);
  const moment_release_layout moments(layout);
  CHECK(moments.size() == 4);  // (0,0,0,1), (0,0,1,1), (0,1,1,1), (1,1,1,1); (0,0,0,0) = c^4 is public
  std::mt19937_64 g(29);
  std::vector<Eigen::VectorXd> xs;
  for (int i = 0; i < 50; ++i) xs.push_back(Eigen::VectorXd::Constant(1, 0.3 * draw_normal(g)));
  const Eigen::VectorXd exact = moments.sample_moments(xs);
  const auto [l1, l2] = moments.sensitivity({interval(-1.0, 1.0)}, 50.0);
  CHECK(l1 == Approx((2.0 + 1.0 + 2.0 + 1.0) / 50.0));
  (void)l2;
  // epsilon 50: noise small enough that the released moments remain some distribution's (no repair), yet not exact.
  const Eigen::VectorXd released = laplace_mechanism(l1, 50.0).release(exact, g);
  const nig_regression_prior prior(Eigen::Vector2d::Zero(), Eigen::Matrix2d::Identity(), 2.0, 1.0);
  const laplace_mechanism m(8.0, 0.05);
  Eigen::VectorXd z = Eigen::VectorXd::Zero(5);
  double shrinkage = -1.0;
  const covariate_moments cm = moments.moments_from_release(released, nullptr, &shrinkage);
  CHECK(shrinkage == 0.0);
  const gibbs_ss sampler(linear_regression_model(layout, fixed_covariates(cm)), prior, m, z, 50.0, g);
  const covariate_moments& used = sampler.model().covariates().moments();
  for (int k = 0; k < moments.size(); ++k) {
    const auto& s = moments.index_set(k);
    CHECK(used.fourth(s[0], s[1], s[2], s[3]) == released(k));
    CHECK(used.fourth(s[3], s[2], s[1], s[0]) == released(k));  // filled by symmetry
    CHECK(used.fourth(s[0], s[1], s[2], s[3]) != exact(k));
  }
  CHECK(used.m2(1, 1) == released(1));  // E[x^2] = m4(0, 0, 1, 1) / c^2
  CHECK(used.m2(0, 1) == released(0));
}

// A release of privpost-release (tests/tools/linreg_invalid_moments.json: tests/tools/regression.csv, two covariates and
// an intercept on [-1, 1], n = 300, epsilon 5 split evenly) whose noisy fourth moments are no distribution's. Before
// valid_covariate_moments, Gibbs-SS-Noisy on it drew s from an indefinite "covariance" (smallest eigenvalue of
// n Sigma(theta) near -40), drifted to |s| ~ 1e17 and threw from the NIG update at sweep 330 of the chain below.
namespace {
Eigen::VectorXd invalid_release_statistics() {
  Eigen::VectorXd z(9);
  z << 6.563755027285362, 56.47633424767229, 12.549521152956707, 33.92467516166454, -2.5042787420400203, 13.801126645990676,
      34.19649244899727, -7.805049121531342, 21.57226728797429;
  return z;
}
Eigen::VectorXd invalid_release_moments() {
  Eigen::VectorXd zm(14);
  zm << -0.016152291331695982, 0.18212324614674621, 0.10005065867187905, 0.0010810393628823993, 0.15465977698165842,
      -0.015995859854894736, 0.05092156202878127, -0.05186390429137863, 0.06752515619832786, 0.022222355925625686,
      -0.015315333868724199, -0.04700457688158903, -0.0016564378342915323, 0.005077146723332988;
  return zm;
}
}  // namespace

TEST_CASE("valid_covariate_moments: released moments no distribution has are mixed with the smallest weight of a normal",
          "[regression]") {
  const regression_layout layout(2, true);
  const moment_release_layout ml(layout);
  const Eigen::VectorXd zm = invalid_release_moments();
  // The raw tensor (what moments_from_release built before the repair) is indefinite.
  covariate_moments raw;
  {
    double ignored = 0.0;
    raw = ml.moments_from_release(zm, nullptr, &ignored);
    CHECK(ignored > 0.0);
  }
  // Rebuild the raw moments by hand (m4 by symmetry from the released sets, m2 from the intercept rows).
  raw.m4.assign(81, 0.0);
  auto put = [&](std::array<int, 4> q, double v) {
    std::sort(q.begin(), q.end());
    do {
      raw.m4[static_cast<std::size_t>(((q[0] * 3 + q[1]) * 3 + q[2]) * 3 + q[3])] = v;
    } while (std::next_permutation(q.begin(), q.end()));
  };
  put({0, 0, 0, 0}, 1.0);
  for (int k = 0; k < ml.size(); ++k) put(ml.index_set(k), zm(k));
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b) raw.m2(a, b) = raw.fourth(0, 0, a, b);
  const double raw_low = detail::smallest_moment_eigenvalue(raw, true);
  INFO("smallest eigenvalue of the released moments' monomial matrix " << raw_low);
  CHECK(raw_low < -0.05);

  covariate_moments fixed = raw;
  const double lambda = valid_covariate_moments(layout, fixed);
  INFO("mixture weight " << lambda);
  CHECK(lambda > 0.0);
  CHECK(lambda <= 1.0);
  CHECK(detail::smallest_moment_eigenvalue(fixed, true) > 0.0);
  // The weight is the smallest that reaches the margin (1e-3 of the reference's smallest eigenvalue): the reference is
  // recovered from fixed = (1 - lambda) raw + lambda ref, and the smallest eigenvalue of the mixture sits at the margin.
  covariate_moments ref = raw;
  ref.m2 = raw.m2 + (fixed.m2 - raw.m2) / lambda;
  for (std::size_t i = 0; i < ref.m4.size(); ++i) ref.m4[i] = raw.m4[i] + (fixed.m4[i] - raw.m4[i]) / lambda;
  const double target = 1e-3 * detail::smallest_moment_eigenvalue(ref, true);
  CHECK(target > 0.0);
  CHECK(detail::smallest_moment_eigenvalue(fixed, true) == Approx(target).epsilon(1e-6));
  CHECK(detail::smallest_moment_eigenvalue(detail::mix_moments(raw, ref, 0.99 * lambda), true) < target);
  covariate_moments again = raw;
  valid_covariate_moments(layout, again);
  CHECK(again.m4 == fixed.m4);  // deterministic
  // moments_from_release applies the same repair.
  double shrinkage = -1.0;
  const covariate_moments from_release = ml.moments_from_release(zm, nullptr, &shrinkage);
  CHECK(shrinkage == lambda);
  CHECK(from_release.m4 == fixed.m4);
  CHECK(from_release.m2 == fixed.m2);
  // Valid moments make Sigma(theta) a covariance for every theta: checked at 500 draws from a wide prior.
  const linear_regression_model model(layout, fixed_covariates(fixed));
  std::mt19937_64 g(41);
  Eigen::VectorXd mean;
  Eigen::MatrixXd cov;
  double worst = 0.0;
  for (int i = 0; i < 500; ++i) {
    regression_parameter theta;
    theta.theta = Eigen::VectorXd(3);
    for (int k = 0; k < 3; ++k) theta.theta(k) = 3.0 * draw_normal(g);
    theta.variance = std::exp(draw_normal(g));
    model.moments(theta, 300.0, mean, cov);
    const Eigen::VectorXd e = Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(cov, Eigen::EigenvaluesOnly).eigenvalues();
    worst = std::min(worst, e(0) / e(e.size() - 1));
  }
  INFO("smallest relative eigenvalue of n Sigma(theta) " << worst);
  CHECK(worst > -1e-10);
  // ... and the chain that diverged before the repair runs 2000 sweeps with its statistic inside the box's reach
  // (|sum x_a x_b| <= n, |sum x_a y| <= n, y^T y <= n on [-1, 1]: the normal approximation may exceed these, by little).
  const nig_regression_prior prior(Eigen::VectorXd::Zero(3), Eigen::MatrixXd::Identity(3, 3), 2.0, 1.0);
  std::mt19937_64 chain_g(35);
  gibbs_ss chain(linear_regression_model(layout, fixed_covariates(from_release)), prior, laplace_mechanism(15.0, 2.5),
                 invalid_release_statistics(), 300.0, chain_g);
  double largest = 0.0;
  for (int i = 0; i < 2000; ++i) {
    chain.step(chain_g);
    largest = std::max(largest, chain.statistic().cwiseAbs().maxCoeff());
  }
  INFO("largest |s| entry over the chain " << largest);
  CHECK(largest < 2.0 * 300.0);
}

TEST_CASE("valid_covariate_moments: valid moments are left as they are; bad input is refused", "[regression]") {
  const regression_layout layout(2, true);
  const moment_release_layout ml(layout);
  std::mt19937_64 g(43);
  std::vector<Eigen::VectorXd> xs;
  for (int i = 0; i < 40; ++i) {
    Eigen::VectorXd x(2);
    x << 2.0 * std::uniform_real_distribution<double>()(g) - 1.0, 0.5 * draw_normal(g);
    xs.push_back(x);
  }
  double shrinkage = -1.0;
  const covariate_moments exact = ml.moments_from_release(ml.sample_moments(xs), nullptr, &shrinkage);
  CHECK(shrinkage == 0.0);
  covariate_moments copy = exact;
  CHECK(valid_covariate_moments(layout, copy) == 0.0);
  CHECK(copy.m4 == exact.m4);
  CHECK(copy.m2 == exact.m2);
  // Binary covariates: x^2 = 1, so the moment matrix is singular (yet valid) and stays as it is.
  std::vector<Eigen::VectorXd> bits;
  for (int i = 0; i < 40; ++i) bits.push_back(Eigen::Vector2d(i % 2 ? 1.0 : -1.0, i % 3 ? 1.0 : -1.0));
  covariate_moments binary = ml.moments_from_release(ml.sample_moments(bits), nullptr, &shrinkage);
  CHECK(shrinkage == 0.0);
  // Without an intercept the second moments count too: an indefinite m2 is repaired.
  const regression_layout bare(2, false);
  covariate_moments nm = normal_covariate_moments(bare, Eigen::VectorXd::Zero(2), Eigen::Matrix2d::Identity());
  nm.m2(0, 1) = nm.m2(1, 0) = 1.5;  // |correlation| > 1
  CHECK(detail::smallest_moment_eigenvalue(nm, false) < 0.0);
  CHECK(valid_covariate_moments(bare, nm) > 0.0);
  CHECK(Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(nm.m2).eigenvalues()(0) > 0.0);
  // Bad input.
  covariate_moments bad = exact;
  bad.m4[5] = std::nan("");
  CHECK_THROWS_WITH(valid_covariate_moments(layout, bad), Catch::Contains("m4 entry is nan"));
  bad = exact;
  bad.m4.pop_back();
  CHECK_THROWS_AS(valid_covariate_moments(layout, bad), std::invalid_argument);
  CHECK_THROWS_AS(valid_covariate_moments(regression_layout(3, true), copy), std::invalid_argument);
  Eigen::VectorXd released = ml.sample_moments(xs);
  released(2) = std::numeric_limits<double>::infinity();
  CHECK_THROWS_WITH(ml.moments_from_release(released), Catch::Contains("m2 entry is inf"));
}

TEST_CASE("posterior predictive draws: mean and spread of y* = theta^T x + sigma e", "[regression]") {
  const regression_layout layout(1, true);
  // A posterior with theta = (1, 2) and sigma^2 = 0.25 exactly (every draw equal): y* at x = 3 is N(7, 0.25).
  Eigen::MatrixXd chain(20000, 3);
  chain.col(0).setConstant(1.0);
  chain.col(1).setConstant(2.0);
  chain.col(2).setConstant(0.25);
  const posterior p({chain});
  std::mt19937_64 g(31);
  const Eigen::VectorXd y = predictive_draws(p, layout, Eigen::VectorXd::Constant(1, 3.0), g);
  CHECK(y.mean() == Approx(7.0).margin(0.02));
  CHECK(std::sqrt((y.array() - y.mean()).square().sum() / (y.size() - 1)) == Approx(0.5).epsilon(0.02));
  const auto ci = predictive_interval(p, layout, Eigen::VectorXd::Constant(1, 3.0), 0.9, g);
  CHECK(ci.lower == Approx(7.0 - 1.6449 * 0.5).margin(0.03));
  CHECK_THROWS_AS(predictive_draws(posterior({Eigen::MatrixXd::Zero(10, 2)}), layout, Eigen::VectorXd::Zero(1), g),
                  std::invalid_argument);
}
