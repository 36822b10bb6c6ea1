// privpost-infer's command-line options and per-kind entry points: all that the command line (infer_main.cpp) needs,
// without the library. Each model kind (models.hpp) runs in its own file with the helpers of infer.hpp (one
// translation unit with infer_main.cpp when PRIVPOST_UNITY_BUILD is ON, else one each).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "models.hpp"
#include "release_record.hpp"

namespace privpost {
class cmdstan_csv_writer;
}

namespace privpost::tools::infer_tool {

struct options {
  std::string release, prior, draws_csv, moments;
  std::vector<std::string> releases;  ///< every release record named (marginals: several releases of the same records)
  std::string output_dir;             ///< CmdStan CSV files, one per method and chain (privpost::cmdstan_csv_writer)
  /// --output-dir's writer, made by dispatch (infer_dispatch.hpp) before any chain runs: the runs that stream their
  /// draws (run_chains with a method name) write the files while they run, write_outputs rewrites them at the end.
  std::shared_ptr<privpost::cmdstan_csv_writer> cmdstan;
  std::string plot;              ///< FILE.png: traces and densities (infer_plot.hpp)
  std::string format = "table";  ///< table (stdout) | json (stdout: one JSON document; the tables go to stderr)
  /// --format json: the document the model runs fill in (write_outputs in infer.hpp) and infer_main.cpp prints.
  std::shared_ptr<nlohmann::json> report;
  std::string link = "exact";    ///< logistic: exact|taylor
  double target_accept = 0.8;    ///< logistic: NUTS's dual-averaging target (Stan's adapt_delta)
  std::string metric = "dense";  ///< logistic, poisson-glm: NUTS's adapted metric, dense|diag (nuts_options::dense_metric)
  bool compare_naive = false, parallel = false, strict = false;
  int chains = 4, burnin = 1000, draws = 1000;
  /// The command line gave --draws or --burnin (infer_cli.hpp note_chain_length): the chains then run exactly that
  /// long, without the models' default extension (infer.hpp run_chains).
  bool chain_length_given = false;
  int thin = 0;  ///< 0: the model's default (model_row::default_thin, models.hpp)
  std::uint64_t seed = 1;
  double target_ess = 0;             ///< > 0: extend the chains until R-hat <= 1.01 and bulk and tail ESS >= this
  std::int64_t max_sweeps = 200000;  ///< per chain, with --target-ess
  int max_iterations = 2000;         ///< pairwise-tables: EM iterations at most
  bool point_estimate = false;       ///< pairwise-tables: MAP-EM only, no posterior sampling
  /// pairwise-tables, Laplace releases: MAP-EM's evidence, auto|exact|gaussian (map_em_prefers_gaussian decides auto)
  std::string map_em_evidence = "auto";
  int collapsed_moves = 0;  ///< binomial, multinomial, pairwise-tables: gibbs_ss::set_collapsed_moves
  /// pairwise-tables: gibbs_ss::set_shift_moves; -1 (not given): tables_shift_moves on Laplace and Gaussian releases, none
  /// on lattice ones (models.hpp)
  int shift_moves = -1;
  std::string method = "gibbs";  ///< gibbs|exact|corrected|records|auto (samplers/sampler_policy.hpp)
  /// The longest run started without asking: a GLM or tables posterior run whose estimated time exceeds it is refused
  /// before sampling, naming the estimate; --max-minutes raises it.
  double max_minutes = 60;
  /// privpost-synthesize: this many synthetic data sets (0: privpost-infer, none) of synthetic_records records each,
  /// written to synthetic_dir (synthesize.hpp).
  int synthetic_sets = 0;
  std::int64_t synthetic_records = 0;
  std::string synthetic_dir;
  /// privpost-synthesize --digits: significant digits of the synthetic values that are not whole numbers (0: all the
  /// digits that read back to the same double; synthesize.hpp write_synthetic_value).
  int synthetic_digits = 0;
};

/// The program's name for its messages: privpost-synthesize runs privpost-infer's inference (synthetic_sets > 0).
inline const char* tool_name(const options& o) { return o.synthetic_sets > 0 ? "privpost-synthesize" : "privpost-infer"; }

/// Exit status when --strict and the diagnostics warned.
inline constexpr int strict_exit_status = 3;

/// The bounded families (binomial, multinomial with 2 to 5 categories): infer_bounded.cpp.
int infer_bounded(const release_record& rec, const options& o);
/// The unbounded families (exponential, poisson, normal-known-var, normal): infer_unbounded.cpp.
int infer_unbounded(const release_record& rec, const options& o);
/// Linear regression: infer_regression.cpp.
int run_regression(const release_record& rec, const options& o);
/// Logistic and Poisson regression (DP-GLM, NUTS): infer_glm.cpp.
int run_glm(const release_record& rec, const options& o);
/// Pairwise tables (CGM MAP-EM, then the Bayesian CGM's posterior on forests): infer_tables.cpp.
int run_pairwise_tables(const release_record& rec, const options& o);
/// Marginal tables, one or several releases of the same records, and pairwise tables with --method records (the
/// record-level histogram sampler): infer_marginals.cpp.
int run_marginals(const std::vector<release_record>& recs, const options& o);

}  // namespace privpost::tools::infer_tool
