// Tests of nuts_sampler (samplers/nuts.hpp) on targets with known answers (docs/design-glm.md Sec. 5.7 E):
//  1. a 100-dimensional independent Gaussian with scales log-uniform on [0.01, 100]: R-hat, bulk ESS, means and
//     variances within Monte Carlo error, the adapted inverse metric near the variances, mean acceptance near 0.8;
//  2. a 2-d Gaussian with correlation 0.99 (diagonal metric); a 20-d Gaussian with correlations up to 0.98 and scales over
//     two orders of magnitude under the dense metric (its adapted metric near the covariance, shorter trajectories
//     than the diagonal metric's), and the dense metric's calibration on a correlated conjugate model;
//  3. simulation-based calibration on conjugate models: a normal mean, and a binomial proportion through the logit
//     transform with its Jacobian (M = 300 trials, KS p > 0.001 and 50%/90% coverage as tests/support);
//  4. Neal's funnel: divergences are reported, the run terminates, no NaN;
//  5. determinism from the seed, the warm-up schedule (Stan's metric windows), the driver's end_warmup check;
//  6. bad input: invalid options, a target that is nowhere finite, a wrong-size or non-finite initial point.
#include <catch2/catch.hpp>

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>
#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "privpost/core/concepts.hpp"
#include "privpost/core/random/beta.hpp"
#include "privpost/core/random/normal.hpp"
#include "privpost/core/random/uniform.hpp"
#include "privpost/diagnostics/calibration.hpp"
#include "privpost/diagnostics/convergence.hpp"
#include "privpost/inference/infer.hpp"
#include "privpost/samplers/detail/nuts_adaptation.hpp"
#include "privpost/samplers/nuts.hpp"
#include "support/calibration_checks.hpp"

using namespace privpost;

namespace {

// Independent Gaussian with the given standard deviations.
struct diagonal_gaussian {
  Eigen::VectorXd sd;
  Eigen::Index dimension() const { return sd.size(); }
  double log_density_gradient(const Eigen::VectorXd& u, Eigen::VectorXd& grad) const {
    grad = -(u.array() / sd.array().square()).matrix();
    return -0.5 * (u.array() / sd.array()).square().sum();
  }
};

// Bivariate standard normal with correlation r.
struct correlated_gaussian {
  double r = 0.99;
  Eigen::Index dimension() const { return 2; }
  double log_density_gradient(const Eigen::VectorXd& u, Eigen::VectorXd& grad) const {
    const double c = 1.0 / (1.0 - r * r);
    grad(0) = -c * (u(0) - r * u(1));
    grad(1) = -c * (u(1) - r * u(0));
    return -0.5 * c * (u(0) * u(0) - 2.0 * r * u(0) * u(1) + u(1) * u(1));
  }
};

// A Gaussian with a full covariance: log density -u' P u / 2 with the precision P = Sigma^{-1}.
struct full_gaussian {
  Eigen::MatrixXd precision;
  Eigen::Index dimension() const { return precision.rows(); }
  double log_density_gradient(const Eigen::VectorXd& u, Eigen::VectorXd& grad) const {
    grad.noalias() = -(precision * u);
    return 0.5 * u.dot(grad);
  }
};

// Neal's funnel, centred: v ~ N(0, 3^2), x_i | v ~ N(0, e^v), i = 1..dim-1.
struct funnel {
  int dim = 10;
  Eigen::Index dimension() const { return dim; }
  double log_density_gradient(const Eigen::VectorXd& u, Eigen::VectorXd& grad) const {
    const double v = u(0);
    const double k = static_cast<double>(dim - 1);
    const double ss = u.tail(dim - 1).squaredNorm();
    grad(0) = -v / 9.0 - 0.5 * k + 0.5 * ss * std::exp(-v);
    grad.tail(dim - 1) = -std::exp(-v) * u.tail(dim - 1);
    return -v * v / 18.0 - 0.5 * k * v - 0.5 * ss * std::exp(-v);
  }
};

// Normal mean mu ~ N(0, 1), y_i ~ N(mu, 1): the posterior given sum and n.
struct normal_mean {
  double sum = 0.0;
  double n = 0.0;
  Eigen::Index dimension() const { return 1; }
  double log_density_gradient(const Eigen::VectorXd& u, Eigen::VectorXd& grad) const {
    grad(0) = -u(0) + (sum - n * u(0));
    return -0.5 * u(0) * u(0) + sum * u(0) - 0.5 * n * u(0) * u(0);
  }
};

// Binomial proportion p ~ Beta(a, b), k of n successes, sampled on u = logit(p) (log-Jacobian log p + log(1 - p));
// the recorded parameter is p.
struct logit_binomial {
  double a = 2.0, b = 2.0, k = 0.0, n = 0.0;
  Eigen::Index dimension() const { return 1; }
  static double logistic(double u) { return 1.0 / (1.0 + std::exp(-u)); }
  double log_density_gradient(const Eigen::VectorXd& u, Eigen::VectorXd& grad) const {
    // log p^(a+k) (1-p)^(b+n-k) with log p = -log1p(e^-u), log(1-p) = -log1p(e^u) (Jacobian included).
    const double lp = -std::log1p(std::exp(-u(0)));
    const double lq = -std::log1p(std::exp(u(0)));
    const double p = logistic(u(0));
    grad(0) = (a + k) * (1.0 - p) - (b + n - k) * p;
    return (a + k) * lp + (b + n - k) * lq;
  }
  Eigen::VectorXd parameter_vector(const Eigen::VectorXd& u) const { return Eigen::VectorXd::Constant(1, logistic(u(0))); }
};

// A target that is -infinity everywhere.
struct nowhere {
  Eigen::Index dimension() const { return 2; }
  double log_density_gradient(const Eigen::VectorXd&, Eigen::VectorXd& grad) const {
    grad.setZero();
    return -std::numeric_limits<double>::infinity();
  }
};

// Counts end_warmup() calls around a NUTS sampler.
template <class Model>
struct counting_nuts {
  nuts_sampler<Model> s;
  int* calls;
  int* at_transition;
  int steps = 0;
  template <class G>
  void step(G& g) {
    s.step(g);
    ++steps;
  }
  void end_warmup() {
    ++*calls;
    *at_transition = steps;
    s.end_warmup();
  }
  Eigen::VectorXd parameter_vector() const { return s.parameter_vector(); }
  numerical_events events() const { return s.events(); }
};

// A standard normal on the half-line u > 10 (-infinity elsewhere), which chooses its own initial points there: no
// uniform draw on [-2, 2] could start it.
struct far_half_normal {
  Eigen::Index dimension() const { return 1; }
  double log_density_gradient(const Eigen::VectorXd& u, Eigen::VectorXd& grad) const {
    grad.resize(1);
    if (!(u(0) > 10.0)) {
      grad(0) = 0.0;
      return -std::numeric_limits<double>::infinity();
    }
    grad(0) = -(u(0) - 12.0);
    return -0.5 * (u(0) - 12.0) * (u(0) - 12.0);
  }
  void initial_point(std::mt19937_64& g, double radius, Eigen::VectorXd& u) const {
    u.resize(1);
    u(0) = 12.0 + 0.5 * radius * (2.0 * draw_uniform(g) - 1.0);
  }
};

}  // namespace

static_assert(initial_point_model<far_half_normal, std::mt19937_64>);
static_assert(!initial_point_model<diagonal_gaussian, std::mt19937_64>);
static_assert(!initial_point_model<far_half_normal, int>);
static_assert(differentiable_model<diagonal_gaussian>);
static_assert(differentiable_model<logit_binomial>);
static_assert(!differentiable_model<int>);
static_assert(sampler<nuts_sampler<diagonal_gaussian>>);
static_assert(warmup_aware<nuts_sampler<diagonal_gaussian>>);

TEST_CASE("NUTS on a 100-dimensional Gaussian with scales over four orders of magnitude", "[nuts]") {
  const int d = 100;
  std::mt19937_64 scales_engine(20261126);
  Eigen::VectorXd sd(d);
  for (int i = 0; i < d; ++i) sd(i) = std::pow(10.0, -2.0 + 4.0 * draw_uniform(scales_engine));
  nuts_options nopt;  // Stan's defaults: 1000 warm-up transitions
  inference_options iopt;
  iopt.chains = 4;
  iopt.burnin = nopt.warmup;
  iopt.draws = 1000;
  iopt.seed = 7;
  std::vector<double> accept;
  std::vector<Eigen::VectorXd> metrics;
  const auto result =
      infer([&](std::mt19937_64& g) { return nuts_sampler<diagonal_gaussian>(diagonal_gaussian{sd}, nopt, g); }, iopt);
  // The adapted metric and the acceptance statistic, from one chain run by hand with the same settings.
  std::mt19937_64 g(11);
  nuts_sampler<diagonal_gaussian> s(diagonal_gaussian{sd}, nopt, g);
  for (int i = 0; i < nopt.warmup; ++i) s.step(g);
  double accept_sum = 0.0;
  for (int i = 0; i < 1000; ++i) {
    s.step(g);
    accept_sum += s.last_transition().accept_stat;
  }
  const double mean_accept = accept_sum / 1000.0;
  INFO("mean accept_stat " << mean_accept << ", step size " << s.step_size());
  CHECK(std::abs(mean_accept - 0.8) < 0.05);

  int worst_metric = 0, worst_ess = 0;
  double worst_metric_ratio = 1.0, min_ess = 1e300, max_rhat = 0.0;
  for (int i = 0; i < d; ++i) {
    const double ess = result.draws.ess_bulk(i);
    const double rhat = result.draws.rhat(i);
    max_rhat = std::max(max_rhat, rhat);
    if (ess < min_ess) {
      min_ess = ess;
      worst_ess = i;
    }
    const double mean = result.draws.mean(i);
    const double var = result.draws.sd(i) * result.draws.sd(i);
    INFO("coordinate " << i << ": sd " << sd(i) << ", mean " << mean << ", variance " << var << ", ESS " << ess << ", R-hat "
                       << rhat);
    CHECK(std::abs(mean) < 4.0 * sd(i) / std::sqrt(ess));
    // Var of the sample variance of a normal: 2 s^4 / ESS, with the ESS of the squares (NUTS draws are antithetic
    // for the mean, ESS above the draw count, but not for the squares).
    const double ess_sq = ess_mean(result.draws.chain_matrix(i).array().square().matrix());
    CHECK(std::abs(var - sd(i) * sd(i)) < 4.0 * sd(i) * sd(i) * std::sqrt(2.0 / ess_sq));
    const double ratio = s.inverse_metric()(i) / (sd(i) * sd(i));
    const double off = std::max(ratio, 1.0 / ratio);
    if (off > worst_metric_ratio) {
      worst_metric_ratio = off;
      worst_metric = i;
    }
  }
  INFO("max R-hat " << max_rhat << "; min bulk ESS " << min_ess << " (coordinate " << worst_ess << "); worst metric ratio "
                    << worst_metric_ratio << " (coordinate " << worst_metric << ")");
  CHECK(max_rhat < 1.01);
  CHECK(min_ess > 400.0);
  CHECK(worst_metric_ratio < 1.5);
  CHECK(result.events.divergences == 0);
}

TEST_CASE("NUTS leaves the target invariant: long-run moments of a Gaussian after warm-up", "[nuts]") {
  // 2 x 10^5 transitions pin the variance to about 1% and the kurtosis to about 3%: enough to catch a wrong trajectory
  // sampling rule (always moving to the newest subtree overstates the variance by more than 10%).
  const Eigen::Vector2d sd(1.0, 2.0);
  std::mt19937_64 g(1);
  nuts_sampler<diagonal_gaussian> s(diagonal_gaussian{sd}, nuts_options{}, g);
  for (int i = 0; i < 1000; ++i) s.step(g);
  const int n = 200000;
  Eigen::MatrixXd squares(n, 2);
  Eigen::Vector2d m4 = Eigen::Vector2d::Zero();
  for (int i = 0; i < n; ++i) {
    s.step(g);
    squares.row(i) = s.position().array().square().transpose();
    m4 += s.position().array().pow(4).matrix() / n;
  }
  for (int j = 0; j < 2; ++j) {
    const double var = squares.col(j).mean();
    const double ess = ess_mean(squares.col(j));
    const double kurtosis = m4(j) / (var * var);
    INFO("coordinate " << j << ": variance " << var << " (target " << sd(j) * sd(j) << "), ESS of squares " << ess
                       << ", kurtosis " << kurtosis);
    CHECK(std::abs(var / (sd(j) * sd(j)) - 1.0) < 5.0 * std::sqrt(2.0 / ess));
    CHECK(std::abs(kurtosis - 3.0) < 0.15);
  }
}

TEST_CASE("NUTS on a 2-d Gaussian with correlation 0.99 (diagonal metric)", "[nuts]") {
  nuts_options nopt;
  inference_options iopt;
  iopt.burnin = nopt.warmup;
  iopt.draws = 1000;
  iopt.seed = 3;
  const auto result =
      infer([&](std::mt19937_64& g) { return nuts_sampler<correlated_gaussian>(correlated_gaussian{}, nopt, g); }, iopt);
  for (int i = 0; i < 2; ++i) {
    INFO("coordinate " << i << ": R-hat " << result.draws.rhat(i) << ", ESS " << result.draws.ess_bulk(i) << ", mean "
                       << result.draws.mean(i) << ", sd " << result.draws.sd(i));
    CHECK(result.draws.rhat(i) < 1.01);
    CHECK(result.draws.ess_bulk(i) > 100.0);
    CHECK(std::abs(result.draws.mean(i)) < 4.0 / std::sqrt(result.draws.ess_bulk(i)));
    CHECK(std::abs(result.draws.sd(i) - 1.0) < 0.1);
  }
  // The sample correlation of the pooled draws.
  const Eigen::MatrixXd all = result.draws.draw_matrix();
  const Eigen::MatrixXd c = all.rowwise() - all.colwise().mean();
  const double corr = c.col(0).dot(c.col(1)) / (c.col(0).norm() * c.col(1).norm());
  CHECK(std::abs(corr - 0.99) < 0.005);
}

TEST_CASE("NUTS with the dense metric on a correlated 20-d Gaussian: the covariance learnt, shorter trajectories", "[nuts]") {
  // Sigma = D R D: R with correlation 0.98^|i - j| (an AR(1) chain, condition number about 10^2), sd D log-uniform
  // on [0.1, 10]. A diagonal metric removes the scales but not the correlations: its trajectories must cross the
  // narrowest principal direction, the dense metric's do not.
  const int d = 20;
  std::mt19937_64 scales_engine(20261204);
  Eigen::VectorXd sd(d);
  for (int i = 0; i < d; ++i) sd(i) = std::pow(10.0, -1.0 + 2.0 * draw_uniform(scales_engine));
  Eigen::MatrixXd cov(d, d);
  for (int i = 0; i < d; ++i)
    for (int j = 0; j < d; ++j) cov(i, j) = std::pow(0.98, std::abs(i - j)) * sd(i) * sd(j);
  const full_gaussian target{cov.inverse()};
  inference_options iopt;
  iopt.chains = 4;
  iopt.burnin = 1000;
  iopt.draws = 1000;
  iopt.seed = 17;
  auto leapfrogs = [&](bool dense, Eigen::MatrixXd* metric) {
    nuts_options nopt;
    nopt.dense_metric = dense;
    std::mt19937_64 g(dense ? 23 : 29);
    nuts_sampler<full_gaussian> s(target, nopt, g);
    for (int i = 0; i < nopt.warmup; ++i) s.step(g);
    double n = 0.0;
    for (int i = 0; i < 500; ++i) {
      s.step(g);
      n += s.last_transition().n_leapfrog;
    }
    if (metric) *metric = s.dense_inverse_metric();
    return n / 500.0;
  };
  Eigen::MatrixXd metric;
  const double dense_steps = leapfrogs(true, &metric);
  const double diagonal_steps = leapfrogs(false, nullptr);
  // The learnt metric against the covariance: the eigenvalues of L^{-1} M L^{-T} (Sigma = L L') are 1 when M = Sigma.
  const Eigen::LLT<Eigen::MatrixXd> chol(cov);
  const Eigen::MatrixXd l_inv = chol.matrixL().solve(Eigen::MatrixXd::Identity(d, d));
  const Eigen::VectorXd ratio = Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(l_inv * metric * l_inv.transpose()).eigenvalues();
  INFO("leapfrog steps per transition: dense " << dense_steps << ", diagonal " << diagonal_steps
                                               << "; metric / covariance eigenvalues " << ratio.minCoeff() << " to "
                                               << ratio.maxCoeff());
  CHECK(metric.rows() == d);
  // A sample covariance of n independent draws has these eigenvalues within about (1 +- sqrt(d / n))^2 (Marchenko-Pastur):
  // 0.64 to 1.44 for the last window's 500 draws, wider for autocorrelated ones. A diagonal metric is off by the
  // correlation matrix's condition number (about 10^2).
  CHECK(ratio.minCoeff() > 0.4);
  CHECK(ratio.maxCoeff() < 2.5);
  CHECK(dense_steps < 0.5 * diagonal_steps);

  nuts_options nopt;
  nopt.dense_metric = true;
  const auto result = infer([&](std::mt19937_64& g) { return nuts_sampler<full_gaussian>(target, nopt, g); }, iopt);
  double max_rhat = 0.0, min_ess = 1e300;
  for (int i = 0; i < d; ++i) {
    const double ess = result.draws.ess_bulk(i);
    max_rhat = std::max(max_rhat, result.draws.rhat(i));
    min_ess = std::min(min_ess, ess);
    INFO("coordinate " << i << ": sd " << sd(i) << ", mean " << result.draws.mean(i) << ", sample sd " << result.draws.sd(i)
                       << ", ESS " << ess);
    CHECK(std::abs(result.draws.mean(i)) < 4.0 * sd(i) / std::sqrt(ess));
    CHECK(std::abs(result.draws.sd(i) / sd(i) - 1.0) < 0.1);
  }
  INFO("max R-hat " << max_rhat << ", min bulk ESS " << min_ess);
  CHECK(max_rhat < 1.01);
  CHECK(min_ess > 400.0);
  CHECK(result.events.divergences == 0);
}

TEST_CASE("NUTS is calibrated on conjugate models (SBC, M = 300)", "[nuts][calibration]") {
  const int trials = 300;
  nuts_options nopt;
  nopt.warmup = 300;
  SECTION("normal mean, known variance, n = 5") {
    std::mt19937_64 g(101);
    std::vector<double> quantiles;
    for (int t = 0; t < trials; ++t) {
      const double mu = draw_normal(g);
      double sum = 0.0;
      for (int i = 0; i < 5; ++i) sum += draw_normal(g, mu, 1.0);
      nuts_sampler<normal_mean> s(normal_mean{sum, 5.0}, nopt, g);
      for (int i = 0; i < nopt.warmup; ++i) s.step(g);
      Eigen::VectorXd draws(100);
      for (int i = 0; i < 500; ++i) {
        s.step(g);
        if (i % 5 == 4) draws(i / 5) = s.parameter_vector()(0);  // thinned to about independent draws
      }
      quantiles.push_back(posterior_quantile(mu, draws));
    }
    test::check_calibrated(test::row_of_quantiles("nuts normal mean", 0, quantiles));
  }
  SECTION("correlated normal mean, 3-d, under the dense metric") {
    // mu ~ N(0, R) with correlation 0.9 between every pair, y_i ~ N(mu, I), i = 1..5: the posterior is Gaussian with
    // precision R^{-1} + 5 I. 300 warm-up transitions: windows of 25, 50 and 100 draws, all above 2d = 6 (dense).
    Eigen::Matrix3d r = Eigen::Matrix3d::Constant(0.9);
    r.diagonal().setOnes();
    const Eigen::Matrix3d r_chol = r.llt().matrixL();
    const Eigen::Matrix3d r_inv = r.inverse();
    nuts_options dense = nopt;
    dense.dense_metric = true;
    std::mt19937_64 g(303);
    std::vector<double> first, last;
    for (int t = 0; t < trials; ++t) {
      const Eigen::Vector3d mu = r_chol * Eigen::Vector3d(draw_normal(g), draw_normal(g), draw_normal(g));
      Eigen::Vector3d sum = Eigen::Vector3d::Zero();
      for (int i = 0; i < 5; ++i)
        for (int j = 0; j < 3; ++j) sum(j) += draw_normal(g, mu(j), 1.0);
      // log p(mu | y) = -mu' (R^{-1} + 5 I) mu / 2 + sum' mu: a full_gaussian shifted to its mean.
      const Eigen::Matrix3d precision = r_inv + 5.0 * Eigen::Matrix3d::Identity();
      const Eigen::Vector3d mean = precision.llt().solve(sum);
      nuts_sampler<full_gaussian> s(full_gaussian{precision}, dense, g);
      for (int i = 0; i < dense.warmup; ++i) s.step(g);
      Eigen::VectorXd d0(100), d2(100);
      for (int i = 0; i < 500; ++i) {
        s.step(g);
        if (i % 5 == 4) {
          d0(i / 5) = s.position()(0) + mean(0);
          d2(i / 5) = s.position()(2) + mean(2);
        }
      }
      first.push_back(posterior_quantile(mu(0), d0));
      last.push_back(posterior_quantile(mu(2), d2));
    }
    test::check_calibrated(test::row_of_quantiles("nuts dense correlated mean", 0, first));
    test::check_calibrated(test::row_of_quantiles("nuts dense correlated mean", 2, last));
  }
  SECTION("binomial proportion on the logit scale, Beta(2, 2), n = 12") {
    std::mt19937_64 g(202);
    std::vector<double> quantiles;
    for (int t = 0; t < trials; ++t) {
      const double p = draw_beta(g, 2.0, 2.0);
      double k = 0.0;
      for (int i = 0; i < 12; ++i) k += draw_uniform(g) < p ? 1.0 : 0.0;
      nuts_sampler<logit_binomial> s(logit_binomial{2.0, 2.0, k, 12.0}, nopt, g);
      for (int i = 0; i < nopt.warmup; ++i) s.step(g);
      Eigen::VectorXd draws(100);
      for (int i = 0; i < 500; ++i) {
        s.step(g);
        if (i % 5 == 4) draws(i / 5) = s.parameter_vector()(0);
      }
      quantiles.push_back(posterior_quantile(p, draws));
    }
    test::check_calibrated(test::row_of_quantiles("nuts logit binomial", 0, quantiles));
  }
}

TEST_CASE("NUTS reports divergences in Neal's funnel and terminates", "[nuts]") {
  nuts_options nopt;
  nopt.warmup = 500;
  inference_options iopt;
  iopt.chains = 2;
  iopt.burnin = nopt.warmup;
  iopt.draws = 500;
  iopt.seed = 5;
  const auto result = infer([&](std::mt19937_64& g) { return nuts_sampler<funnel>(funnel{}, nopt, g); }, iopt);
  INFO("divergences " << result.events.divergences << ", saturations " << result.events.treedepth_saturations);
  CHECK(result.events.divergences >= 1);
  CHECK(result.draws.draw_matrix().allFinite());
}

TEST_CASE("NUTS is reproducible from the seed and follows Stan's warm-up schedule", "[nuts]") {
  nuts_options nopt;
  nopt.warmup = 200;
  inference_options iopt;
  iopt.chains = 2;
  iopt.burnin = 200;
  iopt.draws = 100;
  iopt.seed = 9;
  auto make = [&](std::mt19937_64& g) { return nuts_sampler<correlated_gaussian>(correlated_gaussian{0.5}, nopt, g); };
  const auto a = infer(make, iopt);
  const auto b = infer(make, iopt);
  CHECK(a.draws.draw_matrix() == b.draws.draw_matrix());

  SECTION("metric windows end after transitions 99, 149, 249, 449 and 949 of 1000 (Stan's defaults)") {
    detail::metric_windows w;
    w.configure(1000, 75, 50, 25, true);
    std::vector<int> ends;
    for (int c = 0; c < 1000; ++c) {
      if (w.ends_window(c)) {
        ends.push_back(c);
        w.advance(c);
      }
    }
    CHECK(ends == std::vector<int>{99, 149, 249, 449, 949});
    CHECK_FALSE(w.collects(74));
    CHECK(w.collects(75));
    CHECK(w.collects(949));
    CHECK_FALSE(w.collects(950));
  }
  SECTION("short warm-up: buffers of 15% / 75% / 10%, none below 20") {
    detail::metric_windows w;
    w.configure(100, 75, 50, 25, true);
    CHECK(w.init_buffer == 15);
    CHECK(w.term_buffer == 10);
    CHECK(w.base_window == 75);
    w.configure(19, 75, 50, 25, true);
    CHECK_FALSE(w.enabled);
  }
  SECTION("the step size is adapted and frozen after warm-up") {
    std::mt19937_64 g(1);
    nuts_sampler<correlated_gaussian> s(correlated_gaussian{0.5}, nopt, g);
    for (int i = 0; i < nopt.warmup; ++i) {
      CHECK(s.adapting());
      s.step(g);
    }
    CHECK_FALSE(s.adapting());
    const double eps = s.step_size();
    const Eigen::VectorXd metric = s.inverse_metric();
    for (int i = 0; i < 50; ++i) s.step(g);
    CHECK(s.step_size() == eps);
    CHECK(s.inverse_metric() == metric);
    CHECK(s.last_transition().step_size == eps);
    CHECK(s.last_transition().n_leapfrog >= 1);
    CHECK(s.last_transition().n_leapfrog < (1 << nopt.max_depth));
  }
  SECTION("set_step_scale multiplies the transitions' step until set again; metric_updates counts the windows") {
    std::mt19937_64 g(2);
    nuts_sampler<correlated_gaussian> s(correlated_gaussian{0.5}, nopt, g);
    CHECK(s.step_scale() == 1.0);
    CHECK(s.metric_updates() == 0);
    for (int i = 0; i < nopt.warmup; ++i) s.step(g);
    detail::metric_windows w;
    w.configure(nopt.warmup, nopt.init_buffer, nopt.term_buffer, nopt.base_window, true);
    int windows = 0;
    for (int c = 0; c < nopt.warmup; ++c) {
      if (w.ends_window(c)) {
        ++windows;
        w.advance(c);
      }
    }
    REQUIRE(windows >= 1);
    CHECK(s.metric_updates() == windows);
    const double eps = s.step_size();
    s.set_step_scale(0.25);
    for (int i = 0; i < 3; ++i) {
      s.step(g);
      CHECK(s.last_transition().step_size == 0.25 * eps);
    }
    CHECK(s.step_size() == eps);
    s.set_step_scale(1.0);
    s.step(g);
    CHECK(s.last_transition().step_size == eps);
    CHECK(s.metric_updates() == windows);
    for (double bad : {0.0, -0.5, 1.5, std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()})
      CHECK_THROWS_AS(s.set_step_scale(bad), std::invalid_argument);
    CHECK(s.step_scale() == 1.0);
  }
}

TEST_CASE("curvature_start shrinks the identity metric to the diagonal curvature until the first window", "[nuts]") {
  // sds 0.01, 0.1, 1 and 5: curvatures 1e4, 100, 1 and 0.04. The start takes 1 / curvature where that is below 1 (the
  // identity's), so (1e-4, 1e-2, 1, 1); the first metric window (after transition init_buffer + base_window - 1)
  // replaces it with the windowed variances, not counted as a window itself.
  const diagonal_gaussian target{(Eigen::VectorXd(4) << 0.01, 0.1, 1.0, 5.0).finished()};
  for (const bool dense : {false, true}) {
    nuts_options opt;
    opt.warmup = 1000;
    opt.dense_metric = dense;
    opt.curvature_start = true;
    std::mt19937_64 g(4);
    nuts_sampler<diagonal_gaussian> s(target, opt, g);
    nuts_options plain_opt = opt;
    plain_opt.curvature_start = false;
    std::mt19937_64 g2(4);
    nuts_sampler<diagonal_gaussian> plain(target, plain_opt, g2);
    const int start = opt.init_buffer / 5;
    long leapfrogs = 0, plain_leapfrogs = 0;
    for (int i = 0; i <= start; ++i) {
      CHECK(s.inverse_metric() == Eigen::VectorXd::Ones(4));
      s.step(g);
      plain.step(g2);
    }
    INFO("dense " << dense << ": inverse metric " << s.inverse_metric().transpose());
    CHECK(s.inverse_metric()(0) == Approx(1e-4).epsilon(1e-3));
    CHECK(s.inverse_metric()(1) == Approx(1e-2).epsilon(1e-3));
    CHECK(s.inverse_metric()(2) == 1.0);
    CHECK(s.inverse_metric()(3) == 1.0);
    if (dense) CHECK(s.dense_inverse_metric().diagonal() == s.inverse_metric());
    CHECK(s.metric_updates() == 0);
    // Until the first window the start pays: the identity needs trajectories as long as the sds' ratio (500).
    for (int i = start + 1; i < opt.init_buffer + opt.base_window - 1; ++i) {
      s.step(g);
      plain.step(g2);
      leapfrogs += s.last_transition().n_leapfrog;
      plain_leapfrogs += plain.last_transition().n_leapfrog;
    }
    CHECK(leapfrogs * 4 < plain_leapfrogs);
    s.step(g);
    CHECK(s.metric_updates() == 1);
    CHECK(s.inverse_metric()(3) > 1.0);  // the window's variance of the sd-5 coordinate
    for (int i = opt.init_buffer + opt.base_window; i < 2000; ++i) s.step(g);
    CHECK(s.events().divergences == 0);
  }
}

namespace {
// Independent coordinates with log density -(q^2 / (2 sd^2) + q^4 / 4): curvature 1 / sd^2 + 3 q^2, which moves with
// the point (the case the repeated curvature passes are for).
struct quartic_bowl {
  Eigen::VectorXd sd;
  Eigen::Index dimension() const { return sd.size(); }
  double log_density_gradient(const Eigen::VectorXd& u, Eigen::VectorXd& grad) const {
    grad = -(u.array() / sd.array().square() + u.array().cube()).matrix();
    return -(0.5 * (u.array() / sd.array()).square() + 0.25 * u.array().pow(4)).sum();
  }
  // What curvature_start sets at u: 1 / curvature where that is above 1, else 1.
  Eigen::VectorXd curvature_metric(const Eigen::VectorXd& u) const {
    Eigen::VectorXd m(u.size());
    for (Eigen::Index i = 0; i < u.size(); ++i) {
      const double curvature = 1.0 / (sd(i) * sd(i)) + 3.0 * u(i) * u(i);
      m(i) = curvature > 1.0 ? std::max(1.0 / curvature, 1e-8) : 1.0;
    }
    return m;
  }
};
}  // namespace

TEST_CASE("curvature_start takes the curvature at the current point at every fifth of the initial buffer", "[nuts]") {
  // Passes after transitions 15, 30, 45 and 60 of the 75 (init_buffer / 5 apart), each from the point the chain has
  // reached (entries not above curvature 1 back at 1), taken where some entry moves by more than a factor of 2; nothing
  // in between, and nothing from transition 75 on.
  const quartic_bowl target{(Eigen::VectorXd(3) << 0.1, 1.0, 10.0).finished()};
  nuts_options opt;
  opt.warmup = 1000;
  opt.curvature_start = true;
  opt.init_radius = 4.0;
  std::mt19937_64 g(11);
  nuts_sampler<quartic_bowl> s(target, opt, g);
  const int every = opt.init_buffer / 5;
  Eigen::VectorXd previous = s.inverse_metric();
  int passes = 0, moved = 0;
  // Transition c (from 0) adapts after it with c transitions done before it: the passes follow c = 15, 30, 45, 60.
  for (int c = 0; c < opt.init_buffer + opt.base_window - 1; ++c) {
    s.step(g);
    if (c > 0 && c % every == 0 && c < opt.init_buffer) {
      ++passes;
      const Eigen::VectorXd expected = target.curvature_metric(s.position());
      const double largest_move = (expected.array() / previous.array()).log().abs().maxCoeff();
      INFO("after transition " << c << ": metric " << s.inverse_metric().transpose() << ", curvature's " << expected.transpose()
                               << ", previous " << previous.transpose());
      if (largest_move > std::log(2.0) + 1e-3) {
        for (Eigen::Index i = 0; i < 3; ++i) CHECK(s.inverse_metric()(i) == Approx(expected(i)).epsilon(1e-4));
        ++moved;
      } else if (largest_move < std::log(2.0) - 1e-3) {
        CHECK(s.inverse_metric() == previous);  // within a factor of 2: kept, the step size not restarted
      }
    } else {
      CHECK(s.inverse_metric() == previous);
    }
    previous = s.inverse_metric();
  }
  CHECK(passes == 4);
  CHECK(moved >= 2);  // the chain starts out of the bulk (init_radius 4): a later pass follows it
  CHECK(s.metric_updates() == 0);
  s.step(g);
  CHECK(s.metric_updates() == 1);
}

TEST_CASE("infer tells NUTS once that warm-up ended, and a burn-in of another length is an error", "[nuts]") {
  nuts_options nopt;
  nopt.warmup = 50;
  inference_options iopt;
  iopt.chains = 1;
  iopt.burnin = 50;
  iopt.draws = 20;
  int calls = 0, at = -1;
  auto make = [&](std::mt19937_64& g) {
    return counting_nuts<correlated_gaussian>{nuts_sampler<correlated_gaussian>(correlated_gaussian{0.5}, nopt, g), &calls, &at};
  };
  infer(make, iopt);
  CHECK(calls == 1);
  CHECK(at == 50);
  iopt.burnin = 40;
  CHECK_THROWS_AS(infer(make, iopt), std::invalid_argument);
  CHECK_THROWS_WITH(infer(make, iopt), Catch::Contains("nuts_options::warmup is 50"));
}

TEST_CASE("infer gives NUTS its warm-up: the burn-in replaces nuts_options::warmup", "[nuts]") {
  nuts_options nopt;
  nopt.warmup = 50;
  inference_options iopt;
  iopt.chains = 1;
  iopt.burnin = 40;
  iopt.draws = 20;
  auto make = [&](std::mt19937_64& g) { return nuts_sampler<correlated_gaussian>(correlated_gaussian{0.5}, nopt, g); };
  CHECK_NOTHROW(infer(make, iopt));
  // The chain is the one a sampler built with warmup = 40 gives: the driver's burn-in is its warm-up.
  nopt.warmup = 40;
  iopt.seed = 5;
  const Eigen::MatrixXd planned = infer(make, iopt).draws.chains().front();
  nopt.warmup = 50;
  CHECK(infer(make, iopt).draws.chains().front() == planned);
  std::mt19937_64 g(1);
  nuts_sampler<correlated_gaussian> s(correlated_gaussian{0.5}, nopt, g);
  CHECK_THROWS_AS(s.begin_warmup(-1), std::invalid_argument);
  s.step(g);
  CHECK_THROWS_AS(s.begin_warmup(10), std::logic_error);
}

TEST_CASE("NUTS starts where a model's initial_point says", "[nuts]") {
  std::mt19937_64 g(3);
  nuts_options o;
  o.warmup = 200;
  nuts_sampler<far_half_normal> s(far_half_normal{}, o, g);
  double sum = 0.0;
  for (int i = 0; i < 1200; ++i) {
    s.step(g);
    if (i >= 200) sum += s.parameter_vector()(0);
  }
  CHECK(std::abs(sum / 1000.0 - 12.0) < 0.3);  // the half-line's mass is at 12 +- 1 (the cut at 10 is 2 sd away)
}

TEST_CASE("NUTS rejects bad options and targets with no finite point", "[nuts][errors]") {
  std::mt19937_64 g(1);
  const correlated_gaussian m{0.5};
  auto with = [&](auto change) {
    nuts_options o;
    change(o);
    return o;
  };
  CHECK_THROWS_AS(nuts_sampler(m, with([](nuts_options& o) { o.max_depth = 0; }), g), std::invalid_argument);
  CHECK_THROWS_AS(nuts_sampler(m, with([](nuts_options& o) { o.target_accept = 1.0; }), g), std::invalid_argument);
  CHECK_THROWS_AS(nuts_sampler(m, with([](nuts_options& o) { o.target_accept = 0.0; }), g), std::invalid_argument);
  CHECK_THROWS_AS(nuts_sampler(m, with([](nuts_options& o) { o.target_accept = std::nan(""); }), g), std::invalid_argument);
  CHECK_THROWS_AS(nuts_sampler(m, with([](nuts_options& o) { o.warmup = -1; }), g), std::invalid_argument);
  CHECK_THROWS_AS(nuts_sampler(m, with([](nuts_options& o) { o.initial_step_size = 0.0; }), g), std::invalid_argument);
  CHECK_THROWS_AS(nuts_sampler(m, with([](nuts_options& o) { o.init_tries = 0; }), g), std::invalid_argument);
  CHECK_THROWS_AS(nuts_sampler(m, with([](nuts_options& o) { o.kappa = 1.5; }), g), std::invalid_argument);
  CHECK_THROWS_WITH(nuts_sampler(m, with([](nuts_options& o) { o.max_depth = 31; }), g),
                    Catch::Contains("max_depth") && Catch::Contains("[1, 30]"));

  CHECK_THROWS_AS(nuts_sampler(nowhere{}, nuts_options{}, g), std::domain_error);
  CHECK_THROWS_WITH(nuts_sampler(nowhere{}, nuts_options{}, g), Catch::Contains("100 random draws"));
  CHECK_THROWS_AS(nuts_sampler(m, nuts_options{}, Eigen::VectorXd::Zero(3), g), std::invalid_argument);
  Eigen::VectorXd bad(2);
  bad << 0.0, std::numeric_limits<double>::infinity();
  CHECK_THROWS_AS(nuts_sampler(m, nuts_options{}, bad, g), std::invalid_argument);
  CHECK_THROWS_AS(nuts_sampler(nowhere{}, nuts_options{}, Eigen::VectorXd::Zero(2), g), std::domain_error);
}

TEST_CASE("infer and infer_until keep NUTS's per-draw diagnostics beside the draws (Stan's sampler columns)", "[nuts]") {
  // The CmdStan CSV's lp__ ... energy__ columns come from here. On a diagonal Gaussian the recorded
  // lp__ must be the log density of the recorded draw, and the others within their ranges.
  nuts_options nopt;
  nopt.warmup = 100;
  inference_options iopt;
  iopt.chains = 2;
  iopt.burnin = 100;
  iopt.draws = 50;
  iopt.thin = 2;
  iopt.seed = 14;
  const Eigen::Vector3d sd(0.5, 1.0, 3.0);
  auto make = [&](std::mt19937_64& g) { return nuts_sampler<diagonal_gaussian>(diagonal_gaussian{sd}, nopt, g); };
  STATIC_REQUIRE(reports_draw_diagnostics<nuts_sampler<diagonal_gaussian>>);
  auto check = [&](const inference_result& r, Eigen::Index rows) {
    REQUIRE(r.diagnostic_names == std::vector<std::string>{"lp__", "accept_stat__", "stepsize__", "treedepth__", "n_leapfrog__",
                                                           "divergent__", "energy__"});
    REQUIRE(r.diagnostics.size() == 2);
    for (std::size_t c = 0; c < 2; ++c) {
      const Eigen::MatrixXd& d = r.diagnostics[c];
      const Eigen::MatrixXd& x = r.draws.chains()[c];
      REQUIRE(d.rows() == rows);
      REQUIRE(x.rows() == rows);
      REQUIRE(d.cols() == 7);
      for (Eigen::Index i = 0; i < rows; ++i) {
        const double lp = -0.5 * (x.row(i).transpose().array() / sd.array()).square().sum();
        CHECK(d(i, 0) == Approx(lp).margin(1e-12));
        CHECK((d(i, 1) >= 0.0 && d(i, 1) <= 1.0));
        CHECK(d(i, 2) == d(0, 2));  // the step size is frozen after warm-up
        CHECK(d(i, 2) > 0.0);
        CHECK(d(i, 3) >= 0.0);
        CHECK(d(i, 4) >= 1.0);
        // Stan's convention: treedepth__ counts the accepted doublings; the rejected last subtree's steps still count,
        // so n_leapfrog__ <= (2^depth - 1) + 2^depth.
        CHECK(d(i, 4) <= std::exp2(d(i, 3) + 1.0) - 1.0);
        CHECK((d(i, 5) == 0.0 || d(i, 5) == 1.0));
        CHECK(d(i, 6) >= -d(i, 0));  // H = -lp + kinetic energy, and the kinetic energy is >= 0
      }
    }
  };
  check(infer(make, iopt), 50);
  convergence_target t;
  t.min_ess = 1e9;     // never reached: the chains are extended once
  t.max_sweeps = 400;  // 100 + 50 x 2 = 200 sweeps, then one doubling to 300; the next would pass 400
  const auto e = infer_until(make, iopt, t);
  CHECK(e.rounds == 2);
  check(e.result, 100);
}
