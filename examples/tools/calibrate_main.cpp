// privpost-calibrate: simulation-based calibration of privpost's methods on a built-in model (dissertation Sec. 4.4).
// Draws theta from the prior, records from the model, a release from the mechanism; ranks the true theta in each method's
// posterior; reports KS (and p-value) of the ranks, coverage of 50%/90% intervals, MMD^2 to the non-private posterior.
#include <CLI/CLI.hpp>

#include <array>
#include <iostream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "calibrate.hpp"
#include "models.hpp"
#include "mpi_job.hpp"
#include "option_table.hpp"

using namespace privpost::tools::calibrate;

namespace {

// ---- which options a study uses (option_table.hpp) ------------------------------------------------------------------
// An option the chosen model does not use is refused before anything runs: ignored, the study reported would not be
// the one asked for (--truncation on binomial, --queries on pairwise-tables).

/// What a study is, from its command line alone: the model and its mechanism.
struct study_kind {
  const privpost::tools::model_row* model = nullptr;
  bool gaussian = false;  ///< a Gaussian mechanism (--mechanism gaussian, or the GLMs' default)

  bool is(privpost::tools::model_kind k) const { return model->kind == k; }
};

using study_option = privpost::tools::option_use<study_kind>;
using privpost::tools::model_kind;

constexpr bool any_model(const study_kind&) { return true; }
// The models whose privpost-infer takes --collapsed-moves.
bool collapsed_moves(const privpost::tools::model_row& m) { return (m.options & privpost::tools::option_collapsed_moves) != 0; }
// A --categories count: multinomial's, or the tables' and marginals' levels per node.
bool categories_or_tables(const privpost::tools::model_row& m) {
  return privpost::tools::model_rules::categories(m) || privpost::tools::model_rules::table_columns(m);
}
using privpost::tools::for_models;
namespace model_rules = privpost::tools::model_rules;

inline const std::array study_option_uses{
    study_option{"--model", "binomial", "every study", any_model},
    study_option{"--methods", "gibbs", "every study", any_model},
    study_option{"--n", "100", "every study", any_model},
    study_option{"--epsilon", "1", "every study", any_model},
    study_option{"--mechanism", "laplace", "every study", any_model},
    study_option{"--trials", "2", "every study", any_model},
    study_option{"--draws", "10", "every study", any_model},
    study_option{"--burnin", "10", "every study", any_model},
    study_option{"--thin", "1", "every study", any_model},
    study_option{"--seed", "1", "every study", any_model},
    study_option{"--format", "json", "every study", any_model},
    study_option{"--ranks", "ranks.csv", "every study", any_model},
    study_option{"--plot", "plot.png", "every study", any_model},
    study_option{"--mmd-draws", "0", "every study", any_model},
    for_models<study_kind, model_rules::covariates>("--dim", "2"),
    for_models<study_kind, model_rules::regression>("--moments", "noisy"),
    for_models<study_kind, model_rules::regression>("--partitions", "10"),
    study_option{"--delta", "1e-6", "the Gaussian mechanism (--mechanism gaussian; the GLMs' default)",
                 [](const study_kind& k) { return k.gaussian; }},
    for_models<study_kind, collapsed_moves>("--collapsed-moves", "1"),
    for_models<study_kind, categories_or_tables>("--categories", "3"),
    for_models<study_kind, model_rules::tables>("--graph", "chain"),
    for_models<study_kind, model_rules::table_columns>("--nodes", "3"),
    for_models<study_kind, model_rules::marginals>("--queries", "identity"),
    for_models<study_kind, model_rules::tables>("--pseudo-count", "10"),
    study_option{"--truncation", "0.01", "the unbounded family models",
                 [](const study_kind& k) { return k.is(model_kind::unbounded_family); }},
    for_models<study_kind, model_rules::glm>("--metric", "diag"),
};

study_kind kind_of_study(const std::string& model, const std::string& mechanism, bool mechanism_given) {
  study_kind k;
  k.model = &privpost::tools::find_model(model);
  k.gaussian = mechanism == "gaussian" || (k.model->kind == model_kind::glm && !mechanism_given);
  return k;
}

// The studies --option-uses speaks of: every model's with its default mechanism.
std::vector<std::pair<std::string, study_kind>> option_use_studies() {
  std::vector<std::pair<std::string, study_kind>> studies;
  for (const auto& m : privpost::tools::models)
    studies.emplace_back("--model " + std::string(m.name), kind_of_study(std::string(m.name), "laplace", false));
  return studies;
}

int dispatch(const cli_options& o) {
  privpost::study_settings settings;
  settings.n = o.n;
  settings.burnin = o.burnin;
  settings.draws = o.draws;
  settings.thin = o.thin;
  settings.collapsed_moves = o.collapsed_moves;
  settings.methods = privpost::tools::split_list(o.methods, "--methods");
  if (o.partitions > 0) return run_partition_study(o);
  const model_kind kind = privpost::tools::find_model(o.model).kind;
  switch (kind) {
    case model_kind::bounded_family:
      return run_bounded_model(o, settings);
    case model_kind::unbounded_family:
      return run_unbounded_model(o, settings);
    case model_kind::regression:
      return run_regression_model(o, settings);
    case model_kind::glm: {
      cli_options g = o;
      if (!o.mechanism_given) g.mechanism = "gaussian";
      if (!o.methods_given) settings.methods = {"noise-aware", "naive"};
      return run_glm_model(g, settings);
    }
    case model_kind::tables: {
      // Strong noise moves the tables and the marginals slowly together: privpost-infer's thin for tables.
      cli_options g = o;
      if (!o.thin_given) g.thin = settings.thin = privpost::tools::tables_thin;
      return run_graphical_model(g, settings);
    }
    case model_kind::marginals: {
      cli_options g = o;
      privpost::study_settings s = settings;
      if (!o.methods_given)
        s.methods = o.queries == "identity" ? std::vector<std::string>{"records", "naive"} : std::vector<std::string>{"records"};
      if (!o.thin_given) g.thin = s.thin = privpost::tools::marginals_thin;
      if (!o.nodes_given) g.nodes = 2;
      if (!o.categories_given) g.categories = 2;
      return run_marginals_model(g, s);
    }
  }
  throw std::logic_error("privpost-calibrate: a model kind without a dispatch case");
}

}  // namespace

int main(int argc, char** argv) {
  privpost::tools::mpi_job job(argc, argv);  // under mpirun: the trials spread over the ranks (calibrate.hpp)
  CLI::App app{"privpost-calibrate: simulation-based calibration of noise-aware and baseline posteriors"};
  cli_options o;
  app.add_option("--model", o.model, privpost::tools::model_choices())->check(CLI::IsMember(privpost::tools::model_names()));
  // "MODELS: text", the models a rule of the table takes (model_list, model_rules).
  using privpost::tools::model_list;
  namespace rules = privpost::tools::model_rules;
  const std::string glms = model_list(rules::glm), tables = model_list(rules::tables);
  app.add_option("--dim", o.dim, model_list(rules::covariates) + ": number of covariates D (an intercept is added)");
  app.add_option("--moments", o.moments, model_list(rules::regression) + ": covariate moments for Gibbs-SS: noisy|prior|update");
  auto* methods_option = app.add_option("--methods", o.methods,
                                        "comma list of gibbs, naive, nonprivate, ops, exact, corrected, records, auto "
                                        "(ops, exact, corrected: binomial only; records: binomial, multinomial and the "
                                        "unbounded models; auto: the library's default sampler at this n, as "
                                        "privpost-infer --method auto); " +
                                            glms + ": noise-aware, naive (their default)");
  app.add_option("--n", o.n, "records per trial")->check(CLI::Range(1.0, 1e7));
  app.add_option("--epsilon", o.epsilon, "privacy budget epsilon");
  auto* mechanism_option = app.add_option("--mechanism", o.mechanism, "laplace|gaussian (" + glms + ": gaussian by default)")
                               ->check(CLI::IsMember({"laplace", "gaussian"}));
  app.add_option("--delta", o.delta, "delta of the Gaussian mechanism (analytic calibration)");
  app.add_option("--trials", o.trials, "number of simulated trials M")->check(CLI::Range(2, 1000000));
  app.add_option("--draws", o.draws, "draws kept per posterior")->check(CLI::Range(2, 10000000));
  app.add_option("--burnin", o.burnin, "Gibbs-SS burn-in sweeps (" + glms + ": NUTS warm-up transitions)")
      ->check(CLI::Range(0, 100000000));
  auto* thin_option = app.add_option("--thin", o.thin, "Gibbs-SS keeps every thin-th sweep (default 5; pairwise-tables 10)")
                          ->check(CLI::Range(1, 100000));
  app.add_option("--seed", o.seed, "seed of the whole study (trial t uses stream t)");
  app.add_option("--collapsed-moves", o.collapsed_moves,
                 model_list(collapsed_moves) +
                     ": Gibbs-SS's Metropolis-Hastings moves with the statistic "
                     "integrated out, per sweep (default 0)")
      ->check(CLI::Range(0, 1000));
  auto* categories_option = app.add_option(
      "--categories", o.categories,
      "K for the multinomial model (2 to 5); states per node of pairwise-tables (2 to 10); levels per column of marginals "
      "(default 2)");
  app.add_option("--graph", o.graph, tables + ": the graph, chain or star (of --nodes nodes)")
      ->check(CLI::IsMember({"chain", "star"}));
  auto* nodes_option = app.add_option(
      "--nodes", o.nodes,
      tables + ": number of nodes (2 to 50; default 4); " + model_list(rules::marginals) + ": columns (default 2)");
  app.add_option("--queries", o.queries,
                 model_list(rules::marginals) + ": one-way (the 1-way marginals, default) or identity (the histogram)")
      ->check(CLI::IsMember({"one-way", "identity"}));
  app.add_option("--pseudo-count", o.pseudo_count, tables + ": the hyper-Dirichlet prior's alpha_0 (default 10)");
  app.add_option("--truncation", o.truncation,
                 "q: declared bounds are the central 1 - q interval of the prior predictive of one record (unbounded models)")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--partitions", o.partitions,
                 model_list(rules::regression) +
                     ": instead of SBC, the error of partition releases (privpost-release --partitions) at this --n, M "
                     "and --epsilon over --trials simulated regressions, per combiner and cutoff, and their reliability")
      ->check(CLI::PositiveNumber);
  app.add_option("--format", o.format, "table|json")->check(CLI::IsMember({"table", "json"}));
  app.add_option("--ranks", o.ranks, "write each trial's true-parameter quantile per method to this CSV file");
  app.add_option("--plot", o.plot,
                 "FILE.png: per method and parameter the ECDF-difference plot of the true-parameter quantiles with the 95% "
                 "simultaneous band (Saeilynoja et al. 2022) and their histogram; writes FILE.dat and FILE.gp and runs "
                 "gnuplot (Debian: gnuplot-nox) when installed");
  auto* metric_option = app.add_option("--metric", o.metric,
                                       glms +
                                           ": NUTS's metric adapted in warm-up, dense (default, as "
                                           "privpost-infer) or diag (Stan's default)")
                            ->check(CLI::IsMember({"dense", "diag"}));
  app.add_option("--mmd-draws", o.mmd_draws, "draws per posterior used for MMD^2 (0: skip MMD)")->check(CLI::Range(0, 100000));
  // `privpost-calibrate --option-uses`: every (study, unused option) case of study_option_uses, one per line.
  if (argc == 2 && std::string(argv[1]) == "--option-uses")
    return privpost::tools::print_option_uses(app, study_option_uses, option_use_studies());
  CLI11_PARSE(app, argc, argv);
  o.mechanism_given = mechanism_option->count() > 0;
  o.methods_given = methods_option->count() > 0;
  o.thin_given = thin_option->count() > 0;
  o.nodes_given = nodes_option->count() > 0;
  o.categories_given = categories_option->count() > 0;
  o.metric_given = metric_option->count() > 0;
  try {
    privpost::tools::refuse_unused_options(app, study_option_uses, kind_of_study(o.model, o.mechanism, o.mechanism_given),
                                           "this study (the " + o.model + " model)", "nothing was run");
    job.refuse_launcher_without_mpi();
    if (!o.plot.empty()) (void)privpost::tools::plot_paths(o.plot);  // a bad name is refused before the run
    privpost::tools::install_interrupt_handler();
    return dispatch(o);
  } catch (const privpost::interrupted_error& e) {
    std::cerr << "\nprivpost-calibrate: interrupted (Ctrl-C) before 2 trials were done (" << e.what() << "); nothing to report\n";
    return privpost::tools::interrupted_exit_status;
  } catch (const std::exception& e) {
    std::cerr << "privpost-calibrate: error: "
              << privpost::tools::for_the_user(e, "the study's settings (--model, its size, epsilon and prior options)") << '\n';
    job.abort_job(1);
    return 1;
  }
}
