// The DP-GLM under Laplace noise, unit level: glm_collapsed_gibbs (the partially collapsed Gibbs
// sampler of docs/design-glm.md Sec. 5.10) and what it needs of glm_moment_model (set_noise_variances, statistic_moments) and
// nuts_sampler (update_model); glm_statistic::l1_sensitivity, the Laplace mechanism's sensitivity. Its posterior is
// checked against quadrature in glm_laplace_reference_test.cpp and by calibration in glm_calibration_test.cpp.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include "privpost/families/glm/glm_statistic.hpp"
#include "privpost/mechanisms/gaussian.hpp"
#include "privpost/mechanisms/laplace.hpp"
#include "privpost/samplers/glm/glm_collapsed_gibbs.hpp"
#include "privpost/samplers/glm/logistic_moment_model.hpp"
#include "privpost/samplers/glm/poisson_moment_model.hpp"
#include "privpost/samplers/nuts.hpp"

using namespace privpost;

namespace {
using laplace_glm = glm_collapsed_gibbs<logistic_moment_map<exact_logistic_link>, laplace_mechanism>;
}  // namespace

// The collapsed Gibbs sampler is a sampler that infer tells when warm-up ends (positive); its two template parameters
// are the existing glm_moment_map and scale_mixture_noise concepts (their negative cases: glm_model_test.cpp,
// concepts_test.cpp).
static_assert(sampler<laplace_glm>);
static_assert(warmup_aware<laplace_glm>);
static_assert(sampler<glm_collapsed_gibbs<poisson_moment_map, gaussian_mechanism>>);
// The GLM is gibbs_frame with NUTS as its parameter block: the model draws theta, and the frame forwards the warm-up.
using logistic_collapsed = glm_collapsed_model<logistic_moment_map<exact_logistic_link>>;
static_assert(parameter_drawing_model<logistic_collapsed, glm_prior, clt_sum<logistic_collapsed, laplace_mechanism>>);
static_assert(!parameter_drawing_model<logistic_collapsed, glm_prior, int>);
// The NUTS block conditions on a sum block's per-entry noise variances: clt_sum keeps them, a block without them is
// refused at the constraint rather than deep inside the draw.
static_assert(noise_variance_source<clt_sum<logistic_collapsed, laplace_mechanism>>);
static_assert(noise_variance_source<clt_sum<logistic_collapsed, gaussian_mechanism>>);
static_assert(!noise_variance_source<int>);
static_assert(!noise_variance_source<laplace_mechanism>);
static_assert(warmup_planned<laplace_glm> && warmup_aware<laplace_glm> && reports_draw_diagnostics<laplace_glm>);
static_assert(!differentiable_model<laplace_glm>);

TEST_CASE("glm_statistic::l1_sensitivity bounds ||t(x, y) - t(x', y')||_1 over admitted neighbours", "[glm][laplace]") {
  std::mt19937_64 g(3);
  std::uniform_real_distribution<double> unif(-1.0, 1.0);
  for (const bool poisson : {false, true}) {
    for (const int d : {1, 2, 4}) {
      for (const bool intercept : {false, true}) {
        const double radius = 1.5, y_bound = 4.0;
        const std::optional<double> c = intercept ? std::optional<double>(0.7) : std::nullopt;
        const auto st = poisson ? glm_statistic::poisson(d, radius, y_bound, c) : glm_statistic::logistic(d, radius, c);
        const double bound = st.l1_sensitivity();
        INFO((poisson ? "poisson" : "logistic") << " d " << d << " intercept " << intercept << ": bound " << bound);
        CHECK(bound <= std::sqrt(static_cast<double>(st.size())) * st.l2_sensitivity() + 1e-12);
        // Random records, and the extreme ones: equal-magnitude covariates on the sphere, y at its extremes.
        double largest = 0.0;
        auto record = [&](bool extreme, Eigen::VectorXd& x, double& y) {
          x.resize(d);
          for (int j = 0; j < d; ++j) x(j) = extreme ? (unif(g) < 0 ? -1.0 : 1.0) : unif(g);
          x *= (extreme ? radius : radius * std::abs(unif(g))) / x.norm();
          if (poisson) {
            y = extreme ? (unif(g) < 0 ? 0.0 : y_bound) : std::floor((unif(g) + 1.0) * 0.5 * (y_bound + 1.0));
          } else {
            y = unif(g) < 0 ? -1.0 : 1.0;
          }
        };
        for (int t = 0; t < 20000; ++t) {
          Eigen::VectorXd x1, x2, t1 = Eigen::VectorXd::Zero(st.size()), t2 = Eigen::VectorXd::Zero(st.size());
          double y1 = 0, y2 = 0;
          record(t % 2 == 0, x1, y1);
          record(t % 3 == 0, x2, y2);
          st.add_record(x1, y1, t1);
          st.add_record(x2, y2, t2);
          largest = std::max(largest, (t1 - t2).lpNorm<1>());
        }
        INFO("largest change found " << largest);
        CHECK(largest <= bound * (1.0 + 1e-12));
        CHECK(largest >= 0.5 * bound);  // the bound is not wildly loose
      }
    }
  }
}

TEST_CASE("glm_moment_model: set_noise_variances and statistic_moments", "[glm][laplace]") {
  const int d = 2;
  const auto st = glm_statistic::logistic(d, 1.0);
  Eigen::VectorXd z(st.size());
  z << 3.0, -2.0, 40.0, 35.0, 4.0;
  logistic_moment_model<> model(z, 100.0, 2.0, d);
  CHECK(model.noise_variances().size() == st.size());
  CHECK(model.noise_variances().minCoeff() == 4.0);
  CHECK(model.noise_variances().maxCoeff() == 4.0);
  Eigen::VectorXd u = Eigen::VectorXd::Constant(model.dimension(), 0.3), grad(model.dimension());
  const double lp4 = model.log_density_gradient(u, grad);

  SECTION("equal variances give the density of the constructor's sigma") {
    logistic_moment_model<> m3(z, 100.0, 3.0, d);
    Eigen::VectorXd g3(model.dimension()), g9(model.dimension());
    const double lp3 = m3.log_density_gradient(u, g3);
    model.set_noise_variances(Eigen::VectorXd::Constant(st.size(), 9.0));
    CHECK(model.log_density_gradient(u, g9) == Approx(lp3).epsilon(1e-13));
    CHECK((g9 - g3).norm() < 1e-10 * (1.0 + g3.norm()));
    CHECK(lp3 != Approx(lp4));
  }
  SECTION("unequal variances change the density by the Gaussian with covariance N V + diag(w)") {
    Eigen::VectorXd w(st.size());
    w << 1.0, 2.0, 50.0, 0.0, 7.0;
    model.set_noise_variances(w);
    Eigen::VectorXd mu;
    Eigen::MatrixXd v;
    REQUIRE(model.statistic_moments(u, mu, v));
    Eigen::MatrixXd c = 100.0 * v;
    c.diagonal() += w;
    const Eigen::VectorXd r = z - 100.0 * mu;
    const Eigen::LLT<Eigen::MatrixXd> llt(c);
    const double loglik = -0.5 * r.dot(llt.solve(r)) - Eigen::MatrixXd(llt.matrixL()).diagonal().array().log().sum();
    Eigen::VectorXd g_zero(model.dimension());
    logistic_moment_model<> zero(z, 100.0, 0.0, d);
    model.log_density_gradient(u, grad);
    // The prior part is shared: the difference of the two densities is the difference of their likelihoods.
    const Eigen::MatrixXd c0 = 100.0 * v;
    const Eigen::LLT<Eigen::MatrixXd> llt0(c0);
    const double loglik0 = -0.5 * r.dot(llt0.solve(r)) - Eigen::MatrixXd(llt0.matrixL()).diagonal().array().log().sum();
    CHECK(model.log_density_gradient(u, grad) - zero.log_density_gradient(u, g_zero) == Approx(loglik - loglik0).epsilon(1e-10));
  }
  SECTION("statistic_moments agrees with moments() at the constrained parameters") {
    Eigen::VectorXd mu, mu2;
    Eigen::MatrixXd v, v2;
    REQUIRE(model.statistic_moments(u, mu, v));
    const Eigen::VectorXd pv = model.parameter_vector(u);  // theta (2), tau (2), Omega_21
    Eigen::MatrixXd sigma(2, 2);
    sigma << pv(2) * pv(2), pv(2) * pv(3) * pv(4), pv(2) * pv(3) * pv(4), pv(3) * pv(3);
    model.moments(glm_parameters{pv.head(2), sigma}, mu2, v2);
    CHECK((mu - mu2).norm() < 1e-12);
    CHECK((v - v2).norm() < 1e-12);
    Eigen::VectorXd bad = u;
    bad(0) = std::numeric_limits<double>::quiet_NaN();
    CHECK_FALSE(model.statistic_moments(bad, mu, v));
    CHECK_THROWS_AS(model.statistic_moments(Eigen::VectorXd::Zero(3), mu, v), std::invalid_argument);
  }
  SECTION("bad variances are refused, naming the value") {
    CHECK_THROWS_WITH(model.set_noise_variances(Eigen::VectorXd::Ones(4)), Catch::Contains("noise variances w"));
    Eigen::VectorXd w = Eigen::VectorXd::Ones(st.size());
    w(2) = -1.0;
    CHECK_THROWS_AS(model.set_noise_variances(w), std::invalid_argument);
    w(2) = std::numeric_limits<double>::quiet_NaN();
    CHECK_THROWS_AS(model.set_noise_variances(w), std::invalid_argument);
    w(2) = std::numeric_limits<double>::infinity();
    CHECK_THROWS_AS(model.set_noise_variances(w), std::invalid_argument);
  }
}

TEST_CASE("glm_collapsed_gibbs under a Gaussian mechanism is the NUTS chain of the Gaussian model", "[glm][laplace]") {
  // A fixed-variance mechanism runs only the NUTS block, whose model has w = sigma^2 (draw_variance uses no
  // randomness): the two chains draw the same numbers from the same seed.
  const int d = 2;
  const auto st = glm_statistic::logistic(d, 1.0);
  Eigen::VectorXd z(st.size());
  z << 3.0, -2.0, 40.0, 35.0, 4.0;
  const gaussian_mechanism gauss = gaussian_mechanism::analytic(st.l2_sensitivity(), 1.0, 1e-5);
  nuts_options opt;
  opt.warmup = 100;
  std::mt19937_64 g1(9), g2(9);
  glm_collapsed_gibbs<logistic_moment_map<exact_logistic_link>, gaussian_mechanism> a(z, 100.0, gauss, d, glm_prior{}, {}, opt,
                                                                                      g1);
  nuts_sampler<logistic_moment_model<>> b(logistic_moment_model<>(z, 100.0, gauss.sigma(), d), opt, g2);
  for (int i = 0; i < 150; ++i) {
    a.step(g1);
    b.step(g2);
  }
  CHECK((a.parameter_vector() - b.parameter_vector()).norm() < 1e-12);
  CHECK(a.statistic() == z);
}

TEST_CASE("glm_collapsed_gibbs: argument checks, latent state, and infer's warm-up contract", "[glm][laplace]") {
  const int d = 1;
  const auto st = glm_statistic::logistic(d, 1.0);
  const laplace_mechanism lap(st.l1_sensitivity(), 1.0);
  Eigen::VectorXd z(2);
  z << 5.0, 20.0;
  nuts_options opt;
  opt.warmup = 50;
  std::mt19937_64 g(4);
  CHECK_THROWS_AS(laplace_glm(Eigen::VectorXd::Zero(3), 100.0, lap, d, {}, {}, opt, g), std::invalid_argument);
  CHECK_THROWS_AS(laplace_glm(z, -1.0, lap, d, {}, {}, opt, g), std::invalid_argument);
  Eigen::VectorXd z_nan = z;
  z_nan(1) = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_AS(laplace_glm(z_nan, 100.0, lap, d, {}, {}, opt, g), std::invalid_argument);
  laplace_glm chain(z, 100.0, lap, d, {}, {}, opt, g);
  const Eigen::VectorXd w0 = chain.variances();
  for (int i = 0; i < 50; ++i) chain.step(g);
  CHECK_NOTHROW(chain.end_warmup());
  for (int i = 0; i < 10; ++i) chain.step(g);
  CHECK(chain.variances().size() == 2);
  CHECK((chain.variances().array() > 0.0).all());
  CHECK(chain.variances() != w0);
  CHECK(chain.statistic() != z);  // s moved off the release
  CHECK(chain.nuts().model().noise_variances() == chain.variances());
  CHECK(chain.parameter_vector().allFinite());
  laplace_glm early(z, 100.0, lap, d, {}, {}, opt, g);
  early.step(g);
  CHECK_THROWS_AS(early.end_warmup(), std::invalid_argument);
}

TEST_CASE("glm_collapsed_gibbs scales NUTS's step to the noise variances' curvature, as a function of w alone",
          "[glm][laplace]") {
  const int d = 2;
  const auto st = glm_statistic::logistic(d, 1.0);
  const laplace_mechanism lap(st.l1_sensitivity(), 1.0);
  const double n = 2000.0;
  std::mt19937_64 g(11);
  const logistic_moment_model<> sim(Eigen::VectorXd::Zero(st.size()), n, 0.0, d);
  const Eigen::VectorXd z = lap.release(simulate_glm_release(sim, draw_glm_prior(g, d, glm_prior{}), g), g);
  nuts_options opt;
  opt.warmup = 200;
  opt.dense_metric = true;
  laplace_glm chain(z, n, lap, d, {}, {}, opt, g);
  const Eigen::VectorXd mean_w = Eigen::VectorXd::Constant(st.size(), lap.noise_variance());
  CHECK(chain.model().step_scale_for(mean_w) == 1.0);  // no reference before the first metric window
  chain.begin_warmup(opt.warmup);
  for (int i = 0; i < opt.warmup; ++i) chain.step(g);
  chain.end_warmup();
  REQUIRE(chain.nuts().metric_updates() >= 1);
  const auto& model = chain.model();
  CHECK(model.step_scale_for(mean_w) == 1.0);
  // One sum pinned (w_j at 10^-4 of its mean): a narrower conditional, a shorter step; more pinned, shorter still.
  Eigen::VectorXd pinned = mean_w;
  pinned(st.size() - 1) *= 1e-4;
  const double one = model.step_scale_for(pinned);
  CHECK(one < 1.0);
  CHECK(one > 0.0);
  pinned.head(2) *= 1e-4;
  CHECK(model.step_scale_for(pinned) < one);
  // A function of w alone: the same factor whatever ran in between, and the one the next transition uses.
  const double again = model.step_scale_for(pinned);
  for (int i = 0; i < 5; ++i) chain.step(g);
  CHECK(model.step_scale_for(pinned) == again);
  CHECK(model.step_scale_for(pinned) < one);
  const double scale = model.step_scale_for(chain.variances());
  CHECK(chain.nuts().step_scale() == scale);
  chain.step(g);
  CHECK(chain.nuts().last_transition().step_size == scale * chain.nuts().step_size());
}
