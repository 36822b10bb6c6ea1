// The DP-GLM under Laplace noise: glm_collapsed_gibbs against a quadrature reference of the exact
// posterior on a (theta, tau) grid for a fixed release (d = 1: the statistic (sum y x, sum x^2)), where the Laplace
// likelihood's integral over the latent sums is a closed-form Gaussian-Laplace convolution inside a one-dimensional
// Gauss-Kronrod integral. The same grid with Gaussian noise of equal variance gives a visibly different posterior: the
// check can tell the two noise models apart. In the calibration executable (seconds at -O2, minutes under sanitizers).
#include <catch2/catch.hpp>

#include <Eigen/LU>  // inverse(), determinant()
#include <algorithm>
#include <boost/math/quadrature/gauss_kronrod.hpp>
#include <boost/math/special_functions/erf.hpp>
#include <cmath>
#include <limits>
#include <numbers>
#include <random>
#include <vector>

#include "privpost/families/glm/glm_statistic.hpp"
#include "privpost/inference/infer.hpp"
#include "privpost/mechanisms/laplace.hpp"
#include "privpost/samplers/glm/glm_collapsed_gibbs.hpp"
#include "privpost/samplers/glm/logistic_moment_model.hpp"

using namespace privpost;

namespace {

using laplace_glm_ref = glm_collapsed_gibbs<logistic_moment_map<exact_logistic_link>, laplace_mechanism>;

// log of e^a erfc(x), stable for large |x| (the asymptotic series past x = 25, where erfc underflows).
double log_exp_erfc(double a, double x) {
  if (x < 25.0) return a + std::log(boost::math::erfc(x));
  const double x2 = x * x;
  return a - x2 - std::log(x * std::sqrt(std::numbers::pi)) + std::log1p(-0.5 / x2 + 0.75 / (x2 * x2));
}

// log of the convolution int N(s; m, v) Lap(z - s; b) ds (closed form: two scaled complementary error functions).
double log_normal_laplace(double z, double m, double v, double b) {
  const double sd = std::sqrt(v), t = m - z;
  const double x1 = (sd / b + t / sd) / std::sqrt(2.0), x2 = (sd / b - t / sd) / std::sqrt(2.0);
  const double a1 = v / (2.0 * b * b) + t / b, a2 = v / (2.0 * b * b) - t / b;
  const double l1 = log_exp_erfc(a1, x1), l2 = log_exp_erfc(a2, x2);
  const double hi = std::max(l1, l2);
  return -std::log(4.0 * b) + hi + std::log(std::exp(l1 - hi) + std::exp(l2 - hi));
}

// log p(z | mean m, covariance S) for z = s + Laplace(b) noise, s ~ N(m, S), two entries: the integral over s1 of
// N(s1; m1, S11) Lap(z1 - s1) times the closed-form convolution over s2 | s1, by Gauss-Kronrod split at the kink z1.
double log_laplace_likelihood(const Eigen::Vector2d& z, const Eigen::Vector2d& m, const Eigen::Matrix2d& s, double b) {
  const double sd1 = std::sqrt(s(0, 0));
  const double v21 = s(1, 1) - s(1, 0) * s(1, 0) / s(0, 0);
  // Scale out a reference level so the integrand stays representable.
  const double ref = log_normal_laplace(z(0), m(0), s(0, 0), b) + log_normal_laplace(z(1), m(1), s(1, 1), b);
  auto f = [&](double s1) {
    const double m21 = m(1) + s(1, 0) / s(0, 0) * (s1 - m(0));
    const double lp = -0.5 * std::pow((s1 - m(0)) / sd1, 2) - std::log(sd1 * std::sqrt(2.0 * std::numbers::pi)) -
                      std::log(2.0 * b) - std::abs(z(0) - s1) / b + log_normal_laplace(z(1), m21, v21, b);
    return std::exp(lp - ref);
  };
  const double lo = std::min(m(0) - 12.0 * sd1, z(0) - 40.0 * b), hi = std::max(m(0) + 12.0 * sd1, z(0) + 40.0 * b);
  using gk = boost::math::quadrature::gauss_kronrod<double, 61>;
  double total = 0.0;
  // Pieces between the kink and the normal's centre, so that each integrand is smooth on its piece.
  std::vector<double> cuts{lo, z(0), m(0), hi};
  std::sort(cuts.begin(), cuts.end());
  for (std::size_t i = 0; i + 1 < cuts.size(); ++i)
    if (cuts[i + 1] > cuts[i]) total += gk::integrate(f, cuts[i], cuts[i + 1], 12, 1e-10);
  return ref + std::log(total);
}

double log_gaussian_likelihood(const Eigen::Vector2d& z, const Eigen::Vector2d& m, const Eigen::Matrix2d& s, double w) {
  Eigen::Matrix2d c = s;
  c.diagonal().array() += w;
  const Eigen::Vector2d r = z - m;
  return -0.5 * r.dot(c.inverse() * r) - 0.5 * std::log(c.determinant());
}

struct grid_summary {
  double theta_mean, theta_sd, tau_mean, tau_sd, edge;  // edge: the largest density on the grid's border over the max
};

// Posterior mean and sd of theta and tau on a grid over [theta_lo, theta_hi] x [tau_lo, tau_hi] (midpoint rule), prior
// theta ~ N(0, 1) on theta^2 < s_max (d = 1), tau ~ half-normal(tau_scale).
template <class LogLikelihood>
// The ranges should be theta's whole support and [0, tau_hi] with tau_hi beyond the mass (edge reports the density
// on the upper tau border).
grid_summary grid_posterior(const logistic_moment_model<>& model, const glm_prior& prior, double theta_lo, double theta_hi,
                            double tau_lo, double tau_hi, int k, LogLikelihood loglik) {
  std::vector<double> lp(static_cast<std::size_t>(k * k));
  double top = -std::numeric_limits<double>::infinity();
  const double n = model.records();
  auto at = [&](int i, int j) -> double& { return lp[static_cast<std::size_t>(i * k + j)]; };
  for (int i = 0; i < k; ++i) {
    for (int j = 0; j < k; ++j) {
      const double theta = theta_lo + (theta_hi - theta_lo) * (i + 0.5) / k, tau = tau_lo + (tau_hi - tau_lo) * (j + 0.5) / k;
      Eigen::VectorXd mu;
      Eigen::MatrixXd v;
      model.moments(glm_parameters{Eigen::VectorXd::Constant(1, theta), Eigen::MatrixXd::Constant(1, 1, tau * tau)}, mu, v);
      double value = -0.5 * theta * theta - 0.5 * tau * tau / (prior.tau_scale * prior.tau_scale);
      if (theta * theta >= prior.s_max) value = -std::numeric_limits<double>::infinity();
      value += loglik(Eigen::Vector2d(n * mu), Eigen::Matrix2d(n * v));
      at(i, j) = value;
      top = std::max(top, value);
    }
  }
  double w = 0, m1 = 0, m2 = 0, t1 = 0, t2 = 0, edge = 0;
  for (int i = 0; i < k; ++i) {
    for (int j = 0; j < k; ++j) {
      const double theta = theta_lo + (theta_hi - theta_lo) * (i + 0.5) / k, tau = tau_lo + (tau_hi - tau_lo) * (j + 0.5) / k;
      const double p = std::exp(at(i, j) - top);
      if (j == k - 1) edge = std::max(edge, p);
      w += p;
      m1 += p * theta;
      m2 += p * theta * theta;
      t1 += p * tau;
      t2 += p * tau * tau;
    }
  }
  m1 /= w;
  t1 /= w;
  return {m1, std::sqrt(m2 / w - m1 * m1), t1, std::sqrt(t2 / w - t1 * t1), edge};
}

}  // namespace

TEST_CASE("glm_collapsed_gibbs matches a quadrature reference of the Laplace posterior (d = 1)",
          "[glm][laplace][glm-laplace-reference]") {
  // d = 1, no intercept, R = 1: released (sum y x, sum x^2) of N = 500 records with Laplace noise at
  // b = Delta_1 / epsilon = 3 / 0.25 = 12. The release is built by hand: the expected sums at theta = 1.5, tau = 0.4
  // plus noise (3 b, -b / 2), a large residual on the first entry, where Laplace and Gaussian noise of equal variance
  // disagree. Prior tau ~ half-normal(0.5). The sampler (4 chains x 2000 draws after 1000 of warm-up, under infer)
  // against a 200 x 200 grid of the exact posterior: |mean gap| < 0.1 sd and sd ratio within [0.92, 1.08] (Monte Carlo
  // error at an ESS of 1000 or more: 0.03 sd and 2%, so about 3.5 standard errors), R-hat < 1.01. The Gaussian noise
  // model of the same variance on the same grid must miss one of those tolerances (the check has power against treating
  // Laplace noise as Gaussian; measured: its theta sd is 0.80 of the Laplace posterior's).
  const int d = 1;
  const double n = 500.0;
  const auto st = glm_statistic::logistic(d, 1.0);
  const laplace_mechanism lap(st.l1_sensitivity(), 0.25);
  const double b = lap.scale();
  const glm_prior prior{9.0, 0.5, 2.0};
  const logistic_moment_model<> sim(Eigen::VectorXd::Zero(2), n, 0.0, d, prior);
  Eigen::VectorXd mu;
  Eigen::MatrixXd v;
  sim.moments(glm_parameters{Eigen::VectorXd::Constant(1, 1.5), Eigen::MatrixXd::Constant(1, 1, 0.16)}, mu, v);
  const Eigen::Vector2d z = n * mu + Eigen::Vector2d(3.0 * b, -0.5 * b);

  nuts_options opt;
  opt.warmup = 1000;
  inference_options iopt;
  iopt.burnin = opt.warmup;
  iopt.draws = 2000;
  iopt.seed = 17;
  const auto result = infer([&](std::mt19937_64& cg) { return laplace_glm_ref(z, n, lap, d, prior, {}, opt, cg); }, iopt);
  const double theta_mean = result.draws.mean(0), theta_sd = result.draws.sd(0);
  const double tau_mean = result.draws.mean(1), tau_sd = result.draws.sd(1);
  INFO("sampler: theta " << theta_mean << " +- " << theta_sd << " (R-hat " << result.draws.rhat(0) << "), tau " << tau_mean
                         << " +- " << tau_sd << " (R-hat " << result.draws.rhat(1) << ")");
  CHECK(result.draws.rhat(0) < 1.01);
  CHECK(result.draws.rhat(1) < 1.01);

  const double tl = -std::sqrt(prior.s_max), th = std::sqrt(prior.s_max);  // theta's whole support
  // tau from 0: the Laplace likelihood's exponential tail leaves mass at small tau (density 1e-4 of the mode's at
  // tau = mean - 8 sd).
  const double ul = 0.0, uh = tau_mean + 12.0 * tau_sd;
  const grid_summary ref =
      grid_posterior(sim, prior, tl, th, ul, uh, 200,
                     [&](const Eigen::Vector2d& m, const Eigen::Matrix2d& s) { return log_laplace_likelihood(z, m, s, b); });
  const grid_summary gauss = grid_posterior(
      sim, prior, tl, th, ul, uh, 200,
      [&](const Eigen::Vector2d& m, const Eigen::Matrix2d& s) { return log_gaussian_likelihood(z, m, s, 2.0 * b * b); });
  INFO("Laplace reference: theta " << ref.theta_mean << " +- " << ref.theta_sd << ", tau " << ref.tau_mean << " +- " << ref.tau_sd
                                   << " (edge " << ref.edge << ")");
  INFO("Gaussian of equal variance: theta " << gauss.theta_mean << " +- " << gauss.theta_sd << ", tau " << gauss.tau_mean
                                            << " +- " << gauss.tau_sd);
  CHECK(ref.edge < 1e-6);
  auto within = [](double mean, double sd, double ref_mean, double ref_sd) {
    return std::abs(mean - ref_mean) < 0.1 * ref_sd && sd / ref_sd > 0.92 && sd / ref_sd < 1.08;
  };
  CHECK(within(theta_mean, theta_sd, ref.theta_mean, ref.theta_sd));
  CHECK(within(tau_mean, tau_sd, ref.tau_mean, ref.tau_sd));
  CHECK_FALSE((within(gauss.theta_mean, gauss.theta_sd, ref.theta_mean, ref.theta_sd) &&
               within(gauss.tau_mean, gauss.tau_sd, ref.tau_mean, ref.tau_sd)));
  WARN("sampler: theta " << theta_mean << " +- " << theta_sd << ", tau " << tau_mean << " +- " << tau_sd
                         << "; Laplace reference: theta " << ref.theta_mean << " +- " << ref.theta_sd << ", tau " << ref.tau_mean
                         << " +- " << ref.tau_sd << "; Gaussian of equal variance: theta " << gauss.theta_mean << " +- "
                         << gauss.theta_sd << ", tau " << gauss.tau_mean << " +- " << gauss.tau_sd);
}
