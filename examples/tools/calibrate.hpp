// Shared declarations of privpost-calibrate's source files, one per model kind of models.hpp (compiled as one translation unit
// when PRIVPOST_UNITY_BUILD is ON, separately when it is OFF).
#pragma once

#include <cstddef>
#include <cstdint>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>

#include <privpost/mechanisms/gaussian.hpp>
#include <privpost/mechanisms/laplace.hpp>
#include <privpost/mechanisms/mechanism_variant.hpp>
#include <privpost/mechanisms/published_bounds.hpp>
#include <privpost/samplers/sampler_policy.hpp>
#include <privpost/testing/family_study.hpp>
#if defined(PRIVPOST_TOOLS_MPI)
#include <privpost/distributed/mpi.hpp>
#endif

#include "calibration_plot.hpp"
#include "mpi_job.hpp"
#include "tool_support.hpp"

namespace privpost::tools::calibrate {

// The study's mechanism (--mechanism laplace or gaussian): one type for both, so every model's study and samplers are
// compiled once, not once per mechanism (build time); the draws are the held mechanism's.
using tool_mechanism = privpost::mechanism_variant<privpost::laplace_mechanism, privpost::gaussian_mechanism>;

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
  std::string plot;  ///< FILE.png: ECDF-difference plots and rank histograms (calibration_plot.hpp)
  int mmd_draws = 500;
  int dim = 1;                      ///< linreg: covariates (an intercept is added)
  std::string moments = "update";   ///< linreg: noisy|prior|update
  std::string graph = "chain";      ///< pairwise-tables: chain|star
  int nodes = 4;                    ///< pairwise-tables: number of nodes
  double pseudo_count = 10.0;       ///< pairwise-tables: hyper-Dirichlet alpha_0
  int collapsed_moves = 0;          ///< binomial, multinomial, pairwise-tables: Gibbs-SS's collapsed moves per sweep
  std::size_t partitions = 0;       ///< linreg: > 0 runs the partition-release study (calibrate_partition.cpp)
  std::string queries = "one-way";  ///< marginals: one-way (the 1-way marginals) or identity (the histogram)
  std::string metric = "dense";     ///< logistic, poisson-glm: NUTS's adapted metric, dense|diag
  bool mechanism_given = false, methods_given = false, thin_given = false, nodes_given = false, categories_given = false,
       metric_given = false;
};

template <class Study>
inline int run(const Study& study, const cli_options& o) {
  privpost::tools::progress_heartbeat progress("privpost-calibrate: trial", o.trials);
  privpost::calibration_options co;
  co.trials = o.trials;
  co.seed = o.seed;
  co.mmd_draws = o.mmd_draws;
  co.stop = &privpost::tools::interrupt_flag();  // Ctrl-C: stop before the next trial, report the trials done
  auto tick = [&](int done, int total) { progress(done, total); };
  // Under mpirun the trials are spread over the ranks (trial t on rank t mod K, the same seeds): rank 0 reports the
  // table one process would, the others are done once they have sent their trials.
  std::optional<privpost::calibration_accumulator> spread;
#if defined(PRIVPOST_TOOLS_MPI)
  if (privpost::tools::spread_job() != nullptr) {
    spread = privpost::distributed::run_calibration(MPI_COMM_WORLD, study, co, tick);
    if (!spread) return 0;
  }
#endif
  const auto acc = spread ? std::move(*spread) : privpost::run_calibration(study, co, tick);
  const auto rows = acc.report();
  if (o.format == "json") {
    std::cout << privpost::tools::to_json(rows).dump(2) << '\n';
  } else {
    std::cout << "model " << o.model << ", n " << o.n << ", epsilon " << o.epsilon << ", mechanism " << o.mechanism
              << (o.mechanism == "gaussian" ? ", delta " + std::to_string(o.delta) : std::string()) << ", trials "
              << (privpost::tools::interrupt_requested() && !rows.empty()
                      ? std::to_string(rows.front().trials) + " of " + std::to_string(o.trials) + " (interrupted)"
                      : std::to_string(o.trials))
              << ", burn-in " << o.burnin << ", draws " << o.draws << " (thin " << o.thin << "), seed " << o.seed << "\n";
    privpost::tools::print_table(rows, std::cout);
  }
  if (!o.ranks.empty()) privpost::tools::write_ranks(acc, rows, o.ranks);
  if (!o.plot.empty()) {
    auto number = [](double x) {
      std::ostringstream s;
      s << x;
      return s.str();
    };
    const auto inside = privpost::tools::write_calibration_plot(
        acc, rows, o.plot, o.seed,
        "privpost-calibrate: " + o.model + ", n " + number(o.n) + ", epsilon " + number(o.epsilon) + ", " +
            std::to_string(rows.empty() ? 0 : rows.front().trials) + " trials");
    for (std::size_t i = 0; i < rows.size(); ++i)
      std::cerr << "privpost-calibrate: " << rows[i].method << " parameter " << rows[i].parameter << ": the ECDF "
                << (inside[i] ? "stays inside" : "LEAVES") << " the 95% simultaneous band\n";
  }
  if (!privpost::tools::interrupt_requested()) return 0;
  std::cerr << "\nprivpost-calibrate: interrupted (Ctrl-C) after " << (rows.empty() ? 0 : rows.front().trials) << " of "
            << o.trials << " trials: the table" << (o.ranks.empty() ? "" : " and --ranks") << " cover those trials only\n";
  return privpost::tools::interrupted_exit_status;
}

/// --methods auto: the library's default sampler for family F at the study's n (samplers/sampler_policy.hpp), named on
/// stderr; the table's row carries the chosen sampler's name.
template <privpost::exponential_family F>
privpost::study_settings resolve_auto(privpost::study_settings settings) {
  for (auto& m : settings.methods)
    if (m == "auto") {
      m = privpost::to_string(privpost::default_sampler<F>(settings.n));
      std::cerr << "privpost-calibrate: --methods auto chose " << m << " (n = " << settings.n
                << "; the policy of privpost/samplers/sampler_policy.hpp)\n";
    }
  return settings;
}

int run_bounded_model(const cli_options& o, const privpost::study_settings& settings);
int run_unbounded_model(const cli_options& o, const privpost::study_settings& settings);
int run_regression_model(const cli_options& o, const privpost::study_settings& settings);
int run_glm_model(const cli_options& o, const privpost::study_settings& settings);
int run_graphical_model(const cli_options& o, const privpost::study_settings& settings);
/// marginals: the SBC of the record-level histogram sampler (calibrate_marginals.cpp).
int run_marginals_model(const cli_options& o, const privpost::study_settings& settings);
/// linreg --partitions M: the error of partition releases at the user's n, M and epsilon (calibrate_partition.cpp).
int run_partition_study(const cli_options& o);

}  // namespace privpost::tools::calibrate
