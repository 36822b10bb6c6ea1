// Tests of privpost/diagnostics/mmd.hpp. Properties:
//  1. two samples from one distribution: unbiased MMD^2 is near 0 (|.| < 0.01 at 500 draws each); a sample against
//     itself gives the closed form 2 (S / (m (m - 1)) - (S + m) / m^2), S the sum of k over ordered pairs i != j
//     (slightly negative: the diagonal enters the cross term only);
//  2. shifted samples: MMD^2 grows with the shift;
//  3. the median heuristic equals a hand-computed median; bad input throws.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "privpost/core/random/normal.hpp"
#include "privpost/diagnostics/mmd.hpp"

using namespace privpost;

namespace {
Eigen::MatrixXd normal_sample(Eigen::Index n, double shift, std::mt19937_64& g) {
  Eigen::MatrixXd x(n, 2);
  for (Eigen::Index i = 0; i < x.size(); ++i) x(i) = draw_normal(g) + shift;
  return x;
}
}  // namespace

TEST_CASE("MMD^2 is near zero for equal distributions and grows with a shift", "[mmd]") {
  std::mt19937_64 g(501);
  const Eigen::MatrixXd a = normal_sample(500, 0.0, g), b = normal_sample(500, 0.0, g);
  CHECK(std::abs(mmd2(a, b)) < 0.01);
  double pairs = 0.0;  // S = sum over i != j of k(a_i, a_j), bandwidth 1
  for (Eigen::Index i = 0; i < a.rows(); ++i)
    for (Eigen::Index j = 0; j < a.rows(); ++j)
      if (i != j) pairs += std::exp(-0.5 * (a.row(i) - a.row(j)).squaredNorm());
  const double m = static_cast<double>(a.rows());
  const double self = 2.0 * (pairs / (m * (m - 1.0)) - (pairs + m) / (m * m));
  CHECK(self < 0.0);
  CHECK(mmd2(a, a, 1.0) == Approx(self).margin(1e-11));  // summation order differs: rounding only
  const double small = mmd2(a, normal_sample(500, 0.5, g));
  const double large = mmd2(a, normal_sample(500, 2.0, g));
  CHECK(small > 0.02);
  CHECK(large > small);
}

TEST_CASE("median heuristic and bad input", "[mmd][errors]") {
  Eigen::MatrixXd x(2, 1), y(2, 1);
  x << 0.0, 1.0;
  y << 3.0, 7.0;
  // distances: 1, 3, 7, 2, 6, 4 -> sorted 1 2 3 4 6 7, element 3 (0-based) = 4
  CHECK(median_heuristic_bandwidth(x, y) == 4.0);
  CHECK_THROWS_AS(mmd2(Eigen::MatrixXd::Zero(1, 1), y), std::invalid_argument);
  CHECK_THROWS_AS(mmd2(x, Eigen::MatrixXd::Zero(3, 2)), std::invalid_argument);
  CHECK_THROWS_AS(mmd2(x, y, -1.0), std::invalid_argument);
}
