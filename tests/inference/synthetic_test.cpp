// Tests of privpost/inference/synthetic.hpp: synthetic data from the noise-aware posterior predictive.
//  1. The combining rules against their formulas on small hand-checkable sets, the negative-variance fallback, and
//     bad input (fewer than two sets, mismatched lengths, NaN, negative variances, record counts <= 0).
//  2. Coverage (binomial records, Laplace release): the combined 50% and 90% intervals from m = 20 synthetic sets
//     cover the true parameter at their nominal rates over M = 1000 simulated releases, within the library's coverage
//     tolerance (tests/support/calibration_checks.hpp: 3.5 binomial sd); one synthetic set analysed as if it were the
//     data (estimate +- z sqrt(variance)) under-covers and must fall outside it (the negative control).
//  3. Parameter draws spread over the chains; synthetic records in the family's support.
//  4. Table records from cell probabilities (row-major cells, a zero cell never drawn), bad input.
#include <catch2/catch.hpp>

#include <Eigen/Core>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include "privpost/core/random/beta.hpp"
#include "privpost/families/binomial.hpp"
#include "privpost/families/multinomial.hpp"
#include "privpost/families/normal.hpp"
#include "privpost/families/normal_known_variance.hpp"
#include "privpost/inference/calibration_study.hpp"
#include "privpost/inference/synthetic.hpp"
#include "privpost/mechanisms/laplace.hpp"
#include "privpost/samplers/gibbs_ss.hpp"
#include "support/calibration_checks.hpp"

using namespace privpost;

// family_from_vector: a number as parameter, or from_vector; not a family whose vector lacks part of the parameter.
static_assert(family_from_vector<binomial_family>);
static_assert(family_from_vector<multinomial_family<3>>);
static_assert(family_from_vector<normal_family>);
static_assert(!family_from_vector<normal_known_variance_family>);

TEST_CASE("combine_fully_synthetic follows the fully synthetic rules", "[synthetic]") {
  const std::vector<double> q = {1.0, 2.0, 3.0}, u = {0.5, 0.5, 0.5};
  const auto c = combine_fully_synthetic(q, u, 100.0, 100.0);
  // q_m = 2, b_m = 1, u_m = 0.5: T_f = (4/3) 1 - 0.5, nu_f = 2 (1 - 0.5 / (4/3))^2.
  CHECK(c.sets == 3);
  CHECK(c.estimate == Approx(2.0));
  CHECK(c.between == Approx(1.0));
  CHECK(c.within == Approx(0.5));
  CHECK(c.variance == Approx(4.0 / 3.0 - 0.5));
  CHECK(c.degrees_of_freedom == Approx(2.0 * 0.625 * 0.625));
  CHECK_FALSE(c.fallback);
  const double t = boost::math::quantile(boost::math::students_t_distribution<double>(c.degrees_of_freedom), 0.95);
  const interval ci = c.central_interval(0.9);
  CHECK(ci.lo == Approx(2.0 - t * std::sqrt(c.variance)));
  CHECK(ci.hi == Approx(2.0 + t * std::sqrt(c.variance)));

  // Nearly equal estimates with large variances: T_f < 0, replaced by (N / n) u_m with a normal reference.
  const std::vector<double> q2 = {1.0, 1.01}, u2 = {1.0, 3.0};
  const auto f = combine_fully_synthetic(q2, u2, 50.0, 200.0);
  CHECK(f.fallback);
  CHECK(f.variance == Approx(0.25 * 2.0));
  CHECK(std::isinf(f.degrees_of_freedom));
  CHECK(f.central_interval(0.9).hi == Approx(1.005 + 1.6448536 * std::sqrt(0.5)).epsilon(1e-6));

  // Every set the same with no variance: a point.
  const std::vector<double> q3 = {0.0, 0.0}, u3 = {0.0, 0.0};
  const auto p = combine_fully_synthetic(q3, u3, 10.0, 10.0);
  CHECK(p.variance == 0.0);
  CHECK(p.central_interval(0.9).lo == 0.0);
  CHECK(p.central_interval(0.9).hi == 0.0);
}

TEST_CASE("combine_fully_synthetic refuses bad input by name", "[synthetic]") {
  const std::vector<double> one = {1.0}, two = {1.0, 2.0}, three = {1.0, 2.0, 3.0};
  const double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_WITH(combine_fully_synthetic(one, one, 10, 10), Catch::Contains("at least 2"));
  CHECK_THROWS_AS(combine_fully_synthetic(two, three, 10, 10), std::invalid_argument);
  CHECK_THROWS_WITH(combine_fully_synthetic(std::vector<double>{1.0, nan}, two, 10, 10), Catch::Contains("estimate 2"));
  CHECK_THROWS_WITH(combine_fully_synthetic(two, std::vector<double>{1.0, -1.0}, 10, 10), Catch::Contains("variance 2"));
  CHECK_THROWS_AS(combine_fully_synthetic(two, two, 0.0, 10), std::invalid_argument);
  CHECK_THROWS_AS(combine_fully_synthetic(two, two, 10, -1.0), std::invalid_argument);
  CHECK_THROWS_AS(combine_fully_synthetic(two, two, 10, 10).central_interval(1.0), std::invalid_argument);
  std::mt19937_64 g(3);
  CHECK_THROWS_AS(synthetic_family_records<binomial_family>(Eigen::VectorXd::Constant(1, 0.5), 0, g), std::invalid_argument);
  CHECK_THROWS_AS(synthetic_family_records<binomial_family>(Eigen::VectorXd::Constant(2, 0.5), 5, g), std::invalid_argument);
  CHECK_THROWS_AS(synthetic_family_records<binomial_family>(Eigen::VectorXd::Constant(1, nan), 5, g), std::invalid_argument);
  const posterior post({Eigen::MatrixXd::Zero(5, 1), Eigen::MatrixXd::Ones(5, 1)});
  CHECK_THROWS_WITH(synthetic_parameter_draws(post, 11), Catch::Contains("[1, 10]"));
  CHECK_THROWS_AS(synthetic_parameter_draws(post, 0), std::invalid_argument);
}

TEST_CASE("synthetic parameter draws are spread over the chains; records stay in the support", "[synthetic]") {
  Eigen::MatrixXd a(4, 1), b(4, 1);
  a << 0, 1, 2, 3;
  b << 10, 11, 12, 13;
  const auto d = synthetic_parameter_draws(posterior({a, b}), 4);  // positions 1, 3, 5, 7 of 8
  REQUIRE(d.size() == 4);
  CHECK(d[0](0) == 1.0);
  CHECK(d[1](0) == 3.0);
  CHECK(d[2](0) == 11.0);
  CHECK(d[3](0) == 13.0);
  std::mt19937_64 g(5);
  const auto x = synthetic_family_records<binomial_family>(Eigen::VectorXd::Constant(1, 0.3), 10000, g);
  double ones = 0.0;
  for (double r : x) {
    REQUIRE((r == 0.0 || r == 1.0));
    ones += r;
  }
  CHECK(ones / 10000.0 == Approx(0.3).margin(4.0 * std::sqrt(0.21 / 10000.0)));

  // Families whose parameter is rebuilt by from_vector, and one whose vector lacks part of it (the known sd).
  const auto cats = synthetic_family_records<multinomial_family<3>>(Eigen::Vector3d(0.2, 0.5, 0.3), 10000, g);
  std::vector<double> seen(3, 0.0);
  for (int c : cats) {
    REQUIRE((c >= 0 && c < 3));
    seen[static_cast<std::size_t>(c)] += 1.0;
  }
  CHECK(seen[1] / 10000.0 == Approx(0.5).margin(4.0 * std::sqrt(0.25 / 10000.0)));
  const auto normals = synthetic_family_records<normal_family>(Eigen::Vector2d(3.0, 4.0), 10000, g);
  double sum = 0.0, squares = 0.0;
  for (double x : normals) {
    sum += x;
    squares += x * x;
  }
  CHECK(sum / 10000.0 == Approx(3.0).margin(4.0 * 2.0 / 100.0));
  CHECK(squares / 10000.0 - (sum / 10000.0) * (sum / 10000.0) == Approx(4.0).margin(0.3));
  const auto known = synthetic_family_records<normal_known_variance_family>(normal_mean_parameter{-1.0, 0.5}, 10000, g);
  double known_sum = 0.0;
  for (double x : known) known_sum += x;
  CHECK(known_sum / 10000.0 == Approx(-1.0).margin(4.0 * 0.5 / 100.0));
}

TEST_CASE("combined synthetic intervals cover; one synthetic set analysed as real does not", "[synthetic][synthetic-coverage]") {
  // theta ~ Beta(1, 1), n = 100 Bernoulli records, their count released with Laplace noise at epsilon 0.5 (scale 2).
  // The noise-aware posterior (Gibbs-SS, 200 + 1000 sweeps, thin 2), m = 20 synthetic sets of N = 10 n records from
  // 20 draws spread over the chain; the analyst's estimator on a set is its mean with variance mean (1 - mean) / N.
  // Measured at this seed: combined coverage 0.513 (50%) and 0.895 (90%); one set as real 0.104 and 0.235. With
  // N = n the combined 90% interval over-covered (0.937: nu_f is then small, about 7, and the t reference
  // conservative), and with the normal reference in place of t it under-covers (0.877 at N = 10 n).
  constexpr int trials = 1000, sets = 20;
  constexpr double n = 100.0, epsilon = 0.5, records = 10.0 * n;
  const beta_prior prior(1.0, 1.0);
  const laplace_mechanism mechanism(1.0, epsilon);
  std::mt19937_64 g(20261203);
  int combined50 = 0, combined90 = 0, single50 = 0, single90 = 0, fallbacks = 0;
  const double z50 = 0.6744897501960817, z90 = 1.6448536269514722;  // standard normal quantiles 0.75 and 0.95
  for (int t = 0; t < trials; ++t) {
    const double theta = draw_beta(g, 1.0, 1.0);
    double count = 0.0;
    for (int i = 0; i < static_cast<int>(n); ++i) count += binomial_family::draw_record(theta, g);
    const Eigen::VectorXd z = mechanism.release(Eigen::VectorXd::Constant(1, count), g);
    const Eigen::MatrixXd draws =
        single_chain([&](std::mt19937_64& gg) { return gibbs_ss(prior, mechanism, z, n, gg); }, 200, 1000, g, 2);
    std::vector<double> q, u;
    for (const auto& th : synthetic_parameter_draws(posterior({draws}), sets)) {
      const auto x = synthetic_family_records<binomial_family>(th, static_cast<std::int64_t>(records), g);
      double mean = 0.0;
      for (double r : x) mean += r;
      mean /= records;
      q.push_back(mean);
      u.push_back(mean * (1.0 - mean) / records);
    }
    const auto c = combine_fully_synthetic(q, u, records, n);
    fallbacks += c.fallback;
    combined50 += c.central_interval(0.5).contains(theta);
    combined90 += c.central_interval(0.9).contains(theta);
    single50 += std::abs(q[0] - theta) <= z50 * std::sqrt(u[0]);
    single90 += std::abs(q[0] - theta) <= z90 * std::sqrt(u[0]);
  }
  const double c50 = combined50 / double(trials), c90 = combined90 / double(trials);
  const double s50 = single50 / double(trials), s90 = single90 / double(trials);
  INFO("combined coverage 50% " << c50 << ", 90% " << c90 << "; single set as real 50% " << s50 << ", 90% " << s90
                                << "; fallbacks " << fallbacks << " of " << trials);
  CHECK(std::abs(c50 - 0.5) <= test::coverage_tolerance(0.5, trials));
  CHECK(std::abs(c90 - 0.9) <= test::coverage_tolerance(0.9, trials));
  CHECK(0.9 - s90 > test::coverage_tolerance(0.9, trials));  // the negative control under-covers
  CHECK(0.5 - s50 > test::coverage_tolerance(0.5, trials));
}

TEST_CASE("synthetic table records follow the cell probabilities, row-major over the levels", "[synthetic]") {
  // A 2 x 3 table: cell (a, b) is 3 a + b. Cell (0, 2) has probability 0 and must never be drawn.
  Eigen::VectorXd p(6);
  p << 0.1, 0.2, 0.0, 0.3, 0.15, 0.25;
  std::mt19937_64 g(23);
  constexpr std::int64_t n = 100000;
  const auto r = synthetic_table_records(p, {2, 3}, n, g);
  REQUIRE(r.rows() == n);
  REQUIRE(r.cols() == 2);
  CHECK((r.col(0).array() >= 0 && r.col(0).array() < 2 && r.col(1).array() >= 0 && r.col(1).array() < 3).all());
  std::vector<double> seen(6, 0.0);
  for (Eigen::Index i = 0; i < n; ++i) seen[static_cast<std::size_t>(3 * r(i, 0) + r(i, 1))] += 1.0;
  CHECK(seen[2] == 0.0);
  for (std::size_t c = 0; c < 6; ++c)
    CHECK(seen[c] / n == Approx(p(static_cast<Eigen::Index>(c))).margin(5.0 * std::sqrt(0.25 / n)));

  // Bad input by name: a size other than the levels' product, a negative or NaN probability, a sum other than 1.
  CHECK_THROWS_WITH(synthetic_table_records(p, {2, 2}, 10, g), Catch::Contains("product of the levels"));
  Eigen::VectorXd bad = p;
  bad(0) = -0.1;
  CHECK_THROWS_WITH(synthetic_table_records(bad, {2, 3}, 10, g), Catch::Contains("cell 0"));
  bad(0) = std::numeric_limits<double>::quiet_NaN();
  CHECK_THROWS_AS(synthetic_table_records(bad, {2, 3}, 10, g), std::invalid_argument);
  CHECK_THROWS_WITH(synthetic_table_records(Eigen::VectorXd(p * 2.0), {2, 3}, 10, g), Catch::Contains("sum"));
  CHECK_THROWS_AS(synthetic_table_records(p, {}, 10, g), std::invalid_argument);
  CHECK_THROWS_AS(synthetic_table_records(p, {2, 3}, 0, g), std::invalid_argument);
}
