// factored_exponential_mechanism (mechanisms/factored_exponential.hpp; docs/histogram-measurements.md B.2, B.5,
// B.9-2): privacy exhaustively over the coin's sufficient statistic (substitution moves k by at most 1), with a
// mechanism whose exponent is twice too large as the negative control; the Gumbel-max release against softmax by a
// chi-square test; the clamped recipe's degeneracy and the rescaled score's peak (spec B.5's computed values); clamping,
// NaN scores and argument errors.
#include <catch2/catch.hpp>

#include <Eigen/Core>
#include <boost/math/distributions/chi_squared.hpp>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "privpost/mechanisms/factored_exponential.hpp"
#include "support/fem_coin.hpp"

using namespace privpost;
using privpost::test::clamped_coin_score;
using privpost::test::rescaled_coin_score;

namespace factored_exponential_test {
// Scores for the candidate_score checks below (declared only: the concept looks at signatures).
struct integer_score {
  int operator()(std::size_t j, const double& x) const;
};
struct text_record_score {
  double operator()(std::size_t j, const std::string& x) const;
};
struct candidate_only_score {
  double operator()(std::size_t j) const;
};
struct text_valued_score {
  std::string operator()(std::size_t j, const double& x) const;
};

static_assert(candidate_score<clamped_coin_score, double>);
static_assert(candidate_score<integer_score, double>);          // a score converts to double
static_assert(!candidate_score<text_record_score, double>);     // scores another record type
static_assert(!candidate_score<candidate_only_score, double>);  // ignores the record
static_assert(!candidate_score<text_valued_score, double>);     // not a number

// max over z and k < n of |log p(z | k) - log p(z | k + 1)| at n = 100.
template <class Score>
double largest_log_ratio(const factored_exponential_mechanism<double, Score>& m) {
  const Eigen::MatrixXd t = test::coin_log_release_table(m, 100);
  double worst = 0.0;
  for (int k = 0; k < 100; ++k) worst = std::max(worst, (t.row(k) - t.row(k + 1)).cwiseAbs().maxCoeff());
  return worst;
}
}  // namespace factored_exponential_test

using namespace factored_exponential_test;

TEST_CASE("factored_exponential_mechanism: epsilon-DP exhaustively over the coin's count", "[fem]") {
  // Spec B.9-2: epsilon = 1 on the declared range [-1, 0] (kappa = 1/2), rescaled and clamped scores.
  const factored_exponential_mechanism<double, rescaled_coin_score> rescaled(9, {}, {-1.0, 0.0}, 1.0);
  const factored_exponential_mechanism<double, clamped_coin_score> clamped(9, {}, {-1.0, 0.0}, 1.0);
  CHECK(rescaled.exponent() == 0.5);
  CHECK(rescaled.budget() == privacy_budget{1.0, 0.0});
  const double r = largest_log_ratio(rescaled), c = largest_log_ratio(clamped);
  INFO("largest |log p(z | k) - log p(z | k + 1)|: rescaled " << r << ", clamped " << c);
  CHECK(r <= 1.0 + 1e-12);
  CHECK(c <= 1.0 + 1e-12);
  CHECK(r > 0.5);  // the bound is not vacuous: the worst pair uses more than half the budget
  // The negative control: kappa = epsilon / Delta_u (the factor 2 of the normaliser forgotten) breaks epsilon = 1.
  const factored_exponential_mechanism<double, rescaled_coin_score> twice(9, {}, {-1.0, 0.0}, 2.0);
  CHECK(largest_log_ratio(twice) > 1.0 + 1e-3);
}

TEST_CASE("factored_exponential_mechanism: the Gumbel-max release is softmax(kappa u) distributed", "[fem]") {
  const auto m = test::coin_mechanism<rescaled_coin_score>(0.5);
  std::vector<double> records(100, 0.0);
  for (int i = 0; i < 70; ++i) records[static_cast<std::size_t>(i)] = 1.0;
  Eigen::VectorXd expected = test::coin_log_release(m, 70, 100);
  expected = expected.array().exp().matrix();
  const Eigen::VectorXd u = m.scores(records);
  const double log_p = m.log_likelihood(6, u);
  CHECK(std::exp(log_p) == Approx(expected(6)).epsilon(1e-12));
  std::mt19937_64 g(9);
  constexpr int releases = 200000;
  Eigen::VectorXd count = Eigen::VectorXd::Zero(9);
  for (int i = 0; i < releases; ++i) count(static_cast<Eigen::Index>(m.release(std::span<const double>(records), g))) += 1.0;
  // Pearson's statistic over the candidates expected at least 5 times (the rest pooled), p > 0.001.
  double chi2 = 0.0, pooled_count = 0.0, pooled_expected = 0.0;
  int cells = 0;
  for (Eigen::Index j = 0; j < 9; ++j) {
    const double e = releases * expected(j);
    if (e < 5.0) {
      pooled_count += count(j);
      pooled_expected += e;
      continue;
    }
    chi2 += (count(j) - e) * (count(j) - e) / e;
    ++cells;
  }
  if (pooled_expected > 0.0) {
    chi2 += (pooled_count - pooled_expected) * (pooled_count - pooled_expected) / std::max(pooled_expected, 1e-300);
    ++cells;
  }
  const double p = boost::math::cdf(boost::math::complement(boost::math::chi_squared_distribution<double>(cells - 1), chi2));
  INFO("chi-square " << chi2 << " on " << cells - 1 << " df, p " << p);
  CHECK(p > 1e-3);
}

TEST_CASE("the clamped recipe is nearly degenerate; the rescaled score peaks at the truth", "[fem]") {
  // Spec B.5 (computed): n = 100, theta = 0.7. Clamped: p(z = 0.9) = 0.983 at kappa 0.5 and 0.549 at kappa 0.1, and
  // z = 0.7 never beats z = 0.9 (u_0.7 - u_0.9 = k (ln 0.7 - ln 0.9) < 0); rescaled: the mode is z = 0.7 with 0.381 at
  // kappa 0.5.
  const Eigen::MatrixXd clamped5 = test::coin_log_release_table(test::coin_mechanism<clamped_coin_score>(0.5), 100);
  const Eigen::MatrixXd clamped1 = test::coin_log_release_table(test::coin_mechanism<clamped_coin_score>(0.1), 100);
  const Eigen::MatrixXd rescaled5 = test::coin_log_release_table(test::coin_mechanism<rescaled_coin_score>(0.5), 100);
  CHECK(test::coin_marginal(clamped5, 8, 0.7) == Approx(0.983).margin(5e-4));
  CHECK(test::coin_marginal(clamped1, 8, 0.7) == Approx(0.549).margin(5e-4));
  for (int k = 1; k <= 100; ++k) CHECK(clamped5(k, 6) < clamped5(k, 8));
  Eigen::VectorXd marginal(9);
  for (std::size_t j = 0; j < 9; ++j) marginal(static_cast<Eigen::Index>(j)) = test::coin_marginal(rescaled5, j, 0.7);
  Eigen::Index mode = 0;
  marginal.maxCoeff(&mode);
  CHECK(mode == 6);
  CHECK(marginal(6) == Approx(0.381).margin(5e-4));
}

TEST_CASE("factored_exponential_mechanism: clamping and bad input", "[fem]") {
  auto wild = [](std::size_t j, const double& x) {
    if (j == 0) return std::numeric_limits<double>::quiet_NaN();
    return j == 1 ? 5.0 * x : -5.0;
  };
  const factored_exponential_mechanism<double, decltype(wild)> m(3, wild, {-1.0, 0.0}, 1.0);
  const Eigen::VectorXd c = m.contribution(1.0);
  CHECK(c(0) == -1.0);  // NaN counts as lo
  CHECK(c(1) == 0.0);   // 5 clamped to hi
  CHECK(c(2) == -1.0);  // -5 clamped to lo
  CHECK_THROWS_AS(m.log_likelihood(3, Eigen::Vector3d::Zero()), std::invalid_argument);
  CHECK_THROWS_AS(m.log_likelihood(0, Eigen::Vector2d::Zero()), std::invalid_argument);
  CHECK_THROWS_AS(m.log_likelihood(0, Eigen::Vector3d(0, std::nan(""), 0)), std::invalid_argument);
  using mech = factored_exponential_mechanism<double, rescaled_coin_score>;
  CHECK_THROWS_AS(mech(1, {}, {-1.0, 0.0}, 1.0), std::invalid_argument);
  CHECK_THROWS_AS(mech(9, {}, {0.0, 0.0}, 1.0), std::invalid_argument);
  CHECK_THROWS_AS(mech(9, {}, {-std::numeric_limits<double>::infinity(), 0.0}, 1.0), std::invalid_argument);
  CHECK_THROWS_AS(mech(9, {}, {-1.0, 0.0}, 0.0), std::invalid_argument);
  CHECK_THROWS_AS(mech(9, {}, {-1.0, 0.0}, std::nan("")), std::invalid_argument);
}
