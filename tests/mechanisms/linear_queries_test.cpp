// linear_queries (mechanisms/linear_queries.hpp; docs/histogram-measurements.md B.8.1) and alias_table
// (core/random/categorical.hpp): the marginals' layout and sensitivities (2 K and sqrt(2 K), the exact pairwise maxima
// against the bound above 1024 cells), the release's refusal of a mechanism weaker than Q, the alias table's
// probabilities exactly and its draws by a chi-square goodness-of-fit test, and the argument errors.
#include <catch2/catch.hpp>

#include <Eigen/Core>
#include <boost/math/distributions/chi_squared.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <stdexcept>
#include <vector>

#include "privpost/core/random/categorical.hpp"
#include "privpost/mechanisms/discrete_laplace.hpp"
#include "privpost/mechanisms/gaussian.hpp"
#include "privpost/mechanisms/laplace.hpp"
#include "privpost/mechanisms/linear_queries.hpp"

using namespace privpost;

// cell_range: the lists of records' cells histogram() and release_linear_queries accept.
static_assert(cell_range<std::vector<std::uint32_t>>);
static_assert(cell_range<std::vector<int>>);
static_assert(cell_range<std::span<const std::size_t>>);
static_assert(!cell_range<std::vector<double>>);  // a cell is an index, not a number to round
static_assert(!cell_range<std::size_t>);          // one cell is not a list of them

TEST_CASE("linear_queries::marginals: layout and sensitivity", "[linear_queries]") {
  // A 2 x 3 x 2 table; tables A, B and A:C. Cell (a, b, c) is 6 a + 2 b + c.
  const auto q = linear_queries::marginals({2, 3, 2}, {{0}, {1}, {0, 2}});
  CHECK(q.cells() == 12);
  CHECK(q.rows() == 2 + 3 + 4);
  CHECK(q.integer());
  CHECK(q.l1_sensitivity() == 6.0);                     // 2 K
  CHECK(q.l2_sensitivity() == Approx(std::sqrt(6.0)));  // sqrt(2 K)
  // Cell (1, 2, 0) = 10: A row 1, B row 2 + 2 = 4, A:C row 5 + (1 * 2 + 0) = 7.
  const auto rows = q.column_rows(10);
  REQUIRE(rows.size() == 3);
  CHECK(rows[0] == 1);
  CHECK(rows[1] == 4);
  CHECK(rows[2] == 7);
  // Q h from records: each table's counts sum to n.
  const std::vector<int> records = {0, 10, 10, 11, 3, 7};
  const Eigen::VectorXd s = q.apply(q.histogram(records));
  CHECK(s.segment(0, 2).sum() == 6.0);
  CHECK(s.segment(2, 3).sum() == 6.0);
  CHECK(s.segment(5, 4).sum() == 6.0);
  CHECK(s(1) == 4.0);  // cells 10, 10, 11, 7 have a = 1
  CHECK(s(7) == 2.0);  // (a, c) = (1, 0): cells 10, 10

  CHECK(q.aligned());  // marginal tables: each row at one position of every column
  const auto id = linear_queries::identity(5);
  CHECK(id.aligned());
  CHECK(id.l1_sensitivity() == 2.0);
  CHECK(id.l2_sensitivity() == Approx(std::sqrt(2.0)));
}

TEST_CASE("linear_queries: exact pairwise sensitivity and the bound above 1024 cells", "[linear_queries]") {
  // Q with a fractional entry: columns (1, 0.5), (0, 1), (0.25, 0). Exact L1 = max(|1 - 0| + |0.5 - 1|, ...) = 1.5
  // (cells 0 and 1); L2^2 = max(1 + 0.25, 0.5625 + 0.25, 0.0625 + 1) = 1.25.
  const linear_queries q(2, 3, {{0, 0, 1.0}, {1, 0, 0.5}, {1, 1, 1.0}, {0, 2, 0.25}});
  CHECK_FALSE(q.integer());
  CHECK_FALSE(q.aligned());
  // Unit entries, two per cell, but row 1 is at position 1 of cell 0 and at position 0 of cell 1: not aligned.
  CHECK_FALSE(linear_queries(3, 2, {{0, 0, 1.0}, {1, 0, 1.0}, {1, 1, 1.0}, {2, 1, 1.0}}).aligned());
  CHECK(q.l1_sensitivity() == Approx(1.5));
  CHECK(q.l2_sensitivity() == Approx(std::sqrt(1.25)));
  // Above exact_sensitivity_cells: 2 max ||col||_1 and sqrt(2 max ||col||_2^2), which for marginals are exact.
  const auto big = linear_queries::marginals({2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2}, {{0}, {1, 2}, {10}});  // 2048 cells
  CHECK(big.cells() == 2048);
  CHECK(big.l1_sensitivity() == 6.0);
  CHECK(big.l2_sensitivity() == Approx(std::sqrt(6.0)));
}

TEST_CASE("release_linear_queries: sensitivity from Q, the mechanism must cover it", "[linear_queries]") {
  const auto q = linear_queries::marginals({2, 2}, {{0}, {1}});  // L1 = 4, L2 = 2
  const std::vector<int> records = {0, 1, 3, 3};
  std::mt19937_64 g(1);
  const Eigen::VectorXd z = release_linear_queries(q, records, laplace_mechanism(4.0, 1.0), g);
  CHECK(z.size() == 4);
  CHECK_THROWS_AS(release_linear_queries(q, records, laplace_mechanism(2.0, 1.0), g), std::invalid_argument);
  CHECK_THROWS_AS(release_linear_queries(q, records, gaussian_mechanism::analytic(1.9, 1.0, 1e-6), g), std::invalid_argument);
  CHECK_THROWS_AS(release_linear_queries(q, records, discrete_laplace_mechanism(3.0, 1.0), g), std::invalid_argument);
  const Eigen::VectorXd zd = release_linear_queries(q, records, discrete_laplace_mechanism(4.0, 1.0), g);
  for (Eigen::Index j = 0; j < zd.size(); ++j) CHECK(zd(j) == std::round(zd(j)));
  CHECK_THROWS_AS(release_linear_queries(q, std::vector<int>{0, 4}, laplace_mechanism(4.0, 1.0), g), std::invalid_argument);
  CHECK_THROWS_AS(release_linear_queries(q, std::vector<int>{-1}, laplace_mechanism(4.0, 1.0), g), std::invalid_argument);
}

TEST_CASE("linear_queries: bad input", "[linear_queries]") {
  CHECK_THROWS_AS(linear_queries(2, 2, {{0, 0, 1.5}}), std::invalid_argument);   // entry above 1
  CHECK_THROWS_AS(linear_queries(2, 2, {{0, 0, -0.1}}), std::invalid_argument);  // below 0
  CHECK_THROWS_AS(linear_queries(2, 2, {{0, 0, std::nan("")}}), std::invalid_argument);
  CHECK_THROWS_AS(linear_queries(2, 2, {{2, 0, 1.0}}), std::invalid_argument);               // row out of range
  CHECK_THROWS_AS(linear_queries(2, 2, {{0, 2, 1.0}}), std::invalid_argument);               // cell out of range
  CHECK_THROWS_AS(linear_queries(2, 2, {{0, 0, 1.0}, {0, 0, 0.5}}), std::invalid_argument);  // twice
  CHECK_THROWS_AS(linear_queries(1, 2, {{0, 0, 1.0}, {0, 1, 1.0}}), std::invalid_argument);  // every cell alike: L1 = 0
  CHECK_THROWS_AS(linear_queries(0, 2, {}), std::invalid_argument);
  CHECK_THROWS_AS(linear_queries(1, 1, {}), std::invalid_argument);
  CHECK_THROWS_AS(linear_queries::identity(1), std::invalid_argument);
  CHECK_THROWS_AS(linear_queries::marginals({2, 1}, {{0}}), std::invalid_argument);     // a level count below 2
  CHECK_THROWS_AS(linear_queries::marginals({2, 2}, {{2}}), std::invalid_argument);     // attribute out of range
  CHECK_THROWS_AS(linear_queries::marginals({2, 2}, {{1, 0}}), std::invalid_argument);  // not increasing
  CHECK_THROWS_AS(linear_queries::marginals({2, 2}, {{0, 0}}), std::invalid_argument);  // repeated
  CHECK_THROWS_AS(linear_queries::marginals({2, 2}, {{}}), std::invalid_argument);
  CHECK_THROWS_AS(linear_queries::marginals({2, 2}, {}), std::invalid_argument);
  CHECK_THROWS_AS(linear_queries::marginals({}, {{0}}), std::invalid_argument);
  CHECK_THROWS_AS(linear_queries::marginals(std::vector<std::size_t>(40, 2), {{0}}), std::invalid_argument);  // 2^40 cells
  const auto q = linear_queries::identity(3);
  CHECK_THROWS_AS(q.apply(Eigen::VectorXd::Ones(2)), std::invalid_argument);
  CHECK_THROWS_AS(q.apply(Eigen::VectorXd::Constant(3, std::numeric_limits<double>::infinity())), std::invalid_argument);
}

TEST_CASE("alias_table: exact probabilities and a chi-square goodness of fit", "[alias]") {
  const std::vector<double> w = {0.1, 0.0, 2.5, 0.4, 1e-3, 7.0, 0.3};
  double total = 0.0;
  for (double x : w) total += x;
  const alias_table t(w);
  REQUIRE(t.size() == w.size());
  for (std::size_t k = 0; k < w.size(); ++k) CHECK(t.probability(k) == Approx(w[k] / total).margin(1e-15));
  // 10^6 draws: Pearson's statistic over the categories with positive probability (df = 5), p > 0.001.
  std::mt19937_64 g(3);
  std::vector<double> count(w.size(), 0.0);
  constexpr int draws = 1000000;
  for (int i = 0; i < draws; ++i) count[t.draw(g)] += 1.0;
  CHECK(count[1] == 0.0);  // weight 0 is never drawn
  double chi2 = 0.0;
  for (std::size_t k = 0; k < w.size(); ++k) {
    if (w[k] == 0.0) continue;
    const double expected = draws * w[k] / total;
    chi2 += (count[k] - expected) * (count[k] - expected) / expected;
  }
  const double p = boost::math::cdf(boost::math::complement(boost::math::chi_squared_distribution<double>(5.0), chi2));
  INFO("chi-square " << chi2 << ", p " << p);
  CHECK(p > 1e-3);

  const alias_table one(std::vector<double>{3.0});
  CHECK(one.draw(g) == 0);
  alias_table rebuilt(w);
  rebuilt.build(std::vector<double>{0.0, 1.0});
  CHECK(rebuilt.size() == 2);
  CHECK(rebuilt.draw(g) == 1);
  CHECK_THROWS_AS(alias_table(std::vector<double>{}), std::invalid_argument);
  CHECK_THROWS_AS(alias_table(std::vector<double>{0.0, 0.0}), std::invalid_argument);
  CHECK_THROWS_AS(alias_table(std::vector<double>{1.0, -1.0}), std::invalid_argument);
  CHECK_THROWS_AS(alias_table(std::vector<double>{1.0, std::nan("")}), std::invalid_argument);
  CHECK_THROWS_AS(alias_table(std::vector<double>{1e308, 1e308}), std::invalid_argument);  // the sum overflows
  CHECK_THROWS_AS(t.probability(7), std::invalid_argument);
}
