// project_simplex (docs/design-cgm.md Sec. 2.2 item 3, 5.5): the Euclidean projection onto {w >= 0, sum w = total} against
// the brute-force minimiser over every support set (m <= 6), its KKT form, idempotence, fixed-size use, errors.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>

#include "privpost/core/linalg/simplex_projection.hpp"

using namespace privpost;

namespace {
// The projection by enumeration: for each support S, w_S = v_S - tau with tau = (sum_S v - total) / |S|, feasible when
// w_S >= 0; the feasible candidate nearest to v.
Eigen::VectorXd brute_projection(const Eigen::VectorXd& v, double total) {
  const Eigen::Index m = v.size();
  Eigen::VectorXd best;
  double best_distance = std::numeric_limits<double>::infinity();
  for (unsigned mask = 1; mask < (1u << m); ++mask) {
    double sum = 0.0;
    int count = 0;
    for (Eigen::Index j = 0; j < m; ++j)
      if (mask & (1u << j)) sum += v(j), ++count;
    const double tau = (sum - total) / count;
    Eigen::VectorXd w = Eigen::VectorXd::Zero(m);
    bool feasible = true;
    for (Eigen::Index j = 0; j < m; ++j)
      if (mask & (1u << j)) {
        w(j) = v(j) - tau;
        feasible = feasible && w(j) >= -1e-15;
      }
    if (feasible && (w - v).squaredNorm() < best_distance) {
      best_distance = (w - v).squaredNorm();
      best = w;
    }
  }
  return best;
}
}  // namespace

TEST_CASE("project_simplex matches the brute-force projection and its KKT form", "[linalg]") {
  std::mt19937_64 g(41);
  std::normal_distribution<double> z(0.0, 1.0);
  std::uniform_real_distribution<double> u(0.1, 5.0);
  for (int trial = 0; trial < 2000; ++trial) {
    const Eigen::Index m = 1 + trial % 6;
    Eigen::VectorXd v(m);
    const double spread = trial % 3 == 0 ? 10.0 : 1.0;
    for (Eigen::Index j = 0; j < m; ++j) v(j) = spread * z(g);
    const double total = u(g);
    Eigen::VectorXd w = v;
    project_simplex(w, total);
    INFO("trial " << trial);
    CHECK((w.array() >= 0.0).all());
    CHECK(w.sum() == Approx(total).epsilon(1e-12));
    CHECK((w - brute_projection(v, total)).cwiseAbs().maxCoeff() < 1e-10);
    // KKT: w = max(v - tau, 0) with one tau; every positive entry is v_j - tau.
    double tau = 0.0;
    for (Eigen::Index j = 0; j < m; ++j)
      if (w(j) > 0.0) tau = v(j) - w(j);
    for (Eigen::Index j = 0; j < m; ++j) CHECK(w(j) == Approx(std::max(v(j) - tau, 0.0)).margin(1e-12));
    Eigen::VectorXd again = w;
    project_simplex(again, total);
    CHECK((again - w).cwiseAbs().maxCoeff() < 1e-12);
  }
  // A segment in place and a fixed-size vector.
  Eigen::VectorXd big(5);
  big << 9.0, 0.3, -0.2, 0.5, 9.0;
  project_simplex(big.segment(1, 3), 1.0);
  CHECK(big(0) == 9.0);
  CHECK(big(4) == 9.0);
  CHECK(big.segment(1, 3).sum() == Approx(1.0));
  CHECK(big(2) == Approx(0.0).margin(1e-15));
  Eigen::Vector3d fixed(2.0, 0.0, 0.0);
  project_simplex(fixed, 1.0);
  CHECK(fixed(0) == Approx(1.0));
}

TEST_CASE("project_simplex rejects what it cannot project", "[linalg]") {
  Eigen::VectorXd v = Eigen::VectorXd::Constant(3, 0.2);
  CHECK_THROWS_AS(project_simplex(v, 0.0), std::invalid_argument);
  CHECK_THROWS_AS(project_simplex(v, std::nan("")), std::invalid_argument);
  v(1) = std::numeric_limits<double>::infinity();
  CHECK_THROWS_WITH(project_simplex(v, 1.0), Catch::Contains("v_j"));
  Eigen::VectorXd empty;
  CHECK_THROWS_AS(project_simplex(empty, 1.0), std::invalid_argument);
}

TEST_CASE("project_simplex of entries far above total (a fuzz finding)", "[linalg][fuzz-regression]") {
  // The fuzzer's naive-MLE table y / N with N = 3.8e-307: two entries near 5.3e306 absorbed total, so the old search
  // left tau at 0 and returned v unchanged. Shifted by max v, the tie splits total evenly and the rest get 0.
  Eigen::VectorXd v(4);
  v << 5.287e306, 7.6e-11, 8.7e-14, 5.287e306;
  project_simplex(v, 1.0);
  CHECK(v(0) == 0.5);
  CHECK(v(3) == 0.5);
  CHECK(v(1) == 0.0);
  CHECK(v(2) == 0.0);
  // The largest and the most negative finite doubles: v_max - v_min overflows to infinity; that entry gets 0.
  const double largest = std::numeric_limits<double>::max();
  Eigen::VectorXd w(3);
  w << largest, -largest, largest;
  project_simplex(w, 2.0);
  CHECK(w(0) == 1.0);
  CHECK(w(1) == 0.0);
  CHECK(w(2) == 1.0);
  // Shift equivariance: v + c 1 projects to the same point, c = 1e6 (to rounding at the scale of c).
  std::mt19937_64 g(43);
  std::normal_distribution<double> z(0.0, 1.0);
  for (int trial = 0; trial < 200; ++trial) {
    Eigen::VectorXd a(5);
    for (Eigen::Index j = 0; j < 5; ++j) a(j) = z(g);
    Eigen::VectorXd b = a.array() + 1e6;
    project_simplex(a, 1.0);
    project_simplex(b, 1.0);
    CHECK((a - b).cwiseAbs().maxCoeff() < 1e-9);
    CHECK(b.sum() == Approx(1.0).epsilon(1e-9));
  }
}
