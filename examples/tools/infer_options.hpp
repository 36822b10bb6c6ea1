// privpost-infer's command-line options and per-model entry points: all that the command line (infer_main.cpp) needs,
// without the library. The models run in infer_bounded.cpp, infer_unbounded.cpp and infer_regression.cpp, with the
// helpers of infer.hpp (one translation unit with infer_main.cpp when PRIVPOST_UNITY_BUILD is ON, else one each).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "release_record.hpp"

namespace privpost::tools::infer_tool {

struct options {
  std::string release, prior, draws_csv, moments;
  std::string output_dir;        ///< CmdStan CSV files, one per method and chain (cmdstan_csv.hpp)
  std::string plot;              ///< FILE.png: traces and densities (infer_plot.hpp)
  std::string format = "table";  ///< table (stdout) | json (stdout: one JSON document; the tables go to stderr)
  /// --format json: the document the model runs fill in (write_outputs in infer.hpp) and infer_main.cpp prints.
  std::shared_ptr<nlohmann::json> report;
  std::string link = "exact";  ///< logistic: exact|taylor
  double target_accept = 0.8;  ///< logistic: NUTS's dual-averaging target (Stan's adapt_delta)
  bool compare_naive = false, parallel = false, strict = false;
  int chains = 4, burnin = 1000, draws = 1000;
  int thin = 0;  ///< 0: the model's default (default_thin, regression_default_thin)
  std::uint64_t seed = 1;
  double target_ess = 0;             ///< > 0: extend the chains until R-hat <= 1.01 and bulk and tail ESS >= this
  std::int64_t max_sweeps = 200000;  ///< per chain, with --target-ess
  int max_iterations = 2000;         ///< pairwise-tables: EM iterations at most
  bool point_estimate = false;       ///< pairwise-tables: MAP-EM only, no posterior sampling
  int collapsed_moves = 0;           ///< binomial, multinomial, pairwise-tables: gibbs_ss::set_collapsed_moves
  std::string method = "gibbs";      ///< gibbs|exact|corrected|records|auto (samplers/sampler_policy.hpp)
  /// The longest run started without asking: a GLM or tables posterior run whose estimated time exceeds it is refused
  /// before sampling, naming the estimate; --max-minutes raises it.
  double max_minutes = 60;
};

/// Default thinning of the families' chains.
inline constexpr int default_thin = 2;
/// Default thinning of regression chains: their coefficients mix more slowly (bulk ESS ~ 600 of 4 x 1000 draws at thin
/// 2 on the cirrhosis release, where R-hat crossed 1.01 in ~1 of 10 fresh releases; 0 of 40 at thin 5).
inline constexpr int regression_default_thin = 5;

/// Default thinning of the Bayesian CGM's chains (pairwise tables): the tables and the marginals move together slowly
/// where the noise is large against sd(n | mu) (bulk ESS ~ 35 of 4 x 1000 draws at thin 5 on the 10-chain at
/// epsilon 0.1, N = 10^4); --target-ess extends the chains where 10 is not enough.
inline constexpr int tables_default_thin = 10;

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
/// Default thinning of NUTS chains (logistic).
inline constexpr int nuts_default_thin = 1;

}  // namespace privpost::tools::infer_tool
