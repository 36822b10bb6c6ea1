// Tests of the DP-GLM release side (docs/design-glm.md Sec. 5.7 A): families/glm/glm_statistic.hpp and
// families/glm/glm_sensitivity.hpp.
//  1. t2's identities ||t2(x)|| = ||x||^2 and <t2(x), t2(x')> = <x, x'>^2 for random x, x';
//  2. layout, order and names for d = 1, 2, 4 (d = 4 is the paper's Fig. 2 without the constant), with an intercept
//     (its constant square absent), Poisson with and without the y t2 block;
//  3. admission: norm clipping to exactly R, {0, 1} -> {-1, +1}, y = 2 rejected, Poisson counts clamped, NaN rejected,
//     declared-range scaling maps the range's ends to the ends and clamps beyond;
//  4. golden sensitivities: Lemma 3.3 with equal and unequal noise, the order-m table, Corollary 3.6 and the exact
//     Poisson value on the spec's configurations;
//  5. the counterexample to Lemma 3.5: the exact value covers the attaining pair, the paper's formula does not;
//  6. safety and tightness: random record pairs (norms on the boundary and inside) never exceed the returned value, and
//     the worst-case pair attains it to 1e-12; for logistic with and without an intercept, and Poisson;
//  7. the analytic Gaussian sigma at Delta = sqrt(4.5), delta = 1e-5, against the spec's table (1e-5 relative);
//  8. bad arguments name the value and the accepted range.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "privpost/core/random/normal.hpp"
#include "privpost/core/random/uniform.hpp"
#include "privpost/families/glm/glm_sensitivity.hpp"
#include "privpost/families/glm/glm_statistic.hpp"
#include "privpost/mechanisms/analytic_gaussian.hpp"

using namespace privpost;

namespace {

// A uniformly random direction scaled to norm r.
Eigen::VectorXd on_sphere(std::mt19937_64& g, int d, double r) {
  Eigen::VectorXd x(d);
  for (int i = 0; i < d; ++i) x(i) = draw_normal(g);
  return x * (r / x.norm());
}

// A record inside the ball: on the boundary half of the time.
Eigen::VectorXd in_ball(std::mt19937_64& g, int d, double r) {
  return on_sphere(g, d, draw_uniform(g) < 0.5 ? r : r * std::pow(draw_uniform(g), 1.0 / d));
}

// ||F(x, y) - F(x', y')||^2 with block weights w on the released entries (w = sigma1^2 / sigma_block^2).
double weighted_distance2(const glm_statistic& s, const Eigen::VectorXd& x, double y, const Eigen::VectorXd& xp, double yp,
                          const Eigen::VectorXd& w) {
  const Eigen::VectorXd diff = s.statistic(x, y) - s.statistic(xp, yp);
  return (w.array() * diff.array().square()).sum();
}

}  // namespace

TEST_CASE("t2 carries the norm identities", "[glm][release]") {
  std::mt19937_64 g(1);
  for (int d : {1, 2, 3, 5}) {
    const auto s = glm_statistic::logistic(d, 10.0);
    for (int rep = 0; rep < 50; ++rep) {
      const Eigen::VectorXd x = in_ball(g, d, 2.0), xp = in_ball(g, d, 2.0);
      const Eigen::VectorXd t2 = s.statistic(x, 1.0).tail(s.size() - d);
      const Eigen::VectorXd t2p = s.statistic(xp, 1.0).tail(s.size() - d);
      CHECK(t2.norm() == Approx(x.squaredNorm()).epsilon(1e-12));
      CHECK(t2.dot(t2p) == Approx(std::pow(x.dot(xp), 2)).epsilon(1e-10).margin(1e-14));
    }
  }
}

TEST_CASE("GLM statistic layout, order and names", "[glm][release]") {
  CHECK(glm_statistic::logistic(1, 1.0).names() == std::vector<std::string>{"y*x1", "x1*x1"});
  CHECK(glm_statistic::logistic(2, 1.0).names() == std::vector<std::string>{"y*x1", "y*x2", "x1*x1", "x2*x2", "sqrt2*x1*x2"});
  // Fig. 2 of the paper at d = 4, without its constant 1 (N is public).
  const auto four = glm_statistic::logistic(4, 1.0);
  CHECK(four.size() == 14);
  CHECK(four.names() == std::vector<std::string>{"y*x1", "y*x2", "y*x3", "y*x4", "x1*x1", "x2*x2", "x3*x3", "x4*x4",
                                                 "sqrt2*x1*x2", "sqrt2*x1*x3", "sqrt2*x1*x4", "sqrt2*x2*x3", "sqrt2*x2*x4",
                                                 "sqrt2*x3*x4"});
  for (int d : {2, 3, 6, 7, 14}) CHECK(glm_statistic::logistic(d, 1.0).size() == d + d * (d + 1) / 2);
  // Intercept: the constant square is not released.
  const auto with_intercept = glm_statistic::logistic(2, 1.0, 1.0);
  CHECK(with_intercept.names() == std::vector<std::string>{"y*intercept", "y*x1", "y*x2", "x1*x1", "x2*x2", "sqrt2*intercept*x1",
                                                           "sqrt2*intercept*x2", "sqrt2*x1*x2"});
  Eigen::Vector2d x(0.3, -0.4);
  const Eigen::VectorXd t = with_intercept.statistic(x, -1.0);
  Eigen::VectorXd expected(8);
  expected << -1.0, -0.3, 0.4, 0.09, 0.16, std::sqrt(2.0) * 0.3, std::sqrt(2.0) * -0.4, std::sqrt(2.0) * -0.12;
  CHECK((t - expected).norm() < 1e-15);
  // Poisson: [x; t2; y x; y t2], D = d^2 + 3d; without y t2, d + 2 d(d+1)/2 ... minus the y t2 block.
  const auto pois = glm_statistic::poisson(2, 1.0, 5.0);
  CHECK(pois.size() == 10);
  CHECK(pois.names() == std::vector<std::string>{"x1", "x2", "x1*x1", "x2*x2", "sqrt2*x1*x2", "y*x1", "y*x2", "y*x1*x1",
                                                 "y*x2*x2", "y*sqrt2*x1*x2"});
  CHECK(glm_statistic::poisson(6, 1.0, 5.0).size() == 54);
  CHECK(glm_statistic::poisson(2, 1.0, 5.0, std::nullopt, false).size() == 7);
  const Eigen::VectorXd tp = pois.statistic(x, 3.0);
  Eigen::VectorXd ep(10);
  const double c = std::sqrt(2.0) * 0.3 * -0.4;
  ep << 0.3, -0.4, 0.09, 0.16, c, 0.9, -1.2, 0.27, 0.48, 3.0 * c;
  CHECK((tp - ep).norm() < 1e-15);
  // Poisson with an intercept: the constant c of the x block and c^2 of t2 are public sums; y c is released; the t2
  // blocks' intercept pairs (sqrt2 c x1, y c^2, sqrt2 y c x1) are multiples of x1, y c and y x1 and are left out.
  const auto pois_i = glm_statistic::poisson(1, 1.0, 5.0, 2.0);
  CHECK(pois_i.names() == std::vector<std::string>{"x1", "x1*x1", "y*intercept", "y*x1", "y*x1*x1"});
  // Named covariates (the tools use the data's column names).
  CHECK(pois_i.names({"wool=B"}) ==
        std::vector<std::string>{"wool=B", "wool=B*wool=B", "y*intercept", "y*wool=B", "y*wool=B*wool=B"});
  CHECK(with_intercept.names({"glucose", "age"}) ==
        std::vector<std::string>{"y*intercept", "y*glucose", "y*age", "glucose*glucose", "age*age", "sqrt2*intercept*glucose",
                                 "sqrt2*intercept*age", "sqrt2*glucose*age"});
  CHECK_THROWS_WITH(pois_i.names({"a", "b"}), Catch::Contains("covariate names"));
  const Eigen::VectorXd ti = pois_i.statistic(Eigen::VectorXd::Constant(1, 0.5), 3.0);
  Eigen::VectorXd ei(5);
  ei << 0.5, 0.25, 6.0, 1.5, 0.75;
  CHECK((ti - ei).norm() < 1e-15);
}

TEST_CASE("GLM record admission", "[glm][release]") {
  const auto s = glm_statistic::logistic(3, 1.5);
  Eigen::Vector3d x(3.0, -2.0, 1.0);
  x *= 3.0 * 1.5 / x.norm();  // norm 3R
  CHECK(s.admit_covariates(x).norm() == Approx(1.5).epsilon(1e-15));
  CHECK((s.admit_covariates(x) / 1.5 - x / x.norm()).norm() < 1e-15);
  const Eigen::Vector3d inside(0.1, 0.2, -0.3);
  CHECK(s.admit_covariates(inside) == inside);
  CHECK(s.admit_response(0.0) == -1.0);
  CHECK(s.admit_response(1.0) == 1.0);
  CHECK(s.admit_response(-1.0) == -1.0);
  CHECK_THROWS_AS(s.admit_response(2.0), std::invalid_argument);
  CHECK_THROWS_WITH(s.admit_response(0.5), Catch::Contains("logistic response is 0.5"));
  Eigen::Vector3d nan_x(0.1, std::nan(""), 0.0);
  CHECK_THROWS_AS(s.admit_covariates(nan_x), std::invalid_argument);
  CHECK_THROWS_AS(s.admit_covariates(Eigen::Vector2d(0.1, 0.1)), std::invalid_argument);
  // The sum over records uses the admitted records.
  Eigen::MatrixXd records(2, 3);
  records.row(0) = x.transpose();
  records.row(1) = inside.transpose();
  const Eigen::VectorXd sum = s.sum(records, Eigen::Vector2d(0.0, 1.0));
  CHECK((sum - s.statistic(s.admit_covariates(x), -1.0) - s.statistic(inside, 1.0)).norm() < 1e-14);

  const auto p = glm_statistic::poisson(1, 1.0, 10.0);
  CHECK(p.admit_response(3.0) == 3.0);
  CHECK(p.admit_response(25.0) == 10.0);
  CHECK_THROWS_AS(p.admit_response(-1.0), std::invalid_argument);
  CHECK_THROWS_AS(p.admit_response(2.5), std::invalid_argument);
  CHECK_THROWS_AS(p.admit_response(std::nan("")), std::invalid_argument);
  CHECK_THROWS_AS(p.admit_response(HUGE_VAL), std::invalid_argument);

  // Declared ranges: the ends map to -1/sqrt(d) and 1/sqrt(d), values beyond are clamped, NaN throws.
  CHECK(scale_to_declared_range(0.0, 0.0, 200.0, 4) == Approx(-0.5));
  CHECK(scale_to_declared_range(200.0, 0.0, 200.0, 4) == Approx(0.5));
  CHECK(scale_to_declared_range(100.0, 0.0, 200.0, 4) == Approx(0.0).margin(1e-15));
  CHECK(scale_to_declared_range(450.0, 0.0, 200.0, 4) == Approx(0.5));
  CHECK(scale_to_declared_range(-3.0, 0.0, 200.0, 4) == Approx(-0.5));
  CHECK_THROWS_AS(scale_to_declared_range(std::nan(""), 0.0, 1.0, 1), std::invalid_argument);
  CHECK_THROWS_AS(scale_to_declared_range(0.5, 1.0, 1.0, 1), std::invalid_argument);
  CHECK_THROWS_AS(scale_to_declared_range(0.5, 0.0, HUGE_VAL, 1), std::invalid_argument);
  CHECK_THROWS_AS(scale_to_declared_range(0.5, 0.0, 1.0, 0), std::invalid_argument);
}

TEST_CASE("GLM sensitivities: golden values", "[glm][sensitivity]") {
  SECTION("Lemma 3.3 with equal noise (Corollary 3.4 at R = 1), its regime boundary at R = 1/sqrt(2)") {
    CHECK(logistic_joint_sensitivity(1.0, 1.0, 1.0) == Approx(std::sqrt(4.5)).epsilon(1e-15));
    CHECK(logistic_joint_sensitivity(1.0, 1.0, 1.0) == Approx(2.1213203435596424).epsilon(1e-15));
    CHECK(logistic_joint_sensitivity(0.5, 1.0, 1.0) == Approx(1.0).epsilon(1e-15));
    CHECK(logistic_joint_sensitivity(std::sqrt(0.5), 1.0, 1.0) == Approx(std::sqrt(2.0)).epsilon(1e-14));
    CHECK(logistic_joint_sensitivity(0.8, 1.0, 1.0) == Approx(1.61220).epsilon(1e-5));
    CHECK(logistic_joint_sensitivity(2.0, 1.0, 1.0) == Approx(6.36396).epsilon(1e-5));
    // The statistic's own layout reports the same value.
    CHECK(glm_statistic::logistic(3, 1.0).l2_sensitivity() == Approx(std::sqrt(4.5)).epsilon(1e-15));
  }
  SECTION("Lemma 3.3 with unequal noise: the paper's value where its vertex is feasible, 2R otherwise") {
    auto d2 = [](double s1, double s2) { return std::pow(logistic_joint_sensitivity(1.0, s1, s2), 2); };
    CHECK(d2(1.0, 2.0) == Approx(4.0).epsilon(1e-14));
    CHECK(d2(1.0, 1.5) == Approx(4.0).epsilon(1e-14));
    CHECK(d2(1.0, 3.0) == Approx(4.0).epsilon(1e-14));
    CHECK(d2(2.0, 1.0) == Approx(10.125).epsilon(1e-14));
    // The paper's formula 1/(2c) + 2R^2 + 2cR^4, for comparison: loose in the first three cases.
    auto paper = [](double s1, double s2) {
      const double c = s1 * s1 / (s2 * s2);
      return 1.0 / (2.0 * c) + 2.0 + 2.0 * c;
    };
    CHECK(paper(1.0, 2.0) == Approx(4.5));
    CHECK(paper(1.0, 1.5) == Approx(4.01389).epsilon(1e-5));
    CHECK(paper(1.0, 3.0) == Approx(6.72222).epsilon(1e-5));
  }
  SECTION("order m, equal noise, R = 1 (spec table; guaranteed upper bounds within 1e-5 of the supremum)") {
    const double table[] = {4.0, 4.5, 8.0, 8.652894, 12.0, 12.729812, 16.0, 16.776867};
    for (int m = 1; m <= 8; ++m) {
      const double d2 = std::pow(polynomial_joint_sensitivity(1.0, m), 2);
      INFO("m = " << m << ": " << d2);
      CHECK(d2 >= table[m - 1] - 1e-6);
      CHECK(d2 <= table[m - 1] * (1.0 + 1e-5));
    }
    // m = 2 agrees with Lemma 3.3 for unequal noise too.
    const double sig[] = {1.0, 2.0};
    CHECK(polynomial_joint_sensitivity(1.0, sig) >= logistic_joint_sensitivity(1.0, 1.0, 2.0));
    CHECK(polynomial_joint_sensitivity(1.0, sig) == Approx(logistic_joint_sensitivity(1.0, 1.0, 2.0)).epsilon(1e-5));
  }
  SECTION("Poisson: Corollary 3.6 and the exact value on the spec's configurations") {
    for (double ry : {1.0, 5.0, 10.0})
      CHECK(poisson_joint_sensitivity(1.0, ry) == Approx(std::sqrt(4.5 * (1.0 + ry * ry))).epsilon(1e-14));
    auto d2 = [](double rx, double ry, double s1, double s2, double s3, double s4) {
      return std::pow(poisson_joint_sensitivity(rx, ry, s1, s2, s3, s4), 2);
    };
    CHECK(d2(1, 1, 1, 1, 1, 1) == Approx(9.0).epsilon(1e-14));
    CHECK(d2(1, 5, 1, 1, 1, 1) == Approx(117.0).epsilon(1e-14));
    CHECK(d2(1, 10, 1, 1, 1, 1) == Approx(454.5).epsilon(1e-14));
    CHECK(d2(1, 1, 1, 3, 1, 3) == Approx(8.0).epsilon(1e-14));
    CHECK(d2(1, 1, 1, 3, 10, 3) == Approx(4.12111).epsilon(1e-5));
    CHECK(glm_statistic::poisson(2, 1.0, 5.0).l2_sensitivity() == Approx(std::sqrt(117.0)).epsilon(1e-14));
  }
}

TEST_CASE("The paper's Lemma 3.5 under-states the Poisson sensitivity; the exact value does not", "[glm][sensitivity]") {
  const double rx = 1.2481629600186588, ry = 1.102054327813432;
  const double s1 = 0.11948954197530116, s2 = 3.8963956020450574, s3 = 9.919754672085805, s4 = 0.20302110257047523;
  // The attaining pair: x = (R_x, 0), y = R_y; x' = -x, y' = 0, with weights sigma1^2 / sigma_block^2.
  const auto s = glm_statistic::poisson(2, rx, ry);
  Eigen::VectorXd w(s.size());
  w << Eigen::VectorXd::Constant(2, 1.0), Eigen::VectorXd::Constant(3, s1 * s1 / (s2 * s2)),
      Eigen::VectorXd::Constant(2, s1 * s1 / (s3 * s3)), Eigen::VectorXd::Constant(3, s1 * s1 / (s4 * s4));
  const Eigen::Vector2d x(rx, 0.0);
  const double attained = weighted_distance2(s, x, ry, -x, 0.0, w);
  CHECK(attained == Approx(7.253018).epsilon(1e-6));
  // The paper's Delta = (2 (c2 + c4) R_x^2 + c3 + 1) / sqrt(2 (c2 + c4)), c3 and c4 with R_y^2.
  const double c2 = s1 * s1 / (s2 * s2), c3 = s1 * s1 * ry * ry / (s3 * s3), c4 = s1 * s1 * ry * ry / (s4 * s4);
  const double paper = std::pow((2.0 * (c2 + c4) * rx * rx + c3 + 1.0) / std::sqrt(2.0 * (c2 + c4)), 2);
  CHECK(paper == Approx(6.349370).epsilon(1e-6));
  CHECK(paper < attained);  // the paper's noise would be too small
  const double exact = std::pow(poisson_joint_sensitivity(rx, ry, s1, s2, s3, s4), 2);
  CHECK(exact >= 7.253018399);
  CHECK(exact >= attained * (1.0 - 1e-14));
}

TEST_CASE("GLM sensitivities are never exceeded by record pairs, and are attained", "[glm][sensitivity]") {
  std::mt19937_64 g(2026);
  SECTION("logistic, random noise ratios, d = 3, with and without an intercept") {
    for (int config = 0; config < 20; ++config) {
      const double radius = 0.3 + 2.0 * draw_uniform(g);
      const double ratio = std::exp(2.0 * draw_normal(g));  // sigma2 / sigma1
      const bool with_intercept = config % 2 == 1;
      const double c0 = 0.5 + draw_uniform(g) * 1.5;
      const auto s = with_intercept ? glm_statistic::logistic(3, radius, c0) : glm_statistic::logistic(3, radius);
      const double bound2 = std::pow(logistic_joint_sensitivity(radius, 1.0, ratio, s.intercept()), 2);
      Eigen::VectorXd w = Eigen::VectorXd::Constant(s.size(), 1.0 / (ratio * ratio));
      w.head(s.augmented()).setOnes();
      double worst = 0.0;
      for (int rep = 0; rep < 5000; ++rep) {
        const Eigen::VectorXd x = in_ball(g, 3, radius), xp = in_ball(g, 3, radius);
        const double y = draw_uniform(g) < 0.5 ? 1.0 : -1.0, yp = draw_uniform(g) < 0.5 ? 1.0 : -1.0;
        worst = std::max(worst, weighted_distance2(s, x, y, xp, yp, w));
      }
      INFO("config " << config << ": R " << radius << ", sigma2/sigma1 " << ratio << ", intercept " << s.intercept() << ": worst "
                     << worst << ", bound " << bound2);
      CHECK(worst <= bound2 * (1.0 + 1e-12));
      // The worst case: both norms R, y y' = -sign(v), v = <x~, x~'> at the clamped vertex.
      const double c = 1.0 / (ratio * ratio);
      const double k2 = s.intercept() * s.intercept(), r2 = radius * radius;
      const double a = std::clamp(1.0 / (2.0 * c), k2 >= r2 ? k2 - r2 : 0.0, k2 + r2);
      // Pick <x, x'> = t with |k2 + t| = a and t in [-R^2, R^2]: t = a - k2 if feasible, else -a - k2.
      const double slack = 1e-12 * (k2 + r2);  // a may sit on an end of its range up to rounding
      const double t = std::clamp((a - k2 >= -r2 - slack && a - k2 <= r2 + slack) ? a - k2 : -a - k2, -r2, r2);
      const double v = k2 + t;
      Eigen::Vector3d x(radius, 0.0, 0.0);
      const double cosine = std::clamp(t / r2, -1.0, 1.0);
      Eigen::Vector3d xp(radius * cosine, radius * std::sqrt(1.0 - cosine * cosine), 0.0);
      const double attained = weighted_distance2(s, x, 1.0, xp, v > 0 ? -1.0 : 1.0, w);
      CHECK(attained == Approx(bound2).epsilon(1e-12));
    }
  }
  SECTION("Poisson, random noise on the four blocks, d = 2") {
    for (int config = 0; config < 20; ++config) {
      const double rx = 0.3 + 1.5 * draw_uniform(g), ry = 0.5 + 3.0 * draw_uniform(g);
      double sig[4];
      for (double& x : sig) x = std::exp(1.5 * draw_normal(g));
      const auto s = glm_statistic::poisson(2, rx, ry);
      const double bound2 = std::pow(poisson_joint_sensitivity(rx, ry, sig[0], sig[1], sig[2], sig[3]), 2);
      Eigen::VectorXd w(s.size());
      const double s1 = sig[0] * sig[0];
      w << Eigen::VectorXd::Constant(2, 1.0), Eigen::VectorXd::Constant(3, s1 / (sig[1] * sig[1])),
          Eigen::VectorXd::Constant(2, s1 / (sig[2] * sig[2])), Eigen::VectorXd::Constant(3, s1 / (sig[3] * sig[3]));
      double worst = 0.0;
      for (int rep = 0; rep < 5000; ++rep) {
        const Eigen::VectorXd x = in_ball(g, 2, rx), xp = in_ball(g, 2, rx);
        // Responses at the ends half of the time (the supremum is at y in {0, R_y}).
        auto response = [&] { return draw_uniform(g) < 0.5 ? (draw_uniform(g) < 0.5 ? 0.0 : ry) : ry * draw_uniform(g); };
        worst = std::max(worst, weighted_distance2(s, x, response(), xp, response(), w));
      }
      INFO("config " << config << ": worst " << worst << ", bound " << bound2);
      CHECK(worst <= bound2 * (1.0 + 1e-12));
      // A grid over (y, y', <x, x'>) at full norms comes within 1e-3 relative of the bound from below.
      double grid = 0.0;
      for (int a = 0; a <= 20; ++a)
        for (int b = 0; b <= 20; ++b)
          for (int k = 0; k <= 400; ++k) {
            const double cosine = -1.0 + k / 200.0;
            const Eigen::Vector2d x(rx, 0.0), xp(rx * cosine, rx * std::sqrt(std::max(0.0, 1.0 - cosine * cosine)));
            grid = std::max(grid, weighted_distance2(s, x, ry * a / 20.0, xp, ry * b / 20.0, w));
          }
      CHECK(grid <= bound2 * (1.0 + 1e-12));
      CHECK(grid >= bound2 * (1.0 - 1e-3));
    }
  }
}

TEST_CASE("Analytic Gaussian noise for the logistic release (Delta = sqrt(4.5), delta = 1e-5)", "[glm][sensitivity]") {
  const double delta_l2 = glm_statistic::logistic(2, 1.0).l2_sensitivity();
  const double eps[] = {0.001, 0.01, 0.1, 0.3, 0.5, 1.0, 1.1};
  const double sigma[] = {3657.71, 517.147, 65.2297, 23.8395, 14.9168, 7.91386, 7.25647};
  for (int i = 0; i < 7; ++i) {
    INFO("epsilon " << eps[i]);
    CHECK(analytic_gaussian_sigma(eps[i], 1e-5, delta_l2) == Approx(sigma[i]).epsilon(1e-5));
  }
}

TEST_CASE("GLM release side rejects bad arguments", "[glm][errors]") {
  CHECK_THROWS_AS(glm_statistic::logistic(0, 1.0), std::invalid_argument);
  CHECK_THROWS_AS(glm_statistic::logistic(2, 0.0), std::invalid_argument);
  CHECK_THROWS_AS(glm_statistic::logistic(2, std::nan("")), std::invalid_argument);
  CHECK_THROWS_AS(glm_statistic::logistic(2, 1.0, -1.0), std::invalid_argument);
  CHECK_THROWS_AS(glm_statistic::poisson(2, 1.0, 0.0), std::invalid_argument);
  CHECK_THROWS_WITH(glm_statistic::poisson(2, 1.0, HUGE_VAL), Catch::Contains("y_bound"));
  CHECK_THROWS_AS(logistic_joint_sensitivity(-1.0, 1.0, 1.0), std::invalid_argument);
  CHECK_THROWS_AS(logistic_joint_sensitivity(1.0, 0.0, 1.0), std::invalid_argument);
  CHECK_THROWS_AS(poisson_joint_sensitivity(1.0, std::nan(""), true), std::invalid_argument);
  CHECK_THROWS_AS(polynomial_joint_sensitivity(1.0, 0), std::invalid_argument);
  CHECK_THROWS_WITH(polynomial_joint_sensitivity(1.0, 65), Catch::Contains("[1, 64]"));
}
