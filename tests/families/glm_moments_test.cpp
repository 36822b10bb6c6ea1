// Tests of the logistic moment map (families/glm/logistic_moments.hpp; docs/design-glm.md Sec. 5.7 B):
//  1. golden mu and V at the spec's d = 2 example for the exact and the Taylor link (1e-9);
//  2. the closed form against Monte Carlo (10^6 records with logistic y; 5 standard errors per entry, estimated from
//     the same draws): d = 3 zero-mean (the paper's model), and with a covariate mean, with and without an intercept
//     column (docs/design-glm.md Sec. 3.7);
//  3. the layout matches glm_statistic's order, and V is PSD for the exact link over random (theta, Sigma), q up to 25;
//  4. the adjoint against central differences of <a, mu> + <g, V> in nu, w, Sigma and kappa_0..3, with and without
//     an intercept.
#include <catch2/catch.hpp>

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>
#include <cmath>
#include <optional>
#include <random>
#include <tuple>

#include "privpost/core/random/normal.hpp"
#include "privpost/core/random/uniform.hpp"
#include "privpost/families/glm/glm_statistic.hpp"
#include "privpost/families/glm/logistic_link.hpp"
#include "privpost/families/glm/logistic_moments.hpp"

using namespace privpost;

namespace {
Eigen::MatrixXd random_covariance(std::mt19937_64& g, int d, double scale) {
  Eigen::MatrixXd a(d, d);
  for (int i = 0; i < d; ++i)
    for (int j = 0; j < d; ++j) a(i, j) = draw_normal(g);
  return scale * (a * a.transpose() / d + 0.2 * Eigen::MatrixXd::Identity(d, d));
}
}  // namespace

TEST_CASE("logistic moments: golden values at the spec's d = 2 example", "[glm][moments]") {
  const logistic_moment_layout layout(2);
  Eigen::Vector2d theta(0.8, -0.5);
  Eigen::Matrix2d sigma;
  sigma << 0.2, 0.05, 0.05, 0.1;
  const Eigen::VectorXd w = sigma * theta;
  const double q = theta.dot(w);
  CHECK(q == Approx(0.113));
  Eigen::VectorXd mu(5);
  Eigen::MatrixXd v(5, 5);
  const Eigen::VectorXd zero = Eigen::VectorXd::Zero(2);
  logistic_moments(layout, zero, w, sigma, exact_logistic_link::functionals(0.0, q), mu, v);
  Eigen::VectorXd mu_golden(5);
  mu_golden << 0.0656930307, -0.0048661504, 0.2, 0.1, 0.0707106781;
  Eigen::MatrixXd v_golden(5, 5);
  v_golden << 0.1956844257, 0.0503196722, 0.0257242720, -0.0004896490, 0.0033267677,  //
      0.0503196722, 0.0999763206, 0.0066102616, -0.0009730053, 0.0089420180,          //
      0.0257242720, 0.0066102616, 0.08, 0.005, 0.0282842712,                          //
      -0.0004896490, -0.0009730053, 0.005, 0.02, 0.0141421356,                        //
      0.0033267677, 0.0089420180, 0.0282842712, 0.0141421356, 0.045;
  CHECK((mu - mu_golden).cwiseAbs().maxCoeff() < 1e-9);
  CHECK((v - v_golden).cwiseAbs().maxCoeff() < 1e-9);

  logistic_moments(layout, zero, w, sigma, taylor_logistic_link::functionals(0.0, q), mu, v);
  CHECK(std::abs(mu(0) - 0.0655931250) < 1e-9);
  CHECK(std::abs(mu(1) + 0.0048587500) < 1e-9);
  const double row0[] = {0.1956975420, 0.0503187006, 0.0256221563, -0.0004892500, 0.0033283074};
  const double row1[] = {0.0999763925, 0.0066048750, -0.0009715000, 0.0089279302};
  for (int j = 0; j < 5; ++j) CHECK(std::abs(v(0, j) - row0[j]) < 1e-9);
  for (int j = 1; j < 5; ++j) CHECK(std::abs(v(1, j) - row1[j - 1]) < 1e-9);
  CHECK((v.bottomRightCorner(3, 3) - v_golden.bottomRightCorner(3, 3)).cwiseAbs().maxCoeff() < 1e-9);
}

namespace {
// The closed form against 10^6 simulated records x ~ N(mean, sigma), y logistic at eta = theta~' x~: every entry of mu
// within 5 standard errors, every entry of V within 5 standard errors of the second moment's estimate.
void check_against_monte_carlo(std::mt19937_64& g, const Eigen::VectorXd& theta, const Eigen::VectorXd& mean_x,
                               const Eigen::MatrixXd& sigma, std::optional<double> intercept) {
  const int d = static_cast<int>(sigma.rows());
  const int p = d + (intercept ? 1 : 0);
  const Eigen::MatrixXd chol = sigma.llt().matrixL();
  const auto stat = glm_statistic::logistic(d, 1e6, intercept);  // no clipping: the model's x is unbounded
  const logistic_moment_layout layout(d, intercept.has_value());
  REQUIRE(layout.size() == stat.size());
  REQUIRE(theta.size() == p);
  const Eigen::Index dd = stat.size();
  const int n = 1000000;
  Eigen::VectorXd s1 = Eigen::VectorXd::Zero(dd);
  Eigen::MatrixXd s2 = Eigen::MatrixXd::Zero(dd, dd);
  Eigen::MatrixXd s4 = Eigen::MatrixXd::Zero(dd, dd);  // for the standard errors of the second moments
  Eigen::VectorXd xi(d), xa(p);
  for (int r = 0; r < n; ++r) {
    for (int i = 0; i < d; ++i) xi(i) = draw_normal(g);
    const Eigen::VectorXd x = mean_x + chol * xi;
    if (intercept)
      xa << *intercept, x;
    else
      xa = x;
    const double prob = 1.0 / (1.0 + std::exp(-theta.dot(xa)));
    const double y = draw_uniform(g) < prob ? 1.0 : -1.0;
    const Eigen::VectorXd t = stat.statistic(x, y);
    s1 += t;
    const Eigen::MatrixXd tt = t * t.transpose();
    s2 += tt;
    s4 += tt.cwiseProduct(tt);
  }
  const Eigen::VectorXd mean = s1 / n;
  const Eigen::MatrixXd second = s2 / n;
  const Eigen::MatrixXd cov = second - mean * mean.transpose();
  // The augmented mean and covariance (the intercept's column is constant).
  Eigen::VectorXd nu(p);
  Eigen::MatrixXd sig = Eigen::MatrixXd::Zero(p, p);
  if (intercept)
    nu << *intercept, mean_x;
  else
    nu = mean_x;
  sig.bottomRightCorner(d, d) = sigma;
  const Eigen::VectorXd w = sig * theta;
  Eigen::VectorXd mu(dd);
  Eigen::MatrixXd v(dd, dd);
  logistic_moments(layout, nu, w, sig, exact_logistic_link::functionals(theta.dot(nu), theta.dot(w)), mu, v);
  for (Eigen::Index a = 0; a < dd; ++a) {
    const double se_mean = std::sqrt(cov(a, a) / n);
    INFO(stat.names()[static_cast<std::size_t>(a)] << ": mu[" << a << "] " << mu(a) << " vs " << mean(a) << " (se " << se_mean
                                                   << ")");
    CHECK(std::abs(mu(a) - mean(a)) < 5.0 * se_mean);
    for (Eigen::Index b = 0; b < dd; ++b) {
      // The covariance estimate's error: that of the mean of t_a t_b, plus the means' (alone when t_a t_b is constant,
      // as for y c with an intercept, y^2 c^2 = c^2).
      const double se = std::sqrt(std::max(s4(a, b) / n - second(a, b) * second(a, b), 0.0) / n) +
                        std::abs(mean(a)) * std::sqrt(cov(b, b) / n) + std::abs(mean(b)) * std::sqrt(cov(a, a) / n);
      INFO("V[" << a << "," << b << "] " << v(a, b) << " vs " << cov(a, b) << " (se " << se << ")");
      CHECK(std::abs(v(a, b) - cov(a, b)) < 5.0 * se + 1e-12);
    }
  }
}
}  // namespace

TEST_CASE("logistic moments agree with Monte Carlo (10^6 records)", "[glm][moments]") {
  std::mt19937_64 g(44);
  SECTION("d = 3, zero-mean covariates, no intercept (the paper's model)") {
    const Eigen::MatrixXd sigma = random_covariance(g, 3, 0.3);
    check_against_monte_carlo(g, Eigen::Vector3d(0.9, -1.2, 0.5), Eigen::VectorXd::Zero(3), sigma, std::nullopt);
  }
  SECTION("d = 2, covariate mean and an intercept column c = 1 (docs/design-glm.md Sec. 3.7)") {
    const Eigen::MatrixXd sigma = random_covariance(g, 2, 0.3);
    check_against_monte_carlo(g, Eigen::Vector3d(-0.7, 1.1, -0.6), Eigen::Vector2d(0.4, -0.8), sigma, 1.0);
  }
  SECTION("d = 2, covariate mean, no intercept") {
    const Eigen::MatrixXd sigma = random_covariance(g, 2, 0.5);
    check_against_monte_carlo(g, Eigen::Vector2d(1.3, 0.4), Eigen::Vector2d(-0.5, 0.9), sigma, std::nullopt);
  }
}

TEST_CASE("the exact link's V is positive semi-definite over random parameters", "[glm][moments]") {
  std::mt19937_64 g(5);
  int count = 0;
  for (int rep = 0; rep < 1000; ++rep) {
    const int d = 1 + rep % 4;
    const logistic_moment_layout layout(d);
    const Eigen::MatrixXd sigma = random_covariance(g, d, 0.05 + 2.0 * draw_uniform(g));
    Eigen::VectorXd theta(d);
    for (int i = 0; i < d; ++i) theta(i) = draw_normal(g) * 2.0;
    const Eigen::VectorXd w = sigma * theta;
    const double q = theta.dot(w);
    if (q > 25.0) continue;
    ++count;
    Eigen::VectorXd mu(layout.size());
    Eigen::MatrixXd v(layout.size(), layout.size());
    logistic_moments(layout, Eigen::VectorXd::Zero(d), w, sigma, exact_logistic_link::functionals(0.0, q), mu, v);
    const double min_eig = Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(v).eigenvalues().minCoeff();
    INFO("d " << d << ", q " << q << ", min eigenvalue " << min_eig);
    CHECK(min_eig >= -1e-12 * v.trace());
  }
  CHECK(count > 500);
}

TEST_CASE("logistic moment adjoint against central differences", "[glm][moments]") {
  std::mt19937_64 g(8);
  for (const auto& [d, intercept, centred] :
       {std::tuple{1, false, true}, std::tuple{2, false, true}, std::tuple{3, false, true}, std::tuple{1, true, false},
        std::tuple{2, false, false}, std::tuple{3, true, false}}) {
    const logistic_moment_layout layout(d, intercept);
    const int p = layout.augmented();
    const Eigen::Index dd = layout.size();
    // Arbitrary inputs: the adjoint is that of the formulas, whatever the values.
    const Eigen::MatrixXd sigma = random_covariance(g, p, 0.5);
    Eigen::VectorXd w(p), nu = Eigen::VectorXd::Zero(p), a(dd);
    for (int i = 0; i < p; ++i) w(i) = draw_normal(g);
    if (!centred)
      for (int i = 0; i < p; ++i) nu(i) = draw_normal(g);
    for (Eigen::Index i = 0; i < dd; ++i) a(i) = draw_normal(g);
    Eigen::MatrixXd gm(dd, dd);
    for (Eigen::Index i = 0; i < dd; ++i)
      for (Eigen::Index j = 0; j < dd; ++j) gm(i, j) = draw_normal(g);
    gm = (gm + gm.transpose()).eval();
    link_functionals k{0.1, 0.45, -0.05, -0.2, 0.03, 0.3};
    auto f = [&](const Eigen::VectorXd& nn, const Eigen::VectorXd& ww, const Eigen::MatrixXd& ss, const link_functionals& kk) {
      Eigen::VectorXd mu(dd);
      Eigen::MatrixXd v(dd, dd);
      logistic_moments(layout, nn, ww, ss, kk, mu, v);
      return a.dot(mu) + (gm.array() * v.array()).sum();
    };
    Eigen::VectorXd nu_bar = Eigen::VectorXd::Zero(p), w_bar = Eigen::VectorXd::Zero(p);
    Eigen::MatrixXd s_bar = Eigen::MatrixXd::Zero(p, p);
    link_functionals k_bar{};
    logistic_moments_adjoint(layout, nu, w, sigma, k, a, gm, nu_bar, w_bar, s_bar, k_bar);
    const double h = 1e-6;
    INFO("d " << d << ", intercept " << intercept << ", centred " << centred);
    for (int i = 0; i < p; ++i) {
      Eigen::VectorXd wp = w, wm = w, np = nu, nm = nu;
      wp(i) += h;
      wm(i) -= h;
      np(i) += h;
      nm(i) -= h;
      CHECK(w_bar(i) == Approx((f(nu, wp, sigma, k) - f(nu, wm, sigma, k)) / (2 * h)).epsilon(1e-6).margin(1e-7));
      CHECK(nu_bar(i) == Approx((f(np, w, sigma, k) - f(nm, w, sigma, k)) / (2 * h)).epsilon(1e-6).margin(1e-7));
    }
    // Sigma entries perturbed one position at a time (not symmetrically): the adjoint counts each read at (a, b).
    for (int i = 0; i < p; ++i)
      for (int j = 0; j < p; ++j) {
        Eigen::MatrixXd sp = sigma, sm = sigma;
        sp(i, j) += h;
        sm(i, j) -= h;
        INFO("Sigma(" << i << "," << j << ")");
        CHECK(s_bar(i, j) == Approx((f(nu, w, sp, k) - f(nu, w, sm, k)) / (2 * h)).epsilon(1e-6).margin(1e-7));
      }
    for (std::size_t j = 0; j < 4; ++j) {
      link_functionals kp = k, km = k;
      kp[j] += h;
      km[j] -= h;
      INFO("kappa_" << j);
      CHECK(k_bar[j] == Approx((f(nu, w, sigma, kp) - f(nu, w, sigma, km)) / (2 * h)).epsilon(1e-6).margin(1e-7));
    }
    CHECK(k_bar[4] == 0.0);
    CHECK(k_bar[5] == 0.0);
  }
}
