// Tests of the logistic link functionals (families/glm/logistic_link.hpp; docs/design-glm.md Sec. 5.7 B.4):
//  1. exact-link kappa_1, kappa_3, kappa_5 against the spec's table (q = 0 .. 4, zero mean);
//  2. the exact link against an independent composite Simpson rule (40,001 points on [-14, 14]) at large q and
//     non-zero means, to 2e-14 for every kappa_0..5 (the step 0.5 of before failed this: 1e-10 in kappa_5);
//  3. the derivative identities d kappa_j / d m = kappa_(j+1) and d kappa_j / d q = kappa_(j+2) / 2 by central
//     differences, for both links;
//  4. the Taylor link's closed form (kappa_1 = 1/2 - q/8, kappa_3 = -1/4 at m = 0) and its loss of signal at q = 4;
//  5. q = 0 gives the derivatives of tanh(m / 2) exactly; bad arguments throw.
#include <catch2/catch.hpp>

#include <cmath>
#include <numbers>

#include "privpost/families/glm/logistic_link.hpp"

using namespace privpost;

namespace {
// E[g^(j)(m + sqrt(q) xi)] by composite Simpson on [-14, 14] with 40,001 points, g^(j) by its own recursion.
link_functionals simpson(double m, double q) {
  const int n = 40000;
  const double a = -14.0, h = 28.0 / n;
  link_functionals k{};
  for (int i = 0; i <= n; ++i) {
    const double xi = a + h * i;
    const double w = (i == 0 || i == n ? 1.0 : (i % 2 == 1 ? 4.0 : 2.0)) * h / 3.0;
    const double g = std::tanh(0.5 * (m + std::sqrt(q) * xi));
    // g^(j) by differentiating polynomials in g with g' = (1 - g^2) / 2 (coefficients built here, independently).
    double poly[8][8] = {};
    poly[0][1] = 1.0;
    for (int j = 1; j < 6; ++j)
      for (int p = 1; p < 8; ++p) {
        // d/deta g^p = p g^(p-1) (1 - g^2) / 2
        poly[j][p - 1] += 0.5 * p * poly[j - 1][p];
        if (p + 1 < 8) poly[j][p + 1] -= 0.5 * p * poly[j - 1][p];
      }
    const double phi = std::exp(-0.5 * xi * xi) / std::sqrt(2.0 * std::numbers::pi);
    for (int j = 0; j < 6; ++j) {
      double v = 0.0, gp = 1.0;
      for (int p = 0; p < 8; ++p) {
        v += poly[j][p] * gp;
        gp *= g;
      }
      k[static_cast<std::size_t>(j)] += w * phi * v;
    }
  }
  return k;
}
}  // namespace

TEST_CASE("exact logistic link: the spec's table of kappa values", "[glm][link]") {
  struct row {
    double q, k1, k3, k5;
  };
  const row table[] = {{0.0, 0.5, -0.25, 0.5},
                       {0.113, 0.4866150423, -0.2247382335, 0.4004218602},
                       {0.5, 0.449246736, -0.1671034685, 0.2228868981},
                       {1.0, 0.4132419283, -0.1247929679, 0.1287599465},
                       {2.0, 0.363161846, -0.081157499, 0.0591137268},
                       {4.0, 0.3028527548, -0.045449422, 0.021411681}};
  for (const row& r : table) {
    const auto k = exact_logistic_link::functionals(0.0, r.q);
    INFO("q = " << r.q);
    CHECK(k[1] == Approx(r.k1).epsilon(2e-9));
    CHECK(k[3] == Approx(r.k3).epsilon(2e-8));
    CHECK(k[5] == Approx(r.k5).epsilon(2e-8));
    // g is odd: the even functionals vanish at mean 0.
    CHECK(std::abs(k[0]) < 1e-15);
    CHECK(std::abs(k[2]) < 1e-15);
    CHECK(std::abs(k[4]) < 1e-15);
  }
  CHECK(exact_logistic_link::functionals(0.0, 9.0)[1] == Approx(0.229676).epsilon(1e-5));
}

TEST_CASE("exact logistic link agrees with an independent Simpson rule", "[glm][link]") {
  for (double m : {0.0, 0.7, -0.766, -2.5, 8.0}) {
    for (double q : {0.05, 1.0, 1.3, 15.9, 16.1, 25.0, 100.0, 198.0, 900.0}) {
      const auto k = exact_logistic_link::functionals(m, q);
      const auto s = simpson(m, q);
      for (std::size_t j = 0; j < 6; ++j) {
        INFO("m " << m << ", q " << q << ", kappa_" << j << ": " << k[j] << " vs " << s[j]);
        CHECK(k[j] == Approx(s[j]).margin(2e-14));
      }
    }
  }
}

TEST_CASE("link functionals obey d/dm kappa_j = kappa_(j+1) and d/dq kappa_j = kappa_(j+2) / 2", "[glm][link]") {
  const double h = 1e-5;
  for (double m : {0.0, 0.4, -1.1}) {
    for (double q : {0.7, 3.0}) {
      const auto k = exact_logistic_link::functionals(m, q);
      const auto km = exact_logistic_link::functionals(m + h, q), kmm = exact_logistic_link::functionals(m - h, q);
      const auto kq = exact_logistic_link::functionals(m, q + h), kqq = exact_logistic_link::functionals(m, q - h);
      const auto t = taylor_logistic_link::functionals(m, q);
      const auto tm = taylor_logistic_link::functionals(m + h, q), tmm = taylor_logistic_link::functionals(m - h, q);
      const auto tq = taylor_logistic_link::functionals(m, q + h), tqq = taylor_logistic_link::functionals(m, q - h);
      for (std::size_t j = 0; j < 4; ++j) {
        INFO("m " << m << ", q " << q << ", j " << j);
        CHECK((km[j] - kmm[j]) / (2 * h) == Approx(k[j + 1]).margin(1e-8));
        CHECK((kq[j] - kqq[j]) / (2 * h) == Approx(0.5 * k[j + 2]).margin(1e-8));
        CHECK((tm[j] - tmm[j]) / (2 * h) == Approx(t[j + 1]).margin(1e-8));
        CHECK((tq[j] - tqq[j]) / (2 * h) == Approx(0.5 * t[j + 2]).margin(1e-8));
      }
    }
  }
  // The spec's check: d kappa_1 / dq at q = 0.7 is -0.0736666465.
  CHECK(0.5 * exact_logistic_link::functionals(0.0, 0.7)[3] == Approx(-0.0736666465).epsilon(1e-8));
}

TEST_CASE("Taylor link: the paper's closed form and its loss of signal at q = 4", "[glm][link]") {
  for (double q : {0.0, 0.113, 0.5, 1.0, 2.0}) {
    const auto t = taylor_logistic_link::functionals(0.0, q);
    CHECK(t[1] == 0.5 - q / 8.0);
    CHECK(t[3] == -0.25);
    CHECK(t[5] == 0.0);
  }
  CHECK(taylor_logistic_link::functionals(0.0, 4.0)[1] == 0.0);     // E[y x] = 0: no signal
  CHECK(taylor_logistic_link::functionals(0.0, 9.0)[1] == -0.625);  // the sign flips
  CHECK(exact_logistic_link::functionals(0.0, 4.0)[1] > 0.3);       // the exact link keeps it
}

TEST_CASE("link functionals at q = 0 and bad arguments", "[glm][link][errors]") {
  const double m = 0.9, g = std::tanh(0.45);
  const auto k = exact_logistic_link::functionals(m, 0.0);
  CHECK(k[0] == Approx(g).epsilon(1e-15));
  CHECK(k[1] == Approx(0.5 * (1 - g * g)).epsilon(1e-15));
  // Continuity into q = 0.
  const auto small = exact_logistic_link::functionals(m, 1e-10);
  for (std::size_t j = 0; j < 6; ++j) CHECK(small[j] == Approx(k[j]).margin(1e-9));
  CHECK_THROWS_AS(exact_logistic_link::functionals(0.0, -1.0), std::domain_error);
  CHECK_THROWS_AS(exact_logistic_link::functionals(0.0, std::nan("")), std::domain_error);
  CHECK_THROWS_AS(exact_logistic_link::functionals(0.0, HUGE_VAL), std::domain_error);
  // Far tails stay finite and cheap: every kappa_j, j >= 1, vanishes, kappa_0 is the sign of the mean.
  const auto far = exact_logistic_link::functionals(3000.0, 1e8);
  CHECK(far[0] ==
        Approx(std::erf(0.25 * std::sqrt(std::numbers::pi) * 3000.0 / std::sqrt(1.0 + 2.0 * std::numbers::pi / 16.0 * 1e8)))
            .margin(1e-6));
  for (std::size_t j = 1; j < 6; ++j) CHECK(std::abs(far[j]) < 1e-3);
  // A mean whose grid index m / h exceeds int's range, with an sd wide enough to reach the tabulated window (the node
  // nearest m was cast before it was clamped: undefined behaviour, found in review).
  const auto huge = exact_logistic_link::functionals(1e12, 1e22);
  for (std::size_t j = 0; j < 6; ++j) CHECK(std::isfinite(huge[j]));
  CHECK(huge[0] ==
        Approx(std::erf(0.25 * std::sqrt(std::numbers::pi) * 1e12 / std::sqrt(1.0 + 2.0 * std::numbers::pi / 16.0 * 1e22)))
            .margin(1e-3));
  CHECK_THROWS_AS(exact_logistic_link::functionals(std::nan(""), 1.0), std::invalid_argument);
  CHECK_THROWS_AS(taylor_logistic_link::functionals(0.0, HUGE_VAL), std::domain_error);
}
