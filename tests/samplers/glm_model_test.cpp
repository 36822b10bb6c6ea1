// Tests of the noise-aware logistic DP-GLM model (samplers/glm/logistic_moment_model.hpp; docs/design-glm.md Sec. 5.7 C, D):
//  1. the Cholesky-correlation transform: unit-norm rows and positive diagonal, log-Jacobian against log|det| of a
//     finite-difference Jacobian (d = 3, 4), reverse pass against central differences;
//  2. LKJ draws: every Omega_ij against 2 Beta(eta - 1 + d/2, eta - 1 + d/2) - 1 (KS, 10^4 draws, d in {2, 3, 5},
//     eta in {1, 2}); truncated chi-square draws of the prior's rho against the truncated CDF;
//  3. the hand gradient against sixth-order central differences along random directions at random points (d = 1..4,
//     exact and Taylor links, points near r = +-6 and CPC y near +-3), relative error < 1e-6;
//     with an intercept and a covariate mean (d = 1..3, intercept constants 1 and 0.5), and the covariate-mean model at
//     mu_x = 0 against the paper's model;
//  4. the leapfrog energy error shrinks as the step size squared on the GLM posterior;
//  5. bad arguments; simulate_glm_release on a singular N V (covariates of a rank-1 Sigma: mean N mu over 4000 draws,
//     every draw in N V's range) and its errors for an indefinite or overflowing N V.
#include <catch2/catch.hpp>

#include <Eigen/Cholesky>
#include <Eigen/LU>
#include <algorithm>
#include <boost/math/distributions/beta.hpp>
#include <boost/math/special_functions/gamma.hpp>
#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <vector>

#include "privpost/core/linalg/symmetric_eigen.hpp"
#include "privpost/core/random/lkj.hpp"
#include "privpost/core/random/normal.hpp"
#include "privpost/core/random/uniform.hpp"
#include "privpost/core/transforms/cholesky_corr.hpp"
#include "privpost/diagnostics/calibration.hpp"
#include "privpost/families/glm/glm_statistic.hpp"
#include "privpost/samplers/glm/logistic_moment_model.hpp"
#include "privpost/samplers/glm/logistic_record_model.hpp"
#include "privpost/samplers/glm/poisson_moment_model.hpp"
#include "privpost/samplers/glm/poisson_record_model.hpp"

using namespace privpost;

namespace {
// The free entries of L (below the diagonal), row by row: the image of the transform.
Eigen::VectorXd free_entries(const Eigen::VectorXd& y, int d) {
  Eigen::MatrixXd l(d, d);
  cholesky_corr_constrain(y, l);
  Eigen::VectorXd out(cholesky_corr_free_size(d));
  Eigen::Index c = 0;
  for (int i = 1; i < d; ++i)
    for (int j = 0; j < i; ++j) out(c++) = l(i, j);
  return out;
}

template <class Model>
double directional_fd(Model& m, const Eigen::VectorXd& u, const Eigen::VectorXd& dir, double h) {
  Eigen::VectorXd gr(u.size());
  auto f = [&](double t) { return m.log_density_gradient(u + t * dir, gr); };
  // Sixth-order central difference.
  return (-f(-3 * h) + 9 * f(-2 * h) - 45 * f(-h) + 45 * f(h) - 9 * f(2 * h) + f(3 * h)) / (60 * h);
}
}  // namespace

static_assert(differentiable_model<logistic_moment_model<>>);
static_assert(differentiable_model<logistic_moment_model<taylor_logistic_link>>);
static_assert(differentiable_model<poisson_moment_model>);
static_assert(glm_moment_map<logistic_moment_map<>>);
static_assert(glm_moment_map<logistic_moment_map<taylor_logistic_link>>);
static_assert(glm_moment_map<poisson_moment_map>);
static_assert(initial_point_model<poisson_moment_model, std::mt19937_64>);
// Every GLM model starts its coefficients near 0 (glm_coefficient_transform::initial_point).
static_assert(initial_point_model<logistic_moment_model<>, std::mt19937_64>);
static_assert(initial_point_model<logistic_record_model, std::mt19937_64>);
static_assert(initial_point_model<poisson_record_model, std::mt19937_64>);
static_assert(logistic_moment_model<>::moment_start && poisson_moment_model::moment_start);
static_assert(logistic_moment_model<taylor_logistic_link>::moment_start);
namespace {
// A map without an adjoint (no gradient) and a type that is no map at all.
struct forward_only_map {
  forward_only_map(int, std::optional<double>) {}
  Eigen::Index size() const { return 1; }
  int augmented() const { return 1; }
  bool forward(const Eigen::VectorXd&, const Eigen::VectorXd&, const Eigen::MatrixXd&, Eigen::VectorXd&, Eigen::MatrixXd&) {
    return true;
  }
  void moments(const Eigen::VectorXd&, const Eigen::VectorXd&, const Eigen::MatrixXd&, Eigen::VectorXd&, Eigen::MatrixXd&) const {
  }
};
}  // namespace
static_assert(!glm_moment_map<forward_only_map>);
static_assert(!glm_moment_map<logistic_moment_layout>);
static_assert(!glm_moment_map<double>);

TEST_CASE("Cholesky-correlation transform: validity, log-Jacobian and reverse pass", "[glm][transforms]") {
  std::mt19937_64 g(3);
  for (int d : {2, 3, 4}) {
    const Eigen::Index nf = cholesky_corr_free_size(d);
    for (int rep = 0; rep < 5; ++rep) {
      Eigen::VectorXd y(nf);
      for (Eigen::Index i = 0; i < nf; ++i) y(i) = 1.5 * draw_normal(g);
      Eigen::MatrixXd l(d, d);
      const double log_j = cholesky_corr_constrain(y, l);
      for (int i = 0; i < d; ++i) {
        CHECK(l.row(i).norm() == Approx(1.0).epsilon(1e-14));
        CHECK(l(i, i) > 0.0);
      }
      // The inverse recovers y (the initial points of glm_moment_model use it).
      Eigen::VectorXd back;
      cholesky_corr_unconstrain(l, back);
      REQUIRE(back.size() == nf);
      CHECK((back - y).cwiseAbs().maxCoeff() < 1e-9);
      // log|det| of the Jacobian of y -> free entries (triangular in this order), by central differences.
      Eigen::MatrixXd jac(nf, nf);
      const double h = 1e-6;
      for (Eigen::Index c = 0; c < nf; ++c) {
        Eigen::VectorXd yp = y, ym = y;
        yp(c) += h;
        ym(c) -= h;
        jac.col(c) = (free_entries(yp, d) - free_entries(ym, d)) / (2 * h);
      }
      CHECK(log_j == Approx(std::log(std::abs(jac.determinant()))).epsilon(1e-7));
      // Reverse pass of f(y) = <B, L(y)> + log J(y) for a random lower-triangular B.
      Eigen::MatrixXd b = Eigen::MatrixXd::Zero(d, d);
      for (int i = 1; i < d; ++i)
        for (int j = 0; j <= i; ++j) b(i, j) = draw_normal(g);
      auto f = [&](const Eigen::VectorXd& yy) {
        Eigen::MatrixXd ll(d, d);
        const double lj = cholesky_corr_constrain(yy, ll);
        return (b.array() * ll.array()).sum() + lj;
      };
      Eigen::VectorXd y_bar = Eigen::VectorXd::Zero(nf);
      cholesky_corr_adjoint(y, l, b, y_bar);
      for (Eigen::Index c = 0; c < nf; ++c) {
        Eigen::VectorXd yp = y, ym = y;
        yp(c) += h;
        ym(c) -= h;
        CHECK(y_bar(c) == Approx((f(yp) - f(ym)) / (2 * h)).epsilon(1e-6).margin(1e-8));
      }
    }
  }
}

TEST_CASE("LKJ and truncated chi-square prior draws", "[glm][prior]") {
  std::mt19937_64 g(12);
  for (int d : {2, 3, 5}) {
    for (double eta : {1.0, 2.0}) {
      const int n = 10000;
      std::vector<std::vector<double>> entries(static_cast<std::size_t>(d * d));
      Eigen::MatrixXd l(d, d);
      for (int r = 0; r < n; ++r) {
        draw_lkj_cholesky(g, eta, l);
        const Eigen::MatrixXd omega = l * l.transpose();
        for (int i = 1; i < d; ++i)
          for (int j = 0; j < i; ++j) entries[static_cast<std::size_t>(i * d + j)].push_back(omega(i, j));
      }
      const double b = eta - 1.0 + 0.5 * d;
      const boost::math::beta_distribution<> beta(b, b);
      for (int i = 1; i < d; ++i)
        for (int j = 0; j < i; ++j) {
          const auto ks = ks_test(entries[static_cast<std::size_t>(i * d + j)],
                                  [&](double x) { return boost::math::cdf(beta, std::clamp(0.5 * (x + 1.0), 0.0, 1.0)); });
          INFO("d " << d << ", eta " << eta << ", Omega(" << i << "," << j << "): KS p " << ks.p_value);
          CHECK(ks.p_value > 1e-3);
        }
    }
  }
  // ||theta||^2 of the prior is chi^2(d) truncated to (0, s_max).
  for (int d : {1, 3}) {
    const glm_prior prior{4.0, 1.0, 2.0};
    std::vector<double> rho;
    for (int r = 0; r < 10000; ++r) rho.push_back(draw_glm_prior(g, d, prior).theta.squaredNorm());
    const double a = 0.5 * d, top = boost::math::gamma_p(a, 2.0);
    const auto ks = ks_test(rho, [&](double x) { return boost::math::gamma_p(a, 0.5 * std::clamp(x, 0.0, 4.0)) / top; });
    CHECK(ks.p_value > 1e-3);
    CHECK(*std::max_element(rho.begin(), rho.end()) < 4.0);
  }
}

TEST_CASE("coefficient transform: the truncated normal prior on the ball, its Jacobian and reverse pass", "[glm][transforms]") {
  // log density(v) = log N(theta(v); 0, I) + log |det dtheta/dv| + const: the difference is the same constant at every
  // v, with the Jacobian by central differences of coefficients(). Points in the series branch (||v|| < 0.02), near
  // it, moderate and near the boundary ||theta||^2 -> s_max; theta stays inside the ball.
  std::mt19937_64 g(31);
  for (int p : {1, 2, 3, 6}) {
    for (double s_max : {4.0, 9.0}) {
      glm_coefficient_transform tr(s_max);
      std::optional<double> reference;
      for (double radius : {0.0, 0.004, 0.019, 0.021, 0.3, 1.0, 2.5, 6.0}) {
        Eigen::VectorXd v(p), theta(p), dir(p);
        for (int i = 0; i < p; ++i) v(i) = draw_normal(g);
        if (radius == 0.0)
          v.setZero();
        else
          v *= radius / v.norm();
        double lp = 0.0;
        REQUIRE(tr.forward(v, theta, lp));
        CHECK((theta - glm_coefficient_transform::coefficients(v, s_max)).norm() < 1e-15);
        CHECK(theta.squaredNorm() < s_max);
        Eigen::MatrixXd jac(p, p);
        const double h = 1e-6;
        for (int c = 0; c < p; ++c) {
          Eigen::VectorXd a = v, b = v;
          a(c) += h;
          b(c) -= h;
          jac.col(c) =
              (glm_coefficient_transform::coefficients(a, s_max) - glm_coefficient_transform::coefficients(b, s_max)) / (2 * h);
        }
        const double diff = lp - (-0.5 * theta.squaredNorm() + std::log(std::abs(jac.determinant())));
        INFO("P " << p << ", s_max " << s_max << ", ||v|| " << radius << ": log density less the pushforward " << diff);
        if (!reference) reference = diff;
        CHECK(diff == Approx(*reference).margin(radius < 4.0 ? 1e-7 : 1e-5));
        // Reverse pass of log density + <b, theta> for a random b, against central differences.
        Eigen::VectorXd b(p), grad(p);
        for (int i = 0; i < p; ++i) b(i) = draw_normal(g);
        tr.backward(v, b, grad);
        auto f = [&](const Eigen::VectorXd& x) {
          Eigen::VectorXd t(p);
          double l = 0.0;
          tr.forward(x, t, l);
          return l + b.dot(t);
        };
        for (int c = 0; c < p; ++c) {
          Eigen::VectorXd a = v, m = v;
          a(c) += 1e-6;
          m(c) -= 1e-6;
          CHECK(grad(c) == Approx((f(a) - f(m)) / 2e-6).epsilon(1e-6).margin(1e-7));
        }
        REQUIRE(tr.forward(v, theta, lp));  // restore the state for the next point's backward (not needed by forward)
      }
    }
  }
  // Far out the map stays finite (theta on the ball's edge in double) and a non-finite v is refused.
  glm_coefficient_transform tr(9.0);
  Eigen::VectorXd theta(2);
  double lp = 0.0;
  CHECK(tr.forward(Eigen::VectorXd::Constant(2, 400.0), theta, lp));
  CHECK(std::isfinite(lp));
  CHECK(theta.allFinite());
  CHECK_FALSE(tr.forward(Eigen::VectorXd::Constant(2, std::numeric_limits<double>::infinity()), theta, lp));
}

TEST_CASE("logistic DP-GLM gradient against sixth-order finite differences", "[glm][gradient]") {
  std::mt19937_64 g(77);
  for (int d = 1; d <= 4; ++d) {
    for (int link = 0; link < 2; ++link) {
      const glm_prior prior{9.0, link == 0 ? 2.5 : 0.5, 2.0};
      const auto truth = draw_glm_prior(g, d, prior);
      const double n = 500.0, sigma = 20.0;
      logistic_moment_model<exact_logistic_link> exact_model(Eigen::VectorXd::Zero(d + d * (d + 1) / 2), n, sigma, d, prior);
      const Eigen::VectorXd z = simulate_glm_release(exact_model, truth, g);
      logistic_moment_model<exact_logistic_link> me(z, n, sigma, d, prior);
      logistic_moment_model<taylor_logistic_link> mt(z, n, sigma, d, prior);
      for (int rep = 0; rep < 6; ++rep) {
        Eigen::VectorXd u(me.dimension());
        for (Eigen::Index i = 0; i < u.size(); ++i) u(i) = 0.7 * draw_normal(g);
        if (rep == 3) u.head(d) *= 0.005 / u.head(d).norm();                         // the series branch near theta = 0
        if (rep == 4) u.head(d) *= 3.0 / u.head(d).norm();                           // ||theta||^2 near s_max
        if (rep == 5 && d > 1) u.tail(cholesky_corr_free_size(d)).setConstant(2.5);  // CPC near the boundary
        Eigen::VectorXd grad(u.size());
        const double lp = link == 0 ? me.log_density_gradient(u, grad) : mt.log_density_gradient(u, grad);
        if (!std::isfinite(lp)) continue;  // outside the support (N V + sigma^2 I not PD): nothing to differentiate
        for (int k = 0; k < 4; ++k) {
          Eigen::VectorXd dir(u.size());
          for (Eigen::Index i = 0; i < u.size(); ++i) dir(i) = draw_normal(g);
          dir.normalize();
          const double fd = link == 0 ? directional_fd(me, u, dir, 1e-3) : directional_fd(mt, u, dir, 1e-3);
          const double an = grad.dot(dir);
          INFO("d " << d << ", link " << (link == 0 ? "exact" : "taylor") << ", rep " << rep << ": analytic " << an
                    << ", finite differences " << fd << ", |grad| " << grad.norm());
          CHECK(std::abs(an - fd) <= 1e-6 * std::max(1.0, grad.norm()));
        }
      }
    }
  }
}

TEST_CASE("Poisson DP-GLM gradient against finite differences, with and without intercept and covariate mean",
          "[glm][gradient][poisson]") {
  std::mt19937_64 g(79);
  const std::vector<glm_model_options> designs{{std::nullopt, false}, {1.0, false}, {std::nullopt, true}, {1.0, true}};
  for (int d = 1; d <= 3; ++d) {
    for (const auto& options : designs) {
      const glm_prior prior{4.0, 0.5, 2.0, 0.5};
      const auto truth = draw_glm_prior(g, d, prior, options);
      const poisson_moment_layout layout(d, options.intercept.has_value());
      const double n = 300.0, sigma = 10.0;
      const poisson_moment_model sim(Eigen::VectorXd::Zero(layout.size()), n, sigma, d, prior, options);
      const Eigen::VectorXd z = simulate_glm_release(sim, truth, g);
      poisson_moment_model model(z, n, sigma, d, prior, options);
      int checked = 0;
      for (int rep = 0; rep < 6; ++rep) {
        Eigen::VectorXd u(model.dimension());
        for (Eigen::Index i = 0; i < u.size(); ++i) u(i) = 0.5 * draw_normal(g);
        auto c = u.head(model.coefficients());
        if (rep == 3) c *= 0.005 / c.norm();  // the series branch near theta = 0
        if (rep == 4) c *= 3.0 / c.norm();    // ||theta||^2 near s_max
        Eigen::VectorXd grad(u.size());
        const double lp = model.log_density_gradient(u, grad);
        REQUIRE(std::isfinite(lp));  // V is a covariance: every point with moderate q is in the support
        ++checked;
        for (int k = 0; k < 4; ++k) {
          Eigen::VectorXd dir(u.size());
          for (Eigen::Index i = 0; i < u.size(); ++i) dir(i) = draw_normal(g);
          dir.normalize();
          const double fd = directional_fd(model, u, dir, 1e-4);
          const double an = grad.dot(dir);
          INFO("d " << d << ", intercept " << options.intercept.value_or(0.0) << ", mean " << options.covariate_mean << ", rep "
                    << rep << ": analytic " << an << ", finite differences " << fd << ", |grad| " << grad.norm());
          CHECK(std::abs(an - fd) <= 1e-6 * std::max(1.0, grad.norm()));
        }
      }
      CHECK(checked == 6);
    }
  }
}

TEST_CASE("simulate_glm_release draws through the square root of a semidefinite N V and refuses a broken one",
          "[glm][simulate][errors]") {
  // Perfectly correlated covariates (Sigma of rank 1, x_1 = x_2) make N V singular: the Cholesky factor does not
  // exist, and the draw must still have mean N mu and stay in the range of N V (the statistics of x_1 and x_2 equal).
  const glm_prior prior{4.0, 0.5, 2.0, 0.5};
  const int d = 2;
  const double n = 300.0;
  const poisson_moment_layout layout(d, false);
  const poisson_moment_model sim(Eigen::VectorXd::Zero(layout.size()), n, 0.0, d, prior, glm_model_options{});
  glm_parameters truth{Eigen::VectorXd::Constant(d, 0.3), Eigen::MatrixXd::Ones(d, d)};
  Eigen::VectorXd mu;
  Eigen::MatrixXd v;
  sim.moments(truth, mu, v);
  const Eigen::MatrixXd nv = n * v;
  REQUIRE(Eigen::LLT<Eigen::MatrixXd>(nv).info() != Eigen::Success);  // the path under test
  Eigen::VectorXd values;
  Eigen::MatrixXd vectors;
  symmetric_eigen(nv, values, &vectors);
  const double largest = values.maxCoeff();
  Eigen::MatrixXd null_space(nv.rows(), 0);
  for (Eigen::Index k = 0; k < values.size(); ++k) {
    if (values(k) > 1e-8 * largest) continue;
    null_space.conservativeResize(Eigen::NoChange, null_space.cols() + 1);
    null_space.col(null_space.cols() - 1) = vectors.col(k);
  }
  REQUIRE(null_space.cols() >= 1);
  std::mt19937_64 g(83);
  constexpr int draws = 4000;
  Eigen::VectorXd sum = Eigen::VectorXd::Zero(nv.rows());
  double worst_null = 0.0;
  for (int i = 0; i < draws; ++i) {
    const Eigen::VectorXd z = simulate_glm_release(sim, truth, g);
    REQUIRE(z.allFinite());
    worst_null = std::max(worst_null, (null_space.transpose() * (z - n * mu)).cwiseAbs().maxCoeff());
    sum += z;
  }
  CHECK(worst_null <= 1e-6 * std::sqrt(largest));
  // The mean within 4 standard errors in every coordinate (Bonferroni over 10 coordinates at about 6e-5 each).
  for (Eigen::Index i = 0; i < nv.rows(); ++i) {
    INFO("coordinate " << i << ": mean " << sum(i) / draws << ", N mu " << n * mu(i) << ", variance " << nv(i, i));
    CHECK(std::abs(sum(i) / draws - n * mu(i)) <= 4.0 * std::sqrt(nv(i, i) / draws) + 1e-9 * std::abs(n * mu(i)));
  }

  // An indefinite Sigma gives an N V with a clearly negative eigenvalue: a broken moment map, refused by name.
  truth.sigma << 1.0, 2.0, 2.0, 1.0;
  CHECK_THROWS_WITH(simulate_glm_release(sim, truth, g), Catch::Contains("smallest eigenvalue of N V"));
  CHECK_THROWS_AS(simulate_glm_release(sim, truth, g), std::domain_error);
  // A covariate variance of 1e300 (with no weight in theta, so the map itself accepts it) overflows N V.
  truth.theta << 0.3, 0.0;
  truth.sigma = Eigen::MatrixXd::Identity(d, d);
  truth.sigma(1, 1) = 1e300;
  CHECK_THROWS_WITH(simulate_glm_release(sim, truth, g), Catch::Contains("of N V") && Catch::Contains("accepted: finite"));
  CHECK_THROWS_AS(simulate_glm_release(sim, truth, g), std::domain_error);
}

TEST_CASE("logistic DP-GLM gradient with an intercept and a covariate mean (docs/design-glm.md Sec. 3.7)", "[glm][gradient]") {
  std::mt19937_64 g(78);
  const std::vector<glm_model_options> designs{{1.0, false}, {std::nullopt, true}, {1.0, true}, {0.5, true}};
  int taylor_checked = 0;
  for (int d = 1; d <= 3; ++d) {
    for (const auto& options : designs) {
      for (int link = 0; link < 2; ++link) {
        const glm_prior prior{9.0, 0.5, 2.0, 0.7};
        const auto truth = draw_glm_prior(g, d, prior, options);
        const logistic_moment_layout layout(d, options.intercept.has_value());
        const double n = 500.0, sigma = 20.0;
        const logistic_moment_model<exact_logistic_link> sim(Eigen::VectorXd::Zero(layout.size()), n, sigma, d, prior, options);
        const Eigen::VectorXd z = simulate_glm_release(sim, truth, g);
        logistic_moment_model<exact_logistic_link> me(z, n, sigma, d, prior, options);
        logistic_moment_model<taylor_logistic_link> mt(z, n, sigma, d, prior, options);
        const int p = me.coefficients();
        CHECK(p == d + (options.intercept ? 1 : 0));
        CHECK(me.parameter_vector(Eigen::VectorXd::Ones(me.dimension())).size() == me.dimension());
        int checked = 0;
        for (int rep = 0; rep < 6; ++rep) {
          Eigen::VectorXd u(me.dimension());
          for (Eigen::Index i = 0; i < u.size(); ++i) u(i) = 0.7 * draw_normal(g);
          // ||v|| = 0.6 sqrt(P): ||theta~|| 1.6 to 2.3, where the Taylor link's V is still a covariance; near sqrt(s_max) at
          // rep 4.
          u.head(p) *= (rep == 4 ? 3.0 : 0.6 * std::sqrt(static_cast<double>(p))) / u.head(p).norm();
          Eigen::VectorXd grad(u.size());
          const double lp = link == 0 ? me.log_density_gradient(u, grad) : mt.log_density_gradient(u, grad);
          if (!std::isfinite(lp)) continue;  // N V + sigma^2 I not PD (the Taylor link far out): nothing to differentiate
          ++checked;
          for (int k = 0; k < 4; ++k) {
            Eigen::VectorXd dir(u.size());
            for (Eigen::Index i = 0; i < u.size(); ++i) dir(i) = draw_normal(g);
            dir.normalize();
            // h = 1e-4: far from the mode (|grad| ~ 1e3-1e4, near where N V + sigma^2 I stops being PD) h = 1e-3 is
            // too coarse for the curvature.
            const double fd = link == 0 ? directional_fd(me, u, dir, 1e-4) : directional_fd(mt, u, dir, 1e-4);
            const double an = grad.dot(dir);
            INFO("d " << d << ", intercept " << options.intercept.value_or(0.0) << ", mean " << options.covariate_mean
                      << ", link " << (link == 0 ? "exact" : "taylor") << ", rep " << rep << ": analytic " << an
                      << ", finite differences " << fd << ", |grad| " << grad.norm());
            CHECK(std::abs(an - fd) <= 1e-6 * std::max(1.0, grad.norm()));
          }
        }
        // The exact link's V is a covariance, so every point is in the support; the Taylor link's is not beyond q ~ 4.
        CHECK(checked >= (link == 0 ? 6 : 1));
        if (link == 1) taylor_checked += checked;
      }
    }
  }
  CHECK(taylor_checked >= 24);  // of 72 points
}

TEST_CASE("the covariate-mean model at mu_x = 0 is the paper's model", "[glm][gradient]") {
  // With a covariate mean the log density at m = 0 equals the zero-mean model's (the mean prior's term is 0 there),
  // and the two agree in every shared gradient entry (the kappa_0, kappa_2 terms vanish at m_eta = 0).
  std::mt19937_64 g(79);
  const int d = 3;
  const glm_prior prior{9.0, 0.5, 2.0, 1.0};
  const auto truth = draw_glm_prior(g, d, prior);
  const logistic_moment_model<> sim(Eigen::VectorXd::Zero(9), 800.0, 5.0, d, prior);
  const Eigen::VectorXd z = simulate_glm_release(sim, truth, g);
  logistic_moment_model<> plain(z, 800.0, 5.0, d, prior);
  logistic_moment_model<> with_mean(z, 800.0, 5.0, d, prior, glm_model_options{std::nullopt, true});
  REQUIRE(with_mean.dimension() == plain.dimension() + d);
  for (int rep = 0; rep < 5; ++rep) {
    Eigen::VectorXd u(plain.dimension());
    for (Eigen::Index i = 0; i < u.size(); ++i) u(i) = 0.5 * draw_normal(g);
    Eigen::VectorXd um = Eigen::VectorXd::Zero(with_mean.dimension());
    um.head(u.size()) = u;
    Eigen::VectorXd g1, g2;
    const double a = plain.log_density_gradient(u, g1), b = with_mean.log_density_gradient(um, g2);
    CHECK(b == Approx(a).epsilon(1e-12));
    CHECK((g2.head(u.size()) - g1).cwiseAbs().maxCoeff() < 1e-9 * std::max(1.0, g1.norm()));
  }
}

TEST_CASE("leapfrog energy error on the GLM posterior shrinks as the step size squared", "[glm][gradient]") {
  std::mt19937_64 g(5);
  const int d = 2;
  const glm_prior prior{9.0, 0.5, 2.0};
  const auto truth = draw_glm_prior(g, d, prior);
  logistic_moment_model<> m0(Eigen::VectorXd::Zero(5), 1000.0, 10.0, d, prior);
  logistic_moment_model<> m(simulate_glm_release(m0, truth, g), 1000.0, 10.0, d, prior);
  Eigen::VectorXd q0(m.dimension()), p0(m.dimension());
  for (Eigen::Index i = 0; i < q0.size(); ++i) {
    q0(i) = 0.3 * draw_normal(g);
    p0(i) = draw_normal(g);
  }
  auto energy_error = [&](double eps, int steps) {
    Eigen::VectorXd q = q0, p = p0, grad(q.size());
    double lp = m.log_density_gradient(q, grad);
    const double h0 = -lp + 0.5 * p.squaredNorm();
    for (int s = 0; s < steps; ++s) {
      p += 0.5 * eps * grad;
      q += eps * p;
      lp = m.log_density_gradient(q, grad);
      p += 0.5 * eps * grad;
    }
    return std::abs(-lp + 0.5 * p.squaredNorm() - h0);
  };
  const double e1 = energy_error(0.002, 20), e2 = energy_error(0.001, 40);
  INFO("|dH| " << e1 << " at eps, " << e2 << " at eps / 2");
  CHECK(e1 / e2 == Approx(4.0).margin(0.5));
}

TEST_CASE("the DP-GLM models start NUTS near theta~ = 0", "[glm][nuts]") {
  // glm_coefficient_transform::initial_point: every v_i uniform on [-c, c], c = radius / (2 sqrt(P)), so
  // ||theta~||^2 < s_max tanh^2(radius / 2) (0.58 s_max at radius 2); the covariate parameters near the release's
  // moments (below), or, where a release's moments are invalid (the zero release here: variances 0), log tau uniform
  // on log tau_scale +- radius and the correlation coordinates on [-radius, radius].
  std::mt19937_64 g(5);
  const glm_prior prior{9.0, 0.5, 2.0, 0.5};
  const poisson_moment_model m(Eigen::VectorXd::Zero(11), 100.0, 1.0, 2, prior, glm_model_options{1.0, true});
  const logistic_moment_model<> lm(Eigen::VectorXd::Zero(5), 100.0, 1.0, 2, prior);
  const double bound = 9.0 * std::pow(std::tanh(1.0), 2.0);
  double largest = 0.0, smallest = 1e300, covariate_extreme = 0.0;
  Eigen::VectorXd u;
  for (int t = 0; t < 2000; ++t) {
    m.initial_point(g, 2.0, u);
    REQUIRE(u.size() == m.dimension());
    CHECK((u.head(3).array().abs() <= 1.0 / std::sqrt(3.0)).all());
    const double norm2 = m.parameter_vector(u).head(3).squaredNorm();
    largest = std::max(largest, norm2);
    smallest = std::min(smallest, norm2);
    lm.initial_point(g, 2.0, u);
    REQUIRE(u.size() == lm.dimension());
    CHECK(lm.parameter_vector(u).head(2).squaredNorm() < bound);
    CHECK((u.segment(2, 2).array() - std::log(0.5)).abs().maxCoeff() <= 2.0);
    CHECK(std::abs(u(4)) <= 2.0);
    covariate_extreme = std::max(covariate_extreme, std::abs(u(4)));
  }
  CHECK(largest < bound);
  CHECK(largest > 0.5 * bound);
  CHECK(smallest < 0.01 * bound);
  CHECK(covariate_extreme > 1.9);
  Eigen::VectorXd v(4);
  logistic_record_model(Eigen::MatrixXd::Ones(3, 4), Eigen::VectorXd::Ones(3)).initial_point(g, 2.0, v);
  CHECK(v.size() == 4);
  CHECK((v.array().abs() <= 0.5).all());
  // The covariate parameters start at the release's own moment estimates (+-0.2): exact sums of a Poisson release
  // whose covariates have mean (0.2, -0.1), sds (0.5, 0.4) and correlation 0.25.
  const glm_parameters truth{(Eigen::VectorXd(3) << 0.3, 0.5, -0.4).finished(),
                             (Eigen::MatrixXd(2, 2) << 0.25, 0.05, 0.05, 0.16).finished(),
                             (Eigen::VectorXd(2) << 0.2, -0.1).finished()};
  const glm_records rec = simulate_poisson_records(g, truth, 20000, 1.0);
  const Eigen::VectorXd s = glm_statistic::poisson(2, 1e6, 1e6, 1.0).sum(rec.x, rec.y);
  auto check_moment_start = [&](const auto& model) {
    for (int t = 0; t < 100; ++t) {
      model.initial_point(g, 2.0, u);
      const Eigen::VectorXd v = model.parameter_vector(u);  // theta~ (3), tau (2), Omega_10, mu_x (2)
      CHECK(std::abs(std::log(v(3) / 0.5)) < 0.25);
      CHECK(std::abs(std::log(v(4) / 0.4)) < 0.25);
      CHECK(std::abs(v(5) - 0.25) < 0.25);
      CHECK(std::abs(v(6) - 0.2) < 0.25);
      CHECK(std::abs(v(7) + 0.1) < 0.25);
    }
  };
  check_moment_start(poisson_moment_model(s, 20000.0, 0.0, 2, prior, glm_model_options{1.0, true}));
  // The logistic model likewise, from a logistic release of the same covariates (responses +-1; only the x blocks
  // matter here).
  Eigen::VectorXd signs(rec.y.size());
  for (Eigen::Index i = 0; i < signs.size(); ++i) signs(i) = draw_uniform(g) < 0.5 ? -1.0 : 1.0;
  const Eigen::VectorXd sl = glm_statistic::logistic(2, 1e6, 1.0).sum(rec.x, signs);
  check_moment_start(logistic_moment_model<>(sl, 20000.0, 0.0, 2, prior, glm_model_options{1.0, true}));
  // The logistic release estimates E[x x'] from its t2 block and, with an intercept, E[x] from the c x_k pairs.
  Eigen::VectorXd mean;
  Eigen::MatrixXd second;
  logistic_moment_map<>(2, 2.0).released_covariate_moments((Eigen::VectorXd(8) << 1, 2, 3, 4, 5, 6, 7, 8).finished(), 2.0, mean,
                                                           second);
  CHECK(mean.array().isNaN().all());
  CHECK(std::isnan(second(0, 0)));
  CHECK(second(1, 1) == 2.0);                                   // z(3) / n: the y x~ block is z(0..2)
  CHECK(second(0, 1) == Approx(6.0 / (2.0 * std::sqrt(2.0))));  // the sqrt2 c x_1 pair
  CHECK(second(2, 1) == Approx(8.0 / (2.0 * std::sqrt(2.0))));
}

TEST_CASE("logistic DP-GLM model rejects bad arguments", "[glm][errors]") {
  const Eigen::VectorXd z = Eigen::VectorXd::Zero(5);
  CHECK_THROWS_AS(logistic_moment_model<>(z, 100.0, 1.0, 3), std::invalid_argument);  // wrong size
  CHECK_THROWS_AS(logistic_moment_model<>(z, 0.0, 1.0, 2), std::invalid_argument);
  CHECK_THROWS_AS(logistic_moment_model<>(z, 100.0, -1.0, 2), std::invalid_argument);
  CHECK_THROWS_AS(logistic_moment_model<>(z, 100.0, 1.0, 2, glm_prior{0.0, 2.5, 2.0}), std::invalid_argument);
  Eigen::VectorXd bad = z;
  bad(0) = std::nan("");
  CHECK_THROWS_AS(logistic_moment_model<>(bad, 100.0, 1.0, 2), std::invalid_argument);
  // With an intercept the release has P + P(P+1)/2 - 1 entries (P = d + 1): 8 at d = 2.
  CHECK_THROWS_AS(logistic_moment_model<>(z, 100.0, 1.0, 2, glm_prior{}, glm_model_options{1.0, false}), std::invalid_argument);
  const Eigen::VectorXd z8 = Eigen::VectorXd::Zero(8);
  CHECK_NOTHROW(logistic_moment_model<>(z8, 100.0, 1.0, 2, glm_prior{}, glm_model_options{1.0, false}));
  CHECK_THROWS_AS(logistic_moment_model<>(z8, 100.0, 1.0, 2, glm_prior{}, glm_model_options{0.0, false}), std::invalid_argument);
  CHECK_THROWS_AS(logistic_moment_model<>(z8, 100.0, 1.0, 2, glm_prior{}, glm_model_options{-1.0, false}), std::invalid_argument);
  CHECK_THROWS_AS(logistic_moment_model<>(z, 100.0, 1.0, 2, glm_prior{9.0, 2.5, 2.0, 0.0}, glm_model_options{std::nullopt, true}),
                  std::invalid_argument);
  logistic_moment_model<> m(z, 100.0, 1.0, 2);
  Eigen::VectorXd u = Eigen::VectorXd::Zero(m.dimension()), grad(m.dimension());
  Eigen::VectorXd short_u = Eigen::VectorXd::Zero(m.dimension() - 1);
  CHECK_THROWS_AS(m.log_density_gradient(short_u, grad), std::invalid_argument);
  CHECK_THROWS_AS(m.parameter_vector(short_u), std::invalid_argument);
  glm_parameters wrong{Eigen::VectorXd::Zero(3), Eigen::MatrixXd::Identity(2, 2)};
  Eigen::VectorXd mu;
  Eigen::MatrixXd v;
  CHECK_THROWS_AS(m.moments(wrong, mu, v), std::invalid_argument);
  // theta = 0 is inside the support; a non-finite u gives -infinity and a counted failure (never NaN).
  CHECK(std::isfinite(m.log_density_gradient(u, grad)));
  u(0) = std::numeric_limits<double>::quiet_NaN();
  CHECK(m.log_density_gradient(u, grad) == -std::numeric_limits<double>::infinity());
  CHECK(m.failures() == 1);
  CHECK(grad.allFinite());
}
