// record_gibbs_releases (samplers/record_releases.hpp, docs/record-level.md): several releases
// of the same records. With one release it is record_gibbs draw for draw; one record update leaves the two-release
// target invariant to 1e-12; the acceptance floor is exp(-sum eps); it matches the posterior computed by enumeration
// (binomial n = 10, a Laplace and a Gaussian release); and it is calibrated at n = 10 (binomial with the budget split
// over two releases; Poisson with a clamped and a dropped release of the same column), with the naive update on the
// releases as the negative control.
#include <catch2/catch.hpp>

#include <array>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include "privpost/families/binomial.hpp"
#include "privpost/families/multinomial.hpp"
#include "privpost/families/poisson.hpp"
#include "privpost/inference/calibration_study.hpp"
#include "privpost/inference/infer.hpp"
#include "privpost/mechanisms/gaussian.hpp"
#include "privpost/mechanisms/laplace.hpp"
#include "privpost/samplers/conjugate.hpp"
#include "privpost/samplers/record_augmented.hpp"
#include "privpost/samplers/record_releases.hpp"
#include "support/beta_mixture_oracle.hpp"
#include "support/calibration_checks.hpp"
#include "support/record_kernel.hpp"

using namespace privpost;

namespace {
Eigen::VectorXd vector1(double v) { return Eigen::VectorXd::Constant(1, v); }
}  // namespace

// The constraint: a conjugate prior whose family draws records, and one or more record_release of that family (each
// rule a contribution rule of the family; family_statistic, the default, meaning the family's statistic).
template <class P, class... R>
concept releases_sampler_for = requires {
  typename record_gibbs_releases<P, R...>;
};
static_assert(sampler<record_gibbs_releases<beta_prior, record_release<laplace_mechanism>, record_release<gaussian_mechanism>>>);
static_assert(releases_sampler_for<poisson_gamma_prior, record_release<laplace_mechanism, clamped_contribution<poisson_family>>,
                                   record_release<laplace_mechanism, dropped_contribution<poisson_family>>>);
static_assert(record_release_for<record_release<laplace_mechanism>, binomial_family>);
static_assert(record_release_for<record_release<laplace_mechanism, statistic_contribution<binomial_family>>, binomial_family>);
static_assert(!releases_sampler_for<beta_prior>);                                          // no release
static_assert(!releases_sampler_for<double, record_release<laplace_mechanism>>);           // not a conjugate prior
static_assert(!releases_sampler_for<beta_prior, int>);                                     // not a release
static_assert(!releases_sampler_for<beta_prior, record_release<laplace_mechanism>, int>);  // one not a release
// A rule of another family (a 3-vector statistic for the binomial's scalar one).
static_assert(
    !releases_sampler_for<beta_prior, record_release<laplace_mechanism, statistic_contribution<multinomial_family<3>>>>);
static_assert(
    !record_release_for<record_release<laplace_mechanism, dropped_contribution<poisson_family>>, multinomial_family<3>>);
static_assert(!releases_sampler_for<beta_prior, record_release<laplace_mechanism>,
                                    record_release<laplace_mechanism, statistic_contribution<multinomial_family<3>>>>);

TEST_CASE("record_gibbs_releases with one release is record_gibbs, draw for draw", "[records][releases]") {
  {
    std::mt19937_64 g1(7), g2(7);
    record_gibbs single(beta_prior(1.0, 1.0), laplace_mechanism(1.0, 0.5), vector1(3.0), 10.0, g1);
    record_gibbs_releases multi(beta_prior(1.0, 1.0), 10.0, g2, record_release(laplace_mechanism(1.0, 0.5), vector1(3.0)));
    for (int i = 0; i < 200; ++i) {
      single.step(g1);
      multi.step(g2);
    }
    CHECK(single.parameter() == multi.parameter());
    CHECK(single.records() == multi.records());
    CHECK(single.record_acceptance() == multi.record_acceptance());
  }
  {
    std::mt19937_64 g1(8), g2(8);
    const clamped_contribution<poisson_family> clamp(0.0, 8.0);
    record_gibbs single(poisson_gamma_prior(10.0, 2.0), laplace_mechanism(8.0, 1.0), vector1(40.0), 10.0, g1, clamp);
    record_gibbs_releases multi(poisson_gamma_prior(10.0, 2.0), 10.0, g2,
                                record_release(laplace_mechanism(8.0, 1.0), vector1(40.0), clamp));
    for (int i = 0; i < 200; ++i) {
      single.step(g1);
      multi.step(g2);
    }
    CHECK(single.parameter() == multi.parameter());
    CHECK(single.records() == multi.records());
  }
}

TEST_CASE("record_gibbs_releases: one record update leaves the two-release target invariant to 1e-12", "[records][releases]") {
  // Two binary records, theta = 0.3; release 1 Laplace scale 1 at z1, release 2 Laplace scale 2 at z2. States
  // x = (x_0, x_1); target pi(x) ~ f(x_0) f(x_1) e^(-|z1 - s|) e^(-|z2 - s| / 2), s = x_0 + x_1.
  for (const auto& zs : std::vector<std::pair<double, double>>{{1.7, -0.4}, {-3.0, 2.5}, {0.5, 0.5}}) {
    const double z1 = zs.first, z2 = zs.second;
    std::mt19937_64 g(103);
    record_gibbs_releases chain(beta_prior(1.0, 1.0), 2.0, g, record_release(laplace_mechanism(1.0, 1.0), vector1(z1)),
                                record_release(laplace_mechanism(1.0, 0.5), vector1(z2)));
    const double theta = 0.3;
    chain.set_parameter(theta);
    const auto pi =
        test::two_record_target(theta, [&](double sum) { return std::exp(-std::abs(z1 - sum) - 0.5 * std::abs(z2 - sum)); });
    for (std::size_t r = 0; r < 2; ++r) {
      const double worst = test::two_record_invariance_error(chain, theta, pi, r);
      INFO("z " << z1 << ", " << z2 << ", record " << r << ": max |pi K - pi| " << worst);
      CHECK(worst <= 1e-12);
    }
  }
}

TEST_CASE("record_gibbs_releases: the acceptance floor is exp(-sum of the epsilons)", "[records][releases]") {
  // Binomial n = 10, Laplace releases at epsilon 0.5 and 1 (sensitivity 1), both far above n: a record turning from 1
  // to 0 moves both sums away from their releases, so the floor is reached.
  std::mt19937_64 g(5);
  record_gibbs_releases chain(beta_prior(1.0, 1.0), 10.0, g, record_release(laplace_mechanism(1.0, 0.5), vector1(30.0)),
                              record_release(laplace_mechanism(1.0, 1.0), vector1(30.0)));
  for (int i = 0; i < 2000; ++i) chain.step(g);
  INFO("smallest log alpha " << chain.smallest_log_acceptance() << ", acceptance " << chain.record_acceptance());
  CHECK(chain.smallest_log_acceptance() >= -1.5 * (1.0 + 1e-12));
  CHECK(chain.smallest_log_acceptance() <= -1.5 * (1.0 - 1e-12));  // -1.5 exactly: both releases move the wrong way
  CHECK(chain.release_sum(0)(0) == chain.release_sum(1)(0));       // the same records, the same rule
  CHECK(chain.events() == numerical_events{});
}

namespace {
// Laplace noise behind a mechanism that has only log_likelihood.
struct likelihood_only {
  using mechanism_category = mechanism_tag;
  using vector_type = Eigen::VectorXd;
  laplace_mechanism inner;
  vector_type release(const vector_type& s, std::mt19937_64& g) const { return inner.release(s, g); }
  template <class A, class B>
  double log_likelihood(const Eigen::MatrixBase<A>& z, const Eigen::MatrixBase<B>& s) const {
    return inner.log_likelihood(z, s);
  }
  privacy_budget budget() const { return inner.budget(); }
};
}  // namespace

// The log_density_change customisation point changes the arithmetic, not the chain: Laplace (which provides it) and
// the same Laplace behind a wrapper without it (two log_likelihood calls) take the same decisions, draw for draw.
TEST_CASE("record_gibbs_releases: log_density_change leaves the chain unchanged", "[records][releases]") {
  static_assert(!density_change_mechanism<likelihood_only>);
  const laplace_mechanism lap(1.0, 0.3);
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    std::mt19937_64 g1(seed), g2(seed);
    record_gibbs_releases a(beta_prior(1.0, 1.0), 50.0, g1, record_release(lap, vector1(17.4)),
                            record_release(lap, vector1(14.9)));
    record_gibbs_releases b(beta_prior(1.0, 1.0), 50.0, g2, record_release(likelihood_only{lap}, vector1(17.4)),
                            record_release(likelihood_only{lap}, vector1(14.9)));
    for (int sweep = 0; sweep < 500; ++sweep) {
      a.step(g1);
      b.step(g2);
    }
    CHECK(a.parameter() == b.parameter());
    CHECK(a.records() == b.records());
    CHECK(a.record_acceptance() == b.record_acceptance());
  }
}

TEST_CASE("record_gibbs_releases: record_init::consistent moves the sums towards both releases", "[records][releases]") {
  // Poisson records, n = 400, one clamped release (to [0, 8]) and one dropped release (outside [0, 8]) of the same
  // column, lambda = 4 behind both (clamped sum about 1594, dropped about 1588 at n = 400). From one seed both starts
  // share the initial records and the greedy passes never lower the density, so the consistent start is never worse;
  // it is a local search (a clamped and a dropped release can hold it in a local optimum: seed 3 ends 24 counts short
  // on the dropped sum), so "near" is asserted for 8 of 10 seeds: both sums within 2 clamp widths of their releases,
  // where the prior start (lambda ~ Gamma(1, 0.1)) mostly is not.
  const auto log_density = [](const auto& chain) {
    return laplace_mechanism(8.0, 1.0).log_likelihood(vector1(1594.0), chain.release_sum(0)) +
           laplace_mechanism(8.0, 1.0).log_likelihood(vector1(1588.0), chain.release_sum(1));
  };
  int prior_far = 0, near = 0;
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    std::mt19937_64 g(seed), h(seed);
    const auto make = [](std::mt19937_64& gg, record_init init) {
      return record_gibbs_releases(
          poisson_gamma_prior(1.0, 0.1), 400.0, gg, init,
          record_release(laplace_mechanism(8.0, 1.0), vector1(1594.0), clamped_contribution<poisson_family>(0, 8)),
          record_release(laplace_mechanism(8.0, 1.0), vector1(1588.0), dropped_contribution<poisson_family>(0, 8)));
    };
    const auto chain = make(g, record_init::consistent);
    INFO("seed " << seed << ": S " << chain.release_sum(0)(0) << ", " << chain.release_sum(1)(0));
    if (std::abs(chain.release_sum(0)(0) - 1594.0) <= 16.0 && std::abs(chain.release_sum(1)(0) - 1588.0) <= 16.0) ++near;
    const auto from_prior = make(h, record_init::prior);
    CHECK(log_density(chain) >= log_density(from_prior));
    if (std::abs(from_prior.release_sum(0)(0) - 1594.0) > 200.0) ++prior_far;
  }
  CHECK(near >= 8);
  CHECK(prior_far >= 5);
}

TEST_CASE("record_gibbs_releases matches the exact posterior of two releases at binomial n = 10", "[records][releases]") {
  // Beta(1, 1) prior, n = 10; release 1 Laplace epsilon 0.5, release 2 the analytic Gaussian (epsilon 0.5, delta
  // 1e-5). The oracle: theta | z1, z2 = sum_s w_s Beta(1 + s, 11 - s), w_s ~ p_1(z1 | s) p_2(z2 | s) (the prior
  // predictive of s is uniform).
  const laplace_mechanism lap(1.0, 0.5);
  const auto gauss = gaussian_mechanism::analytic(1.0, 0.5, 1e-5);
  for (const auto& zs : std::vector<std::pair<double, double>>{{3.0, 2.0}, {-4.0, 12.0}, {8.0, 9.5}}) {
    const double z1 = zs.first, z2 = zs.second;
    std::array<double, 11> log_likelihood{};
    for (int s = 0; s <= 10; ++s)
      log_likelihood[s] = lap.log_likelihood(vector1(z1), vector1(s)) + gauss.log_likelihood(vector1(z2), vector1(s));
    inference_options o;
    o.chains = 4;
    o.burnin = 1000;
    o.draws = 50000;
    o.seed = 61 + static_cast<std::uint64_t>(z1 + 10.0);
    const auto result = infer(
        [&](std::mt19937_64& g) {
          return record_gibbs_releases(beta_prior(1.0, 1.0), 10.0, g, record_release(lap, vector1(z1)),
                                       record_release(gauss, vector1(z2)));
        },
        o);
    INFO("z1 " << z1 << ", z2 " << z2);
    test::check_matches_oracle(result, test::beta_mixture(log_likelihood));
  }
}

namespace {

struct two_release_trial {
  Eigen::VectorXd truth, z1, z2;
  double n = 0.0;
};

// M = 500 trials at n = 10; 500 burn-in + 2000 sweeps. Asserted: the two-release sampler by the library's rule and
// the spec's 90% band [0.87, 0.93]; the naive conjugate update on release 1 must fail the rule. Printed: the
// record-level sampler on release 1 alone (calibrated too, on less information).
template <class Prior, class Simulate, class MakeChain, class MakeSingle>
void check_two_release_calibration(const char* what, const Prior& prior, Simulate simulate, MakeChain make_chain,
                                   MakeSingle make_single, std::uint64_t seed) {
  constexpr int burnin = 500, draws = 2000;
  std::vector<named_method<two_release_trial>> methods{
      {"records2",
       [=](const two_release_trial& t, std::mt19937_64& g) {
         return single_chain([&](auto& cg) { return make_chain(t, cg); }, burnin, draws, g);
       }},
      {"records1",
       [=](const two_release_trial& t, std::mt19937_64& g) {
         return single_chain([&](auto& cg) { return make_single(t, cg); }, burnin, draws, g);
       }},
      {"naive", [=](const two_release_trial& t, std::mt19937_64& g) {
         return single_chain([&](auto& cg) { return conjugate_sampler(prior, t.z1, t.n, cg); }, 0, draws, g);
       }}};
  const simulation_study study(simulate, methods);
  const auto rows = run_calibration(study, {500, seed, 0}).report();
  const auto& both = test::row(rows, "records2");
  const auto& one = test::row(rows, "records1");
  const auto& naive = test::row(rows, "naive");
  INFO(what << ": two releases KS p " << both.ks_pvalue << ", coverage " << both.coverage50 << " / " << both.coverage90
            << "; release 1 alone KS p " << one.ks_pvalue << ", coverage " << one.coverage50 << " / " << one.coverage90
            << "; naive KS p " << naive.ks_pvalue << ", coverage " << naive.coverage50 << " / " << naive.coverage90);
  test::check_calibrated(both);
  CHECK(std::abs(both.coverage90 - 0.9) <= 0.03);
  CHECK(test::miscalibrated(naive));
}

}  // namespace

TEST_CASE("record_gibbs_releases is calibrated at n = 10 on two releases of the same records",
          "[records][releases][releases-sbc]") {
  // Binomial: the budget epsilon = 1 split into two Laplace releases of the count at epsilon 0.5 each.
  {
    const beta_prior prior(1.0, 1.0);
    const laplace_mechanism half(1.0, 0.5);
    auto simulate = [=](std::mt19937_64& g) {
      two_release_trial t;
      const double theta = prior.draw(g);
      double s = 0.0;
      for (int i = 0; i < 10; ++i) s += binomial_family::draw_record(theta, g);
      t.truth = vector1(theta);
      t.z1 = half.release(vector1(s), g);
      t.z2 = half.release(vector1(s), g);
      t.n = 10.0;
      return t;
    };
    check_two_release_calibration(
        "binomial, two Laplace releases at epsilon 0.5", prior, simulate,
        [=](const two_release_trial& t, std::mt19937_64& g) {
          return record_gibbs_releases(prior, t.n, g, record_release(half, t.z1), record_release(half, t.z2));
        },
        [=](const two_release_trial& t, std::mt19937_64& g) { return record_gibbs(prior, half, t.z1, t.n, g); }, 7101);
  }
  // Poisson, lambda ~ Gamma(10, 2): one column released twice with declared bounds [0, 8] (sensitivity 8), once
  // clamped and once with out-of-bounds records dropped, each at epsilon 0.5.
  {
    const poisson_gamma_prior prior(10.0, 2.0);
    const laplace_mechanism half(8.0, 0.5);
    const clamped_contribution<poisson_family> clamp(0.0, 8.0);
    const dropped_contribution<poisson_family> drop(0.0, 8.0);
    auto simulate = [=](std::mt19937_64& g) {
      two_release_trial t;
      const auto lambda = prior.draw(g);
      Eigen::VectorXd s1 = Eigen::VectorXd::Zero(1), s2 = Eigen::VectorXd::Zero(1);
      for (int i = 0; i < 10; ++i) {
        const auto x = poisson_family::draw_record(lambda, g);
        s1 += clamp(x);
        s2 += drop(x);
      }
      t.truth = vector1(lambda);
      t.z1 = half.release(s1, g);
      t.z2 = half.release(s2, g);
      t.n = 10.0;
      return t;
    };
    check_two_release_calibration(
        "Poisson, a clamped and a dropped release at epsilon 0.5", prior, simulate,
        [=](const two_release_trial& t, std::mt19937_64& g) {
          return record_gibbs_releases(prior, t.n, g, record_release(half, t.z1, clamp), record_release(half, t.z2, drop));
        },
        [=](const two_release_trial& t, std::mt19937_64& g) { return record_gibbs(prior, half, t.z1, t.n, g, clamp); }, 7102);
  }
}

TEST_CASE("record_gibbs_releases: bad input", "[records][releases][errors]") {
  std::mt19937_64 g(1);
  const laplace_mechanism m(1.0, 1.0);
  CHECK_THROWS_WITH(record_gibbs_releases(beta_prior(1.0, 1.0), 10.0, g, record_release(m, vector1(2.0)),
                                          record_release(m, Eigen::VectorXd::Zero(2))),
                    Catch::Contains("release 2 z"));
  CHECK_THROWS_WITH(
      record_gibbs_releases(beta_prior(1.0, 1.0), 10.0, g, record_release(m, vector1(std::numeric_limits<double>::quiet_NaN())),
                            record_release(m, vector1(2.0))),
      Catch::Contains("release 1 z"));
  // A single release is "the release", as in record_gibbs.
  CHECK_THROWS_WITH(
      record_gibbs_releases(beta_prior(1.0, 1.0), 10.0, g, record_release(m, vector1(std::numeric_limits<double>::quiet_NaN()))),
      Catch::Contains("record_gibbs_releases: release z[0] is nan"));
  CHECK_THROWS_AS(record_gibbs_releases(beta_prior(1.0, 1.0), 0.0, g, record_release(m, vector1(2.0))), std::invalid_argument);
  CHECK_THROWS_WITH(record_gibbs_releases(beta_prior(1.0, 1.0), 3.5, g, record_release(m, vector1(2.0))),
                    Catch::Contains("a whole number in [1, 1e7]"));
  record_gibbs_releases chain(beta_prior(1.0, 1.0), 10.0, g, record_release(m, vector1(2.0)));
  CHECK_THROWS_WITH(chain.release_sum(1), Catch::Contains("r is 1"));
  CHECK_THROWS_WITH(chain.set_records(std::vector<double>(9, 0.0)), Catch::Contains("records"));
}
