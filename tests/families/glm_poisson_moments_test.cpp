// Tests of the Poisson moment map (families/glm/poisson_moments.hpp; docs/design-glm.md Sec. 3.3 and 5.7 B):
//  1. golden mu and V at the spec's d = 2 example (theta = (0.6, -0.4), Sigma = [[0.3, 0.1], [0.1, 0.2]]; the spec's
//     values were computed independently of this code, to 1e-9 here);
//  2. the layout matches glm_statistic::poisson's size and order (with and without the intercept and the y t2 block);
//  3. against Monte Carlo: 10^6 records x ~ N(mu_x, Sigma), y ~ Poisson(exp(theta~' x~)), every entry of mu and V
//     within 5 standard errors estimated from the same draws, with an intercept and a covariate mean, and without;
//  4. the overflow guard returns false rather than infinities; mismatched sizes throw;
//  5. the adjoint of <a, mu> + <g, V> against central differences in nu, theta~ and a symmetric Sigma~ direction (d 1-3,
//     with and without the intercept; g not symmetric);
//  6. the written-out Gaussian monomial moments (Isserlis) against Stein's recursion for every index tuple of length <= 4.
#include <catch2/catch.hpp>

#include <Eigen/Cholesky>
#include <cmath>
#include <optional>
#include <random>
#include <stdexcept>
#include <vector>

#include "privpost/core/random/normal.hpp"
#include "privpost/core/random/poisson.hpp"
#include "privpost/families/glm/glm_statistic.hpp"
#include "privpost/families/glm/poisson_moments.hpp"

using namespace privpost;

namespace {
// Stein's recursion E[x_a R] = m_a E[R] + sum_b s_ab E[R / x_b]: the reference for detail::gaussian_monomial_moment.
double stein_moment(const Eigen::VectorXd& m, const Eigen::MatrixXd& s, std::vector<int> idx) {
  if (idx.empty()) return 1.0;
  const int a = idx.front();
  idx.erase(idx.begin());
  double out = m(a) * stein_moment(m, s, idx);
  for (std::size_t t = 0; t < idx.size(); ++t) {
    std::vector<int> other = idx;
    other.erase(other.begin() + static_cast<std::ptrdiff_t>(t));
    out += s(a, idx[t]) * stein_moment(m, s, other);
  }
  return out;
}
}  // namespace

TEST_CASE("Gaussian monomial moments: Isserlis written out against Stein's recursion", "[glm][moments][poisson]") {
  std::mt19937_64 g(8);
  const int p = 3;
  Eigen::VectorXd m(p);
  Eigen::MatrixXd a(p, p);
  for (int i = 0; i < p; ++i) {
    m(i) = draw_normal(g);
    for (int j = 0; j < p; ++j) a(i, j) = draw_normal(g);
  }
  const Eigen::MatrixXd s = a * a.transpose();
  int checked = 0;
  for (int k = 0; k <= 4; ++k) {
    int tuples = 1;
    for (int t = 0; t < k; ++t) tuples *= p;
    for (int code = 0; code < tuples; ++code) {
      std::vector<int> idx(static_cast<std::size_t>(k));
      for (int t = 0, c = code; t < k; ++t, c /= p) idx[static_cast<std::size_t>(t)] = c % p;
      const double ref = stein_moment(m, s, idx);
      INFO("k " << k << ", tuple code " << code);
      CHECK(detail::gaussian_monomial_moment(m, s, idx.data(), k) == Approx(ref).epsilon(1e-13).margin(1e-13));
      ++checked;
    }
  }
  CHECK(checked == 1 + 3 + 9 + 27 + 81);
}

TEST_CASE("Poisson moments: golden values at the spec's d = 2 example", "[glm][moments][poisson]") {
  const poisson_moment_layout layout(2);
  REQUIRE(layout.size() == 10);
  Eigen::Vector2d theta(0.6, -0.4);
  Eigen::Matrix2d sigma;
  sigma << 0.3, 0.1, 0.1, 0.2;
  Eigen::VectorXd mu;
  Eigen::MatrixXd v;
  REQUIRE(poisson_moments(layout, Eigen::Vector2d::Zero(), theta, sigma, mu, v));
  const double mu_golden[] = {0,           0, 0.3, 0.2, 0.1414213562, 0.1465904175, -0.0209414882, 0.3346449817, 0.2098337120,
                              0.1439324801};
  const double diag_golden[] = {0.3, 0.2, 0.18, 0.08, 0.14, 0.7679990187, 0.4517215560, 0.7096268640, 0.2286743522, 0.3736498627};
  const double row_yx1[] = {0.3346449817, 0.1017756327, 0.0908274227, -0.0041296615, 0.0112658262,
                            0.7679990187, 0.2115844593, 0.4150434391, 0.0526640732,  0.0803627224};
  const double row_y_cross[] = {0.0319968419, 0.0356218080, 0.0949852491, 0.0577490280, 0.1533081119,
                                0.0803627224, 0.1209930666, 0.2643444448, 0.1476901797, 0.3736498627};
  for (int i = 0; i < 10; ++i) {
    INFO("entry " << i);
    CHECK(mu(i) == Approx(mu_golden[i]).margin(1e-9));
    CHECK(v(i, i) == Approx(diag_golden[i]).margin(1e-9));
    CHECK(v(5, i) == Approx(row_yx1[i]).margin(1e-9));
    CHECK(v(9, i) == Approx(row_y_cross[i]).margin(1e-9));
  }
  CHECK((v - v.transpose()).norm() == 0.0);
}

TEST_CASE("Poisson moment layout matches glm_statistic::poisson", "[glm][moments][poisson]") {
  for (int d = 1; d <= 4; ++d)
    for (const bool intercept : {false, true})
      for (const bool y_t2 : {false, true}) {
        const auto stat = glm_statistic::poisson(d, 1.0, 5.0, intercept ? std::optional<double>(1.0) : std::nullopt, y_t2);
        const poisson_moment_layout layout(d, intercept, y_t2);
        INFO("d " << d << ", intercept " << intercept << ", y t2 " << y_t2);
        REQUIRE(layout.size() == stat.size());
        // Each entry evaluated on a record by hand equals glm_statistic's entry.
        Eigen::VectorXd x(d);
        for (int j = 0; j < d; ++j) x(j) = 0.1 * (j + 1) - 0.15;
        const double y = 3.0;
        const Eigen::VectorXd t = stat.statistic(x, y);
        auto xa = [&](int j) { return intercept ? (j == 0 ? 1.0 : x(j - 1)) : x(j); };
        for (Eigen::Index r = 0; r < layout.size(); ++r) {
          const auto& e = layout.entries()[static_cast<std::size_t>(r)];
          const double value = e.scale * xa(e.i) * (e.count == 2 ? xa(e.j) : 1.0) * (e.y == 1 ? y : 1.0);
          CHECK(value == Approx(t(r)).margin(1e-15));
        }
      }
}

namespace {
void check_poisson_against_monte_carlo(std::mt19937_64& g, const Eigen::VectorXd& theta, const Eigen::VectorXd& mean_x,
                                       const Eigen::MatrixXd& sigma, std::optional<double> intercept) {
  const int d = static_cast<int>(sigma.rows());
  const int p = d + (intercept ? 1 : 0);
  const Eigen::MatrixXd chol = sigma.llt().matrixL();
  const auto stat = glm_statistic::poisson(d, 1e6, 1e9, intercept);  // no clipping, no clamping: the model's records
  const poisson_moment_layout layout(d, intercept.has_value());
  REQUIRE(layout.size() == stat.size());
  const Eigen::Index dd = stat.size();
  const int n = 1000000;
  Eigen::VectorXd s1 = Eigen::VectorXd::Zero(dd);
  Eigen::MatrixXd s2 = Eigen::MatrixXd::Zero(dd, dd), s4 = Eigen::MatrixXd::Zero(dd, dd);
  Eigen::VectorXd xi(d), xa(p);
  for (int r = 0; r < n; ++r) {
    for (int i = 0; i < d; ++i) xi(i) = draw_normal(g);
    const Eigen::VectorXd x = mean_x + chol * xi;
    if (intercept)
      xa << *intercept, x;
    else
      xa = x;
    const double y = draw_poisson(g, std::exp(theta.dot(xa)));
    const Eigen::VectorXd t = stat.statistic(x, y);
    s1 += t;
    const Eigen::MatrixXd tt = t * t.transpose();
    s2 += tt;
    s4 += tt.cwiseProduct(tt);
  }
  const Eigen::VectorXd mean = s1 / n;
  const Eigen::MatrixXd second = s2 / n;
  const Eigen::MatrixXd cov = second - mean * mean.transpose();
  Eigen::VectorXd nu(p);
  Eigen::MatrixXd sig = Eigen::MatrixXd::Zero(p, p);
  if (intercept)
    nu << *intercept, mean_x;
  else
    nu = mean_x;
  sig.bottomRightCorner(d, d) = sigma;
  Eigen::VectorXd mu;
  Eigen::MatrixXd v;
  REQUIRE(poisson_moments(layout, nu, theta, sig, mu, v));
  for (Eigen::Index a = 0; a < dd; ++a) {
    const double se_mean = std::sqrt(cov(a, a) / n);
    INFO(stat.names()[static_cast<std::size_t>(a)] << ": mu " << mu(a) << " vs " << mean(a) << " (se " << se_mean << ")");
    CHECK(std::abs(mu(a) - mean(a)) < 5.0 * se_mean + 1e-12);
    for (Eigen::Index b = 0; b < dd; ++b) {
      const double se = std::sqrt(std::max(s4(a, b) / n - second(a, b) * second(a, b), 0.0) / n) +
                        std::abs(mean(a)) * std::sqrt(cov(b, b) / n) + std::abs(mean(b)) * std::sqrt(cov(a, a) / n);
      INFO("V[" << a << "," << b << "] " << v(a, b) << " vs " << cov(a, b) << " (se " << se << ")");
      CHECK(std::abs(v(a, b) - cov(a, b)) < 5.0 * se + 1e-12);
    }
  }
}
}  // namespace

TEST_CASE("Poisson moments agree with Monte Carlo (10^6 records)", "[glm][moments][poisson]") {
  std::mt19937_64 g(45);
  SECTION("d = 2, zero-mean covariates, no intercept (the paper's model)") {
    Eigen::Matrix2d sigma;
    sigma << 0.3, 0.1, 0.1, 0.2;
    check_poisson_against_monte_carlo(g, Eigen::Vector2d(0.6, -0.4), Eigen::Vector2d::Zero(), sigma, std::nullopt);
  }
  SECTION("d = 2, covariate mean and an intercept column (c = 1)") {
    Eigen::Matrix2d sigma;
    sigma << 0.25, -0.05, -0.05, 0.15;
    check_poisson_against_monte_carlo(g, Eigen::Vector3d(0.8, 0.5, -0.7), Eigen::Vector2d(0.3, -0.2), sigma, 1.0);
  }
}

TEST_CASE("Poisson moments: the overflow guard and bad sizes", "[glm][moments][poisson]") {
  const poisson_moment_layout layout(1);
  Eigen::VectorXd mu;
  Eigen::MatrixXd v;
  Eigen::MatrixXd s(1, 1);
  s << 1.0;
  Eigen::VectorXd theta(1), nu = Eigen::VectorXd::Zero(1);
  theta << 17.4;  // q = 302.8 > 300
  CHECK_FALSE(poisson_moments(layout, nu, theta, s, mu, v));
  theta << 17.3;  // q = 299.3, 2m + 2q = 598.6: finite
  REQUIRE(poisson_moments(layout, nu, theta, s, mu, v));
  CHECK(mu.allFinite());
  CHECK(v.allFinite());
  nu << 10.0;  // 2m + 2q = 2 * 173 + 598.6 > 600
  CHECK_FALSE(poisson_moments(layout, nu, theta, s, mu, v));
  theta(0) = std::nan("");
  CHECK_FALSE(poisson_moments(layout, nu, theta, s, mu, v));
  CHECK_THROWS_AS(poisson_moments(layout, Eigen::VectorXd::Zero(2), theta, s, mu, v), std::invalid_argument);
  CHECK_THROWS_AS(poisson_moment_layout(0), std::invalid_argument);
}

TEST_CASE("Poisson moment adjoint against central differences", "[glm][moments][poisson]") {
  std::mt19937_64 rng(46);
  for (const bool intercept : {false, true})
    for (int d = 1; d <= 3; ++d) {
      const poisson_moment_layout layout(d, intercept);
      const int p = layout.augmented();
      const Eigen::Index dd = layout.size();
      Eigen::MatrixXd b(d, d);
      for (int i = 0; i < d; ++i)
        for (int j = 0; j < d; ++j) b(i, j) = 0.4 * draw_normal(rng);
      Eigen::MatrixXd sigma = Eigen::MatrixXd::Zero(p, p);
      sigma.bottomRightCorner(d, d) = b * b.transpose() + 0.1 * Eigen::MatrixXd::Identity(d, d);
      Eigen::VectorXd nu(p), theta(p), a(dd);
      for (int i = 0; i < p; ++i) {
        nu(i) = 0.3 * draw_normal(rng);
        theta(i) = 0.5 * draw_normal(rng);
      }
      if (intercept) nu(0) = 1.0;
      for (Eigen::Index i = 0; i < dd; ++i) a(i) = draw_normal(rng);
      Eigen::MatrixXd g(dd, dd);  // not symmetric: the adjoint is over ordered pairs
      for (Eigen::Index i = 0; i < dd; ++i)
        for (Eigen::Index j = 0; j < dd; ++j) g(i, j) = draw_normal(rng);
      auto objective = [&](const Eigen::VectorXd& n, const Eigen::VectorXd& t, const Eigen::MatrixXd& s) {
        Eigen::VectorXd mu;
        Eigen::MatrixXd v;
        REQUIRE(poisson_moments(layout, n, t, s, mu, v));
        return a.dot(mu) + g.cwiseProduct(v).sum();
      };
      Eigen::VectorXd nu_bar = Eigen::VectorXd::Zero(p), theta_bar = Eigen::VectorXd::Zero(p);
      Eigen::MatrixXd sigma_bar = Eigen::MatrixXd::Zero(p, p);
      REQUIRE(poisson_moments_adjoint(layout, nu, theta, sigma, a, g, nu_bar, theta_bar, sigma_bar));
      CHECK((sigma_bar - sigma_bar.transpose()).norm() <= 1e-12 * (1.0 + sigma_bar.norm()));
      const double h = 1e-5;
      for (int trial = 0; trial < 3; ++trial) {
        Eigen::VectorXd dn(p), dt(p);
        Eigen::MatrixXd ds(p, p);
        for (int i = 0; i < p; ++i) {
          dn(i) = draw_normal(rng);
          dt(i) = draw_normal(rng);
          for (int j = 0; j <= i; ++j) ds(i, j) = ds(j, i) = draw_normal(rng);
        }
        const double fd_nu = (objective(nu + h * dn, theta, sigma) - objective(nu - h * dn, theta, sigma)) / (2 * h);
        const double fd_theta = (objective(nu, theta + h * dt, sigma) - objective(nu, theta - h * dt, sigma)) / (2 * h);
        const double fd_sigma = (objective(nu, theta, sigma + h * ds) - objective(nu, theta, sigma - h * ds)) / (2 * h);
        INFO("d " << d << ", intercept " << intercept << ", trial " << trial);
        CHECK(nu_bar.dot(dn) == Approx(fd_nu).epsilon(1e-6).margin(1e-7));
        CHECK(theta_bar.dot(dt) == Approx(fd_theta).epsilon(1e-6).margin(1e-7));
        CHECK(sigma_bar.cwiseProduct(ds).sum() == Approx(fd_sigma).epsilon(1e-6).margin(1e-7));
      }
    }
}
