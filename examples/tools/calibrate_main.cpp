// privpost-calibrate: simulation-based calibration of privpost's methods on a built-in model (dissertation Sec. 4.4).
// Draws theta from the prior, records from the model, a release from the mechanism; ranks the true theta in each method's
// posterior; reports KS (and p-value) of the ranks, coverage of 50%/90% intervals, MMD^2 to the non-private posterior.
#include <CLI/CLI.hpp>

#include <iostream>
#include <stdexcept>
#include <string>

#include "calibrate.hpp"
#include "models.hpp"
#include "mpi_job.hpp"

using namespace privpost::tools::calibrate;

namespace {
int dispatch(const cli_options& o) {
  privpost::study_settings settings;
  settings.n = o.n;
  settings.burnin = o.burnin;
  settings.draws = o.draws;
  settings.thin = o.thin;
  settings.collapsed_moves = o.collapsed_moves;
  settings.methods = privpost::tools::split_list(o.methods, "--methods");
  if (o.partitions > 0) return run_partition_study(o);
  using privpost::tools::model_kind;
  const model_kind kind = privpost::tools::find_model(o.model).kind;
  if (o.metric_given && kind != model_kind::glm) throw std::invalid_argument("--metric applies to logistic and poisson-glm only");
  switch (kind) {
    case model_kind::bounded_family:
      return run_bounded_model(o, settings);
    case model_kind::unbounded_family:
      return run_unbounded_model(o, settings);
    case model_kind::regression:
      return run_regression_model(o, settings);
    case model_kind::glm: {
      if (o.collapsed_moves != 0)
        throw std::invalid_argument("--collapsed-moves applies to binomial, multinomial and pairwise-tables only");
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
      if (o.collapsed_moves != 0)
        throw std::invalid_argument("--collapsed-moves applies to binomial, multinomial and pairwise-tables only");
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
  app.add_option("--dim", o.dim, "linreg, logistic, poisson-glm: number of covariates D (an intercept is added)");
  app.add_option("--moments", o.moments, "linreg: covariate moments for Gibbs-SS: noisy|prior|update");
  auto* methods_option = app.add_option("--methods", o.methods,
                                        "comma list of gibbs, naive, nonprivate, ops, exact, corrected, records, auto "
                                        "(ops, exact, corrected: binomial only; records: binomial, multinomial and the "
                                        "unbounded models; auto: the library's default sampler at this n, as "
                                        "privpost-infer --method auto); logistic, poisson-glm: "
                                        "noise-aware, naive (their default)");
  app.add_option("--n", o.n, "records per trial")->check(CLI::Range(1.0, 1e7));
  app.add_option("--epsilon", o.epsilon, "privacy budget epsilon");
  auto* mechanism_option =
      app.add_option("--mechanism", o.mechanism, "laplace|gaussian (logistic, poisson-glm: gaussian by default)")
          ->check(CLI::IsMember({"laplace", "gaussian"}));
  app.add_option("--delta", o.delta, "delta of the Gaussian mechanism (analytic calibration)");
  app.add_option("--trials", o.trials, "number of simulated trials M")->check(CLI::Range(2, 1000000));
  app.add_option("--draws", o.draws, "draws kept per posterior")->check(CLI::Range(2, 10000000));
  app.add_option("--burnin", o.burnin, "Gibbs-SS burn-in sweeps (logistic, poisson-glm: NUTS warm-up transitions)")
      ->check(CLI::Range(0, 100000000));
  auto* thin_option = app.add_option("--thin", o.thin, "Gibbs-SS keeps every thin-th sweep (default 5; pairwise-tables 10)")
                          ->check(CLI::Range(1, 100000));
  app.add_option("--seed", o.seed, "seed of the whole study (trial t uses stream t)");
  app.add_option("--collapsed-moves", o.collapsed_moves,
                 "binomial, multinomial, pairwise-tables: Gibbs-SS's Metropolis-Hastings moves with the statistic "
                 "integrated out, per sweep (default 0)")
      ->check(CLI::Range(0, 1000));
  auto* categories_option = app.add_option(
      "--categories", o.categories,
      "K for the multinomial model (2 to 5); states per node of pairwise-tables (2 to 10); levels per column of marginals "
      "(default 2)");
  app.add_option("--graph", o.graph, "pairwise-tables: the graph, chain or star (of --nodes nodes)")
      ->check(CLI::IsMember({"chain", "star"}));
  auto* nodes_option =
      app.add_option("--nodes", o.nodes, "pairwise-tables: number of nodes (2 to 50; default 4); marginals: columns (default 2)");
  app.add_option("--queries", o.queries, "marginals: one-way (the 1-way marginals, default) or identity (the histogram)")
      ->check(CLI::IsMember({"one-way", "identity"}));
  app.add_option("--pseudo-count", o.pseudo_count, "pairwise-tables: the hyper-Dirichlet prior's alpha_0 (default 10)");
  app.add_option("--truncation", o.truncation,
                 "q: declared bounds are the central 1 - q interval of the prior predictive of one record (unbounded models)")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--partitions", o.partitions,
                 "linreg: instead of SBC, the error of partition releases (privpost-release --partitions) at this --n, M "
                 "and --epsilon over --trials simulated regressions, per combiner and cutoff, and their reliability")
      ->check(CLI::PositiveNumber);
  app.add_option("--format", o.format, "table|json")->check(CLI::IsMember({"table", "json"}));
  app.add_option("--ranks", o.ranks, "write each trial's true-parameter quantile per method to this CSV file");
  app.add_option("--plot", o.plot,
                 "FILE.png: per method and parameter the ECDF-difference plot of the true-parameter quantiles with the 95% "
                 "simultaneous band (Saeilynoja et al. 2022) and their histogram; writes FILE.dat and FILE.gp and runs "
                 "gnuplot (Debian: gnuplot-nox) when installed");
  auto* metric_option = app.add_option("--metric", o.metric,
                                       "logistic, poisson-glm: NUTS's metric adapted in warm-up, dense (default, as "
                                       "privpost-infer) or diag (Stan's default)")
                            ->check(CLI::IsMember({"dense", "diag"}));
  app.add_option("--mmd-draws", o.mmd_draws, "draws per posterior used for MMD^2 (0: skip MMD)")->check(CLI::Range(0, 100000));
  CLI11_PARSE(app, argc, argv);
  o.mechanism_given = mechanism_option->count() > 0;
  o.methods_given = methods_option->count() > 0;
  o.thin_given = thin_option->count() > 0;
  o.nodes_given = nodes_option->count() > 0;
  o.categories_given = categories_option->count() > 0;
  o.metric_given = metric_option->count() > 0;
  try {
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
