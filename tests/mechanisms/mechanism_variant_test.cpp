// Tests of privpost/mechanisms/mechanism_variant.hpp. Properties:
//  1. the concepts it satisfies follow its alternatives (release mechanism always; scale mixture, fixed variance,
//     noise_variance and sensitivities only when every alternative has them);
//  2. every call forwards to the held mechanism: the same release, log-likelihood, budget and variance draws as the
//     held mechanism from engines with the same seed;
//  3. samplers over the variant draw exactly the chain of the sampler over the held mechanism (gibbs_ss for the
//     binomial family, gibbs_ss_truncated for Poisson), for both alternatives.
#include <catch2/catch.hpp>

#include <random>

#include "privpost/families/binomial.hpp"
#include "privpost/families/poisson.hpp"
#include "privpost/mechanisms/gaussian.hpp"
#include "privpost/mechanisms/laplace.hpp"
#include "privpost/mechanisms/mechanism_variant.hpp"
#include "privpost/samplers/gibbs_ss.hpp"
#include "privpost/samplers/gibbs_ss_truncated.hpp"

using namespace privpost;

namespace {
using either = mechanism_variant<laplace_mechanism, gaussian_mechanism>;
using only_gaussian = mechanism_variant<gaussian_mechanism>;
using only_laplace = mechanism_variant<laplace_mechanism>;

// An opted-in mechanism without the scale-mixture view.
struct plain_mechanism {
  using mechanism_category = mechanism_tag;
  using vector_type = Eigen::VectorXd;
  template <class Derived, class G>
  typename Derived::PlainObject release(const Eigen::MatrixBase<Derived>& s, G&) const {
    return s;
  }
  template <class A, class B>
  double log_likelihood(const Eigen::MatrixBase<A>&, const Eigen::MatrixBase<B>&) const {
    return 0.0;
  }
  privacy_budget budget() const { return {1.0, 0.0}; }
};

template <class M>
concept reports_noise_variance = requires(const M& m) {
  m.noise_variance();
};
}  // namespace

static_assert(release_mechanism<either>);
static_assert(scale_mixture_noise<either>);
static_assert(!either::fixed_variance);
static_assert(only_gaussian::fixed_variance);
static_assert(!only_laplace::fixed_variance);
static_assert(release_mechanism<plain_mechanism>);
static_assert(release_mechanism<mechanism_variant<plain_mechanism, laplace_mechanism>>);
static_assert(!scale_mixture_noise<mechanism_variant<plain_mechanism, laplace_mechanism>>);
// Laplace reports an L1 sensitivity, Gaussian an L2 one: the mixed variant reports neither (release_statistic, which
// checks the declared sensitivity, does not take it); a single-kind variant does.
static_assert(!sensitivity_calibrated<either>);
static_assert(sensitivity_calibrated<only_laplace>);
static_assert(sensitivity_calibrated<only_gaussian>);
static_assert(reports_noise_variance<either>);
static_assert(!reports_noise_variance<mechanism_variant<plain_mechanism>>);
static_assert(std::is_convertible_v<laplace_mechanism, either>);
static_assert(!std::is_convertible_v<plain_mechanism, either>);
static_assert(density_change_mechanism<laplace_mechanism>);
static_assert(density_change_mechanism<gaussian_mechanism>);
static_assert(density_change_mechanism<either>);
static_assert(!density_change_mechanism<plain_mechanism>);

TEST_CASE("mechanism_variant forwards every call to the held mechanism", "[mechanism_variant]") {
  const laplace_mechanism lap(2.0, 0.5);
  const auto gau = gaussian_mechanism::analytic(1.5, 0.7, 1e-6);
  const Eigen::Vector3d s(1.0, -2.0, 40.0);
  auto same_as = [&](const either& v, const auto& m) {
    std::mt19937_64 g1(7), g2(7);
    const Eigen::VectorXd z1 = v.release(s, g1), z2 = m.release(s, g2);
    CHECK(z1 == z2);
    CHECK(v.log_likelihood(z1, s) == m.log_likelihood(z2, s));
    CHECK(v.budget().epsilon == m.budget().epsilon);
    CHECK(v.budget().delta == m.budget().delta);
    CHECK(v.noise_variance() == m.noise_variance());
    for (double r : {-3.0, 0.0, 0.25, 10.0}) {
      CHECK(v.draw_variance(g1) == m.draw_variance(g2));
      CHECK(v.redraw_variance(r, g1) == m.redraw_variance(r, g2));
    }
    CHECK(g1() == g2());              // the same number of engine draws
    CHECK(v.release(s).size() == 3);  // the CSPRNG overload
  };
  const either v_lap = lap, v_gau = gau;
  CHECK(v_lap.holds<laplace_mechanism>());
  CHECK(v_gau.get_if<gaussian_mechanism>() != nullptr);
  CHECK(v_gau.get_if<laplace_mechanism>() == nullptr);
  same_as(v_lap, lap);
  same_as(v_gau, gau);
  CHECK(only_laplace(lap).l1_sensitivity() == 2.0);
  CHECK(only_gaussian(gau).l2_sensitivity() == 1.5);
  // Forwarded errors: the held mechanism's argument checks.
  const Eigen::Vector2d bad(1.0, std::numeric_limits<double>::quiet_NaN());
  std::mt19937_64 g(1);
  CHECK_THROWS_AS(v_lap.release(bad, g), std::invalid_argument);
  const Eigen::VectorXd z3 = s, s2 = Eigen::Vector2d(1.0, 2.0);
  CHECK_THROWS_AS(v_gau.log_likelihood(z3, s2), std::invalid_argument);
}

// The optional customisation point (core/concepts.hpp): log p(z | s_new) - log p(z | s), from the mechanism's own
// log_density_change (Laplace, Gaussian, and the variant forwarding to them) or from two log_likelihood calls.
TEST_CASE("log_density_change is the difference of log-likelihoods", "[mechanism_variant]") {
  const laplace_mechanism lap(2.0, 0.5);
  const auto gau = gaussian_mechanism::analytic(1.5, 0.7, 1e-6);
  const Eigen::VectorXd z = Eigen::Vector3d(1.3, -2.0, 40.5), s = Eigen::Vector3d(1.0, -2.0, 38.0);
  std::mt19937_64 g(3);
  std::normal_distribution<double> normal(0.0, 5.0);
  for (int trial = 0; trial < 200; ++trial) {
    Eigen::VectorXd s_new = s;
    s_new(trial % 3) += std::round(normal(g));  // one coordinate changed, or none
    if (trial % 7 == 0) s_new(2) += normal(g);  // sometimes two, real-valued
    for (const either m : {either(lap), either(gau)}) {
      const double expected = m.log_likelihood(z, s_new) - m.log_likelihood(z, s);
      INFO("trial " << trial << ", holds Laplace " << m.holds<laplace_mechanism>());
      CHECK(m.log_density_change(z, s, s_new) == Approx(expected).margin(1e-12));
      CHECK(log_density_change(m, z, s, s_new) == Approx(expected).margin(1e-12));
    }
    CHECK(lap.log_density_change(z, s, s_new) == Approx(lap.log_likelihood(z, s_new) - lap.log_likelihood(z, s)).margin(1e-12));
    CHECK(gau.log_density_change(z, s, s_new) == Approx(gau.log_likelihood(z, s_new) - gau.log_likelihood(z, s)).margin(1e-12));
  }
  CHECK(lap.log_density_change(z, s, s) == 0.0);
  CHECK(log_density_change(plain_mechanism{}, z, s, z) == 0.0);  // the fallback: two log_likelihood calls
  const Eigen::VectorXd short_s = Eigen::Vector2d(1.0, 2.0);
  CHECK_THROWS_WITH(lap.log_density_change(z, s, short_s), Catch::Contains("s_new"));
  CHECK_THROWS_WITH(gau.log_density_change(z, short_s, s), Catch::Contains("z"));
}

TEST_CASE("samplers over mechanism_variant draw the held mechanism's chain", "[mechanism_variant]") {
  const laplace_mechanism lap(1.0, 0.3);
  const auto gau = gaussian_mechanism::analytic(1.0, 0.3, 1e-5);
  const Eigen::VectorXd z = Eigen::VectorXd::Constant(1, 31.0);
  auto bounded = [&](const auto& mechanism, const either& v) {
    std::mt19937_64 g1(11), g2(11);
    gibbs_ss a(beta_prior(1.0, 1.0), mechanism, z, 50.0, g1);
    gibbs_ss b(beta_prior(1.0, 1.0), v, z, 50.0, g2);
    for (int i = 0; i < 300; ++i) {
      a.step(g1);
      b.step(g2);
      REQUIRE(a.parameter_vector() == b.parameter_vector());
    }
  };
  bounded(lap, lap);
  bounded(gau, gau);
  const Eigen::VectorXd zp = Eigen::VectorXd::Constant(1, 260.0);
  auto truncated = [&](const auto& mechanism, const either& v) {
    std::mt19937_64 g1(12), g2(12);
    gibbs_ss_truncated a(poisson_gamma_prior(2.0, 1.0), mechanism, zp, 100.0, 0.0, 8.0, g1);
    gibbs_ss_truncated b(poisson_gamma_prior(2.0, 1.0), v, zp, 100.0, 0.0, 8.0, g2);
    for (int i = 0; i < 300; ++i) {
      a.step(g1);
      b.step(g2);
      REQUIRE(a.parameter_vector() == b.parameter_vector());
    }
  };
  truncated(lap, lap);
  truncated(gau, gau);
}
