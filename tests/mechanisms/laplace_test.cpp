// Tests of privpost/mechanisms/laplace.hpp. Properties:
//  1. release noise z - s fits Lap(0, sensitivity/epsilon) (KS, n = 20000), and the test rejects 0.8 times the scale;
//  2. the scale-mixture view: w ~ draw_variance then N(0, w) reproduces Lap(0, b) (KS), with power;
//  3. the conditional redraw_variance(r) equals the normalised product Exp(w; 1/(2b^2)) N(r; 0, w) on a grid (KS
//     against the CDF integrated on a fine log-grid), with power against a wrong residual;
//  4. log_likelihood equals log(pdf) of Boost's Laplace at non-default parameters;
//  5. budget, the default CSPRNG release, and one test per bad input.
#include <catch2/catch.hpp>

#include <boost/math/distributions/laplace.hpp>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "privpost/core/random/normal.hpp"
#include "privpost/mechanisms/laplace.hpp"
#include "support/statistical.hpp"

using namespace privpost;
namespace bm = boost::math;

namespace {
Eigen::VectorXd vec(std::initializer_list<double> v) {
  Eigen::VectorXd out(static_cast<Eigen::Index>(v.size()));
  Eigen::Index i = 0;
  for (double x : v) out(i++) = x;
  return out;
}

// CDF of w with density proportional to exp(-w / (2 b^2)) w^{-1/2} exp(-r^2 / (2 w)), integrated by the
// trapezoid rule in t = log w on [log(b^2) - 40, log(b^2) + 8] with 400001 points.
struct product_cdf {
  double t0, dt;
  std::vector<double> cdf;
  product_cdf(double b, double r) {
    const int n = 400001;
    t0 = std::log(b * b) - 40.0;
    dt = 48.0 / (n - 1);
    std::vector<double> f(n);
    for (int i = 0; i < n; ++i) {
      const double w = std::exp(t0 + i * dt);
      f[i] = std::exp(-w / (2 * b * b) - 0.5 * std::log(w) - r * r / (2 * w) + std::log(w));  // dw = w dt
    }
    cdf.assign(n, 0.0);
    for (int i = 1; i < n; ++i) cdf[i] = cdf[i - 1] + 0.5 * (f[i] + f[i - 1]) * dt;
    for (double& c : cdf) c /= cdf.back();
  }
  double operator()(double w) const {
    const double x = (std::log(w) - t0) / dt;
    if (x <= 0) return 0.0;
    const auto i = static_cast<std::size_t>(x);
    if (i + 1 >= cdf.size()) return 1.0;
    return cdf[i] + (x - static_cast<double>(i)) * (cdf[i + 1] - cdf[i]);
  }
};
}  // namespace

TEST_CASE("Laplace release noise fits Lap(0, sensitivity / epsilon)", "[laplace]") {
  const laplace_mechanism m(2.0, 0.5);
  REQUIRE(m.scale() == 4.0);
  REQUIRE(m.budget() == privacy_budget{0.5, 0.0});
  std::mt19937_64 g(101);
  const Eigen::VectorXd s = vec({3.0, -7.0});
  std::vector<double> noise;
  for (std::size_t i = 0; i < test::ks_draws / 2; ++i) {
    const Eigen::VectorXd z = m.release(s, g);
    noise.push_back(z(0) - s(0));
    noise.push_back(z(1) - s(1));
  }
  test::require_fits(noise, [](double x) { return bm::cdf(bm::laplace_distribution<>(0.0, 4.0), x); });
  test::require_rejects(noise, [](double x) { return bm::cdf(bm::laplace_distribution<>(0.0, 3.2), x); });
}

TEST_CASE("Laplace release without an engine draws from the OS CSPRNG", "[laplace]") {
  const laplace_mechanism m(1.0, 1.0);
  const Eigen::VectorXd s = vec({10.0});
  const Eigen::VectorXd z1 = m.release(s), z2 = m.release(s);
  CHECK(std::isfinite(z1(0)));
  CHECK(z1(0) != z2(0));
}

TEST_CASE("Laplace as a scale mixture: w ~ Exp(1/(2 b^2)), N(0, w) is Lap(0, b)", "[laplace]") {
  const laplace_mechanism m(1.0, 0.25);  // b = 4
  std::mt19937_64 g(103);
  const auto xs = test::sample(test::ks_draws, [&] { return std::sqrt(m.draw_variance(g)) * draw_normal(g); });
  test::require_fits(xs, [](double x) { return bm::cdf(bm::laplace_distribution<>(0.0, 4.0), x); });
  test::require_rejects(xs, [](double x) { return bm::cdf(bm::laplace_distribution<>(0.0, 3.2), x); });
}

TEST_CASE("Laplace redraw_variance is the normalised product density (App. B.2)", "[laplace]") {
  const laplace_mechanism m(1.0, 0.5);  // b = 2
  std::mt19937_64 g(107);
  for (double r : {0.3, 2.0, 9.0}) {
    INFO("residual " << r);
    const product_cdf cdf(2.0, r);
    const auto ws = test::sample(test::ks_draws, [&] { return m.redraw_variance(r, g); });
    test::require_fits(ws, cdf);
    test::require_rejects(ws, product_cdf(2.0, 1.3 * r));
  }
  // A residual whose product with the scale overflows is refused in the mechanism's own terms (it
  // used to reach draw_inverse_gaussian as "mu is 0").
  CHECK_THROWS_WITH(m.redraw_variance(std::numeric_limits<double>::max(), g),
                    Catch::Contains("laplace_mechanism::redraw_variance") && Catch::Contains("residual"));
  CHECK_THROWS_AS(m.redraw_variance(-std::numeric_limits<double>::max(), g), std::domain_error);
  // A zero residual is allowed (the Levy limit) and gives a finite positive variance.
  for (int i = 0; i < 100; ++i) {
    const double w = m.redraw_variance(0.0, g);
    REQUIRE((std::isfinite(w) && w >= 0.0));
  }
}

TEST_CASE("Laplace log_likelihood equals log(pdf)", "[laplace]") {
  const laplace_mechanism m(3.0, 0.7);
  const Eigen::VectorXd z = vec({1.0, -2.5, 40.0}), s = vec({0.5, 1.0, 38.0});
  double expected = 0.0;
  for (int j = 0; j < 3; ++j) expected += std::log(bm::pdf(bm::laplace_distribution<>(s(j), 3.0 / 0.7), z(j)));
  CHECK(m.log_likelihood(z, s) == Approx(expected).epsilon(1e-13));
  CHECK_THROWS_AS(m.log_likelihood(z, vec({1.0})), std::invalid_argument);
}

TEST_CASE("Laplace bad input: epsilon", "[laplace][errors]") {
  const double inf = std::numeric_limits<double>::infinity();
  CHECK_THROWS_AS(laplace_mechanism(1.0, std::nan("")), std::invalid_argument);
  CHECK_THROWS_AS(laplace_mechanism(1.0, inf), std::invalid_argument);
  CHECK_THROWS_AS(laplace_mechanism(1.0, 0.0), std::invalid_argument);
  CHECK_THROWS_AS(laplace_mechanism(1.0, -1.0), std::invalid_argument);
  CHECK_THROWS_AS(laplace_mechanism(1.0, 0x1.0p-51), std::invalid_argument);
  CHECK_NOTHROW(laplace_mechanism(1.0, 0x1.0p-50));
  CHECK_THROWS_WITH(laplace_mechanism(1.0, -1.0), Catch::Contains("epsilon is -1") && Catch::Contains("2^-50"));
}

TEST_CASE("Laplace bad input: sensitivity", "[laplace][errors]") {
  CHECK_THROWS_AS(laplace_mechanism(std::numeric_limits<double>::infinity(), 1.0), std::invalid_argument);
  CHECK_THROWS_AS(laplace_mechanism(std::nan(""), 1.0), std::invalid_argument);
  CHECK_THROWS_AS(laplace_mechanism(0.0, 1.0), std::invalid_argument);
  CHECK_THROWS_WITH(laplace_mechanism(-0.0, 1.0), Catch::Contains("-0.0"));
  CHECK_THROWS_AS(laplace_mechanism(-2.0, 1.0), std::invalid_argument);
  // Overflowing scale: huge sensitivity over tiny epsilon.
  CHECK_THROWS_AS(laplace_mechanism(1e300, 1e-15), std::invalid_argument);
}

TEST_CASE("Laplace bad input: non-finite statistics are never released", "[laplace][errors]") {
  const laplace_mechanism m(1.0, 1.0);
  std::mt19937_64 g(1);
  CHECK_THROWS_WITH(m.release(vec({1.0, std::nan("")}), g), Catch::Contains("s[1] is nan"));
  CHECK_THROWS_AS(m.release(vec({std::numeric_limits<double>::infinity()}), g), std::invalid_argument);
}

TEST_CASE("published(b): the noise of someone else's release, for inference only", "[laplace][published]") {
  const auto m = laplace_mechanism::published(2.0);
  const laplace_mechanism same(1.0, 0.5);  // the same scale b = 2 from a sensitivity and a budget
  const Eigen::VectorXd z = Eigen::Vector2d(0.3, -1.2), s = Eigen::Vector2d(0.1, 0.4), t = Eigen::Vector2d(0.2, 0.4);
  CHECK(m.scale() == 2.0);
  CHECK(m.is_published());
  CHECK_FALSE(same.is_published());
  CHECK(m.log_likelihood(z, s) == same.log_likelihood(z, s));
  CHECK(m.log_density_change(z, s, t) == same.log_density_change(z, s, t));
  CHECK(std::isinf(m.budget().epsilon));
  CHECK(std::isinf(m.epsilon()));
  std::mt19937_64 g(1);
  CHECK_THROWS_WITH(m.release(s, g), Catch::Contains("published noise scale"));
  CHECK_THROWS_AS(m.release(s), std::logic_error);
  CHECK_THROWS_WITH(laplace_mechanism::published(-1.0), Catch::Contains("scale"));
  CHECK_THROWS_AS(laplace_mechanism::published(std::numeric_limits<double>::infinity()), std::invalid_argument);
}
