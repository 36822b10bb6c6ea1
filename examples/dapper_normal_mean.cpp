// dapper_normal_mean: the dapper R package's own example (Ju et al. 2022) on privpost's record-level frame. A data owner
// releases the mean of n records y_i ~ N(-2, 1) with Gaussian noise of sd 1/3 (dapper's eps = 3); the analyst knows
// the noise sd, puts a N(0, 2^2) prior on the mean theta and samples theta with the n records latent
// (examples/dapper_model.hpp is the whole model). The posterior has a closed form, printed beside the chain's.
// Usage: privpost_dapper_normal_mean [--check] [n ...] (default n = 100 1000 10000). --check exits 1 unless, for every
// n, the chain's mean is within 4 Monte Carlo standard errors of the exact one, its sd within 10%, and its bulk ESS
// from 5000 sweeps at least 400.
#include <privpost/diagnostics/convergence.hpp>
#include <privpost/samplers/record_frame.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "dapper_model.hpp"

int main(int argc, char** argv) {
  bool check = false;
  std::vector<double> sizes;
  for (int a = 1; a < argc; ++a) {
    const std::string arg = argv[a];
    if (arg == "--check") {
      check = true;
      continue;
    }
    char* end = nullptr;
    const double n = std::strtod(arg.c_str(), &end);
    if (end == arg.c_str() || *end != '\0' || !(n >= 1 && n <= 1e7 && std::floor(n) == n)) {
      std::fprintf(stderr, "privpost_dapper_normal_mean: n '%s': accepted: a whole number in [1, 1e7], or --check\n", argv[a]);
      return 2;
    }
    sizes.push_back(n);
  }
  if (sizes.empty()) sizes = {100, 1000, 10000};

  constexpr double noise_sd = 1.0 / 3.0;
  constexpr int burnin = 500, sweeps = 5000;
  bool ok = true;
  std::printf("%7s  %-17s  %-17s  %7s  %9s\n", "n", "exact mean (sd)", "chain mean (sd)", "ESS", "ESS / s");
  for (const double n : sizes) {
    std::mt19937_64 g(2022);
    double mean_y = 0.0;  // the confidential records' mean, then its release
    for (int i = 0; i < static_cast<int>(n); ++i) mean_y += (-2.0 + privpost::draw_normal(g)) / n;
    const double z = mean_y + noise_sd * privpost::draw_normal(g);

    const my::normal_mean_model model{n};
    privpost::record_frame chain(model, n, g,
                                 privpost::record_release(my::mean_noise{noise_sd}, Eigen::VectorXd::Constant(1, z)));
    const auto start = std::chrono::steady_clock::now();
    for (int s = 0; s < burnin; ++s) chain.step(g);
    Eigen::MatrixXd draws(sweeps, 1);
    for (int s = 0; s < sweeps; ++s) {
      chain.step(g);
      draws(s, 0) = chain.parameter();
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    const my::normal_mean_posterior exact(model, noise_sd, z);
    const double mean = draws.mean();
    const double sd = std::sqrt((draws.array() - mean).square().sum() / (sweeps - 1));
    const double ess = privpost::ess_bulk(draws);
    std::printf("%7.0f  %7.3f (%6.3f)  %7.3f (%6.3f)  %7.0f  %9.0f\n", n, exact.mean, exact.sd, mean, sd, ess, ess / seconds);
    const double mcse = sd / std::sqrt(ess);
    if (!(std::abs(mean - exact.mean) <= 4.0 * mcse && std::abs(sd / exact.sd - 1.0) <= 0.1 && ess >= 400)) ok = false;
  }
  if (check) std::printf("%s\n", ok ? "check passed" : "check FAILED");
  return check && !ok ? 1 : 0;
}
