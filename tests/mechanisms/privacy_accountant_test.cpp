// Tests of privacy_accountant (mechanisms/privacy_accountant.hpp). Properties:
//  1. basic composition: charges add up; a budget split into thirds fits; a charge past the total throws
//     budget_exceeded naming the request and the total, and records nothing;
//  2. a refused release draws no noise (an engine that counts its calls), an accepted one does;
//  3. zCDP: gaussian_mechanism's rho is D^2 / (2 sigma^2) and a pure epsilon-DP mechanism's epsilon^2 / 2; the
//     conversion is Bun & Steinke's Prop. 1.3; k Gaussian releases are admitted exactly while basic composition or
//     zCDP keeps the total (the count computed here from the closed forms), more than basic composition alone admits;
//  4. a release with delta > 0 and no zCDP view leaves basic composition only;
//  5. the concept and the variant's forwarding;
//  6. bad input: totals, entries and statistics that are NaN, infinite or out of range.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <stdexcept>

#include "privpost/mechanisms/gaussian.hpp"
#include "privpost/mechanisms/laplace.hpp"
#include "privpost/mechanisms/mechanism_variant.hpp"
#include "privpost/mechanisms/privacy_accountant.hpp"

using namespace privpost;

namespace {

// An engine that counts how often it was called (every noise draw calls it).
struct counting_engine {
  using result_type = std::uint64_t;
  static constexpr result_type min() { return std::mt19937_64::min(); }
  static constexpr result_type max() { return std::mt19937_64::max(); }
  result_type operator()() {
    ++calls;
    return g();
  }
  std::mt19937_64 g{7};
  int calls = 0;
};

// An (epsilon, delta)-DP mechanism with no zCDP view (its noise is irrelevant here).
struct approximate_mechanism {
  using mechanism_category = mechanism_tag;
  using vector_type = Eigen::VectorXd;
  template <random_engine G>
  vector_type release(const vector_type& s, G& g) const {
    vector_type z = s;
    for (Eigen::Index j = 0; j < z.size(); ++j) z(j) += static_cast<double>(g() % 3);
    return z;
  }
  double log_likelihood(const vector_type&, const vector_type&) const { return 0.0; }
  privacy_budget budget() const { return {0.2, 1e-7}; }
};

Eigen::VectorXd one(double v) { return Eigen::VectorXd::Constant(1, v); }

}  // namespace

static_assert(zcdp_mechanism<gaussian_mechanism>);
static_assert(!zcdp_mechanism<laplace_mechanism>);  // pure DP: rho from its epsilon
static_assert(zcdp_mechanism<mechanism_variant<laplace_mechanism, gaussian_mechanism>>);
static_assert(release_mechanism<approximate_mechanism>);
static_assert(!zcdp_mechanism<approximate_mechanism>);

TEST_CASE("privacy_accountant: basic composition and refusal", "[accountant]") {
  privacy_accountant ledger({0.3, 0.0});
  for (int i = 0; i < 3; ++i) ledger.charge(laplace_mechanism(1.0, 0.1), "third " + std::to_string(i));
  CHECK(ledger.entries().size() == 3);
  CHECK(ledger.spent_basic().epsilon == Approx(0.3).epsilon(1e-15));
  CHECK(ledger.spent().epsilon == Approx(0.3).epsilon(1e-15));
  CHECK(ledger.spent_rho() == Approx(3 * 0.005).epsilon(1e-15));
  // With delta = 0 in the total there is no zCDP conversion: the next charge, however small, is refused.
  CHECK_THROWS_AS(ledger.charge(laplace_mechanism(1.0, 1e-6), "more"), budget_exceeded);
  CHECK_THROWS_WITH(ledger.charge(laplace_mechanism(1.0, 0.05), "more"), Catch::Contains("'more'") && Catch::Contains("0.05") &&
                                                                             Catch::Contains("0.3") &&
                                                                             Catch::Contains("before any noise"));
  CHECK(ledger.entries().size() == 3);  // nothing recorded
  CHECK(ledger.spent_basic().epsilon == Approx(0.3).epsilon(1e-15));
  // A charge of epsilon 0 (a public statistic) always fits.
  ledger.charge(ledger_entry{"public count", {0.0, 0.0}, 0.0});
  CHECK(ledger.entries().size() == 4);
  // A total with delta = 0 refuses any delta.
  privacy_accountant pure({5.0, 0.0});
  CHECK_THROWS_AS(pure.charge(gaussian_mechanism::analytic(1.0, 0.5, 1e-9), "gaussian"), budget_exceeded);
  CHECK(pure.entries().empty());
}

TEST_CASE("privacy_accountant: a refused release draws no noise", "[accountant]") {
  privacy_accountant ledger({1.0, 1e-6});
  counting_engine g;
  const Eigen::VectorXd z = ledger.release(laplace_mechanism(1.0, 0.75), one(3.0), "first", g);
  CHECK(g.calls > 0);
  CHECK(std::isfinite(z(0)));
  const int calls = g.calls;
  CHECK_THROWS_AS(ledger.release(laplace_mechanism(1.0, 0.5), one(3.0), "second", g), budget_exceeded);
  CHECK(g.calls == calls);
  CHECK(ledger.entries().size() == 1);
  // Statistics that are not finite are refused before the charge.
  CHECK_THROWS_WITH(ledger.release(laplace_mechanism(1.0, 0.1), one(std::nan("")), "nan", g), Catch::Contains("s"));
  CHECK(ledger.entries().size() == 1);
  CHECK(g.calls == calls);
  // The CSPRNG overload charges too.
  const Eigen::VectorXd z2 = ledger.release(laplace_mechanism(1.0, 0.25), one(3.0), "csprng");
  CHECK(std::isfinite(z2(0)));
  CHECK(ledger.entries().size() == 2);
  CHECK_THROWS_AS(ledger.release(laplace_mechanism(1.0, 0.01), one(3.0), "over"), budget_exceeded);
}

TEST_CASE("privacy_accountant: zCDP composition of Gaussian releases", "[accountant]") {
  // rho of the Gaussian mechanism from its sigma, whatever the calibration.
  for (const double d : {0.5, 1.0, 3.0}) {
    const auto g = gaussian_mechanism::analytic(d, 0.4, 1e-6);
    CHECK(zcdp_rho(g) == Approx(d * d / (2.0 * g.sigma() * g.sigma())).epsilon(1e-14));
    const auto c = gaussian_mechanism::classic(d, 0.4, 1e-6);
    CHECK(zcdp_rho(c) == Approx(0.16 / (4.0 * std::log(1.25 / 1e-6))).epsilon(1e-12));  // eps^2 / (4 ln(1.25 / delta))
  }
  CHECK(zcdp_rho(laplace_mechanism(2.0, 0.3)) == Approx(0.045).epsilon(1e-15));
  CHECK(std::isinf(zcdp_rho(approximate_mechanism{})));
  CHECK(privacy_accountant::zcdp_epsilon(0.01, 1e-6) == Approx(0.01 + 2.0 * std::sqrt(0.01 * std::log(1e6))).epsilon(1e-14));
  CHECK(privacy_accountant::zcdp_epsilon(0.0, 0.5) == 0.0);
  // k releases of the classic Gaussian at (0.1, 1e-8) against the total (1, 1e-6): basic composition admits 10 (epsilon)
  // and at most 100 (delta); zCDP admits every k with k rho + 2 sqrt(k rho ln(1e6)) <= 1. The ledger admits exactly the
  // largest k for which either holds.
  const auto g = gaussian_mechanism::classic(1.0, 0.1, 1e-8);
  const double rho = zcdp_rho(g);
  int expected = 0;
  for (int k = 1; k < 100000; ++k) {
    const bool basic = k * 0.1 <= 1.0 * (1 + 1e-12) && k * 1e-8 <= 1e-6 * (1 + 1e-12);
    const bool zcdp = k * rho + 2.0 * std::sqrt(k * rho * std::log(1e6)) <= 1.0 * (1 + 1e-12);
    if (!(basic || zcdp)) break;
    expected = k;
  }
  privacy_accountant ledger({1.0, 1e-6});
  int admitted = 0;
  try {
    for (int k = 0; k < 100000; ++k) {
      ledger.charge(g, "gaussian");
      ++admitted;
    }
  } catch (const budget_exceeded&) {
  }
  INFO("rho per release " << rho << ", expected " << expected);
  CHECK(admitted == expected);
  CHECK(expected > 10);  // zCDP admits more than basic composition's 10
  CHECK(ledger.spent().epsilon <= 1.0 * (1 + 1e-12));
  CHECK(ledger.spent().delta == 1e-6);
  CHECK(ledger.spent_basic().epsilon > 1.0);  // the spend is only within the total through zCDP
  // A Laplace release next: its rho (epsilon^2 / 2) adds to the zCDP sum.
  privacy_accountant mixed({1.0, 1e-6});
  mixed.charge(laplace_mechanism(1.0, 0.5), "laplace");
  mixed.charge(gaussian_mechanism::classic(1.0, 0.4, 1e-7), "gaussian");
  CHECK(mixed.spent_rho() == Approx(0.125 + 0.16 / (4.0 * std::log(1.25e7))).epsilon(1e-12));
  CHECK(mixed.spent().epsilon == Approx(std::min(0.9, privacy_accountant::zcdp_epsilon(mixed.spent_rho(), 1e-6))).epsilon(1e-14));
}

TEST_CASE("privacy_accountant: no zCDP view means basic composition only", "[accountant]") {
  privacy_accountant ledger({1.0, 1e-6});
  ledger.charge(approximate_mechanism{}, "approx");
  CHECK(std::isinf(ledger.spent_rho()));
  CHECK(ledger.spent().epsilon == Approx(0.2));
  CHECK(ledger.spent().delta == Approx(1e-7));
  // Four more fit by basic composition (epsilon 1.0, delta 5e-7); a fifth does not, and zCDP cannot help any more.
  for (int i = 0; i < 4; ++i) ledger.charge(approximate_mechanism{}, "approx");
  CHECK_THROWS_AS(ledger.charge(gaussian_mechanism::classic(1.0, 0.01, 1e-9), "tiny gaussian"), budget_exceeded);
  CHECK(ledger.entries().size() == 5);
}

TEST_CASE("privacy_accountant: the variant forwards its mechanism's zCDP view", "[accountant]") {
  using variant = mechanism_variant<laplace_mechanism, gaussian_mechanism>;
  const auto g = gaussian_mechanism::analytic(1.0, 0.5, 1e-6);
  CHECK(variant(g).zcdp_rho() == zcdp_rho(g));
  CHECK(variant(laplace_mechanism(1.0, 0.5)).zcdp_rho() == Approx(0.125));
  privacy_accountant ledger({1.0, 1e-5});
  ledger.charge(variant(g), "variant");
  CHECK(ledger.spent_rho() == zcdp_rho(g));
}

TEST_CASE("privacy_accountant: bad input", "[accountant][errors]") {
  constexpr double inf = std::numeric_limits<double>::infinity();
  for (const double e : {std::nan(""), 0.0, -1.0, inf})
    CHECK_THROWS_WITH(privacy_accountant({e, 0.0}), Catch::Contains("total epsilon"));
  for (const double d : {std::nan(""), -0.1, 1.0, 2.0}) CHECK_THROWS_WITH(privacy_accountant({1.0, d}), Catch::Contains("delta"));
  privacy_accountant ledger({1.0, 1e-6});
  CHECK_THROWS_WITH(ledger.charge(ledger_entry{"x", {std::nan(""), 0.0}, 0.0}), Catch::Contains("epsilon of 'x'"));
  CHECK_THROWS_WITH(ledger.charge(ledger_entry{"x", {inf, 0.0}, 0.0}), Catch::Contains("epsilon of 'x'"));
  CHECK_THROWS_WITH(ledger.charge(ledger_entry{"x", {-0.1, 0.0}, 0.0}), Catch::Contains("epsilon of 'x'"));
  CHECK_THROWS_WITH(ledger.charge(ledger_entry{"x", {0.1, 1.0}, 0.0}), Catch::Contains("delta"));
  CHECK_THROWS_WITH(ledger.charge(ledger_entry{"x", {0.1, std::nan("")}, 0.0}), Catch::Contains("delta"));
  CHECK_THROWS_WITH(ledger.charge(ledger_entry{"x", {0.1, 0.0}, std::nan("")}), Catch::Contains("rho of 'x'"));
  CHECK_THROWS_WITH(ledger.charge(ledger_entry{"x", {0.1, 0.0}, -1.0}), Catch::Contains("rho of 'x'"));
  CHECK(ledger.entries().empty());
  CHECK_THROWS_WITH(privacy_accountant::zcdp_epsilon(-1.0, 1e-6), Catch::Contains("rho"));
  CHECK_THROWS_WITH(privacy_accountant::zcdp_epsilon(0.1, 0.0), Catch::Contains("delta"));
  CHECK_THROWS_WITH(privacy_accountant::zcdp_epsilon(0.1, std::nan("")), Catch::Contains("delta"));
  CHECK(std::isinf(privacy_accountant::zcdp_epsilon(inf, 1e-6)));
}
