// Tests of privpost/core/random/discrete_noise.hpp and privpost/mechanisms/lattice.hpp, discrete_laplace.hpp and
// discrete_gaussian.hpp. Properties:
//  1. the exact integer samplers' output law is the exact pmf: Pearson chi-square over 10^5 draws (pass p > 0.001),
//     with power: the same draws are rejected (p < 1e-6) against the pmf at 1.1 times the scale or variance;
//     Bernoulli(exp(-x)) matches exp(-x) on rational x, including x > 1;
//  2. the mechanisms release lattice points only (z / gamma is a whole number, whatever the statistic), their noise law
//     is the pmf at the mechanism's scale, and release() without an engine uses the CSPRNG;
//  3. calibration: the lattice sensitivity (exact and rounded statistics), the scale rounded up, never down; the
//     privacy guarantee computed exactly from the pmf: the Laplace log-ratio of neighbours is <= epsilon, and the
//     discrete Gaussian's hockey-stick divergence at epsilon is <= delta (a sum over the lattice, not a simulation);
//  4. log_likelihood is the pmf (it sums to 1 over the lattice) and, for statistics on the lattice, differs from the
//     continuous view's log density by a constant: the scale-mixture view is exact there;
//  5. Mironov's attack (CCS 2012): releases of the textbook floating-point Laplace (s + b log u) from s = 0 are often
//     impossible from s = 1, so their low bits reveal s (infinite privacy loss); every lattice release is possible
//     from both, with a log-ratio within epsilon;
//  6. bad input: each argument, an off-lattice statistic (refused without printing it) and an off-lattice release.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "privpost/core/random/discrete_noise.hpp"
#include "privpost/mechanisms/discrete_gaussian.hpp"
#include "privpost/mechanisms/discrete_laplace.hpp"
#include "privpost/mechanisms/gaussian.hpp"
#include "privpost/mechanisms/laplace.hpp"
#include "privpost/mechanisms/privacy_accountant.hpp"
#include "support/statistical.hpp"

using namespace privpost;

namespace {

constexpr int pmf_draws = 100000;
constexpr int support_radius = 4000;  // the pmf tables cover [-4000, 4000]

// Exact pmf tables on [-R, R] (the mass beyond R is below 1e-30 for every scale used here).
std::vector<double> laplace_pmf(double scale) {
  const double q = std::exp(-1.0 / scale);
  std::vector<double> p(2 * support_radius + 1);
  for (int y = -support_radius; y <= support_radius; ++y) p[y + support_radius] = (1 - q) / (1 + q) * std::pow(q, std::abs(y));
  return p;
}

std::vector<double> gaussian_pmf(double variance) {
  std::vector<double> p(2 * support_radius + 1);
  double total = 0.0;
  for (int y = -support_radius; y <= support_radius; ++y) total += p[y + support_radius] = std::exp(-0.5 * y * y / variance);
  for (double& v : p) v /= total;
  return p;
}

// Chi-square p-value of integer pmf_draws against a pmf table, bins ordered from the centre outwards so that the pooled
// tails stay together.
double lattice_chi_square(const std::vector<std::int64_t>& ys, const std::vector<double>& pmf) {
  std::vector<double> counts(pmf.size(), 0.0);
  for (const auto y : ys) {
    REQUIRE(std::abs(y) <= support_radius);
    counts[static_cast<std::size_t>(y + support_radius)] += 1.0;
  }
  std::vector<double> observed, probability;
  observed.push_back(counts[support_radius]);
  probability.push_back(pmf[support_radius]);
  for (int r = 1; r <= support_radius; ++r)
    for (const int y : {-r, r}) {
      observed.push_back(counts[static_cast<std::size_t>(y + support_radius)]);
      probability.push_back(pmf[static_cast<std::size_t>(y + support_radius)]);
    }
  return test::chi_square_p_value(observed, probability);
}

Eigen::VectorXd dvec(std::initializer_list<double> v) {
  Eigen::VectorXd out(static_cast<Eigen::Index>(v.size()));
  Eigen::Index i = 0;
  for (double x : v) out(i++) = x;
  return out;
}

bool says(const std::exception& e, const std::string& what) { return std::string(e.what()).find(what) != std::string::npos; }

}  // namespace

TEST_CASE("Bernoulli(exp(-num/den)) is exact, including num/den > 1", "[discrete]") {
  std::mt19937_64 g(1301);
  for (const auto& [num, den] : std::vector<std::pair<int, int>>{{0, 1}, {1, 3}, {1, 1}, {7, 4}, {5, 2}}) {
    const double p = std::exp(-static_cast<double>(num) / den);
    int hits = 0;
    for (int i = 0; i < pmf_draws; ++i) hits += bernoulli_exp(g, static_cast<unsigned>(num), static_cast<unsigned>(den)) ? 1 : 0;
    const double se = std::sqrt(p * (1 - p) / pmf_draws) + 1e-12;
    INFO("x = " << num << "/" << den << ": " << hits << " of " << pmf_draws << ", p = " << p);
    CHECK(std::abs(hits / static_cast<double>(pmf_draws) - p) <= 4.5 * se);
  }
  // uniform_below covers {0, ..., n-1} evenly for an n above 2^64
  const detail::uint128 n = (detail::uint128{1} << 70) + 12345;
  int upper_half = 0;
  for (int i = 0; i < 20000; ++i) {
    const detail::uint128 x = uniform_below(g, n);
    REQUIRE(x < n);
    upper_half += x >= n / 2 ? 1 : 0;
  }
  CHECK(std::abs(upper_half - 10000) < 4.5 * 70.7);
}

TEST_CASE("discrete Laplace pmf_draws follow the exact pmf (chi-square, with power)", "[discrete]") {
  std::mt19937_64 g(1303);
  // scale t / s: 0.7, 3, 10.5 and a scale that is not a simple fraction (2^20 denominator, as the mechanism uses)
  for (const auto& [t, s] : std::vector<std::pair<std::uint64_t, std::uint64_t>>{{7, 10}, {3, 1}, {21, 2}, {5767169, 1u << 20}}) {
    const double scale = static_cast<double>(t) / static_cast<double>(s);
    std::vector<std::int64_t> ys(pmf_draws);
    for (auto& y : ys) y = draw_discrete_laplace(g, t, s);
    const double p = lattice_chi_square(ys, laplace_pmf(scale));
    const double p_wrong = lattice_chi_square(ys, laplace_pmf(1.1 * scale));
    INFO("scale " << scale << ": chi-square p " << p << ", against 1.1 x scale p " << p_wrong);
    CHECK(p > test::ks_level);
    CHECK(p_wrong < test::power_level);
  }
}

TEST_CASE("discrete Gaussian pmf_draws follow the exact pmf (chi-square, with power)", "[discrete]") {
  std::mt19937_64 g(1307);
  // sigma^2 = p / q: 0.3 (below 1), 2, 100.5, and 2^-10 steps as the mechanism uses
  for (const auto& [p, q] : std::vector<std::pair<std::uint64_t, std::uint64_t>>{{3, 10}, {2, 1}, {201, 2}, {29697, 1024}}) {
    const double variance = static_cast<double>(p) / static_cast<double>(q);
    std::vector<std::int64_t> ys(pmf_draws);
    for (auto& y : ys) y = draw_discrete_gaussian(g, p, q);
    const double pv = lattice_chi_square(ys, gaussian_pmf(variance));
    const double p_wrong = lattice_chi_square(ys, gaussian_pmf(1.1 * variance));
    INFO("sigma^2 " << variance << ": chi-square p " << pv << ", against 1.1 x sigma^2 p " << p_wrong);
    CHECK(pv > test::ks_level);
    CHECK(p_wrong < test::power_level);
  }
}

TEST_CASE("discrete mechanisms release lattice points with the pmf's noise", "[discrete]") {
  std::mt19937_64 g(1309);
  SECTION("Laplace, counts at gamma = 1") {
    const discrete_laplace_mechanism m(1.0, 0.5);
    CHECK(m.lattice_sensitivity() == 1.0);
    CHECK(m.lattice_scale() == 2.0);
    CHECK(m.scale() == 2.0);
    CHECK(m.budget() == privacy_budget{0.5, 0.0});
    std::vector<std::int64_t> ys;
    for (int i = 0; i < pmf_draws / 2; ++i) {
      const Eigen::VectorXd z = m.release(dvec({7.0, 0.0}), g);
      for (Eigen::Index j = 0; j < 2; ++j) REQUIRE(z(j) == std::floor(z(j)));
      ys.push_back(static_cast<std::int64_t>(z(0)) - 7);
      ys.push_back(static_cast<std::int64_t>(z(1)));
    }
    CHECK(lattice_chi_square(ys, laplace_pmf(2.0)) > test::ks_level);
    CHECK(lattice_chi_square(ys, laplace_pmf(2.2)) < test::power_level);
  }
  SECTION("Gaussian, rounded statistics at gamma = 0.25") {
    const discrete_gaussian_mechanism m(1.0, 1.0, 1e-5, lattice{0.25, lattice_statistic::rounded, 2});
    // the statistic 1.3 is rounded to 1.25; the release is 0.25 (5 + Y)
    std::vector<std::int64_t> ys;
    for (int i = 0; i < pmf_draws / 2; ++i) {
      const Eigen::VectorXd z = m.release(dvec({1.3, -0.1}), g);
      for (Eigen::Index j = 0; j < 2; ++j) REQUIRE(z(j) * 4.0 == std::floor(z(j) * 4.0));
      ys.push_back(static_cast<std::int64_t>(std::llround(z(0) * 4.0)) - 5);
      ys.push_back(static_cast<std::int64_t>(std::llround(z(1) * 4.0)));  // -0.1 rounds to 0
    }
    CHECK(lattice_chi_square(ys, gaussian_pmf(m.lattice_variance())) > test::ks_level);
    CHECK(lattice_chi_square(ys, gaussian_pmf(1.1 * m.lattice_variance())) < test::power_level);
  }
  SECTION("the default release reads the OS CSPRNG") {
    const discrete_laplace_mechanism m(1.0, 0.1);
    const Eigen::VectorXd s = dvec({10.0, 20.0, 30.0, 40.0});
    const Eigen::VectorXd a = m.release(s), b = m.release(s);
    CHECK(a != b);  // equal with probability below 10^-4
    CHECK((a.array() == a.array().floor()).all());
  }
}

TEST_CASE("discrete mechanisms: lattice sensitivity and rounded-up noise", "[discrete]") {
  // exact statistics: the lattice sensitivity is the declared one in lattice units
  CHECK(discrete_laplace_mechanism(2.0, 1.0).lattice_sensitivity() == 2.0);
  CHECK(discrete_laplace_mechanism(0.3, 1.0, lattice{0.1}).lattice_sensitivity() == 3.0);  // 0.3 / 0.1 = 2.9999...
  CHECK(discrete_gaussian_mechanism(std::sqrt(2.0), 1.0, 1e-6).lattice_sensitivity() == Approx(std::sqrt(2.0)).epsilon(1e-15));
  // rounded statistics of dimension d: ceil(D1 / gamma) + d, and D2 / gamma + sqrt(d) squared down to a whole number
  CHECK(discrete_laplace_mechanism(1.0, 1.0, lattice{0.5, lattice_statistic::rounded, 3}).lattice_sensitivity() == 5.0);
  CHECK(discrete_gaussian_mechanism(1.0, 1.0, 1e-6, lattice{1.0, lattice_statistic::rounded, 4}).lattice_sensitivity() == 3.0);
  // the scale is rounded up to a multiple of 2^-20, never down
  for (const double eps : {0.1, 0.3, 0.7, 1.9, 7.3}) {
    const discrete_laplace_mechanism m(1.0, eps);
    INFO("epsilon " << eps);
    CHECK(m.lattice_scale() >= 1.0 / eps);
    CHECK(m.lattice_scale() < 1.0 / eps + 0x1.0p-20 * 1.0000001);
    CHECK(m.lattice_scale() * 0x1.0p20 == std::floor(m.lattice_scale() * 0x1.0p20));
  }
  // sigma^2 rounded up to a multiple of 2^-10, so rho is at most the target and (epsilon, delta) holds through zCDP
  for (const auto& [eps, delta] : std::vector<std::pair<double, double>>{{0.1, 1e-6}, {1.0, 1e-5}, {3.0, 1e-9}}) {
    const discrete_gaussian_mechanism m(1.0, eps, delta);
    const double rho = m.zcdp_rho();
    INFO("epsilon " << eps << ", delta " << delta << ": rho " << rho << ", sigma^2 " << m.lattice_variance());
    CHECK(rho + 2.0 * std::sqrt(rho * std::log(1.0 / delta)) <= eps * (1 + 1e-12));
    CHECK(rho + 2.0 * std::sqrt(rho * std::log(1.0 / delta)) >= eps * (1 - 1e-3));  // and not far below it
    CHECK(m.lattice_variance() * 1024.0 == std::floor(m.lattice_variance() * 1024.0));
    CHECK(zcdp_rho(m) == rho);
  }
  // the accountant composes them like their continuous counterparts
  privacy_accountant ledger({1.0, 1e-5});
  ledger.charge(discrete_laplace_mechanism(1.0, 0.5), "counts");
  ledger.charge(discrete_gaussian_mechanism(1.0, 0.25, 1e-6), "means");
  CHECK_THROWS_AS(ledger.charge(discrete_laplace_mechanism(1.0, 0.5), "more"), budget_exceeded);
}

TEST_CASE("discrete mechanisms: the privacy loss computed exactly from the pmf", "[discrete][privacy]") {
  // Laplace: neighbours whose lattice points differ by the lattice sensitivity; the log pmf ratio at every output
  for (const double eps : {0.1, 1.0, 2.5}) {
    const discrete_laplace_mechanism m(2.0, eps);
    double worst = 0.0;
    for (int z = -200; z <= 200; ++z) {
      const double r = m.log_likelihood(dvec({static_cast<double>(z)}), dvec({0.0})) -
                       m.log_likelihood(dvec({static_cast<double>(z)}), dvec({2.0}));
      worst = std::max(worst, std::abs(r));
    }
    INFO("epsilon " << eps << ": largest |log ratio| " << worst);
    CHECK(worst <= eps * (1 + 1e-12));
    CHECK(worst >= eps * (1 - 1e-4));  // the bound is attained: the noise is not wastefully large
  }
  // Gaussian: hockey-stick divergence sum_y max(0, p(y) - e^eps p(y - D)) over the lattice, D = 1, must be <= delta
  for (const auto& [eps, delta] : std::vector<std::pair<double, double>>{{0.5, 1e-5}, {1.0, 1e-6}, {2.0, 1e-9}}) {
    const discrete_gaussian_mechanism m(1.0, eps, delta);
    const auto pmf = gaussian_pmf(m.lattice_variance());
    double divergence = 0.0;
    for (int y = -support_radius + 1; y <= support_radius; ++y)
      divergence += std::max(0.0, pmf[static_cast<std::size_t>(y + support_radius)] -
                                      std::exp(eps) * pmf[static_cast<std::size_t>(y - 1 + support_radius)]);
    INFO("epsilon " << eps << ", delta " << delta << ", sigma " << std::sqrt(m.lattice_variance())
                    << ": exact hockey-stick divergence " << divergence);
    CHECK(divergence <= delta);
  }
}

TEST_CASE("discrete log_likelihood is the pmf, and the continuous view is exact on the lattice", "[discrete]") {
  const discrete_laplace_mechanism lap(1.0, 0.4, lattice{0.5});
  const discrete_gaussian_mechanism gau(1.0, 0.8, 1e-6, lattice{0.5});
  const laplace_mechanism lap_view(lap.scale(), 1.0);  // scale gamma t
  double lap_total = 0.0, gau_total = 0.0;
  for (int k = -3000; k <= 3000; ++k) {
    const Eigen::VectorXd z = dvec({0.5 * k});
    lap_total += std::exp(lap.log_likelihood(z, dvec({1.5})));
    gau_total += std::exp(gau.log_likelihood(z, dvec({1.5})));
  }
  CHECK(lap_total == Approx(1.0).epsilon(1e-12));
  CHECK(gau_total == Approx(1.0).epsilon(1e-12));
  // log p_discrete(z | s) - log p_continuous(z | s) does not depend on s on the lattice
  const Eigen::VectorXd z = dvec({2.5, -1.0});
  const double c_lap = lap.log_likelihood(z, dvec({0.0, 0.0})) - lap_view.log_likelihood(z, dvec({0.0, 0.0}));
  const double var = gau.sigma() * gau.sigma();
  auto gau_view = [&](const Eigen::VectorXd& s) { return -0.5 * (z - s).squaredNorm() / var; };
  const double c_gau = gau.log_likelihood(z, dvec({0.0, 0.0})) - gau_view(dvec({0.0, 0.0}));
  for (const auto& s : {dvec({3.0, 1.5}), dvec({-7.5, 20.0}), dvec({2.5, -1.0})}) {
    CHECK(lap.log_likelihood(z, s) - lap_view.log_likelihood(z, s) == Approx(c_lap).epsilon(1e-12));
    CHECK(gau.log_likelihood(z, s) - gau_view(s) == Approx(c_gau).epsilon(1e-12));
  }
  // the view's variances: Laplace mixes, Gaussian is fixed at (gamma sigma)^2
  std::mt19937_64 g(1311);
  CHECK(gau.draw_variance(g) == var);
  CHECK(gau.redraw_variance(3.0, g) == var);
  double mean = 0.0;
  for (int i = 0; i < 20000; ++i) mean += lap.draw_variance(g) / 20000.0;
  CHECK(mean == Approx(lap.noise_variance()).epsilon(0.05));
  CHECK(std::isfinite(lap.redraw_variance(0.0, g)));
  CHECK_THROWS_AS(lap.redraw_variance(std::numeric_limits<double>::max(), g), std::domain_error);
}

namespace {
// The textbook floating-point Laplace of Mironov's paper: s + sign * (b * -log(u)), u = k 2^-53, k uniform in
// [1, 2^53].
double textbook_noise(std::uint64_t k, double b) { return b * -std::log(static_cast<double>(k) * 0x1.0p-53); }

// Can the textbook mechanism at s output z? fl(s + sign * noise(k)) is monotone in k, so a binary search over k
// finds whether some k gives z exactly.
bool textbook_can_output(double z, double s, double b) {
  for (const double sign : {1.0, -1.0}) {
    // f(k) = fl(s + sign * noise(k)); noise decreases in k, so f decreases (sign +) or increases (sign -).
    auto f = [&](std::uint64_t k) { return s + sign * textbook_noise(k, b); };
    std::uint64_t lo = 1, hi = std::uint64_t{1} << 53;
    // find the first k with f(k) <= z (sign +) or f(k) >= z (sign -)
    auto past = [&](std::uint64_t k) { return sign > 0 ? f(k) <= z : f(k) >= z; };
    if (!past(hi)) continue;
    while (lo < hi) {
      const std::uint64_t mid = lo + (hi - lo) / 2;
      if (past(mid))
        hi = mid;
      else
        lo = mid + 1;
    }
    if (f(lo) == z) return true;
  }
  return false;
}
}  // namespace

TEST_CASE("Mironov's attack: the textbook floating-point Laplace leaks through its low bits, the lattice does not",
          "[discrete][privacy]") {
  std::mt19937_64 g(1313);
  const int releases = 2000;
  const double b = 1.0 / 0.5;  // sensitivity 1, epsilon 0.5
  int impossible_from_neighbour = 0;
  for (int i = 0; i < releases; ++i) {
    const std::uint64_t k = (g() >> 11) + 1;
    const double z = 0.0 + ((g() & 1u) ? 1.0 : -1.0) * textbook_noise(k, b);
    REQUIRE(textbook_can_output(z, 0.0, b));  // the search finds the true origin
    impossible_from_neighbour += textbook_can_output(z, 1.0, b) ? 0 : 1;
  }
  // Any release impossible from s = 1 but possible from s = 0 is an infinite privacy loss; Mironov found most are.
  INFO("textbook Laplace: " << impossible_from_neighbour << " of " << releases
                            << " releases from s = 0 are impossible from s = 1");
  CHECK(impossible_from_neighbour > releases / 10);

  // The lattice release: every output is possible from both neighbours, at a log-ratio within epsilon.
  const discrete_laplace_mechanism m(1.0, 0.5);
  double worst = 0.0;
  for (int i = 0; i < releases; ++i) {
    const Eigen::VectorXd z = m.release(dvec({0.0}), g);
    REQUIRE(z(0) == std::floor(z(0)));  // no low-order bits at all
    const double l0 = m.log_likelihood(z, dvec({0.0})), l1 = m.log_likelihood(z, dvec({1.0}));
    REQUIRE(std::isfinite(l1));
    worst = std::max(worst, std::abs(l0 - l1));
  }
  CHECK(worst <= 0.5 * (1 + 1e-12));
}

TEST_CASE("discrete mechanisms: bad input", "[discrete][errors]") {
  const double nan = std::nan(""), inf = std::numeric_limits<double>::infinity();
  CHECK_THROWS_AS(discrete_laplace_mechanism(0.0, 1.0), std::invalid_argument);
  CHECK_THROWS_AS(discrete_laplace_mechanism(nan, 1.0), std::invalid_argument);
  CHECK_THROWS_AS(discrete_laplace_mechanism(1.0, nan), std::invalid_argument);
  CHECK_THROWS_AS(discrete_laplace_mechanism(1.0, -1.0), std::invalid_argument);
  CHECK_THROWS_AS(discrete_laplace_mechanism(1.0, 1.0, lattice{0.0}), std::invalid_argument);
  CHECK_THROWS_AS(discrete_laplace_mechanism(1.0, 1.0, lattice{inf}), std::invalid_argument);
  CHECK_THROWS_AS(discrete_laplace_mechanism(1.0, 1.0, lattice{1e-310}), std::invalid_argument);  // denormal
  CHECK_THROWS_AS(discrete_laplace_mechanism(1.0, 1.0, lattice{1.0, lattice_statistic::rounded, 0}), std::invalid_argument);
  CHECK_THROWS_AS(discrete_laplace_mechanism(1.0, 1e-12), std::invalid_argument);  // scale 1e12 > 2^32 lattice units
  CHECK_THROWS_AS(discrete_gaussian_mechanism(1.0, 1.0, 0.0), std::invalid_argument);
  CHECK_THROWS_AS(discrete_gaussian_mechanism(1.0, 1.0, 1.0), std::invalid_argument);
  CHECK_THROWS_AS(discrete_gaussian_mechanism(1.0, 1e-9, 1e-6), std::invalid_argument);  // sigma far beyond 2^20
  CHECK_THROWS_AS(discrete_gaussian_mechanism(-1.0, 1.0, 1e-6), std::invalid_argument);
  try {
    (void)discrete_laplace_mechanism(1.0, 1.0, lattice{-0.5});
    FAIL("no exception");
  } catch (const std::invalid_argument& e) {
    CHECK(says(e, "granularity"));
  }

  std::mt19937_64 g(1317);
  const discrete_laplace_mechanism exact(1.0, 1.0);
  // an off-lattice statistic is refused, and its value is not printed (it is private)
  try {
    (void)exact.release(dvec({3.0, 12.345678}), g);
    FAIL("no exception");
  } catch (const std::invalid_argument& e) {
    CHECK(says(e, "not a multiple of the granularity"));
    CHECK(!says(e, "12.34"));
  }
  CHECK_THROWS_AS(exact.release(dvec({nan}), g), std::invalid_argument);
  // A statistic beyond 2^44 lattice units is clamped there, never refused: a refusal decided by the statistic's value
  // released something (one of two neighbouring data sets released, the other refused). Both neighbours of such a
  // pair are released, and from the same clamped point.
  CHECK(exact.lattice_spec().capacity() == 0x1.0p44);
  for (const double s : {1e300, 0x1.0p44 + 1.0, -1e20}) {
    const Eigen::VectorXd z = exact.release(dvec({s}), g);
    INFO("s " << s << ", z " << z(0));
    CHECK(std::abs(std::abs(z(0)) - 0x1.0p44) < 200.0);        // the clamped point plus Laplace(1) noise
    CHECK(std::isfinite(exact.log_likelihood(z, dvec({s}))));  // the likelihood is the clamped mechanism's
  }
  {  // the same for the discrete Gaussian (found by the mechanisms fuzzer: its release's likelihood was -inf)
    const discrete_gaussian_mechanism dg(1.0, 1.0, 1e-6);
    const Eigen::VectorXd z = dg.release(dvec({1e300}), g);
    CHECK(std::isfinite(dg.log_likelihood(z, dvec({1e300}))));
  }
  const discrete_laplace_mechanism rounded(1.0, 1.0, lattice{1.0, lattice_statistic::rounded, 2});
  CHECK_NOTHROW(rounded.release(dvec({0.4, 12.345678}), g));
  CHECK_THROWS_AS(rounded.release(dvec({1.0, 2.0, 3.0}), g), std::invalid_argument);  // more than the declared d = 2
  // large lattice indices with a granularity that is not a power of 2: gamma m rounds, and z / gamma still finds m
  const discrete_laplace_mechanism tenth(1.0, 1.0, lattice{0.1, lattice_statistic::rounded, 1});
  for (const double m : {1e9 + 7.0, 3e12 + 1.0, 0x1.0p44 - 3.0}) {
    const Eigen::VectorXd z = tenth.release(dvec({0.1 * m}), g);
    INFO("m " << m << ", z " << z(0));
    CHECK(std::isfinite(tenth.log_likelihood(z, dvec({0.1 * m}))));
  }
  {  // beyond the capacity (2^44 units, gamma 2^44): released at the clamped point, never refused
    const Eigen::VectorXd z = tenth.release(dvec({0.1 * 0x1.0p45}), g);
    CHECK(std::abs(z(0) / 0.1 - 0x1.0p44) < 200.0);
    CHECK(tenth.lattice_spec().capacity() == 0.1 * 0x1.0p44);
  }
  // a release that is not a lattice point is not from this mechanism
  CHECK_THROWS_AS(exact.log_likelihood(dvec({0.5}), dvec({0.0})), std::invalid_argument);
  CHECK_THROWS_AS(exact.log_likelihood(dvec({inf}), dvec({0.0})), std::invalid_argument);
  CHECK_THROWS_AS(exact.log_likelihood(dvec({1.0}), dvec({nan})), std::invalid_argument);
  CHECK_THROWS_AS(exact.log_likelihood(dvec({1.0, 2.0}), dvec({0.0})), std::invalid_argument);
  // the samplers' arguments
  CHECK_THROWS_AS(uniform_below(g, 0), std::invalid_argument);
  CHECK_THROWS_AS(bernoulli_exp(g, 1, 0), std::invalid_argument);
  CHECK_THROWS_AS(bernoulli_ratio(g, 2, 1), std::invalid_argument);
  CHECK_THROWS_AS(draw_discrete_laplace(g, 0, 1), std::invalid_argument);
  CHECK_THROWS_AS(draw_discrete_laplace(g, (std::uint64_t{1} << 52) + 1, 1), std::invalid_argument);
  CHECK_THROWS_AS(draw_discrete_gaussian(g, 0, 1), std::invalid_argument);
  CHECK_THROWS_AS(draw_discrete_gaussian(g, 1, 2048), std::invalid_argument);
}
