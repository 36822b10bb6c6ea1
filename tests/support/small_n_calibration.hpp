// Test support: docs/exact-sums.md test 3, the small-n calibration study every exact binomial sampler must pass.
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>

#include "privpost/families/binomial.hpp"
#include "privpost/mechanisms/gaussian.hpp"
#include "privpost/mechanisms/laplace.hpp"
#include "privpost/testing/family_study.hpp"
#include "support/calibration_checks.hpp"

namespace privpost::test {

/// Binomial n = 10, Beta(1, 1), M = 1000 trials, 500 burn-in + 2000 kept sweeps; Laplace at epsilon 0.1 and 1 and the
/// analytic Gaussian (epsilon 1, delta 1e-5), seeded seed, seed + 1, seed + 2. `method` (a bounded_family_study method)
/// must pass the library's rule (KS p > 0.001, 50% and 90% coverage within 3.5 binomial sds: [0.867, 0.933] at 90% for
/// M = 1000). Gibbs-SS's rows from the same trials are printed (-s), not asserted (its CLT and continuous sum are rough
/// at n = 10: 90% coverage 0.82-0.88). The naive conjugate update on the release is the negative control: it must fail the
/// same rule in all three settings (measured: 90% coverage 0.37-0.38 at epsilon 0.1, where the noise sd is 14 on a sum
/// in [0, 10]; 0.78 at Laplace epsilon 1; 0.54-0.57 Gaussian). Each trial has its own engine and the methods run
/// in list order, so appending the control leaves the tested method's draws unchanged.
inline void check_binomial_small_n_calibration(const std::string& method, std::uint64_t seed) {
  study_settings s;
  s.n = 10;
  s.burnin = 500;
  s.draws = 2000;
  s.thin = 1;
  s.methods = {method, "gibbs", "naive"};
  auto check = [&](const auto& study, std::uint64_t trial_seed, const char* what) {
    const auto rows = run_calibration(study, {1000, trial_seed, 0}).report();
    const auto& tested = row(rows, method);
    const auto& gibbs = row(rows, "gibbs");
    const auto& naive = row(rows, "naive");
    INFO(what << ": " << method << " KS p " << tested.ks_pvalue << ", coverage " << tested.coverage50 << " / "
              << tested.coverage90 << "; Gibbs-SS KS p " << gibbs.ks_pvalue << ", coverage " << gibbs.coverage50 << " / "
              << gibbs.coverage90 << "; naive KS p " << naive.ks_pvalue << ", coverage " << naive.coverage50 << " / "
              << naive.coverage90);
    check_calibrated(tested);
    CHECK(miscalibrated(naive));
  };
  check(bounded_family_study(beta_prior(1.0, 1.0), laplace_mechanism(1.0, 0.1), s), seed, "Laplace, epsilon 0.1");
  check(bounded_family_study(beta_prior(1.0, 1.0), laplace_mechanism(1.0, 1.0), s), seed + 1, "Laplace, epsilon 1");
  check(bounded_family_study(beta_prior(1.0, 1.0), gaussian_mechanism::analytic(1.0, 1.0, 1e-5), s), seed + 2,
        "Gaussian, epsilon 1");
}

}  // namespace privpost::test
