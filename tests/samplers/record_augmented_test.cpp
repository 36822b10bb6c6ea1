// Tests of the record-level sampler record_gibbs (docs/record-level.md, docs/exact-sums.md). Properties:
//  1. kernel checks on tiny state spaces: the empirical law of S under fixed theta against its exact law (chi-square),
//     one record update's kernel, built from the sampler's own acceptance function, leaves the target invariant to
//     1e-12, and the Laplace acceptance floor e^-epsilon;
//  2. the posterior at binomial n = 10 against the exact oracle (tests/support/beta_mixture_oracle.hpp);
//  3. simulation-based calibration at binomial n = 10 (Laplace epsilon 0.1 and 1, analytic Gaussian), where Gibbs-SS
//     falls short, and at multinomial K = 3, n = 10;
//  4. truncated Poisson records under the drop and clamp policies against their exact posterior by quadrature;
//  5. bad input, and the sampler's constraints at compile time.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <boost/math/distributions/chi_squared.hpp>
#include <boost/math/special_functions/gamma.hpp>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "privpost/families/binomial.hpp"
#include "privpost/families/exponential.hpp"
#include "privpost/families/multinomial.hpp"
#include "privpost/families/poisson.hpp"
#include "privpost/inference/infer.hpp"
#include "privpost/mechanisms/gaussian.hpp"
#include "privpost/mechanisms/laplace.hpp"
#include "privpost/samplers/record_augmented.hpp"
#include "privpost/testing/family_study.hpp"
#include "privpost/testing/truncated_study.hpp"
#include "support/beta_mixture_oracle.hpp"
#include "support/calibration_checks.hpp"
#include "support/record_kernel.hpp"

using namespace privpost;

// The constraint: a conjugate prior whose family draws records, a mechanism, a contribution rule of that family.
template <class P, class M, class C = statistic_contribution<typename P::family>>
concept record_sampler_for = requires {
  typename record_gibbs<P, M, C>;
};
static_assert(sampler<record_gibbs<beta_prior, laplace_mechanism>>);
static_assert(record_sampler_for<beta_prior, laplace_mechanism>);
static_assert(record_sampler_for<dirichlet_prior<3>, gaussian_mechanism>);
static_assert(record_sampler_for<poisson_gamma_prior, laplace_mechanism, dropped_contribution<poisson_family>>);
static_assert(!record_sampler_for<beta_prior, double>);
static_assert(!record_sampler_for<beta_prior, laplace_mechanism, int>);  // not a contribution rule
static_assert(!record_contribution<dropped_contribution<poisson_family>, multinomial_family<3>>);

namespace {

// pi(S) proportional to Binomial(S; 3, 0.3) e^(-|1.7 - S|): the law of the sum of three records given theta = 0.3 and
// a Laplace release z = 1.7 of scale 1.
std::array<double, 4> three_record_law() {
  const std::array<double, 4> binom = {0.343, 0.441, 0.189, 0.027};
  std::array<double, 4> p{};
  double total = 0.0;
  for (int s = 0; s < 4; ++s) total += (p[s] = binom[s] * std::exp(-std::abs(1.7 - s)));
  for (double& v : p) v /= total;
  return p;
}

}  // namespace

TEST_CASE("record_gibbs: the sum's law under fixed theta is the exact one (chi-square)", "[records]") {
  std::mt19937_64 g(101);
  Eigen::VectorXd z(1);
  z << 1.7;
  record_gibbs chain(beta_prior(1.0, 1.0), laplace_mechanism(1.0, 1.0), z, 3.0, g);
  chain.set_parameter(0.3);
  const auto expected = three_record_law();
  // 10^6 record sweeps at theta = 0.3, every 5th kept (2 x 10^5 nearly independent states: a record is redrawn from
  // f each update and accepted with probability >= e^-1, so 5 sweeps decorrelate S).
  std::array<double, 4> counts{};
  int kept = 0;
  for (int sweep = 0; sweep < 1000000; ++sweep) {
    for (std::size_t i = 0; i < 3; ++i) chain.update_record(i, g);
    if (sweep % 5 == 0) {
      counts[static_cast<std::size_t>(chain.release_sum()(0))] += 1.0;
      ++kept;
    }
  }
  double chi2 = 0.0;
  for (int s = 0; s < 4; ++s) chi2 += std::pow(counts[s] - kept * expected[s], 2) / (kept * expected[s]);
  const double p = boost::math::cdf(boost::math::complement(boost::math::chi_squared(3.0), chi2));
  INFO("chi-square " << chi2 << " (p " << p << ") over " << kept << " states");
  CHECK(p > 0.001);
  CHECK(chain.statistic()(0) == chain.release_sum()(0));  // no clamping: T = S
}

TEST_CASE("record_gibbs: one record update leaves the target invariant to 1e-12", "[records]") {
  // Two binary records, theta = 0.3, Laplace scale 1, z = 1.7. States x = (x_0, x_1); target
  // pi(x) ~ f(x_0) f(x_1) e^(-|z - x_0 - x_1|). The kernel of updating record r: propose x_r' ~ f, accept with
  // min(1, exp(log_acceptance)) as the sampler computes it.
  for (const double zv : {1.7, -3.0, 0.5}) {
    std::mt19937_64 g(103);
    Eigen::VectorXd z(1);
    z << zv;
    record_gibbs chain(beta_prior(1.0, 1.0), laplace_mechanism(1.0, 1.0), z, 2.0, g);
    const double theta = 0.3;
    chain.set_parameter(theta);
    const auto pi = test::two_record_target(theta, [&](double sum) { return std::exp(-std::abs(zv - sum)); });
    for (std::size_t r = 0; r < 2; ++r) {
      const double worst = test::two_record_invariance_error(chain, theta, pi, r);
      INFO("z " << zv << ", record " << r << ": max |pi K - pi| " << worst);
      CHECK(worst <= 1e-12);
    }
  }
}

TEST_CASE("record_gibbs: the Laplace acceptance floor e^-epsilon", "[records]") {
  // Binomial n = 10, epsilon = 1 (sensitivity 1): every computed alpha is >= e^-1, and the floor is reached (a release
  // far from the prior's sums makes every moving proposal change |z - S| by exactly 1).
  for (const double zv : {3.0, -20.0}) {
    std::mt19937_64 g(107);
    Eigen::VectorXd z(1);
    z << zv;
    record_gibbs chain(beta_prior(1.0, 1.0), laplace_mechanism(1.0, 1.0), z, 10.0, g);
    for (int sweep = 0; sweep < 10000; ++sweep) chain.step(g);  // 10^5 record updates
    INFO("z " << zv << ": smallest log alpha " << chain.smallest_log_acceptance() << ", acceptance "
              << chain.record_acceptance());
    CHECK(chain.smallest_log_acceptance() >= -1.0 - 1e-12);
    CHECK(chain.smallest_log_acceptance() <= -1.0 + 1e-9);
    CHECK(chain.events() == numerical_events{});
  }
  // Epsilon 0.1: the floor is e^-0.1.
  std::mt19937_64 g(109);
  Eigen::VectorXd z(1);
  z << 4.0;
  record_gibbs chain(beta_prior(1.0, 1.0), laplace_mechanism(1.0, 0.1), z, 10.0, g);
  for (int sweep = 0; sweep < 2000; ++sweep) chain.step(g);
  CHECK(chain.smallest_log_acceptance() >= -0.1 - 1e-12);
}

// Spec C.7-2's tolerances: |mean - oracle| <= 4 sd / sqrt(bulk ESS), every quantile and P(theta <= 0.5) within 0.01.
// 4 chains x (1000 burn-in + 20000 kept), the spec's size: the records mix theta faster than gibbs_ss_exact's sum.
TEST_CASE("record_gibbs matches the exact posterior at binomial n = 10", "[records]") {
  test::check_oracle_settings(
      20000, [](double eps, double zv) { return 211 + static_cast<std::uint64_t>(eps * 10 + zv + 5); },
      [](double eps, const Eigen::VectorXd& z, std::mt19937_64& g) {
        return record_gibbs(beta_prior(1.0, 1.0), laplace_mechanism(1.0, eps), z, 10.0, g);
      });
}

// Spec C.7-3: binomial n = 10, Beta(1, 1), M = 1000 trials, 500 burn-in + 2000 kept sweeps, Laplace at epsilon 0.1 and 1
// and the analytic Gaussian (epsilon 1, delta 1e-5); the library's rule (KS p > 0.001, 50% and 90% coverage within 3.5
// binomial sds: [0.867, 0.933] at 90% for M = 1000). Gibbs-SS's rows from the same trials are printed (-s), not
// asserted; the naive update is the negative control at epsilon 0.1.
// Multinomial K = 3, n = 10, Dirichlet(1, 1, 1), Laplace epsilon 1 (sensitivity 2), M = 500, all three coordinates.
TEST_CASE("record_gibbs is calibrated at n = 10 (binomial: Laplace and Gaussian; multinomial K = 3)",
          "[calibration][records][records-sbc]") {
  study_settings s;
  s.n = 10;
  s.burnin = 500;
  s.draws = 2000;
  s.thin = 1;
  s.methods = {"records", "gibbs", "naive"};
  auto check = [&](const auto& study, int trials, std::uint64_t seed, const char* what) {
    const auto rows = run_calibration(study, {trials, seed, 0}).report();
    for (const auto& r : rows) {
      INFO(what << ": " << r.method << "[" << r.parameter << "] KS p " << r.ks_pvalue << ", coverage " << r.coverage50 << " / "
                << r.coverage90);
      if (r.method == "records") {
        test::check_calibrated(r);
      } else if (r.method == "naive" && std::string(what) == "binomial, Laplace 0.1") {
        // The negative control: at n = 10 and epsilon 0.1 the noise (sd 14) swamps a sum of at most 10, and the naive
        // update's intervals are far too short (dissertation Sec. 4.4: naive is miscalibrated at small n and strong noise).
        CHECK(r.coverage90 < 0.9 - test::coverage_tolerance(0.9, trials));
      } else {
        SUCCEED("reported, not asserted");
      }
    }
  };
  check(bounded_family_study(beta_prior(1.0, 1.0), laplace_mechanism(1.0, 0.1), s), 1000, 6101, "binomial, Laplace 0.1");
  check(bounded_family_study(beta_prior(1.0, 1.0), laplace_mechanism(1.0, 1.0), s), 1000, 6102, "binomial, Laplace 1");
  check(bounded_family_study(beta_prior(1.0, 1.0), gaussian_mechanism::analytic(1.0, 1.0, 1e-5), s), 1000, 6103,
        "binomial, Gaussian 1");
  check(bounded_family_study(dirichlet_prior<3>(Eigen::Vector3d::Ones()), laplace_mechanism(2.0, 1.0), s), 500, 6104,
        "multinomial K = 3, Laplace 1");
}

namespace {

// The exact posterior mean and 5% / 95% quantiles of lambda for n Poisson records with a Gamma(shape, rate) prior and a
// Laplace release (scale b) of the sum of the records' contributions: the n-fold convolution of one record's
// contribution pmf on a grid of lambda (quadrature over 4000 points of the prior's central 1 - 1e-9 mass).
struct poisson_oracle {
  double mean = 0.0, q05 = 0.0, q95 = 0.0;
  template <class Contribution>
  poisson_oracle(double shape, double rate, int n, double z, double b, Contribution contribution, int max_record) {
    const double lo = boost::math::gamma_p_inv(shape, 1e-9) / rate, hi = boost::math::gamma_q_inv(shape, 1e-9) / rate;
    constexpr int points = 4000;
    const double step = (hi - lo) / points;
    std::vector<double> grid(points), weight(points);
    for (int k = 0; k < points; ++k) {
      const double lambda = lo + (k + 0.5) * step;
      // One record's contribution pmf (contributions are integers 0..max_record), records beyond max_record negligible.
      std::vector<double> one(static_cast<std::size_t>(max_record) + 1, 0.0);
      double p = std::exp(-lambda);
      for (int x = 0; x <= 60; ++x) {
        const int c = static_cast<int>(contribution(x));
        one[static_cast<std::size_t>(c)] += p;
        p *= lambda / (x + 1);
      }
      std::vector<double> sum = {1.0};
      for (int r = 0; r < n; ++r) {
        std::vector<double> next(sum.size() + one.size() - 1, 0.0);
        for (std::size_t i = 0; i < sum.size(); ++i)
          for (std::size_t j = 0; j < one.size(); ++j) next[i + j] += sum[i] * one[j];
        sum = std::move(next);
      }
      double like = 0.0;
      for (std::size_t s = 0; s < sum.size(); ++s) like += sum[s] * std::exp(-std::abs(z - static_cast<double>(s)) / b);
      grid[static_cast<std::size_t>(k)] = lambda;
      weight[static_cast<std::size_t>(k)] = like * std::exp((shape - 1.0) * std::log(lambda) - rate * lambda);
    }
    double total = 0.0;
    for (double w : weight) total += w;
    double cumulative = 0.0;
    for (int k = 0; k < points; ++k) {
      const double w = weight[static_cast<std::size_t>(k)] / total;
      mean += w * grid[static_cast<std::size_t>(k)];
      if (cumulative < 0.05 && cumulative + w >= 0.05) q05 = grid[static_cast<std::size_t>(k)];
      if (cumulative < 0.95 && cumulative + w >= 0.95) q95 = grid[static_cast<std::size_t>(k)];
      cumulative += w;
    }
  }
};

}  // namespace

// Spec C.7-4 (oracle part): n = 10 Poisson records, lambda ~ Gamma(10, 2), contributions on [0, 8] (dropped or clamped
// outside), Laplace epsilon 1 of sensitivity 8, three releases. 4 chains x (1000 + 20000): mean within
// 4 sd / sqrt(bulk ESS), q05 and q95 within 0.05 (lambda's posterior sd is about 0.7, the grid step 0.004).
TEST_CASE("record_gibbs matches the exact posterior of truncated Poisson records (drop and clamp)", "[records]") {
  const double shape = 10.0, rate = 2.0, b = 8.0;
  for (const double zv : {20.0, 50.0, 90.0}) {
    Eigen::VectorXd z(1);
    z << zv;
    inference_options o;
    o.chains = 4;
    o.burnin = 1000;
    o.draws = 20000;
    o.seed = 307 + static_cast<std::uint64_t>(zv);
    auto check = [&](const char* policy, auto contribution, auto rule) {
      const poisson_oracle oracle(shape, rate, 10, zv, b, rule, 8);
      const auto result = infer(
          [&](std::mt19937_64& g) {
            return record_gibbs(poisson_gamma_prior(shape, rate), laplace_mechanism(8.0, 1.0), z, 10.0, g, contribution);
          },
          o);
      INFO(policy << ", z " << zv << ": mean " << result.draws.mean(0) << " vs " << oracle.mean << ", q05 "
                  << result.draws.quantile(0.05, 0) << " vs " << oracle.q05 << ", q95 " << result.draws.quantile(0.95, 0)
                  << " vs " << oracle.q95);
      CHECK(std::abs(result.draws.mean(0) - oracle.mean) <= 4.0 * result.draws.sd(0) / std::sqrt(result.draws.ess_bulk(0)));
      CHECK(std::abs(result.draws.quantile(0.05, 0) - oracle.q05) <= 0.05);
      CHECK(std::abs(result.draws.quantile(0.95, 0) - oracle.q95) <= 0.05);
    };
    check("drop", dropped_contribution<poisson_family>(0.0, 8.0), [](int x) { return x <= 8 ? x : 0; });
    check("clamp", clamped_contribution<poisson_family>(0.0, 8.0), [](int x) { return std::min(x, 8); });
  }
}

// Spec C.7-4 (calibration part): n = 10 Poisson records, lambda ~ Gamma(10, 2), bounds by privpost-calibrate's rule
// (the central 95% of one record's prior predictive, --truncation 0.05), records outside dropped; Laplace at epsilon 0.1
// and 1. M = 500 trials, 500 burn-in + 2000 kept sweeps. The library's rule (KS p > 0.001; coverage within 3.5 binomial
// sds: [0.854, 0.946] at 90% for M = 500, within the spec's [0.87, 0.93] band's spirit; both printed with -s).
// gibbs_ss_truncated's rows (its CLT for the truncated sum at n = 10) are printed, not asserted.
TEST_CASE("record_gibbs is calibrated on truncated Poisson releases with dropped records at n = 10",
          "[calibration][records][records-sbc]") {
  study_settings s;
  s.n = 10;
  s.burnin = 500;
  s.draws = 2000;
  s.thin = 1;
  s.methods = {"records", "gibbs"};
  for (const double eps : {0.1, 1.0}) {
    const truncated_family_study<poisson_gamma_prior, laplace_mechanism> study(
        poisson_gamma_prior(10.0, 2.0), 0.05, [&](double l1, double) { return laplace_mechanism(l1, eps); }, s);
    const auto rows = run_calibration(study, {500, eps < 0.5 ? 6201u : 6202u, 0}).report();
    const auto& records = test::row(rows, "records");
    const auto& gibbs = test::row(rows, "gibbs");
    INFO("epsilon " << eps << ", bounds [" << study.lower() << ", " << study.upper() << "]: records KS p " << records.ks_pvalue
                    << ", coverage " << records.coverage50 << " / " << records.coverage90 << "; Gibbs-SS (truncated) KS p "
                    << gibbs.ks_pvalue << ", coverage " << gibbs.coverage50 << " / " << gibbs.coverage90);
    test::check_calibrated(records);
    CHECK(std::abs(records.coverage90 - 0.9) <= 0.03);  // the spec's [0.87, 0.93]
  }
}

TEST_CASE("record_gibbs: the running sums equal the records' sums (whole and real-valued statistics)", "[records]") {
  // Exponential records under a truncated release (drop outside [0, 4]): real-valued statistics, re-summed each sweep;
  // Poisson counts clamped into [1, 11]: whole numbers, kept incrementally and exact. After 200 sweeps T and S equal
  // the sums recomputed here from the records.
  std::mt19937_64 g(113);
  Eigen::VectorXd z(1);
  z << 45.0;
  record_gibbs exponential(exponential_gamma_prior(20.0, 20.0), laplace_mechanism(4.0, 0.5), z, 50.0, g,
                           dropped_contribution<exponential_rate_family>(0.0, 4.0));
  z << 240.0;
  record_gibbs poisson(poisson_gamma_prior(10.0, 2.0), laplace_mechanism(10.0, 0.5), z, 50.0, g,
                       clamped_contribution<poisson_family>(1.0, 11.0));
  for (int i = 0; i < 200; ++i) {
    exponential.step(g);
    poisson.step(g);
  }
  double t = 0.0, s = 0.0;
  for (double x : exponential.records()) {
    t += x;
    s += (x >= 0.0 && x <= 4.0) ? x : 0.0;
  }
  CHECK(exponential.statistic()(0) == Approx(t).epsilon(1e-12));
  CHECK(exponential.release_sum()(0) == Approx(s).epsilon(1e-12));
  t = s = 0.0;
  for (double x : poisson.records()) {
    t += x;
    s += std::clamp(x, 1.0, 11.0);
  }
  CHECK(poisson.statistic()(0) == t);  // exact
  CHECK(poisson.release_sum()(0) == s);
  CHECK(poisson.record_acceptance() > 0.0);
  CHECK(poisson.record_acceptance() < 1.0);
}

// record_init::consistent (spec C.3): the greedy start puts S at the release's nearest reachable sum, theta is drawn
// given those records, and the target is unchanged (the oracle check of the test above, with that start).
TEST_CASE("record_gibbs: record_init::consistent starts at the release and keeps the target", "[records]") {
  Eigen::VectorXd z(1);
  z << 700.3;
  int prior_far = 0;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    std::mt19937_64 g(seed), h(seed);
    record_gibbs chain(beta_prior(1.0, 1.0), laplace_mechanism(1.0, 0.1), z, 1000.0, g, record_init::consistent);
    INFO("seed " << seed);
    CHECK(std::abs(chain.release_sum()(0) - 700.0) <= 1.0);  // S is the sum of 0/1 records: 700 is the nearest to z
    CHECK(chain.statistic()(0) == chain.release_sum()(0));
    CHECK(std::abs(chain.parameter() - 0.7) < 0.06);  // Beta(701, 301) has sd 0.0145
    CHECK(chain.record_acceptance() == 1.0);          // the start is not counted
    record_gibbs from_prior(beta_prior(1.0, 1.0), laplace_mechanism(1.0, 0.1), z, 1000.0, h);
    if (std::abs(from_prior.release_sum()(0) - 700.0) > 100.0) ++prior_far;
  }
  CHECK(prior_far >= 10);  // the default start (theta from the prior) is mostly far away: the comparison is not vacuous

  // Multinomial K = 3 and truncated Poisson (drop outside [0, 8]): S within a few counts of z in every coordinate.
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    std::mt19937_64 g(seed);
    Eigen::VectorXd zk(2);  // the first K - 1 counts (the family's statistic)
    zk << 120.2, 300.7;
    record_gibbs multi(dirichlet_prior<3>(Eigen::Vector3d::Ones()), laplace_mechanism(2.0, 1.0), zk, 1000.0, g,
                       record_init::consistent);
    CHECK((multi.release_sum() - zk).cwiseAbs().maxCoeff() <= 3.0);
    Eigen::VectorXd zp(1);
    zp << 2500.0;
    record_gibbs poisson(poisson_gamma_prior(1.0, 0.1), laplace_mechanism(8.0, 1.0), zp, 500.0, g, record_init::consistent,
                         dropped_contribution<poisson_family>(0, 8));
    CHECK(std::abs(poisson.release_sum()(0) - 2500.0) <= 8.0);
  }

  test::check_oracle_settings(
      20000, [](double eps, double zv) { return 911 + static_cast<std::uint64_t>(eps * 10 + zv + 5); },
      [](double eps, const Eigen::VectorXd& zz, std::mt19937_64& gg) {
        return record_gibbs(beta_prior(1.0, 1.0), laplace_mechanism(1.0, eps), zz, 10.0, gg, record_init::consistent);
      });
}

TEST_CASE("record_gibbs: bad input", "[records][errors]") {
  std::mt19937_64 g(1);
  const laplace_mechanism mech(1.0, 1.0);
  Eigen::VectorXd one(1);
  one << 3.0;
  Eigen::VectorXd two(2);
  two << 1.0, 2.0;
  CHECK_THROWS_WITH(record_gibbs(beta_prior(1.0, 1.0), mech, two, 10.0, g), Catch::Contains("release z"));
  Eigen::VectorXd nan(1);
  nan << std::nan("");
  CHECK_THROWS_AS(record_gibbs(beta_prior(1.0, 1.0), mech, nan, 10.0, g), std::invalid_argument);
  CHECK_THROWS_WITH(record_gibbs(beta_prior(1.0, 1.0), mech, one, 10.5, g), Catch::Contains("whole number"));
  CHECK_THROWS_AS(record_gibbs(beta_prior(1.0, 1.0), mech, one, 0.0, g), std::invalid_argument);
  CHECK_THROWS_WITH(record_gibbs(beta_prior(1.0, 1.0), mech, one, 2e7, g), Catch::Contains("[1, 1e7]"));
  CHECK_THROWS_AS(clamped_contribution<poisson_family>(5.0, 1.0), std::invalid_argument);
  CHECK_THROWS_AS(dropped_contribution<poisson_family>(0.0, std::nan("")), std::invalid_argument);
  record_gibbs chain(beta_prior(1.0, 1.0), mech, one, 10.0, g);
  CHECK_THROWS_AS(chain.set_records(std::vector<double>(9, 0.0)), std::invalid_argument);
  CHECK_THROWS_WITH(record_gibbs(beta_prior(1.0, 1.0), mech, one, 10.0, g, static_cast<record_init>(7)),
                    Catch::Contains("record_init::prior or record_init::consistent"));
  // A release at the edge of what the mechanism produces (49 noise scales beyond the reachable sums) is still a proper
  // posterior: the chain runs and S stays a valid count. Farther out is refused (mechanisms/reachable.hpp).
  CHECK_THROWS_WITH(record_gibbs(beta_prior(1.0, 1.0), mech, Eigen::VectorXd::Constant(1, 1e6), 10.0, g),
                    Catch::Contains("noise scales"));
  Eigen::VectorXd far(1);
  far << 10.0 + 49.0;
  record_gibbs distant(beta_prior(1.0, 1.0), mech, far, 10.0, g);
  for (int i = 0; i < 200; ++i) {
    distant.step(g);
    REQUIRE(distant.release_sum()(0) >= 0.0);
    REQUIRE(distant.release_sum()(0) <= 10.0);
  }
  CHECK(distant.parameter() > 0.5);
}
