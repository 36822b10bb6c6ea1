// privpost-synthesize: synthetic data from a release. Runs privpost-infer's noise-aware inference on a release
// (the same options, summary and diagnostics), then writes m synthetic data sets of N records each, drawn from m
// posterior draws spread over the chains (privpost/inference/synthetic.hpp; synthesize.hpp writes them). This is
// post-processing of the release: no further privacy budget is spent. Analyse the m sets with the fully synthetic
// combining rules (privpost::combine_fully_synthetic; docs/synthetic-data.md): one set analysed as if it were the data
// gives intervals far too narrow.
//
// The family models (binomial, multinomial, Poisson, exponential, normal), linear regression (Gibbs-SS-Update, whose
// covariate law the records need), the logistic and Poisson GLMs (whose model infers the covariate law) and contingency
// tables (marginals, pairwise-tables with --method records: the histogram posterior's cells); the Bayesian tree CGM of
// pairwise-tables is refused by name.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <iostream>
#include <string>

#include <privpost/core/errors.hpp>

#include "infer_cli.hpp"
#include "infer_dispatch.hpp"
#include "infer_options.hpp"
#include "interrupt.hpp"
#include "mpi_job.hpp"
#include "partition_record.hpp"
#include "tool_support.hpp"

using namespace privpost::tools::infer_tool;

int main(int argc, char** argv) {
  privpost::tools::mpi_job job(argc, argv);
  CLI::App app{"privpost-synthesize: synthetic data sets from the noise-aware posterior of a privpost release record"};
  options o;
  app.add_option("release", o.release,
                 "the JSON release record written by privpost-release (a family, linreg, GLM or table model)")
      ->required();
  app.add_option("--records", o.synthetic_records,
                 "records in each synthetic data set (N; N >= 10 n keeps the combined "
                 "intervals' degrees of freedom near m - 1)")
      ->required()
      ->check(CLI::Range(static_cast<std::int64_t>(1), static_cast<std::int64_t>(100'000'000)));
  app.add_option("--datasets", o.synthetic_sets,
                 "synthetic data sets (m; at least 2 to combine them, 20 is usual; at most the kept posterior draws)")
      ->required()
      ->check(CLI::Range(1, 10000));
  app.add_option("--output-dir", o.synthetic_dir, "folder for synthetic_1.csv .. synthetic_m.csv (created if missing)")
      ->required();
  app.add_option("--digits", o.synthetic_digits,
                 "significant digits of each synthetic value that is not a whole number (1-17; rounded values stay "
                 "inside the declared bounds; default: every digit of the drawn double)")
      ->check(CLI::Range(1, 17));
  add_inference_options(app, o, true);
  CLI11_PARSE(app, argc, argv);
  note_chain_length(app, o);
  try {
    job.refuse_launcher_without_mpi();
    o.releases = {o.release};
    const nlohmann::json j = read_release_json(o.release);
    if (privpost::tools::is_partition_record(j))
      throw std::invalid_argument("'" + o.release + "' is a partition release: its released quantities draw no records");
    const privpost::tools::release_record rec = release_from_json(j, o.release);
    using privpost::tools::model_kind;
    const auto& row = privpost::tools::find_model(rec.model);
    // pairwise-tables: the Bayesian tree CGM's draws are marginals without a sampler of records yet; the histogram
    // posterior of --method records gives the table's cells.
    if (row.kind == model_kind::tables && o.method != "records")
      throw std::invalid_argument(
          "the pairwise-tables model draws synthetic records with --method records only (the "
          "histogram posterior of the table's cells)");
    if (o.synthetic_digits > 0 && (row.kind == model_kind::tables || row.kind == model_kind::marginals))
      throw std::invalid_argument("--digits " + std::to_string(o.synthetic_digits) + ": the " + rec.model +
                                  " model's synthetic records are level names, not numbers; accepted: a model with "
                                  "numeric columns (a family, linreg, logistic, poisson-glm)");
    if (static_cast<std::int64_t>(o.synthetic_sets) > static_cast<std::int64_t>(o.chains) * o.draws)
      throw std::invalid_argument("--datasets " + std::to_string(o.synthetic_sets) + "; accepted: at most the kept draws, " +
                                  std::to_string(static_cast<std::int64_t>(o.chains) * o.draws) + " (--chains x --draws)");
    privpost::tools::install_interrupt_handler();
    const int status = dispatch({rec}, o);
    if (!privpost::tools::interrupt_requested()) return status;
    std::cerr << "\nprivpost-synthesize: interrupted (Ctrl-C): no synthetic data set was written\n";
    return privpost::tools::interrupted_exit_status;
  } catch (const privpost::interrupted_error& e) {
    std::cerr << "\nprivpost-synthesize: interrupted (Ctrl-C) before any draw was kept (" << e.what()
              << "); nothing was written\n";
    return privpost::tools::interrupted_exit_status;
  } catch (const std::exception& e) {
    std::cerr << "privpost-synthesize: error: "
              << privpost::tools::for_the_user(e, "--prior, and the release record's n, noisy_statistics and declared bounds")
              << '\n';
    job.abort_job(1);
    return 1;
  }
}
