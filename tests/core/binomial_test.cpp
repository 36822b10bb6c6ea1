// draw_binomial and draw_multinomial (core/random/binomial.hpp, docs/design-cgm.md Sec. 5.6) against their exact
// laws by Pearson's chi-square (tests/support/statistical.hpp: pass at p > 1e-3, power shown at p < 1e-6; 40,000 draws
// per setting, fixed seeds), over both branches (inversion below n min(p, 1 - p) = 10, BTRD above), p > 1/2 by symmetry,
// and n from 1 to 2^40; then bad input and the bounded rejection loop.
#include <catch2/catch.hpp>

#include <algorithm>
#include <boost/math/distributions/binomial.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <stdexcept>
#include <vector>

#include "privpost/core/errors.hpp"
#include "privpost/core/random/binomial.hpp"
#include "support/statistical.hpp"

using namespace privpost;

namespace {
constexpr int draws = 40000;

// Chi-square p-value of `draws` Binomial(n, p_draw) draws against the Binomial(n, p_law) pmf. Bins: every value for
// n <= 80, else about 60 intervals between mean -/+ 4.5 sd; the two tails are bins of their own.
double binomial_p_value(std::mt19937_64& g, std::int64_t n, double p_draw, double p_law) {
  const boost::math::binomial_distribution<double> law(static_cast<double>(n), p_law);
  std::vector<double> edges;  // upper ends (inclusive) of the bins; the last bin runs to n
  if (n <= 80) {
    for (std::int64_t k = 0; k < n; ++k) edges.push_back(static_cast<double>(k));
  } else {
    const double mean = static_cast<double>(n) * p_law, sd = std::sqrt(mean * (1.0 - p_law));
    for (int j = 0; j <= 60; ++j) {
      const double e = std::floor(mean + sd * (-4.5 + 9.0 * j / 60.0));
      if (e >= 0.0 && e < static_cast<double>(n) && (edges.empty() || e > edges.back())) edges.push_back(e);
    }
  }
  std::vector<double> observed(edges.size() + 1, 0.0), probability(edges.size() + 1, 0.0);
  for (int i = 0; i < draws; ++i) {
    const auto k = static_cast<double>(draw_binomial(g, n, p_draw));
    REQUIRE(k >= 0.0);
    REQUIRE(k <= static_cast<double>(n));
    const auto bin = static_cast<std::size_t>(std::lower_bound(edges.begin(), edges.end(), k) - edges.begin());
    observed[bin] += 1.0;
  }
  double below = 0.0;
  for (std::size_t b = 0; b < edges.size(); ++b) {
    const double c = boost::math::cdf(law, edges[b]);
    probability[b] = c - below;
    below = c;
  }
  probability.back() = 1.0 - below;
  return test::chi_square_p_value(observed, probability);
}

// Returns the largest value every time: draw_uniform then sits at 1 - 2^-54 and BTRD's candidates leave [0, n].
struct stuck_engine {
  using result_type = std::uint64_t;
  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return std::numeric_limits<result_type>::max(); }
  result_type operator()() { return max(); }
};
}  // namespace

TEST_CASE("draw_binomial matches the binomial pmf on both branches (chi-square)", "[draws]") {
  std::mt19937_64 g(1993);
  struct setting {
    std::int64_t n;
    double p;
  };
  // Inversion: (1, 0.3), (5, 0.3), (30, 0.2), (10^6, 4e-6), (50, 0.9) by symmetry. BTRD: (40, 0.5), (100, 0.3),
  // (1000, 0.93) by symmetry, (10^7, 0.01), (2^40, 0.3); (200, 0.06) sits at m = 12, where the recursion of step 3.1
  // and the squeeze of step 3.2 both run.
  for (const setting s : {setting{1, 0.3}, setting{5, 0.3}, setting{30, 0.2}, setting{1'000'000, 4e-6}, setting{50, 0.9},
                          setting{40, 0.5}, setting{100, 0.3}, setting{1000, 0.93}, setting{10'000'000, 0.01},
                          setting{std::int64_t{1} << 40, 0.3}, setting{200, 0.06}}) {
    INFO("n " << s.n << ", p " << s.p);
    const double p_value = binomial_p_value(g, s.n, s.p, s.p);
    INFO("chi-square p " << p_value);
    REQUIRE(p_value > test::ks_level);
  }
}

TEST_CASE("the binomial chi-square has power: p off by 0.01 is rejected on each branch", "[draws]") {
  std::mt19937_64 g(1994);
  REQUIRE(binomial_p_value(g, 100, 0.31, 0.30) < test::power_level);  // BTRD
  REQUIRE(binomial_p_value(g, 60, 0.06, 0.05) < test::power_level);   // inversion
}

TEST_CASE("draw_binomial: the edges of its domain", "[draws]") {
  std::mt19937_64 g(3);
  REQUIRE(draw_binomial(g, 0, 0.4) == 0);
  REQUIRE(draw_binomial(g, 17, 0.0) == 0);
  REQUIRE(draw_binomial(g, 17, 1.0) == 17);
  const std::int64_t big = std::int64_t{1} << 53;
  const std::int64_t k = draw_binomial(g, big, 0.5);
  REQUIRE(std::abs(static_cast<double>(k) - 0.5 * static_cast<double>(big)) < 10.0 * std::sqrt(0.25 * static_cast<double>(big)));
}

TEST_CASE("draw_binomial rejects bad n and p by name and bounds its rejection loop", "[draws][errors]") {
  std::mt19937_64 g(4);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  REQUIRE_THROWS_WITH(draw_binomial(g, -1, 0.5), Catch::Contains("n") && Catch::Contains("[0, 2^53]"));
  REQUIRE_THROWS_AS(draw_binomial(g, (std::int64_t{1} << 53) + 1, 0.5), std::invalid_argument);
  REQUIRE_THROWS_WITH(draw_binomial(g, 10, nan), Catch::Contains("p") && Catch::Contains("[0, 1]"));
  REQUIRE_THROWS_AS(draw_binomial(g, 10, 1.5), std::invalid_argument);
  REQUIRE_THROWS_AS(draw_binomial(g, 10, -1e-300), std::invalid_argument);
  stuck_engine stuck;
  REQUIRE_THROWS_AS(draw_binomial(stuck, 1000, 0.3), retry_limit_exceeded);  // BTRD: 1000 rejections, then a throw
  REQUIRE(draw_binomial(stuck, 1'000'000, 1e-6) <= 1000);                    // inversion: the walk stops at 1000
}

TEST_CASE("draw_multinomial matches the multinomial pmf, zero-weight cells stay empty (chi-square)", "[draws]") {
  std::mt19937_64 g(5);
  const Eigen::VectorXd w = (Eigen::VectorXd(6) << 0.4, 0.0, 1.0, 0.6, 0.0, 0.0).finished();  // unnormalised
  const std::int64_t n = 4;
  // Outcomes: (c0, c2, c3) with c0 + c2 + c3 = 4, pmf 4! / (c0! c2! c3!) 0.2^c0 0.5^c2 0.3^c3.
  std::map<std::pair<int, int>, std::size_t> index;
  std::vector<double> probability;
  for (int c0 = 0; c0 <= 4; ++c0)
    for (int c2 = 0; c0 + c2 <= 4; ++c2) {
      const int c3 = 4 - c0 - c2;
      index[{c0, c2}] = probability.size();
      probability.push_back(std::tgamma(5.0) / (std::tgamma(c0 + 1.0) * std::tgamma(c2 + 1.0) * std::tgamma(c3 + 1.0)) *
                            std::pow(0.2, c0) * std::pow(0.5, c2) * std::pow(0.3, c3));
    }
  std::vector<double> observed(probability.size(), 0.0);
  Eigen::VectorXd counts(6);
  for (int i = 0; i < draws; ++i) {
    draw_multinomial(g, n, w, counts);
    REQUIRE(counts.sum() == 4.0);
    REQUIRE(counts(1) == 0.0);
    REQUIRE(counts(4) == 0.0);
    REQUIRE(counts(5) == 0.0);
    observed[index.at({static_cast<int>(counts(0)), static_cast<int>(counts(2))})] += 1.0;
  }
  REQUIRE(test::chi_square_p_value(observed, probability) > test::ks_level);
  // Large n: whole numbers summing to n.
  draw_multinomial(g, 10'000'000'000, w, counts);
  REQUIRE(counts.sum() == 1e10);
  REQUIRE((counts.array() == counts.array().floor()).all());
}

TEST_CASE("draw_multinomial rejects bad weights, n and sizes by name", "[draws][errors]") {
  std::mt19937_64 g(6);
  Eigen::VectorXd counts(3);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  REQUIRE_THROWS_WITH(draw_multinomial(g, 5, Eigen::Vector3d(0.2, -0.1, 0.9), counts), Catch::Contains("weight"));
  REQUIRE_THROWS_AS(draw_multinomial(g, 5, Eigen::Vector3d(0.2, nan, 0.9), counts), std::invalid_argument);
  REQUIRE_THROWS_WITH(draw_multinomial(g, 5, Eigen::Vector3d::Zero(), counts), Catch::Contains("sum of the weights"));
  REQUIRE_THROWS_AS(draw_multinomial(g, -2, Eigen::Vector3d(1, 1, 1), counts), std::invalid_argument);
  Eigen::VectorXd short_counts(2);
  REQUIRE_THROWS_WITH(draw_multinomial(g, 5, Eigen::Vector3d(1, 1, 1), short_counts), Catch::Contains("size of counts"));
}
