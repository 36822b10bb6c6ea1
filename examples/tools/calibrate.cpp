// privpost-calibrate: simulation-based calibration of privpost's methods on a built-in model (dissertation Sec. 4.4).
// Draws theta from the prior, records from the model, a release from the mechanism; ranks the true theta in each method's
// posterior; reports KS (and p-value) of the ranks, coverage of 50%/90% intervals, MMD^2 to the non-private posterior.
#include <CLI/CLI.hpp>

#include <cstdlib>
#include <iostream>
#include <optional>
#include <string>

#include <privpost/privpost.hpp>

#include "tool_support.hpp"

namespace {

struct cli_options {
  std::string model = "binomial";
  std::string methods = "gibbs,naive,nonprivate";
  double n = 100;
  double epsilon = 0.1;
  std::string mechanism = "laplace";
  double delta = 1e-5;
  int trials = 300;
  int draws = 1000;
  int burnin = 500;
  int thin = 5;
  std::uint64_t seed = 1;
  int categories = 3;
  double truncation = 0.05;
  std::string format = "table";
  std::string ranks;
  int mmd_draws = 500;
};

template <class Study>
int run(const Study& study, const cli_options& o) {
  privpost::tools::progress_line progress("privpost-calibrate: trial");
  privpost::calibration_options co;
  co.trials = o.trials;
  co.seed = o.seed;
  co.mmd_draws = o.mmd_draws;
  const auto acc = privpost::run_calibration(study, co, [&](int done, int total) { progress(done, total); });
  const auto rows = acc.report();
  if (o.format == "json") {
    std::cout << privpost::tools::to_json(rows).dump(2) << '\n';
  } else {
    std::cout << "model " << o.model << ", n " << o.n << ", epsilon " << o.epsilon << ", mechanism " << o.mechanism
              << (o.mechanism == "gaussian" ? ", delta " + std::to_string(o.delta) : std::string()) << ", trials " << o.trials
              << ", burn-in " << o.burnin << ", draws " << o.draws << " (thin " << o.thin << "), seed " << o.seed << "\n";
    privpost::tools::print_table(rows, std::cout);
  }
  if (!o.ranks.empty()) privpost::tools::write_ranks(acc, rows, o.ranks);
  return 0;
}

template <class Prior, class Family = typename Prior::family>
int run_bounded(const Prior& prior, const cli_options& o, const privpost::study_settings& settings) {
  if (o.mechanism == "laplace") {
    return run(privpost::bounded_family_study(prior, privpost::laplace_mechanism(Family::l1_sensitivity, o.epsilon), settings), o);
  }
  return run(privpost::bounded_family_study(prior, privpost::gaussian_mechanism::analytic(Family::l2_sensitivity, o.epsilon, o.delta),
                                            settings),
             o);
}

template <int K>
int run_multinomial(const cli_options& o, const privpost::study_settings& settings) {
  return run_bounded(privpost::dirichlet_prior<K>(Eigen::Matrix<double, K, 1>::Ones()), o, settings);
}

int dispatch(const cli_options& o) {
  privpost::study_settings settings;
  settings.n = o.n;
  settings.burnin = o.burnin;
  settings.draws = o.draws;
  settings.thin = o.thin;
  settings.methods = privpost::tools::split_list(o.methods);
  if (o.model == "binomial") return run_bounded(privpost::beta_prior(1.0, 1.0), o, settings);
  if (o.model == "multinomial") {
    switch (o.categories) {
      case 2: return run_multinomial<2>(o, settings);
      case 3: return run_multinomial<3>(o, settings);
      case 4: return run_multinomial<4>(o, settings);
      case 5: return run_multinomial<5>(o, settings);
      case 6: return run_multinomial<6>(o, settings);
      case 8: return run_multinomial<8>(o, settings);
      case 10: return run_multinomial<10>(o, settings);
      default:
        throw std::invalid_argument("--categories is " + std::to_string(o.categories) + "; accepted: 2, 3, 4, 5, 6, 8 or 10");
    }
  }
  return run_unbounded(o, settings);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"privpost-calibrate: simulation-based calibration of noise-aware and baseline posteriors"};
  cli_options o;
  app.add_option("--model", o.model, "binomial|multinomial|poisson|exponential|normal-known-var|normal")
      ->check(CLI::IsMember({"binomial", "multinomial", "poisson", "exponential", "normal-known-var", "normal"}));
  app.add_option("--methods", o.methods, "comma list of gibbs, naive, nonprivate, ops (ops: binomial only)");
  app.add_option("--n", o.n, "records per trial")->check(CLI::Range(1.0, 1e7));
  app.add_option("--epsilon", o.epsilon, "privacy budget epsilon");
  app.add_option("--mechanism", o.mechanism, "laplace|gaussian")->check(CLI::IsMember({"laplace", "gaussian"}));
  app.add_option("--delta", o.delta, "delta of the Gaussian mechanism (analytic calibration)");
  app.add_option("--trials", o.trials, "number of simulated trials M")->check(CLI::Range(2, 1000000));
  app.add_option("--draws", o.draws, "draws kept per posterior")->check(CLI::Range(2, 10000000));
  app.add_option("--burnin", o.burnin, "Gibbs-SS burn-in sweeps")->check(CLI::Range(0, 100000000));
  app.add_option("--thin", o.thin, "Gibbs-SS keeps every thin-th sweep")->check(CLI::Range(1, 100000));
  app.add_option("--seed", o.seed, "seed of the whole study (trial t uses stream t)");
  app.add_option("--categories", o.categories, "K for the multinomial model");
  app.add_option("--truncation", o.truncation,
                 "q: declared bounds are the central 1 - q interval of the prior predictive of one record (unbounded models)")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--format", o.format, "table|json")->check(CLI::IsMember({"table", "json"}));
  app.add_option("--ranks", o.ranks, "write each trial's true-parameter quantile per method to this CSV file");
  app.add_option("--mmd-draws", o.mmd_draws, "draws per posterior used for MMD^2 (0: skip MMD)")->check(CLI::Range(0, 100000));
  CLI11_PARSE(app, argc, argv);
  try {
    return dispatch(o);
  } catch (const std::exception& e) {
    std::cerr << "privpost-calibrate: error: " << e.what() << '\n';
    return 1;
  }
}
