// Tests of privpost/core/random/*: every draw against its exact CDF (Boost.Math distributions).
// Properties tested, per draw:
//  1. goodness of fit: KS p > 0.001 at n = 20000 against the exact CDF, at default and non-default parameters;
//  2. power: the same test rejects (p < 1e-6) a wrong variant, so a passing fit is evidence;
//  3. extreme arguments: truncated normal 30 sd into a tail, tiny gamma/beta shapes, huge inverse-Gaussian means;
//  4. structure: Dirichlet sums to 1, Wishart draws are symmetric positive definite, means match;
//  5. bad parameters throw std::invalid_argument naming the value.
#include <catch2/catch.hpp>

#include <boost/math/distributions/beta.hpp>
#include <boost/math/distributions/chi_squared.hpp>
#include <boost/math/distributions/exponential.hpp>
#include <boost/math/distributions/gamma.hpp>
#include <boost/math/distributions/inverse_gamma.hpp>
#include <boost/math/distributions/inverse_gaussian.hpp>
#include <boost/math/distributions/laplace.hpp>
#include <boost/math/distributions/normal.hpp>
#include <cmath>
#include <limits>
#include <random>

#include "privpost/core/random/beta.hpp"
#include "privpost/core/random/dirichlet.hpp"
#include "privpost/core/random/exponential.hpp"
#include "privpost/core/random/gamma.hpp"
#include "privpost/core/random/inverse_gaussian.hpp"
#include "privpost/core/random/multivariate_normal.hpp"
#include "privpost/core/random/normal.hpp"
#include "privpost/core/random/truncated_normal.hpp"
#include "privpost/core/random/uniform.hpp"
#include "privpost/core/random/wishart.hpp"
#include "privpost/core/random/xoshiro.hpp"
#include "support/statistical.hpp"

using namespace privpost;
using privpost::test::ks_draws;
using privpost::test::require_fits;
using privpost::test::require_rejects;
using privpost::test::sample;
namespace bm = boost::math;

TEST_CASE("draw_uniform is uniform on the open unit interval for 64-bit, 32-bit and odd-range engines", "[draws]") {
  std::mt19937_64 g64(1);
  std::mt19937 g32(2);
  std::minstd_rand godd(3);  // range [1, 2^31 - 2]: the generic bit pump
  auto id = [](double x) { return x; };
  const std::vector<std::vector<double>> samples = {sample(ks_draws, [&] { return draw_uniform(g64); }),
                                                    sample(ks_draws, [&] { return draw_uniform(g32); }),
                                                    sample(ks_draws, [&] { return draw_uniform(godd); })};
  for (const auto& xs : samples) {
    require_fits(xs, id);
    for (double x : xs) REQUIRE((x > 0.0 && x < 1.0));
    require_rejects(xs, [](double x) { return x * x; });
  }
}

TEST_CASE("xoshiro256 follows the reference algorithm and seeds by SplitMix64", "[draws]") {
  static_assert(random_engine<xoshiro256>);
  // From the state {1, 2, 3, 4}: the outputs of the authors' C reference (xoshiro256starstar.c), computed here by an
  // independent Python transcription of it.
  auto g = xoshiro256::from_state(1, 2, 3, 4);
  const std::uint64_t expected[] = {
      11520ull, 0ull, 1509978240ull, 1215971899390074240ull, 1216172134540287360ull, 607988272756665600ull};
  for (std::uint64_t e : expected) CHECK(g() == e);
  auto h = xoshiro256::from_state(1, 2, 3, 4);
  h.discard(5);
  CHECK(h() == expected[5]);
  // Seed 0: the state is SplitMix64's first four outputs from 0 (0xe220a8397b1dcdaf is its published first value).
  CHECK(xoshiro256(0) ==
        xoshiro256::from_state(16294208416658607535ull, 7960286522194355700ull, 487617019471545679ull, 17909611376780542444ull));
  CHECK_FALSE(xoshiro256(1) == xoshiro256(0));
  xoshiro256 u(7);
  require_fits(sample(ks_draws, [&] { return draw_uniform(u); }), [](double x) { return x; });
}

TEST_CASE("log_uniform_below decides log(u) < log alpha exactly as the logarithm does", "[draws]") {
  // Pairs near the boundary (log alpha = log u + a small offset, where a loose bound would decide wrongly), far from
  // it, and the edges: u at the ends of draw_uniform's range, infinite and NaN log alpha.
  std::mt19937_64 g(91);
  std::int64_t disagreements = 0, decided = 0;
  const double offsets[] = {-1.0, -0.1, -1e-3, -1e-6, -1e-9, -1e-13, 1e-13, 1e-9, 1e-6, 1e-3, 0.1, 1.0};
  for (int i = 0; i < 200000; ++i) {
    const double u = draw_uniform(g);
    const double near = std::log(u) + offsets[i % 12];
    const double far = -60.0 + 65.0 * draw_uniform(g);
    for (double la : {near, far}) {
      const bool got = log_uniform_below(u, la);
      disagreements += got != (std::log(u) < la);
      decided += got;
    }
  }
  CHECK(disagreements == 0);
  CHECK(decided > 100000);  // both outcomes occur
  const double lowest = 0.5 * 0x1.0p-53, highest = 1.0 - 0x1.0p-54;
  for (double u : {lowest, highest, 0.5})
    for (double la : {std::log(u) - 1e-15, std::log(u) + 1e-15, std::log(u) * (1 - 1e-15), std::log(u) * (1 + 1e-15), 0.0,
                      -1e-300, -1e300, 1e300})
      CHECK(log_uniform_below(u, la) == (std::log(u) < la));
  const double inf = std::numeric_limits<double>::infinity();
  CHECK_FALSE(log_uniform_below(0.5, -inf));
  CHECK(log_uniform_below(0.5, inf));
  CHECK_FALSE(log_uniform_below(0.5, std::numeric_limits<double>::quiet_NaN()));
}

TEST_CASE("draw_normal fits N(mean, sd^2)", "[draws]") {
  std::mt19937_64 g(11);
  const bm::normal_distribution<> d(2.0, 3.0);
  const auto xs = sample(ks_draws, [&] { return draw_normal(g, 2.0, 3.0); });
  require_fits(xs, [&](double x) { return bm::cdf(d, x); });
  require_rejects(xs, [&](double x) { return bm::cdf(bm::normal_distribution<>(2.0, 2.4), x); });
  CHECK_THROWS_AS(draw_normal(g, 0.0, 0.0), std::invalid_argument);
  CHECK_THROWS_AS(draw_normal(g, 0.0, -1.0), std::invalid_argument);
  CHECK_THROWS_AS(draw_normal(g, std::nan(""), 1.0), std::invalid_argument);
}

namespace {
// CDF of N(m, s^2) truncated to [lo, hi], computed on the upper-tail side when the interval lies right of the
// mean (and mirrored on the left) so that intervals 30 sd out do not lose every digit.
double truncated_normal_cdf(double x, double m, double s, double lo, double hi) {
  const bm::normal_distribution<> n(m, s);
  if (lo >= m) {
    const double qa = bm::cdf(bm::complement(n, lo));
    const double qb = std::isinf(hi) ? 0.0 : bm::cdf(bm::complement(n, hi));
    return (qa - bm::cdf(bm::complement(n, std::min(x, hi)))) / (qa - qb);
  }
  if (hi <= m) {
    const double pa = std::isinf(lo) ? 0.0 : bm::cdf(n, lo);
    const double pb = bm::cdf(n, hi);
    return (bm::cdf(n, std::max(x, lo)) - pa) / (pb - pa);
  }
  const double pa = std::isinf(lo) ? 0.0 : bm::cdf(n, lo);
  const double pb = std::isinf(hi) ? 1.0 : bm::cdf(n, hi);
  return (bm::cdf(n, std::clamp(x, lo, hi)) - pa) / (pb - pa);
}
}  // namespace

TEST_CASE("draw_truncated_normal fits the exact truncated CDF, one- and two-sided, deep in the tails", "[draws]") {
  const double inf = std::numeric_limits<double>::infinity();
  struct case_t {
    double m, s, lo, hi;
  };
  const case_t cases[] = {
      {0.0, 1.0, -1.0, 2.0},    // centre, uniform proposal
      {1.0, 2.0, -10.0, 10.0},  // centre, wide: normal rejection
      {0.0, 1.0, 0.5, 0.6},     // narrow right: uniform proposal
      {0.0, 1.0, 2.0, inf},     // one-sided right tail
      {3.0, 0.5, -inf, 1.0},    // one-sided left tail (4 sd)
      {0.0, 1.0, 30.0, inf},    // 30 sd out, one-sided
      {0.0, 1.0, 30.0, 30.1},   // 30 sd out, two-sided
      {5.0, 2.0, -inf, -55.0},  // 30 sd out on the left
      {0.0, 1.0, 0.0, inf},     // half-normal
  };
  std::mt19937_64 g(17);
  for (const auto& c : cases) {
    INFO("N(" << c.m << ", " << c.s << "^2) on [" << c.lo << ", " << c.hi << "]");
    const auto xs = sample(ks_draws, [&] { return draw_truncated_normal(g, c.m, c.s, c.lo, c.hi); });
    for (double x : xs) REQUIRE((x >= c.lo && x <= c.hi));
    require_fits(xs, [&](double x) { return truncated_normal_cdf(x, c.m, c.s, c.lo, c.hi); });
  }
  // Power: right-tail draws against a tail that starts 0.1 sd later.
  const auto xs = sample(ks_draws, [&] { return draw_truncated_normal(g, 0.0, 1.0, 2.0, inf); });
  require_rejects(xs, [&](double x) { return truncated_normal_cdf(x, 0.0, 1.0, 2.1, inf); });
  REQUIRE(draw_truncated_normal(g, 0.0, 1.0, 1.5, 1.5) == 1.5);
  CHECK_THROWS_AS(draw_truncated_normal(g, 0.0, 1.0, 2.0, 1.0), std::invalid_argument);
  CHECK_THROWS_AS(draw_truncated_normal(g, 0.0, 1.0, std::nan(""), 1.0), std::invalid_argument);
  CHECK_THROWS_AS(draw_truncated_normal(g, 0.0, 0.0, 0.0, 1.0), std::invalid_argument);
  // Bounds beyond any useful number of sds (a release of -1e300 put the Poisson sum's bound 1e300 sds
  // out, and the closed form of the exponential rate overflowed): the draw is the bound to double precision, never a
  // retry failure. a = 1e7 still uses the closed form: the excess over the bound is Exp(1) / a, mean 1e-7.
  for (const double sd : {1.0, 1e-10, 1e100}) {
    INFO("sd " << sd);
    REQUIRE(draw_truncated_normal(g, -1e300, sd, 0.0, inf) >= 0.0);
    REQUIRE(draw_truncated_normal(g, -1e300, sd, 0.0, inf) <= 1e-280);
    REQUIRE(draw_truncated_normal(g, 1e300, sd, -inf, 0.0) <= 0.0);
    REQUIRE(draw_truncated_normal(g, 1e300, sd, -inf, 0.0) >= -1e-280);
    REQUIRE(draw_truncated_normal(g, -1e300, sd, 0.0, 1.0) <= 1e-280);
  }
  REQUIRE(draw_truncated_normal(g, -std::numeric_limits<double>::max(), 1e-300, 0.0, inf) == 0.0);  // a = +inf
  double excess = 0.0;
  for (int i = 0; i < 20000; ++i) excess += (draw_truncated_normal(g, 0.0, 1.0, 1e7, inf) - 1e7) * 1e7;
  CHECK(excess / 20000 == Approx(1.0).margin(0.1));  // Exp(1) / a, up to the spacing of doubles near 1e7 (1.9e-9)
  for (int i = 0; i < 100; ++i) {
    const double x = draw_truncated_normal(g, 0.0, 1.0, 1e200, inf);
    REQUIRE(x >= 1e200);
    REQUIRE(x <= 1e200 * (1 + 1e-15));
  }
}

TEST_CASE("draw_exponential and draw_laplace fit their CDFs", "[draws]") {
  std::mt19937_64 g(19);
  const auto e = sample(ks_draws, [&] { return draw_exponential(g, 2.5); });
  require_fits(e, [](double x) { return bm::cdf(bm::exponential_distribution<>(2.5), x); });
  require_rejects(e, [](double x) { return bm::cdf(bm::exponential_distribution<>(2.0), x); });
  const auto l = sample(ks_draws, [&] { return draw_laplace(g, -1.0, 3.0); });
  require_fits(l, [](double x) { return bm::cdf(bm::laplace_distribution<>(-1.0, 3.0), x); });
  require_rejects(l, [](double x) { return bm::cdf(bm::laplace_distribution<>(-1.0, 2.4), x); });
  CHECK_THROWS_AS(draw_exponential(g, 0.0), std::invalid_argument);
  CHECK_THROWS_AS(draw_laplace(g, 0.0, -0.0), std::invalid_argument);
}

TEST_CASE("draw_gamma fits Gamma(shape, scale) for shapes below and above 1", "[draws]") {
  std::mt19937_64 g(23);
  for (double shape : {0.05, 0.3, 1.0, 2.5, 150.0}) {
    INFO("shape " << shape);
    const auto xs = sample(ks_draws, [&] { return draw_gamma(g, shape, 2.0); });
    require_fits(xs, [&](double x) { return bm::cdf(bm::gamma_distribution<>(shape, 2.0), x); });
  }
  const auto xs = sample(ks_draws, [&] { return draw_gamma(g, 2.5, 2.0); });
  require_rejects(xs, [&](double x) { return bm::cdf(bm::gamma_distribution<>(2.5, 1.6), x); });
  // Tiny shapes stay finite in log space.
  for (int i = 0; i < 1000; ++i) REQUIRE(std::isfinite(draw_log_gamma(g, 1e-6)));
  CHECK_THROWS_AS(draw_gamma(g, 0.0, 1.0), std::invalid_argument);
  CHECK_THROWS_AS(draw_gamma(g, 1.0, std::numeric_limits<double>::infinity()), std::invalid_argument);
}

TEST_CASE("draw_inverse_gamma fits InverseGamma(shape, scale)", "[draws]") {
  std::mt19937_64 g(29);
  for (double shape : {0.7, 3.0}) {
    const auto xs = sample(ks_draws, [&] { return draw_inverse_gamma(g, shape, 1.5); });
    require_fits(xs, [&](double x) { return bm::cdf(bm::inverse_gamma_distribution<>(shape, 1.5), x); });
    require_rejects(xs, [&](double x) { return bm::cdf(bm::inverse_gamma_distribution<>(shape, 1.2), x); });
  }
  CHECK_THROWS_AS(draw_inverse_gamma(g, -1.0, 1.0), std::invalid_argument);
  // A draw beyond the largest double is refused, never infinity: at shape 1e-300 the chance of a finite draw is
  // 1 - exp(-7e-298), so every one of these throws; at shape 0.5 overflow has probability about exp(-355).
  for (int i = 0; i < 10; ++i)
    CHECK_THROWS_WITH(draw_inverse_gamma(g, 1e-300, 1.0), Catch::Contains("shape") && Catch::Contains("overflowed"));
  for (int i = 0; i < 1000; ++i) CHECK(std::isfinite(draw_inverse_gamma(g, 0.5, 1e300)));
}

TEST_CASE("draw_beta fits Beta(a, b), including tiny shapes", "[draws]") {
  std::mt19937_64 g(31);
  for (const auto& pair_ : {std::pair{0.5, 0.5}, std::pair{2.0, 5.0}, std::pair{0.05, 0.2}, std::pair{300.0, 20.0}}) {
    const auto a = pair_.first;
    const auto b = pair_.second;
    INFO("Beta(" << a << ", " << b << ")");
    const auto xs = sample(ks_draws, [&] { return draw_beta(g, a, b); });
    for (double x : xs) REQUIRE((x >= 0.0 && x <= 1.0));
    require_fits(xs, [&](double x) { return bm::cdf(bm::beta_distribution<>(a, b), x); });
  }
  const auto xs = sample(ks_draws, [&] { return draw_beta(g, 2.0, 5.0); });
  require_rejects(xs, [&](double x) { return bm::cdf(bm::beta_distribution<>(2.0, 4.0), x); });
  CHECK_THROWS_AS(draw_beta(g, 0.0, 1.0), std::invalid_argument);
}

TEST_CASE("draw_inverse_gaussian fits IG(mu, lambda), including huge and infinite mu", "[draws]") {
  std::mt19937_64 g(37);
  for (const auto& pair_ : {std::pair{1.0, 1.0}, std::pair{0.5, 4.0}, std::pair{1e3, 1.0}, std::pair{1e8, 0.01}}) {
    const auto mu = pair_.first;
    const auto lambda = pair_.second;
    INFO("IG(" << mu << ", " << lambda << ")");
    const auto xs = sample(ks_draws, [&] { return draw_inverse_gaussian(g, mu, lambda); });
    require_fits(xs, [&](double x) { return bm::cdf(bm::inverse_gaussian_distribution<>(mu, lambda), x); });
  }
  // mu = inf: the Levy distribution, x = lambda / chi^2_1, so lambda / x ~ chi^2_1.
  const auto levy =
      sample(ks_draws, [&] { return 2.0 / draw_inverse_gaussian(g, std::numeric_limits<double>::infinity(), 2.0); });
  require_fits(levy, [](double y) { return bm::cdf(bm::chi_squared_distribution<>(1.0), y); });
  const auto xs = sample(ks_draws, [&] { return draw_inverse_gaussian(g, 1.0, 1.0); });
  require_rejects(xs, [&](double x) { return bm::cdf(bm::inverse_gaussian_distribution<>(1.0, 0.8), x); });
  CHECK_THROWS_AS(draw_inverse_gaussian(g, 0.0, 1.0), std::invalid_argument);
  CHECK_THROWS_AS(draw_inverse_gaussian(g, 1.0, 0.0), std::invalid_argument);
  CHECK_THROWS_AS(draw_inverse_gaussian(g, std::nan(""), 1.0), std::invalid_argument);
}

TEST_CASE("draw_dirichlet has Beta marginals and sums to one", "[draws]") {
  std::mt19937_64 g(41);
  Eigen::Vector3d alpha(0.3, 2.0, 5.0);
  Eigen::Vector3d out;
  std::vector<double> first(ks_draws), last(ks_draws);
  for (std::size_t i = 0; i < ks_draws; ++i) {
    draw_dirichlet(g, alpha, out);
    REQUIRE(out.sum() == Approx(1.0).epsilon(1e-12));
    REQUIRE((out.array() >= 0.0).all());
    first[i] = out(0);
    last[i] = out(2);
  }
  require_fits(first, [](double x) { return bm::cdf(bm::beta_distribution<>(0.3, 7.0), x); });
  require_fits(last, [](double x) { return bm::cdf(bm::beta_distribution<>(5.0, 2.3), x); });
  require_rejects(last, [](double x) { return bm::cdf(bm::beta_distribution<>(4.0, 2.3), x); });
  Eigen::VectorXd bad(2);
  bad << 1.0, -1.0;
  CHECK_THROWS_AS(draw_dirichlet(g, bad), std::invalid_argument);
  Eigen::VectorXd one(1);
  one << 1.0;
  CHECK_THROWS_AS(draw_dirichlet(g, one), std::invalid_argument);
}

TEST_CASE("draw_multivariate_normal: projections are normal with the right variance", "[draws]") {
  std::mt19937_64 g(43);
  Eigen::Matrix3d cov;
  cov << 4.0, 1.0, 0.5, 1.0, 2.0, -0.3, 0.5, -0.3, 1.0;
  const Eigen::Matrix3d l = cov.llt().matrixL();
  const Eigen::Vector3d mean(1.0, -2.0, 0.5);
  const Eigen::Vector3d a(0.3, -1.0, 2.0);
  Eigen::Vector3d x;
  const auto proj = sample(ks_draws, [&] {
    draw_multivariate_normal(g, mean, l, x);
    return a.dot(x);
  });
  const double m = a.dot(mean), s = std::sqrt(a.dot(cov * a));
  require_fits(proj, [&](double y) { return bm::cdf(bm::normal_distribution<>(m, s), y); });
  require_rejects(proj, [&](double y) { return bm::cdf(bm::normal_distribution<>(m, 0.8 * s), y); });
  CHECK_THROWS_AS(draw_multivariate_normal(g, Eigen::VectorXd::Zero(2).eval(), Eigen::MatrixXd(l)), std::invalid_argument);
}

TEST_CASE("draw_wishart and draw_inverse_wishart: diagonal marginals and means", "[draws]") {
  std::mt19937_64 g(47);
  Eigen::Matrix2d s;
  s << 2.0, 0.6, 0.6, 1.0;
  const double nu = 5.5;
  std::vector<double> w11(ks_draws), iw22(ks_draws);
  Eigen::Matrix2d mean_w = Eigen::Matrix2d::Zero(), mean_iw = Eigen::Matrix2d::Zero();
  Eigen::Matrix2d square_w = Eigen::Matrix2d::Zero(), square_iw = Eigen::Matrix2d::Zero();
  for (std::size_t i = 0; i < ks_draws; ++i) {
    const Eigen::MatrixXd w = draw_wishart(g, nu, s);
    const Eigen::MatrixXd iw = draw_inverse_wishart(g, nu, s);
    REQUIRE((w - w.transpose()).norm() < 1e-12);
    REQUIRE(w.llt().info() == Eigen::Success);
    REQUIRE(iw.llt().info() == Eigen::Success);
    w11[i] = w(0, 0) / s(0, 0);  // ~ chi^2_nu
    iw22[i] = iw(1, 1);          // ~ InverseGamma((nu - p + 1)/2, Psi_22 / 2)
    mean_w += w / static_cast<double>(ks_draws);
    mean_iw += iw / static_cast<double>(ks_draws);
    square_w += w.cwiseProduct(w) / static_cast<double>(ks_draws);
    square_iw += iw.cwiseProduct(iw) / static_cast<double>(ks_draws);
  }
  require_fits(w11, [&](double x) { return bm::cdf(bm::chi_squared_distribution<>(nu), x); });
  require_rejects(w11, [&](double x) { return bm::cdf(bm::chi_squared_distribution<>(nu - 1.0), x); });
  require_fits(iw22, [&](double x) { return bm::cdf(bm::inverse_gamma_distribution<>((nu - 1.0) / 2.0, s(1, 1) / 2.0), x); });
  // E[W] = nu S; E[IW] = Psi / (nu - p - 1). The Frobenius error of a mean of N draws has expected square
  // sum_ij Var(X_ij) / N; the tolerance is 5 such standard errors, the variances estimated from the same draws.
  const double n_draws = static_cast<double>(ks_draws);
  const double se_w = std::sqrt((square_w - mean_w.cwiseProduct(mean_w)).sum() / n_draws);
  const double se_iw = std::sqrt((square_iw - mean_iw.cwiseProduct(mean_iw)).sum() / n_draws);
  INFO("Wishart mean error " << (mean_w - nu * s).norm() << " (SE " << se_w << "), inverse Wishart "
                             << (mean_iw - s / (nu - 3.0)).norm() << " (SE " << se_iw << ")");
  CHECK((mean_w - nu * s).norm() < 5.0 * se_w);
  CHECK((mean_iw - s / (nu - 3.0)).norm() < 5.0 * se_iw);
  // Power: the same tolerance rejects a mean off by 10% (E[W] for nu 10% larger).
  CHECK((mean_w - 1.1 * nu * s).norm() > 5.0 * se_w);
  Eigen::Matrix2d not_pd;
  not_pd << 1.0, 2.0, 2.0, 1.0;
  CHECK_THROWS_AS(draw_wishart(g, nu, not_pd), std::invalid_argument);
  CHECK_THROWS_AS(draw_wishart(g, 0.5, s), std::invalid_argument);
  CHECK_THROWS_AS(draw_inverse_wishart(g, std::nan(""), s), std::invalid_argument);
}
