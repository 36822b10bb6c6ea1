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
// infer_regression.cpp, infer_glm.cpp, infer_tables.cpp, infer_marginals.cpp), picked by dispatch (infer_dispatch.hpp,
// shared with privpost-synthesize) from the model's row in models.hpp, which also says which methods and options the
// model takes.
#include <unistd.h>
#include <CLI/CLI.hpp>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>

#include <privpost/core/errors.hpp>

#include "infer_cli.hpp"
#include "infer_dispatch.hpp"
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

}  // namespace

int main(int argc, char** argv) {
  privpost::tools::mpi_job job(argc, argv);  // under mpirun: the chains spread over the ranks (infer.hpp run_chains)
  CLI::App app{"privpost-infer: noise-aware posterior from a privpost release record"};
  options o;
  app.add_option("release", o.releases,
                 "the JSON release record written by privpost-release (marginals: one or several releases of the same "
                 "records, analysed jointly)")
      ->required();
  add_inference_options(app, o, false);
  CLI11_PARSE(app, argc, argv);
  note_chain_length(app, o);
  try {
    job.refuse_launcher_without_mpi();
    o.release = o.releases.front();
    std::vector<privpost::tools::release_record> recs;
    std::vector<nlohmann::json> texts;
    for (const std::string& path : o.releases) {
      const nlohmann::json j = read_release_json(path);
      texts.push_back(j);
      if (privpost::tools::is_partition_record(j)) {
        if (o.releases.size() > 1)
          throw std::invalid_argument("'" + path + "' is a partition release; it is reported on its own");
        return privpost::tools::report_partition_release(privpost::tools::partition_from_json(j), o.format);
      }
      recs.push_back(release_from_json(j, path));
    }
    for (const auto& w : privpost::tools::check_distinct_releases(o.releases, recs, texts))
      std::cerr << "privpost-infer: warning: " << w << '\n';
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
