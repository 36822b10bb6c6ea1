// privpost-infer: the analyst's tool. Reads a JSON release record and a prior, runs noise-aware Gibbs-SS (and, on
// request, the naive method for comparison), prints a posterior summary (mean, sd, 5/50/95% quantiles, R-hat, bulk and
// tail ESS, numerical repairs) and optionally writes the draws to CSV. It warns, in plain words, when a parameter has
// R-hat above 1.01, bulk or tail ESS below 100 per chain, or numerical repairs in more than 1% of sweeps (--strict:
// exit status 3 then); --target-ess N extends the chains until every parameter reaches R-hat <= 1.01 and ESS >= N.
// Regression releases made on the [-1, 1] scale of the declared box are sampled there and reported on the data's scale.
// Logistic and Poisson regression releases (DP-GLM) are sampled by NUTS (infer_glm.cpp). Pairwise tables (CGM) are
// fitted by MAP-EM and, on forests, sampled by Gibbs-SS over the Bayesian tree CGM (infer_tables.cpp); with --method
// records, and for marginal-table releases (one or several of the same records), the record-level histogram sampler
// gives their exact joint posterior (infer_marginals.cpp).
//
// This file holds the command line; each model kind runs in its own file (infer_bounded.cpp, infer_unbounded.cpp,
// infer_regression.cpp, infer_glm.cpp, infer_tables.cpp), picked by the model's row in models.hpp, which also says
// which methods and options the model takes.
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>

#include <privpost/core/errors.hpp>

#include "infer_options.hpp"
#include "interrupt.hpp"
#include "mpi_job.hpp"
#include "partition_record.hpp"
#include "plot.hpp"
#include "tool_support.hpp"

using namespace privpost::tools::infer_tool;

namespace {

// --format json: while the model runs, its tables and messages go to stderr (file descriptor 1 points at 2), so that
// stdout holds the JSON document alone; the destructor restores stdout.
class stdout_to_stderr {
 public:
  stdout_to_stderr() {
    std::fflush(stdout);
    std::cout.flush();
    saved_ = ::dup(1);
    if (saved_ < 0 || ::dup2(2, 1) < 0) throw std::runtime_error("--format json: cannot redirect stdout to stderr");
  }
  ~stdout_to_stderr() {
    std::fflush(stdout);
    std::cout.flush();
    ::dup2(saved_, 1);
    ::close(saved_);
  }
  stdout_to_stderr(const stdout_to_stderr&) = delete;
  stdout_to_stderr& operator=(const stdout_to_stderr&) = delete;

 private:
  int saved_ = -1;
};

// Refuses an option the release's model does not take, naming the models that take it.
void check_applies(bool given, std::uint8_t flag, const privpost::tools::model_row& row, const std::string& what) {
  if (!given || (row.options & flag) != 0) return;
  throw std::invalid_argument(what + " applies to " +
                              privpost::tools::models_where([&](const auto& m) { return (m.options & flag) != 0; }) +
                              " releases only");
}

int dispatch(const std::vector<privpost::tools::release_record>& recs, options o) {
  using privpost::tools::model_kind;
  const privpost::tools::release_record& rec = recs.front();
  const auto& row = privpost::tools::find_model(rec.model);
  const bool histogram = row.kind == model_kind::marginals || (row.kind == model_kind::tables && o.method == "records");
  if (o.thin == 0 && histogram) o.thin = privpost::tools::marginals_thin;
  if (o.thin == 0 && row.kind != model_kind::tables) o.thin = row.default_thin;  // tables: MAP-EM has no thin
  for (const auto& r : recs)
    if (r.model != rec.model || (recs.size() > 1 && row.kind != model_kind::marginals))
      throw std::invalid_argument("several release records are analysed together for the marginals model only (release " +
                                  std::string("models: ") + rec.model + ", " + r.model + ")");
  const std::uint8_t method = o.method == "exact"       ? privpost::tools::method_exact
                              : o.method == "corrected" ? privpost::tools::method_corrected
                              : o.method == "records"   ? privpost::tools::method_records
                                                        : 0;
  if (method != 0 && (row.methods & method) == 0)
    throw std::invalid_argument("--method " + o.method + " applies to " +
                                privpost::tools::models_where([&](const auto& m) { return (m.methods & method) != 0; }) +
                                " releases only (the " + rec.model + " model has none)");
  check_applies(o.collapsed_moves != 0, privpost::tools::option_collapsed_moves, row, "--collapsed-moves");
  check_applies(o.link != "exact", privpost::tools::option_link, row, "--link");
  check_applies(o.target_accept != 0.8, privpost::tools::option_target_accept, row, "--target-accept");
  check_applies(!o.moments.empty(), privpost::tools::option_moments, row, "--moments");
  switch (row.kind) {
    case model_kind::bounded_family:
      return infer_bounded(rec, o);
    case model_kind::unbounded_family:
      return infer_unbounded(rec, o);
    case model_kind::regression:
      return run_regression(rec, o);
    case model_kind::glm:
      return run_glm(rec, o);
    case model_kind::tables:
      return histogram ? run_marginals(recs, o) : run_pairwise_tables(rec, o);
    case model_kind::marginals:
      return run_marginals(recs, o);
  }
  throw std::logic_error("privpost-infer: a model kind without a dispatch case");
}

}  // namespace

int main(int argc, char** argv) {
  privpost::tools::mpi_job job(argc, argv);  // under mpirun: the chains spread over the ranks (infer.hpp run_chains)
  CLI::App app{"privpost-infer: noise-aware posterior from a privpost release record"};
  options o;
  app.add_option("release", o.releases,
                 "the JSON release record written by privpost-release (marginals: one or several releases of the same "
                 "records, analysed jointly)")
      ->required();
  app.add_option(
      "--prior", o.prior,
      "comma list: binomial a,b (default 1,1); multinomial alpha_1..K (default 1s); exponential/poisson Gamma shape,rate "
      "(default 1,1); normal-known-var mean0,sd0,sigma (required); normal m,kappa,a,b (default 0,1,1,1); linreg "
      "mu_0..mu_{p-1},lambda_0..lambda_{p-1} (diagonal precision),a,b of the normal-inverse-gamma prior (default zeros, ones, "
      "2, 1; for releases on the declared box's [-1, 1] scale, the default, the prior is on that scale: intercept first); "
      "pairwise-tables alpha_0, the hyper-Dirichlet pseudo-count of MAP-EM and the posterior's prior (default 10); "
      "marginals (and pairwise-tables --method records) alpha_0, the Dirichlet's total pseudo-count spread evenly over the "
      "table's cells (default 10), or one pseudo-count per cell; "
      "logistic and poisson-glm s_max,tau_scale,lkj_eta,mean_scale (||theta||^2 < s_max, half-normal covariate sds, LKJ "
      "correlation, normal covariate means; default 9,2.5,2,1; on the declared ranges' unit-ball scale "
      "100,1/sqrt(d),2,1/sqrt(d))");
  app.add_option("--link", o.link, "logistic: the link's moments, exact (default) or taylor (the paper's)")
      ->check(CLI::IsMember({"exact", "taylor"}));
  app.add_option("--target-accept", o.target_accept,
                 "logistic, poisson-glm: NUTS's target acceptance (Stan's adapt_delta, default 0.8; higher: smaller steps, fewer "
                 "divergences)");
  app.add_flag("--compare-naive", o.compare_naive, "also run the naive method (treats the release as exact)");
  app.add_option(
      "--moments", o.moments,
      "linreg: covariate moments update (hierarchical normal, default), prior (normal from the bounds) or noisy (released)");
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
                 "binomial, multinomial, pairwise-tables: Metropolis-Hastings moves on the parameters with the exact "
                 "statistic integrated out, per sweep (default 0); where the noise dominates they mix far faster")
      ->check(CLI::Range(0, 1000));
  app.add_flag("--parallel", o.parallel, "run the chains in parallel threads");
  app.add_option("--draws-csv", o.draws_csv, "write every draw to this CSV file (one file, privpost's own layout)");
  app.add_option("--plot", o.plot,
                 "FILE.png: trace plots per chain and marginal densities of each parameter (the naive posterior's overlaid "
                 "with --compare-naive); writes FILE.dat and FILE.gp and runs gnuplot (Debian: gnuplot-nox) when installed");
  app.add_option("--format", o.format,
                 "table (default) or json: one JSON document on stdout (per parameter mean, sd, quantiles, R-hat, bulk and "
                 "tail ESS, Monte Carlo standard error; numerical events, warnings, the release record and the settings), "
                 "the tables then going to stderr")
      ->check(CLI::IsMember({"table", "json"}));
  app.add_option("--output-dir", o.output_dir,
                 "write the draws in CmdStan's CSV format to this directory, one file per method and chain "
                 "(<method>_<chain>.csv), for posterior::read_cmdstan_csv, ArviZ's from_cmdstan or stansummary");
  app.add_flag("--strict", o.strict,
               "exit with status 3 when the diagnostics warn (R-hat > 1.01, ESS < 100 per chain, repairs > 1%)");
  app.add_option("--target-ess", o.target_ess,
                 "extend the chains (doubling the kept draws) until every parameter has R-hat <= 1.01 and bulk and tail ESS >= N")
      ->check(CLI::Range(1.0, 1e9));
  app.add_option("--max-minutes", o.max_minutes,
                 "logistic, poisson-glm, pairwise-tables (posterior sampling): refuse a run whose estimated time (measured on "
                 "this machine before the run, and printed) exceeds this many minutes (default 60)")
      ->check(CLI::PositiveNumber);
  app.add_option("--max-sweeps", o.max_sweeps, "with --target-ess: at most this many sweeps per chain (burn-in included)")
      ->check(CLI::Range(static_cast<std::int64_t>(1), static_cast<std::int64_t>(1'000'000'000)));
  app.add_option("--max-iterations", o.max_iterations, "pairwise-tables: EM iterations at most (default 2000)")
      ->check(CLI::Range(1, 100000000));
  app.add_flag("--point-estimate", o.point_estimate,
               "pairwise-tables: MAP-EM only (on forests the posterior is also sampled by default)");
  CLI11_PARSE(app, argc, argv);
  try {
    job.refuse_launcher_without_mpi();
    o.release = o.releases.front();
    std::vector<privpost::tools::release_record> recs;
    for (const std::string& path : o.releases) {
      std::ifstream f(path);
      if (!f) throw std::invalid_argument("cannot open release record '" + path + "'");
      nlohmann::json j;
      try {
        f >> j;
      } catch (const nlohmann::json::exception& e) {
        throw std::invalid_argument("malformed release record '" + path + "': " + e.what());
      }
      if (privpost::tools::is_partition_record(j)) {
        if (o.releases.size() > 1)
          throw std::invalid_argument("'" + path + "' is a partition release; it is reported on its own");
        return privpost::tools::report_partition_release(privpost::tools::partition_from_json(j), o.format);
      }
      try {
        recs.push_back(privpost::tools::from_json(j));
      } catch (const nlohmann::json::exception& e) {
        throw std::invalid_argument("malformed release record '" + path + "': " + e.what());
      }
    }
    if (!o.plot.empty()) (void)privpost::tools::plot_paths(o.plot);  // a bad name is refused before the run
    privpost::tools::install_interrupt_handler();
    int status = 0;
    if (o.format != "json") {
      status = dispatch(recs, o);
    } else {
      o.report = std::make_shared<nlohmann::json>();
      {
        const stdout_to_stderr guard;
        status = dispatch(recs, o);
      }
      (*o.report)["interrupted"] = privpost::tools::interrupt_requested();
      std::cout << o.report->dump(2) << '\n';
    }
    if (!privpost::tools::interrupt_requested()) return status;
    std::cerr << "\nprivpost-infer: interrupted (Ctrl-C): the summary and the files written hold the draws kept before "
                 "the stop (marked interrupted); later methods (--compare-naive) were not run\n";
    return privpost::tools::interrupted_exit_status;
  } catch (const privpost::interrupted_error& e) {
    std::cerr << "\nprivpost-infer: interrupted (Ctrl-C) before any draw was kept (" << e.what() << "); nothing was written\n";
    return privpost::tools::interrupted_exit_status;
  } catch (const std::exception& e) {
    std::cerr << "privpost-infer: error: "
              << privpost::tools::for_the_user(
                     e,
                     "--prior, and the release record's n, noisy_statistics and declared bounds; the sampler cannot use "
                     "them as given")
              << '\n';
    job.abort_job(1);
    return 1;
  }
}
