// Tests of gibbs_ss_window (samplers/gibbs_ss_window.hpp, docs/exact-sums.md,
// "Enumeration"). Properties:
//  1. the window's law is the full enumeration's: Poisson sums (Laplace and Gaussian releases, z below, at and far
//     above n lambda) against pi(s) computed here over s = 0..6000, and binomial sums against gibbs_ss_exact's whole
//     support; the draws follow that law (chi-square);
//  2. the posterior at Poisson n = 10 against the exact oracle: lambda | z is a mixture of Gamma(a + s, b + n) with
//     weights NegBin(s; a, b / (b + n)) p(z | s) (the prior predictive of s), computed here; gibbs_ss_corrected's
//     Poisson chain (samplers/gibbs_ss_corrected.hpp) against the same oracle;
//  3. simulation-based calibration at Poisson n = 10, epsilon 0.1 and 1 (M = 400), of both exact samplers, with the
//     naive update as the negative control at epsilon 0.1;
//  4. bad input.
#include <catch2/catch.hpp>

#include <algorithm>
#include <boost/math/distributions/chi_squared.hpp>
#include <boost/math/special_functions/gamma.hpp>
#include <boost/math/tools/roots.hpp>
#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

#include "privpost/families/binomial.hpp"
#include "privpost/families/multinomial.hpp"
#include "privpost/families/normal_known_variance.hpp"
#include "privpost/families/poisson.hpp"
#include "privpost/inference/calibration_study.hpp"
#include "privpost/inference/infer.hpp"
#include "privpost/mechanisms/gaussian.hpp"
#include "privpost/mechanisms/laplace.hpp"
#include "privpost/samplers/gibbs_ss.hpp"
#include "privpost/samplers/gibbs_ss_corrected.hpp"
#include "privpost/samplers/gibbs_ss_exact.hpp"
#include "privpost/samplers/gibbs_ss_window.hpp"
#include "support/calibration_checks.hpp"

using namespace privpost;

static_assert(sampler<gibbs_ss_window<poisson_gamma_prior, laplace_mechanism>>);
static_assert(sampler<gibbs_ss_window<beta_prior, gaussian_mechanism>>);
static_assert(integer_sum_family<poisson_family>);
static_assert(integer_sum_family<binomial_family>);
static_assert(!finite_sum_family<poisson_family>);
static_assert(!integer_sum_family<multinomial_family<3>>);         // a vector statistic
static_assert(!integer_sum_family<normal_known_variance_family>);  // no closed-form integer sum law
template <class P, class M>
concept window_sampler_for = requires {
  typename gibbs_ss_window<P, M>;
};
static_assert(window_sampler_for<poisson_gamma_prior, laplace_mechanism>);
static_assert(!window_sampler_for<dirichlet_prior<3>, laplace_mechanism>);  // not an integer_sum_family
static_assert(!window_sampler_for<poisson_gamma_prior, double>);            // not a mechanism

namespace {

Eigen::VectorXd scalar(double v) { return Eigen::VectorXd::Constant(1, v); }

// pi(s) proportional to Poisson(s; n lambda) p(z | s) over s = 0..6000, normalised.
template <class M>
std::vector<double> poisson_sum_law(double lambda, double n, const M& mechanism, double z) {
  std::vector<double> w(6001);
  double top = -std::numeric_limits<double>::infinity();
  for (int s = 0; s <= 6000; ++s) {
    w[s] = s * std::log(n * lambda) - n * lambda - std::lgamma(s + 1.0) + mechanism.log_likelihood(scalar(z), scalar(s));
    top = std::max(top, w[s]);
  }
  double total = 0.0;
  for (double& v : w) total += (v = std::exp(v - top));
  for (double& v : w) v /= total;
  return w;
}

// The exact posterior of lambda given z for Poisson sums of n records, Gamma(a, b) prior and a release density p(z | s).
struct gamma_mixture {
  double a, b, n;
  std::vector<double> w;
  template <class M>
  gamma_mixture(double shape, double rate, double records, const M& mechanism, double z) : a(shape), b(rate), n(records) {
    const double p = b / (b + n);
    w.resize(4001);
    double top = -std::numeric_limits<double>::infinity();
    for (int s = 0; s <= 4000; ++s) {
      w[s] = std::lgamma(a + s) - std::lgamma(a) - std::lgamma(s + 1.0) + a * std::log(p) + s * std::log1p(-p) +
             mechanism.log_likelihood(scalar(z), scalar(s));
      top = std::max(top, w[s]);
    }
    double total = 0.0;
    for (double& v : w) total += (v = std::exp(v - top));
    for (double& v : w) v /= total;
  }
  double mean() const {
    double m = 0.0;
    for (std::size_t s = 0; s < w.size(); ++s) m += w[s] * (a + s) / (b + n);
    return m;
  }
  double sd() const {
    double second = 0.0;
    for (std::size_t s = 0; s < w.size(); ++s) second += w[s] * (a + s) * (a + s + 1.0) / ((b + n) * (b + n));
    return std::sqrt(second - mean() * mean());
  }
  double cdf(double x) const {
    double c = 0.0;
    for (std::size_t s = 0; s < w.size(); ++s)
      if (w[s] > 1e-18) c += w[s] * boost::math::gamma_p(a + s, (b + n) * x);
    return c;
  }
  double quantile(double q) const {
    boost::math::tools::eps_tolerance<double> tol(50);
    std::uintmax_t iterations = 200;
    const auto [lo, hi] =
        boost::math::tools::bisect([&](double x) { return cdf(x) - q; }, 0.0, 10.0 * mean() + 50.0, tol, iterations);
    return 0.5 * (lo + hi);
  }
};

}  // namespace

TEST_CASE("gibbs_ss_window: the window's law is the full enumeration's", "[window]") {
  std::mt19937_64 g(1);
  const laplace_mechanism lap(1.0, 0.1);  // scale 10
  const auto gau = gaussian_mechanism::analytic(1.0, 1.0, 1e-5);
  for (const double z : {-20.0, 0.0, 43.0, 150.0, 400.0}) {
    gibbs_ss_window chain(poisson_gamma_prior(2.0, 0.4), lap, scalar(z), 10.0, g);
    gibbs_ss_window gauss(poisson_gamma_prior(2.0, 0.4), gau, scalar(z), 10.0, g);
    for (const double lambda : {0.01, 4.3, 30.0}) {
      INFO("z " << z << ", lambda " << lambda);
      for (int which = 0; which < 2; ++which) {
        const auto& window = which == 0 ? chain.sum_weights(lambda) : gauss.sum_weights(lambda);
        const double first = which == 0 ? chain.window_first() : gauss.window_first();
        const auto full = which == 0 ? poisson_sum_law(lambda, 10.0, lap, z) : poisson_sum_law(lambda, 10.0, gau, z);
        double inside = 0.0, worst = 0.0;
        for (std::size_t k = 0; k < window.size(); ++k) {
          const auto s = static_cast<std::size_t>(first) + k;
          worst = std::max(worst, std::abs(window[k] - full[s]));
          inside += full[s];
        }
        CHECK(worst <= 1e-12);
        CHECK(1.0 - inside <= 1e-13);
        CHECK(window.size() < 2000);
      }
    }
  }
  // Binomial sums (a finite support): the window against gibbs_ss_exact's whole support; 1490 is the edge of what the
  // mechanism produces (49 scales above n).
  for (const double z : {-30.0, 120.0, 300.0, 1490.0}) {
    gibbs_ss_window window(beta_prior(1.0, 1.0), lap, scalar(z), 1000.0, g);
    gibbs_ss_exact exact(beta_prior(1.0, 1.0), lap, scalar(z), 1000.0, g);
    for (const double theta : {1e-4, 0.3, 0.9999}) {
      const auto& w = window.sum_weights(theta);
      const auto& e = exact.sum_weights(theta);
      double worst = 0.0, inside = 0.0;
      for (std::size_t k = 0; k < w.size(); ++k) {
        const auto s = static_cast<std::size_t>(window.window_first()) + k;
        worst = std::max(worst, std::abs(w[k] - e[s]));
        inside += e[s];
      }
      INFO("binomial z " << z << ", theta " << theta);
      CHECK(worst <= 1e-12);
      CHECK(1.0 - inside <= 1e-13);
      CHECK(window.window_first() + static_cast<double>(w.size()) - 1.0 <= 1000.0);
    }
  }
}

TEST_CASE("gibbs_ss_window: the sum's draws follow the window's law (chi-square)", "[window]") {
  std::mt19937_64 g(2);
  gibbs_ss_window chain(poisson_gamma_prior(2.0, 0.4), laplace_mechanism(1.0, 0.1), scalar(43.0), 10.0, g);
  const std::vector<double> law = chain.sum_weights(4.3);
  const double first = chain.window_first();
  const int draws = 200000;
  std::vector<double> counts(law.size(), 0.0);
  for (int i = 0; i < draws; ++i) {
    const double s = chain.draw_sum(4.3, g);
    REQUIRE(s >= first);
    counts[static_cast<std::size_t>(s - first)] += 1.0;
  }
  // Cells of expected count >= 20, the rest pooled into one.
  double chi2 = 0.0, pooled_expected = 0.0, pooled_observed = 0.0;
  int cells = 0;
  for (std::size_t k = 0; k < law.size(); ++k) {
    const double expected = law[k] * draws;
    if (expected >= 20.0) {
      chi2 += (counts[k] - expected) * (counts[k] - expected) / expected;
      ++cells;
    } else {
      pooled_expected += expected;
      pooled_observed += counts[k];
    }
  }
  if (pooled_expected > 0.0) {
    chi2 += (pooled_observed - pooled_expected) * (pooled_observed - pooled_expected) / pooled_expected;
    ++cells;
  }
  const double p = boost::math::cdf(boost::math::complement(boost::math::chi_squared(cells - 1), chi2));
  INFO("chi-square " << chi2 << " on " << cells - 1 << " degrees of freedom, p " << p);
  CHECK(p > 1e-3);
  CHECK(cells > 20);
}

// Tolerances: |mean - oracle| <= 4 sd / sqrt(bulk ESS); the 5%, 50% and 95% quantiles within 0.1 oracle sd (a
// quantile's Monte Carlo sd is at most about 2.1 sd / sqrt(ESS), 0.02 sd at this ESS); P(lambda <= oracle median)
// within 0.015. Both exact samplers, 4 chains x 20000 kept draws each (their bulk ESS per draw is alike: at epsilon 1,
// z = -10, 0.073 for the window sampler and 0.065 for gibbs_ss_corrected).
TEST_CASE("gibbs_ss_window and gibbs_ss_corrected match the exact posterior at Poisson n = 10", "[window][oracle-match]") {
  const double a = 2.0, b = 0.4, n = 10.0;
  auto check = [&](const auto& mechanism, double z, std::uint64_t seed) {
    const gamma_mixture oracle(a, b, n, mechanism, z);
    inference_options o;
    o.chains = 4;
    o.burnin = 1000;
    o.draws = 20000;
    o.seed = seed;
    auto window = [&](std::mt19937_64& g) { return gibbs_ss_window(poisson_gamma_prior(a, b), mechanism, scalar(z), n, g); };
    auto corrected = [&](std::mt19937_64& g) {
      return gibbs_ss_corrected(poisson_gamma_prior(a, b), mechanism, scalar(z), n, g);
    };
    for (const bool is_window : {true, false}) {
      const auto result = is_window ? infer(window, o) : infer(corrected, o);
      const Eigen::VectorXd all = result.draws.draw_matrix().col(0);
      const double ess = result.draws.ess_bulk(0), median = oracle.quantile(0.5);
      const double below = static_cast<double>((all.array() <= median).count()) / static_cast<double>(all.size());
      INFO((is_window ? "window" : "corrected")
           << ", z " << z << ": mean " << result.draws.mean(0) << " vs " << oracle.mean() << " (sd " << oracle.sd() << ", ESS "
           << ess << "); q05 " << result.draws.quantile(0.05, 0) << " vs " << oracle.quantile(0.05) << "; q95 "
           << result.draws.quantile(0.95, 0) << " vs " << oracle.quantile(0.95));
      CHECK(std::abs(result.draws.mean(0) - oracle.mean()) <= 4.0 * oracle.sd() / std::sqrt(ess));
      for (const double p : {0.05, 0.5, 0.95})
        CHECK(std::abs(result.draws.quantile(p, 0) - oracle.quantile(p)) <= 0.1 * oracle.sd());
      CHECK(std::abs(below - 0.5) <= 0.015);
      CHECK(result.events == numerical_events{});
    }
  };
  std::uint64_t seed = 300;
  for (const double eps : {0.1, 1.0})
    for (const double z : {-10.0, 20.0, 50.0, 120.0}) check(laplace_mechanism(1.0, eps), z, ++seed);
  check(gaussian_mechanism::analytic(1.0, 1.0, 1e-5), 50.0, ++seed);
}

namespace {
struct poisson_trial {
  Eigen::VectorXd truth;
  Eigen::VectorXd z;
};
}  // namespace

// Spec C.7-3's design for Poisson: n = 10, lambda ~ Gamma(2, 0.4), the sum of n Poisson(lambda) records released with
// Laplace noise of scale 1 / epsilon, M = 400 trials, 300 burn-in + 2000 kept sweeps; the library's rule (KS p > 0.001,
// 50% and 90% coverage within 3.5 binomial sds: [0.847, 0.953] at 90% for M = 400). The naive conjugate update on
// max(z, 0) is the negative control at epsilon 0.1, where the noise (sd 14) is twice the sum's (about 7). The issue's
// band for the exact samplers, 90% coverage within [0.8715, 0.9285], is asserted too, for the window sampler and for
// gibbs_ss_corrected (1000 burn-in + 2000 kept sweeps thinned by 2: its latent w slows it). Gibbs-SS (the CLT model of the
// sum) runs on the same trials and is printed (-s), not asserted.
TEST_CASE("gibbs_ss_window and gibbs_ss_corrected are calibrated at Poisson n = 10", "[window][calibration][window-sbc]") {
  const double a = 2.0, b = 0.4, n = 10.0;
  for (const double eps : {0.1, 1.0}) {
    const laplace_mechanism mechanism(1.0, eps);
    auto simulate = [=](std::mt19937_64& g) {
      const double lambda = poisson_gamma_prior(a, b).draw(g);
      double s = 0.0;
      for (int i = 0; i < 10; ++i) s += poisson_family::draw_record(lambda, g);
      return poisson_trial{scalar(lambda), mechanism.release(scalar(s), g)};
    };
    std::vector<named_method<poisson_trial>> methods{
        {"window",
         [=](const poisson_trial& t, std::mt19937_64& g) {
           return single_chain([&](auto& cg) { return gibbs_ss_window(poisson_gamma_prior(a, b), mechanism, t.z, n, cg); }, 300,
                               2000, g);
         }},
        {"corrected",
         [=](const poisson_trial& t, std::mt19937_64& g) {
           return single_chain([&](auto& cg) { return gibbs_ss_corrected(poisson_gamma_prior(a, b), mechanism, t.z, n, cg); },
                               1000, 2000, g, 2);
         }},
        {"gibbs",
         [=](const poisson_trial& t, std::mt19937_64& g) {
           return single_chain([&](auto& cg) { return gibbs_ss(poisson_gamma_prior(a, b), mechanism, t.z, n, cg); }, 300, 2000,
                               g);
         }},
        {"naive", [=](const poisson_trial& t, std::mt19937_64& g) {
           const auto posterior = poisson_gamma_prior(a, b).update(poisson_family::vector_type(std::max(t.z(0), 0.0)), n);
           Eigen::MatrixXd d(2000, 1);
           for (int i = 0; i < 2000; ++i) d(i, 0) = posterior.draw(g);
           return d;
         }}};
    const simulation_study study(simulate, methods);
    const auto rows = run_calibration(study, {400, eps < 0.5 ? 7301u : 7302u, 0}).report();
    const auto& window = test::row(rows, "window");
    const auto& naive = test::row(rows, "naive");
    const auto& gibbs = test::row(rows, "gibbs");
    const auto& corrected = test::row(rows, "corrected");
    INFO("epsilon " << eps << ": window KS p " << window.ks_pvalue << ", coverage " << window.coverage50 << " / "
                    << window.coverage90 << "; corrected KS p " << corrected.ks_pvalue << ", coverage " << corrected.coverage50
                    << " / " << corrected.coverage90 << "; Gibbs-SS KS p " << gibbs.ks_pvalue << ", coverage " << gibbs.coverage50
                    << " / " << gibbs.coverage90 << "; naive KS p " << naive.ks_pvalue << ", coverage " << naive.coverage50
                    << " / " << naive.coverage90);
    test::check_calibrated(window);
    CHECK(std::abs(window.coverage90 - 0.9) <= 0.0285);
    test::check_calibrated(corrected);
    CHECK(std::abs(corrected.coverage90 - 0.9) <= 0.0285);
    if (eps < 0.5) CHECK(test::miscalibrated(naive));
  }
}

TEST_CASE("gibbs_ss_window: bad input", "[window][errors]") {
  std::mt19937_64 g(1);
  const laplace_mechanism mech(1.0, 1.0);
  const poisson_gamma_prior prior(2.0, 0.4);
  CHECK_THROWS_WITH(gibbs_ss_window(prior, mech, Eigen::VectorXd::Zero(2), 10.0, g), Catch::Contains("release z"));
  CHECK_THROWS_AS(gibbs_ss_window(prior, mech, scalar(std::nan("")), 10.0, g), std::invalid_argument);
  CHECK_THROWS_WITH(gibbs_ss_window(prior, mech, scalar(3.0), 10.5, g), Catch::Contains("whole number"));
  CHECK_THROWS_AS(gibbs_ss_window(prior, mech, scalar(3.0), 0.0, g), std::invalid_argument);
  CHECK_THROWS_WITH(gibbs_ss_window(prior, mech, scalar(3.0), 2e12, g), Catch::Contains("[1, 1e12]"));
  // A window wider than 1e6 sums: a Poisson sum with mean and variance 1e12 (about 2e7 sums within e^-50 of the mode).
  gibbs_ss_window wide(prior, laplace_mechanism(1.0, 1e-6), scalar(1e12), 1e12, g);
  CHECK_THROWS_WITH(wide.sum_weights(1.0), Catch::Contains("window size") && Catch::Contains("1e6"));
  // A release far from every reachable sum is still a proper posterior: finite draws, s a valid count.
  gibbs_ss_window far(prior, mech, scalar(1e7), 10.0, g);
  for (int i = 0; i < 100; ++i) {
    far.step(g);
    REQUIRE(std::isfinite(far.parameter()));
    REQUIRE(far.statistic() >= 0.0);
  }
  // Below 0 the mechanism's edge (49 scales under it) still runs; -1e6 is refused (mechanisms/reachable.hpp).
  CHECK_THROWS_WITH(gibbs_ss_window(prior, mech, scalar(-1e6), 10.0, g), Catch::Contains("noise scales"));
  gibbs_ss_window below(prior, mech, scalar(-49.0), 10.0, g);
  for (int i = 0; i < 100; ++i) below.step(g);
  CHECK(below.statistic() >= 0.0);
  CHECK(std::isfinite(below.parameter()));
}
