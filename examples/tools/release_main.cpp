// privpost-release: the data owner's tool. Reads records from a CSV column, computes the model's sufficient statistic
// with sensitivity from the declared bounds (never from the data), adds Laplace or Gaussian noise from the OS CSPRNG, and
// writes a JSON release record. Unbounded models refuse to run without bounds; records outside them are dropped.
// pairwise-tables releases the contingency tables of a declared graph over discrete columns, marginals the declared
// marginal tables of a contingency table.
// --ledger FILE charges the release to the data set's privacy budget ledger before any noise is drawn and refuses a
// release over the budget (ledger_file.hpp).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <iostream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <privpost/version.hpp>

#include "ledger_file.hpp"
#include "models.hpp"
#include "mpi_job.hpp"
#include "output_file.hpp"
#include "release_record.hpp"
#include "release_tool.hpp"
#include "tool_support.hpp"

using namespace privpost::tools::release_tool;

namespace {

privpost::tools::release_record make_release(const options& o) {
  using namespace privpost;
  if (tools::is_discrete(o.mechanism) && !tools::is_family_model(o.model) &&
      tools::kind_of(o.model) != tools::model_kind::marginals)
    throw std::invalid_argument("--mechanism " + o.mechanism + " serves the family models (" + tools::family_model_list() +
                                ") and marginals; the " + o.model + " model releases with laplace or gaussian");
  if (o.granularity && !tools::is_discrete(o.mechanism))
    throw std::invalid_argument("--granularity is for --mechanism discrete-laplace or discrete-gaussian");
  using privpost::tools::model_kind;
  switch (privpost::tools::find_model(o.model).kind) {
    case model_kind::bounded_family:
    case model_kind::unbounded_family:
      return make_family_release(o);
    case model_kind::regression:
      return make_regression_release(o);
    case model_kind::glm:
      return make_glm_release(o);
    case model_kind::tables:
      return make_tables_release(o);
    case model_kind::marginals:
      return make_marginals_release(o);
  }
  throw std::logic_error("privpost-release: a model kind without a dispatch case");
}

// The releases --option-uses speaks of: every model's statistics release with its default mechanism, and linreg's two
// partition releases.
std::vector<std::pair<std::string, release_kind>> option_use_releases() {
  std::vector<std::pair<std::string, release_kind>> releases;
  for (const auto& m : privpost::tools::models) {
    options o;
    o.model = std::string(m.name);
    releases.emplace_back("--model " + o.model, kind_of_release(o));
  }
  for (const bool cutoffs : {true, false}) {
    options o;
    o.model = "linreg";
    o.partitions = 10;
    (cutoffs ? o.cutoffs : o.quantile_levels) = cutoffs ? "0" : "0.5";
    releases.emplace_back(
        cutoffs ? "--model linreg --partitions 10 --cutoffs 0" : "--model linreg --partitions 10 --quantiles 0.5",
        kind_of_release(o));
  }
  return releases;
}

// Whether this run charged the ledger.
bool charged(const std::optional<privpost::tools::ledger_file>& ledger, std::size_t entries_before) {
  return ledger && ledger->accountant().entries().size() > entries_before;
}

// A failure after the charge: says loudly what was charged (the noise may have been drawn; a refund would trust that
// nothing leaked).
void report_charged(const privpost::tools::ledger_file& ledger, std::size_t entries_before, const std::string& given,
                    const std::string& what) {
  const auto& entries = ledger.accountant().entries();
  std::cerr << "privpost-release: ERROR: " << what << ". The release WAS CHARGED to the ledger '" << given << "':";
  for (std::size_t i = entries_before; i < entries.size(); ++i)
    std::cerr << " entry " << i + 1 << " ('" << entries[i].label << "', epsilon "
              << privpost::detail::format_value(entries[i].budget.epsilon) << ", delta "
              << privpost::detail::format_value(entries[i].budget.delta) << ")";
  std::cerr << ". The noisy statistics are lost and that budget stays spent.\n";
}

// --output must not name a file the release reads or keeps: the ledger (replaced by the record, every entry would be
// gone), its lock, or the records of --input. Compared by identity (resolved path, device and inode), so links and
// relative paths are caught too.
void refuse_overwriting_inputs(const options& o) {
  if (o.output.empty()) return;
  std::vector<std::pair<std::string, std::string>> kept;  // (path, what)
  if (!o.ledger.empty()) {
    kept.emplace_back(o.ledger, "the ledger (--ledger)");
    std::string lock;
    try {
      lock = privpost::tools::resolved_path(o.ledger, "--ledger") + ".lock";
    } catch (const std::runtime_error&) {
      lock = o.ledger + ".lock";  // the ledger's own check reports the link
    }
    kept.emplace_back(lock, "the ledger's lock file");
  }
  if (o.input.find("{rank}") == std::string::npos) {
    kept.emplace_back(o.input, "the records (--input)");
  } else {
    try {
      kept.emplace_back(shard_path(o.input), "this rank's records (--input)");
    } catch (const std::invalid_argument&) {
      // the release reports the misuse of {rank} itself
    }
  }
  for (const auto& [path, what] : kept)
    if (privpost::tools::same_file(o.output, path))
      throw std::invalid_argument("--output '" + o.output + "' is " + what + (path == o.output ? "" : " '" + path + "'") +
                                  "; accepted: a file the release does not read or keep; nothing was read or charged");
}

}  // namespace

int main(int argc, char** argv) {
  // Under mpirun: each rank reads its shard (--input 'shard-{rank}.csv'), rank 0 releases (release_tool.hpp).
  privpost::tools::mpi_job job(argc, argv);
  CLI::App app{"privpost-release: release a model's sufficient statistics under differential privacy"};
  options o;
  app.add_option("--input", o.input,
                 "CSV file with a header row; under mpirun each rank's shard, named with {rank} (e.g. 'shard-{rank}.csv')")
      ->required();
  app.add_option("--column", o.column, "the column holding one value per record (all models but linreg)");
  app.add_option("--model", o.model, privpost::tools::model_choices())
      ->required()
      ->check(CLI::IsMember(privpost::tools::model_names()));
  // "MODELS: text", the models a rule of the table takes (model_list, model_rules).
  using privpost::tools::model_list;
  namespace rules = privpost::tools::model_rules;
  const std::string covariates = model_list(rules::covariates), glms = model_list(rules::glm),
                    table_columns = model_list(rules::table_columns), linreg = model_list(rules::regression);
  app.add_option(
      "--covariates", o.covariates,
      covariates + ": comma list of covariate columns (" + glms + ": column=LEVEL is the indicator of a text column's level)");
  app.add_option("--response", o.response,
                 covariates + ": the response column (" + model_list(rules::glm_labels) + ": 0/1, -1/+1, or see --positive; " +
                     model_list(rules::glm_counts) + ": counts)");
  app.add_option("--x-bounds", o.x_bounds,
                 linreg + ": lo,hi declared for every covariate (records are clamped into it); " + glms +
                     ": lo,hi for every covariate or lo1,hi1,lo2,hi2,... one declared range per covariate (clamped, mapped to "
                     "[-1, 1] / sqrt(d))");
  app.add_option("--radius", o.radius,
                 glms +
                     ": declared norm bound R of the raw covariates (instead of --x-bounds; longer records "
                     "are scaled onto the ball)");
  app.add_option("--y-bound", o.y_bound,
                 model_list(rules::glm_counts) + ": declared largest count R_y (larger counts are clamped to it)");
  app.add_option("--positive", o.positive,
                 model_list(rules::glm_labels) + ": the response label coded +1 (every other value is -1)");
  app.add_option("--y-bounds", o.y_bounds, linreg + ": lo,hi declared for the response (records are clamped into it)");
  app.add_flag("--no-intercept", o.no_intercept, covariates + ": no intercept column");
  app.add_flag("--noisy-moments", o.noisy_moments,
               linreg + ": also release the covariates' fourth sample moments (Gibbs-SS-Noisy), splitting epsilon evenly");
  app.add_option("--epsilon", o.epsilon, "privacy budget epsilon")->required();
  auto* mechanism_option =
      app.add_option("--mechanism", o.mechanism,
                     "laplace|gaussian (analytic calibration)|discrete-laplace|discrete-gaussian (exact lattice noise: the "
                     "choice for real releases, family models); " +
                         glms + ": gaussian by default, laplace when given")
          ->check(CLI::IsMember({"laplace", "gaussian", "discrete-laplace", "discrete-gaussian"}));
  app.add_option("--granularity", o.granularity,
                 "discrete mechanisms: the lattice spacing gamma (default 1 for the count models; required for the "
                 "real-valued ones); the release is gamma x whole numbers")
      ->check(CLI::PositiveNumber);
  app.add_option("--delta", o.delta, "delta of the Gaussian mechanism");
  app.add_option("--lower", o.lower, "declared lower bound of a record (unbounded models)");
  app.add_option("--upper", o.upper, "declared upper bound of a record (unbounded models)");
  app.add_option("--categories", o.categories, "K for the multinomial model (records are categories 0..K-1)");
  app.add_option("--columns", o.columns,
                 table_columns + ": comma list of the discrete columns (the graph's nodes, the table's columns)");
  app.add_option("--levels", o.levels, table_columns + ": comma list of the declared levels of every column (in state order)");
  app.add_option("--levels-of", o.levels_of,
                 table_columns +
                     ": COLUMN=a/b/c, one column's declared levels (overrides --levels; repeat per "
                     "column)");
  app.add_option("--marginals", o.marginals,
                 model_list(rules::marginals) +
                     ": comma list of the released tables, each a column or columns joined by ':' (a,b,a:b); the "
                     "table may have at most 10000 cells");
  app.add_option("--edges", o.edges, model_list(rules::tables) + ": comma list of the declared graph's edges a:b (column names)");
  app.add_option("--missing-level", o.missing_level, table_columns + ": the declared level an empty cell stands for");
  app.add_option("--neighbours", o.neighbours,
                 model_list(rules::tables) +
                     ": replace (default: sensitivity 2|E|) or add-remove (|E|, the dissertation's; 2 epsilon-DP "
                     "under replacement)")
      ->check(CLI::IsMember({"replace", "add-remove"}));
  app.add_option("--partitions", o.partitions,
                 linreg +
                     ": release posterior probabilities and quantiles of one coefficient by sample and aggregate over M "
                     "random partitions (Amitai 2018) instead of the sufficient statistics")
      ->check(CLI::PositiveNumber);
  app.add_option("--coefficient", o.coefficient,
                 "--partitions: the covariate whose coefficient is released (default: the first)");
  app.add_option("--cutoffs", o.cutoffs, "--partitions: b1,b2,... (increasing, data's scale): release Pr(coefficient <= b)");
  app.add_option("--quantiles", o.quantile_levels, "--partitions: p1,p2,... in (0, 1): release the coefficient's quantiles");
  app.add_option("--combiner", o.combiner, "--partitions --cutoffs: how partition probabilities combine")
      ->check(CLI::IsMember({"normality-corrected", "normality", "fisher", "stouffer-clipped"}));
  app.add_option("--epsilon-split", o.epsilon_split,
                 "--partitions: the shares of --epsilon (summing to it): [probabilities,][bound search,quantile values]; "
                 "even by default");
  app.add_option("--bound-center", o.bound_center, "--quantiles: centre of the clipping interval search (public; default 0)");
  app.add_option("--bound-base", o.bound_base, "--quantiles: first half-width of the search (public; default 1)");
  app.add_option("--bound-fraction", o.bound_fraction,
                 "--quantiles: fraction of partitions the interval must hold (default 0.9)");
  app.add_option("--bound-max", o.bound_max, "--quantiles: the largest plausible half-width (public; required)");
  app.add_option("--prior-precision", o.prior_precision,
                 "--partitions: prior precision of the unit-scale coefficients (default 0.01: a hundredth of a record)");
  app.add_option("--prior-a", o.prior_a, "--partitions: inverse-gamma shape of the unit-scale noise variance (default 1)");
  app.add_option("--prior-b", o.prior_b, "--partitions: inverse-gamma scale of the unit-scale noise variance (default 1)");
  app.add_option(
         "--partition-prior", o.partition_prior,
         "--partitions --cutoffs: fractional (the prior to the power 1/M in each partition; default) or full (the thesis's)")
      ->check(CLI::IsMember({"fractional", "full"}));
  app.add_option("--threads", o.threads, "--partitions: threads for the partition posteriors (default 2)")
      ->check(CLI::PositiveNumber);
  app.add_option("--output", o.output, "write the release record here (default: standard output)");
  app.add_option("--ledger", o.ledger,
                 "the data set's privacy budget ledger (JSON, created when absent): the release is charged to it before any "
                 "noise is drawn and refused when it would exceed the total; concurrent releases are serialised by a lock");
  app.add_option("--budget", o.budget, "with --ledger: the data set's total budget EPSILON[,DELTA] (needed to create a ledger)");
  // `privpost-release --option-uses`: every option that some release does not use, with a command line that gives it
  // to such a release (one per line), from release_option_uses; the refusal test runs each of them.
  if (argc == 2 && std::string(argv[1]) == "--option-uses")
    return privpost::tools::print_option_uses(app, release_option_uses, option_use_releases());
  CLI11_PARSE(app, argc, argv);
  o.mechanism_given = mechanism_option->count() > 0;
  std::size_t entries_before = 0;
  std::optional<privpost::tools::ledger_file> ledger;
  try {
    const release_kind kind = kind_of_release(o);
    privpost::tools::refuse_unused_options(
        app, release_option_uses, kind,
        "this release (the " + o.model + " model" + (kind.partitions ? ", a partition release" : "") + ")",
        "nothing was read or charged");
    // The budget's own options first, named (the library would name its function instead).
    privpost::check_epsilon("--epsilon", o.epsilon);
    if (kind.gaussian) privpost::check_delta("--delta", o.delta, false);
    job.refuse_launcher_without_mpi();
    // Under a launcher, standard output passes through it, and a write it fails to make (a full disk) reaches no
    // process: the record would be lost with exit status 0 and its charge kept. The record goes to a file there.
    if (o.output.empty() && privpost::tools::launched_by_mpi())
      throw std::invalid_argument(
          "--output: under mpirun the release record is written to a file (give --output FILE): standard output passes "
          "through the launcher, which reports no failed write, so a lost record would go unnoticed");
    if (o.partitions > 0 && privpost::tools::spread_job() != nullptr)
      throw std::invalid_argument("--partitions draws its partitions over all records in one process; run it without mpirun");
    if (privpost::tools::is_family_model(o.model) && o.column.empty())
      throw std::invalid_argument("--column is required for the " + o.model + " model");
    if (!o.budget.empty() && o.ledger.empty()) throw std::invalid_argument("--budget needs --ledger FILE");
    refuse_overwriting_inputs(o);
    // The output is opened first: an unwritable --output is refused before anything is charged or drawn.
    privpost::tools::output_file output(o.output);
    if (!o.ledger.empty() && privpost::tools::output_rank()) {  // rank 0 alone charges (release_tool.hpp)
      std::optional<privpost::privacy_budget> total;
      if (!o.budget.empty()) total = parse_budget(o.budget);
      ledger.emplace(o.ledger, total);
      active_ledger = &*ledger;
      ledger_label = "privpost-release --model " + o.model + (o.column.empty() ? "" : " --column " + o.column) + " --input " +
                     o.input + (o.output.empty() ? "" : " --output " + o.output);
    }
    entries_before = ledger ? ledger->accountant().entries().size() : 0;
    std::string text;
    privpost::tools::release_record record;
    if (o.partitions > 0) {
      text = make_partition_release(o);
    } else {
      record = make_release(o);
    }
    if (ledger) {
      record.ledger_file = o.ledger;
      record.ledger_label = ledger_label;
      record.ledger_spent = ledger->accountant().spent();
      record.ledger_total = ledger->accountant().total();
      record.ledger_entries = ledger->accountant().entries().size();
      std::cerr << "privpost-release: charged to the ledger '" << o.ledger << "': spent (epsilon " << record.ledger_spent.epsilon
                << ", delta " << record.ledger_spent.delta << ") of the total (epsilon " << record.ledger_total.epsilon
                << ", delta " << record.ledger_total.delta << ")\n";
    }
    if (o.partitions == 0) {
      record.release_id = privpost::tools::new_release_id();
      text = privpost::tools::to_json(record).dump(2) + "\n";
    }
    // The order is: charge (above, before any noise), then write the record whole. A record lost at this point keeps
    // its charge (the noise was drawn; refunding it would trust that nothing leaked): say so loudly and exit 3.
    try {
      output.commit(text);
    } catch (const std::exception& e) {
      const std::string where = o.output.empty() ? std::string("standard output") : "'" + o.output + "'";
      if (charged(ledger, entries_before)) {
        report_charged(*ledger, entries_before, o.ledger,
                       "the release record could not be written to " + where + " (" + e.what() + ")");
        return 3;
      }
      std::cerr << "privpost-release: error: the release record could not be written to " << where << " (" << e.what()
                << "); nothing was released\n";
      return 1;
    }
    if (o.partitions == 0)
      std::cerr << "privpost-release: released " << record.noisy_statistics.size() << " statistic(s) of n = " << record.n
                << " records with " << record.mechanism << " noise " << record.noise << " (sensitivity " << record.sensitivity
                << ")\n";
    return 0;
  } catch (const shard_done&) {
    return 0;  // a rank other than 0 of a sharded release: its part is in rank 0's statistic
  } catch (const privpost::budget_exceeded& e) {
    std::cerr << "privpost-release: error: over the privacy budget of the ledger '" << o.ledger << "': " << e.what()
              << "; nothing was released\n";
    job.abort_job(1);
    return 1;
  } catch (const std::exception& e) {
    // Every check that can refuse a release runs before the charge (release_into); a failure after it is a fault of
    // this program or the machine, and the budget it spent stays spent: exit status 3, the entry named.
    if (charged(ledger, entries_before)) {
      report_charged(*ledger, entries_before, o.ledger, std::string("the release failed after its charge (") + e.what() + ")");
      job.abort_job(3);
      return 3;
    }
    std::cerr << "privpost-release: error: "
              << privpost::tools::for_the_user(e,
                                               "the declared bounds (--lower/--upper, --x-bounds, --y-bounds, --radius, "
                                               "--y-bound), --epsilon/--delta and the records of --input")
              << '\n';
    job.abort_job(1);
    return 1;
  }
}
