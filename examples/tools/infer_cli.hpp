// privpost-infer's command-line options, shared with privpost-synthesize (which runs the same inference before it
// draws its synthetic sets): one registration, so the two tools' options and help texts cannot drift apart.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>

#include "infer_options.hpp"
#include "models.hpp"

namespace privpost::tools::infer_tool {

// Registers every inference option on app. synthesize: privpost-synthesize, whose --output-dir is the synthetic sets'
// folder and which has no --format json (its files are its output), so those two are left out.
inline void add_inference_options(CLI::App& app, options& o, bool synthesize) {
  // "MODELS: text", MODELS being the models of the table that take the option (model_list).
  auto with = [](std::uint8_t option, const std::string& text) { return model_list(takes_option(option)) + text; };
  app.add_option("--prior", o.prior, "comma list: " + privpost::tools::prior_help());
  app.add_option("--link", o.link, with(option_link, ": the link's moments, exact (default) or taylor (the paper's)"))
      ->check(CLI::IsMember({"exact", "taylor"}));
  app.add_option("--target-accept", o.target_accept,
                 with(option_target_accept,
                      ": NUTS's target acceptance (Stan's adapt_delta, default 0.8; higher: smaller steps, fewer "
                      "divergences)"));
  app.add_option("--metric", o.metric,
                 with(option_metric,
                      ": NUTS's metric adapted in warm-up, dense (default: the covariances, for the "
                      "correlated coefficients, scales and means) or diag (Stan's default: the variances)"))
      ->check(CLI::IsMember({"dense", "diag"}));
  app.add_flag("--compare-naive", o.compare_naive, "also run the naive method (treats the release as exact)");
  app.add_option(
      "--moments", o.moments,
      with(option_moments,
           ": covariate moments update (hierarchical normal, default), prior (normal from the bounds) or noisy (released)"));
  app.add_option("--chains", o.chains, "number of chains")->check(CLI::Range(1, 256));
  app.add_option("--burnin", o.burnin, "burn-in sweeps per chain (logistic: NUTS warm-up transitions)")
      ->check(CLI::Range(0, 100000000));
  app.add_option("--draws", o.draws, "kept draws per chain")->check(CLI::Range(4, 100000000));
  app.add_option("--thin", o.thin, "keep every thin-th sweep (default 2; linreg 5; logistic 1; pairwise-tables 10)")
      ->check(CLI::Range(1, 100000));
  app.add_option("--seed", o.seed, "seed (inference is reproducible from it)");
  app.add_option("--method", o.method,
                 "gibbs (Gibbs-SS, default), exact (binomial: the integer sum enumerated, exact at any n; O(n) a sweep), "
                 "corrected (binomial: Gibbs-SS with a Metropolis-Hastings-corrected sum, exact; O(1) a sweep), records "
                 "(binomial, multinomial, the unbounded models, linreg with --moments update or prior: the records latent, "
                 "clamped as released, exact; O(n) a sweep) or auto (the "
                 "library's policy: binomial exact up to n = 50 then corrected; multinomial records up to n = 2000 then "
                 "gibbs; the other models their own sampler)")
      ->check(CLI::IsMember({"gibbs", "exact", "corrected", "records", "auto"}));
  app.add_option("--collapsed-moves", o.collapsed_moves,
                 with(option_collapsed_moves,
                      ": Metropolis-Hastings moves on the parameters with the exact "
                      "statistic integrated out, per sweep (default 0); where the noise dominates they mix far faster"))
      ->check(CLI::Range(0, 1000));
  app.add_option(
         "--shift-moves", o.shift_moves,
         with(option_shift_moves,
              ": Metropolis-Hastings moves of the marginals with the tables translated along, per sweep "
              "(default 4 on Laplace and Gaussian releases, with thin 2; 0 runs plain Gibbs-SS, thin 10); where the noise "
              "dominates they mix far faster"))
      ->check(CLI::Range(0, 1000));
  app.add_flag("--parallel", o.parallel, "run the chains in parallel threads");
  app.add_option("--draws-csv", o.draws_csv, "write every draw to this CSV file (one file, privpost's own layout)");
  app.add_option("--plot", o.plot,
                 "FILE.png: trace plots per chain and marginal densities of each parameter (the naive posterior's overlaid "
                 "with --compare-naive); writes FILE.dat and FILE.gp and runs gnuplot (Debian: gnuplot-nox) when installed");
  if (!synthesize) {
    app.add_option("--format", o.format,
                   "table (default) or json: one JSON document on stdout (per parameter mean, sd, quantiles, R-hat, bulk and "
                   "tail ESS, Monte Carlo standard error; numerical events, warnings, the release record and the settings), "
                   "the tables then going to stderr")
        ->check(CLI::IsMember({"table", "json"}));
    app.add_option("--output-dir", o.output_dir,
                   "write the draws in CmdStan's CSV format to this directory, one file per method and chain "
                   "(<method>_<chain>.csv), for posterior::read_cmdstan_csv, ArviZ's from_cmdstan or stansummary");
  }
  app.add_flag("--strict", o.strict,
               "exit with status 3 when the diagnostics warn (R-hat > 1.01, ESS < 100 per chain, repairs > 1%)");
  app.add_option("--target-ess", o.target_ess,
                 "extend the chains (doubling the kept draws) until every parameter has R-hat <= 1.01 and bulk and tail ESS >= N")
      ->check(CLI::Range(1.0, 1e9));
  app.add_option("--max-minutes", o.max_minutes,
                 with(option_max_minutes,
                      " (posterior sampling): refuse a run whose estimated time (measured on "
                      "this machine before the run, and printed) exceeds this many minutes (default 60)"))
      ->check(CLI::PositiveNumber);
  app.add_option("--max-sweeps", o.max_sweeps, "with --target-ess: at most this many sweeps per chain (burn-in included)")
      ->check(CLI::Range(static_cast<std::int64_t>(1), static_cast<std::int64_t>(1'000'000'000)));
  app.add_option("--max-iterations", o.max_iterations, with(option_map_em, ": EM iterations at most (default 2000)"))
      ->check(CLI::Range(1, 100000000));
  app.add_flag("--point-estimate", o.point_estimate,
               with(option_map_em,
                    ": MAP-EM only (on forests the posterior is also sampled by default); its fitted "
                    "marginals go to --format json (point_estimates) and --output-dir (point_estimates.csv)"));
  app.add_option("--map-em-evidence", o.map_em_evidence,
                 with(option_map_em,
                      ", Laplace releases: MAP-EM's evidence term: exact (the Laplace density), gaussian (a "
                      "Gaussian of the same variance, which averages tables that report the same marginal) or auto (default: "
                      "gaussian with an exact back end when every edge table's mean cell count is at least twice the Laplace "
                      "scale, else exact; docs/tool-infer.md)"))
      ->check(CLI::IsMember({"auto", "exact", "gaussian"}));
}

// After parsing: whether the command line asked for a chain length (--draws, --burnin). The models' default extension
// of the chains (infer.hpp run_chains) is then off: the user gets exactly the length asked for.
inline void note_chain_length(const CLI::App& app, options& o) {
  o.chain_length_given = app.count("--draws") > 0 || app.count("--burnin") > 0;
}

}  // namespace privpost::tools::infer_tool
