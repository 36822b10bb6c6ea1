// Simulation-based calibration on lattice releases: the samplers given a release of the discrete
// Laplace or discrete Gaussian mechanism (mechanisms/discrete_laplace.hpp, discrete_gaussian.hpp).
// Rule (tests/support/calibration_checks.hpp): KS p > 0.001 for the true-parameter quantiles, and 50% and 90% coverage
// within 3.5 binomial standard deviations of nominal ([0.867, 0.933] at 90% for M = 1000); the naive conjugate update on
// the release, the negative control, must fail the same rule.
// - Gibbs-SS at n = 100 (the regime where it is calibrated with continuous noise, bounded_calibration_test.cpp) uses
//   the mechanisms' scale-mixture view, which is exact for counts on the lattice (gamma = 1).
// - The exact sampler at n = 10 (gibbs_ss_exact, the sum enumerated) uses the discrete pmf itself (log_likelihood).
// Sizes as bounded_calibration_test.cpp: 500 burn-in sweeps, 1000 draws thinned by 20 at n = 100; 2000 unthinned at
// n = 10 as small_n_calibration.hpp.
#include <catch2/catch.hpp>

#include "privpost/families/binomial.hpp"
#include "privpost/mechanisms/discrete_gaussian.hpp"
#include "privpost/mechanisms/discrete_laplace.hpp"
#include "privpost/testing/family_study.hpp"
#include "support/calibration_checks.hpp"

using namespace privpost;
using privpost::test::row;

namespace {
constexpr int lattice_trials = 1000;

template <class Mechanism>
void check_method(const Mechanism& mechanism, double n, const std::string& method, std::uint64_t seed, const char* what) {
  study_settings s;
  s.n = n;
  s.burnin = 500;
  s.draws = n >= 100 ? 1000 : 2000;
  s.thin = n >= 100 ? 20 : 1;
  s.methods = {method, "naive"};
  const bounded_family_study study(beta_prior(1.0, 1.0), mechanism, s);
  const auto rows = run_calibration(study, {lattice_trials, seed, 0}).report();
  const auto& tested = row(rows, method);
  const auto& naive = row(rows, "naive");
  INFO(what << ", n = " << n << ": " << method << " KS p " << tested.ks_pvalue << ", coverage " << tested.coverage50 << " / "
            << tested.coverage90 << "; naive KS p " << naive.ks_pvalue << ", coverage " << naive.coverage50 << " / "
            << naive.coverage90);
  test::check_calibrated(tested);
  CHECK(test::miscalibrated(naive));
}
}  // namespace

TEST_CASE("Gibbs-SS is calibrated on discrete Laplace and discrete Gaussian releases (binomial n = 100)",
          "[calibration][discrete][discrete-sbc]") {
  check_method(discrete_laplace_mechanism(binomial_family::l1_sensitivity, 0.1), 100, "gibbs", 1401,
               "discrete Laplace, epsilon 0.1");
  check_method(discrete_gaussian_mechanism(binomial_family::l2_sensitivity, 0.5, 1e-5), 100, "gibbs", 1402,
               "discrete Gaussian, epsilon 0.5, delta 1e-5");
}

TEST_CASE("the exact sampler is calibrated on discrete releases through their pmf (binomial n = 10)",
          "[calibration][discrete][discrete-sbc]") {
  check_method(discrete_laplace_mechanism(binomial_family::l1_sensitivity, 0.1), 10, "exact", 1403,
               "discrete Laplace, epsilon 0.1");
  check_method(discrete_gaussian_mechanism(binomial_family::l2_sensitivity, 0.5, 1e-5), 10, "exact", 1404,
               "discrete Gaussian, epsilon 0.5, delta 1e-5");
}
