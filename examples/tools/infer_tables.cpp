// privpost-infer, pairwise tables: the parameters of a discrete pairwise Markov random field learned from
// its released noisy edge tables by CGM MAP-EM (docs/design-cgm.md Sec. 3.6; --prior alpha_0 is the hyper-Dirichlet
// pseudo-count, 10 by default), with the naive MLE (lambda 1e-3, simplex-projected tables) under --compare-naive. The
// back end follows the declared graph: tree belief propagation on forests, the junction tree (exact) when its cliques
// have at most 2^16 cells, loopy BP (Bethe) otherwise. Prints each column's fitted marginal distribution over its levels
// and each edge's fitted table as expected counts N mu. On a forest it then samples the posterior of the marginals (the
// Bayesian CGM of the spec's Sec. 6: Gibbs-SS over tree_cgm_model with the hyper-Dirichlet(alpha_0) prior), with the
// chain options, diagnostics, --target-ess and --draws-csv of the other models (--point-estimate skips it); on graphs
// with cycles posterior sampling is not implemented and the tool says so. The posterior mean of the marginals is then
// the point estimate printed beside its 90% intervals (each edge table as expected counts), with its largest R-hat. The
// point estimates (MAP-EM, the naive MLE under --compare-naive, the posterior mean) go to --format json
// (point_estimates) and --output-dir (point_estimates.csv, written once every estimate is in).
#include <Eigen/Cholesky>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "infer.hpp"
#include "privpost/families/graphical/hyper_dirichlet.hpp"
#include "privpost/families/graphical/junction_tree.hpp"
#include "privpost/families/graphical/loopy_bp.hpp"
#include "privpost/families/graphical/tree_bp.hpp"
#include "privpost/families/graphical/tree_cgm_model.hpp"
#include "privpost/inference/fit.hpp"
#include "privpost/samplers/cgm/cgm_em.hpp"
#include "privpost/samplers/cgm/cgm_noise.hpp"
#include "privpost/samplers/cgm/naive_mle.hpp"
#include "privpost/samplers/gibbs_ss.hpp"

namespace privpost::tools::infer_tool {

namespace {

// The point estimates of a run, in the order they were made (method, fitted marginals in table_layout order).
using table_fits = std::vector<std::pair<std::string, Eigen::VectorXd>>;

// The index of cell (a, c) of edge e's table in a marginal vector (table_layout order: row-major, rows the edge's first
// node's levels).
Eigen::Index edge_cell(const pairwise_graph& graph, const table_layout& layout, int e, int a, int c) {
  return layout.edge_offset(e) + static_cast<Eigen::Index>(a) * graph.cardinality(graph.edge(e).second) + c;
}

void print_events(const numerical_events& e) {
  if (e.message_passing_nonconverged + e.inner_solver_nonconverged + e.log_floors == 0) return;
  std::cout << "  numerical events: " << e.message_passing_nonconverged << " inference calls at their sweep cap, "
            << e.inner_solver_nonconverged << " inner solves at their cap, " << e.log_floors << " zero moments floored\n";
}

// A point estimate's fitted marginals for scripts: {"node_marginals": {column: {level: p}}, "edge_marginals": [{"columns":
// [u, v], "probabilities": [[p(a, c) over v's levels] over u's levels]}]}, at full precision (nlohmann writes the
// shortest text that reads back to the same double).
nlohmann::json marginals_json(const release_record& rec, const pairwise_graph& graph, const table_layout& layout,
                              const Eigen::VectorXd& mu) {
  nlohmann::json nodes = nlohmann::json::object(), edges = nlohmann::json::array();
  for (int v = 0; v < graph.num_nodes(); ++v) {
    nlohmann::json m = nlohmann::json::object();
    for (int a = 0; a < graph.cardinality(v); ++a)
      m[rec.tables().levels[static_cast<std::size_t>(v)][static_cast<std::size_t>(a)]] = mu(layout.node_offset(v) + a);
    nodes[rec.tables().nodes[static_cast<std::size_t>(v)]] = m;
  }
  for (int e = 0; e < graph.num_edges(); ++e) {
    const auto [u, v] = graph.edge(e);
    nlohmann::json rows = nlohmann::json::array();
    for (int a = 0; a < graph.cardinality(u); ++a) {
      nlohmann::json row = nlohmann::json::array();
      for (int c = 0; c < graph.cardinality(v); ++c) row.push_back(mu(edge_cell(graph, layout, e, a, c)));
      rows.push_back(row);
    }
    edges.push_back(
        {{"columns", {rec.tables().nodes[static_cast<std::size_t>(u)], rec.tables().nodes[static_cast<std::size_t>(v)]}},
         {"probabilities", rows}});
  }
  return {{"node_marginals", nodes}, {"edge_marginals", edges}};
}

// One estimator's run for scripts: iterations, convergence, the E-step's numerical events and its fitted marginals.
nlohmann::json point_estimate_json(const std::string& method, const fit_result& r, const nlohmann::json& marginals) {
  nlohmann::json j = {{"method", method},
                      {"iterations", r.iterations},
                      {"inner_iterations", r.inner_iterations},
                      {"converged", r.converged},
                      {"events",
                       {{"message_passing_nonconverged", r.events.message_passing_nonconverged},
                        {"inner_solver_nonconverged", r.events.inner_solver_nonconverged},
                        {"log_floors", r.events.log_floors}}}};
  j.update(marginals);
  return j;
}

// --output-dir: the fitted tables as one tidy CSV, point_estimates.csv (method, the table's columns, the cell's levels,
// probability, expected count N p), every node table then every edge table, at full precision; written whole or not
// at all.
void write_point_estimates(const std::string& dir, const release_record& rec, const pairwise_graph& graph,
                           const table_layout& layout, const table_fits& fits) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw std::runtime_error("--output-dir: cannot create '" + dir + "': " + ec.message());
  std::ostringstream text;
  text << "method,columns,levels,probability,expected_count\n";
  char number[64];
  auto cell = [&](const std::string& method, const std::string& columns, const std::string& levels, double p) {
    std::snprintf(number, sizeof number, "%.17g,%.17g", p, rec.n * p);
    text << method << ',' << csv_header_field(columns) << ',' << csv_header_field(levels) << ',' << number << '\n';
  };
  auto level = [&](int v, int a) { return rec.tables().levels[static_cast<std::size_t>(v)][static_cast<std::size_t>(a)]; };
  for (const auto& [method, mu] : fits) {
    for (int v = 0; v < graph.num_nodes(); ++v)
      for (int a = 0; a < graph.cardinality(v); ++a)
        cell(method, rec.tables().nodes[static_cast<std::size_t>(v)], level(v, a), mu(layout.node_offset(v) + a));
    for (int e = 0; e < graph.num_edges(); ++e) {
      const auto [u, v] = graph.edge(e);
      const std::string columns =
          rec.tables().nodes[static_cast<std::size_t>(u)] + ":" + rec.tables().nodes[static_cast<std::size_t>(v)];
      for (int a = 0; a < graph.cardinality(u); ++a)
        for (int c = 0; c < graph.cardinality(v); ++c)
          cell(method, columns, level(u, a) + ":" + level(v, c), mu(edge_cell(graph, layout, e, a, c)));
    }
  }
  const std::string path = (std::filesystem::path(dir) / "point_estimates.csv").string();
  privpost::tools::output_file(path).commit(text.str());
  std::printf("wrote the fitted tables to %s\n", path.c_str());
}

// Runs MAP-EM (and naive MLE) with one back end and one evidence term, and prints the fitted marginals; with --format
// json their report (point_estimates); their marginals are added to fits (for --output-dir).
template <class Inference, class Noise>
int run_tables(const release_record& rec, const options& o, const pairwise_graph& graph, const Eigen::VectorXd& y, Noise noise,
               const char* back_end, const char* evidence, table_fits& fits) {
  const table_layout layout(graph);
  const double alpha0 =
      o.prior.empty() ? 10.0
                      : prior_from(o.prior, 1, "the hyper-Dirichlet pseudo-count alpha_0", [](const std::vector<double>& v) {
                          check_positive_finite("hyper_dirichlet", "alpha_0", v[0]);
                          return v[0];
                        });
  cgm_em_options em_options;
  em_options.pseudo_count = alpha0;
  em_options.keep_trace = false;
  cgm_em em(graph, y, rec.n, noise, Inference(graph), em_options);
  progress_line progress("CGM MAP-EM iterations");
  const fit_result cgm =
      fit(em, fit_options{o.max_iterations}, [&](const fit_progress& p) { progress(p.iteration, p.max_iterations); });
  std::cout << "CGM MAP-EM (pseudo-count " << alpha0 << ", box-dual E-step" << (Inference::is_exact ? " with SQUAREM" : "")
            << ", " << evidence << ", " << back_end << "): " << cgm.iterations << " iterations, "
            << (cgm.converged ? "converged" : "NOT converged (raise --max-iterations)") << '\n';
  print_events(cgm.events);
  Inference inference(graph);
  Eigen::VectorXd mu_cgm, mu_naive;
  inference.marginals(cgm.parameter, mu_cgm);
  fit_result naive_fit;
  if (o.compare_naive) {
    naive_mle_options naive_options;
    naive_options.lambda = 1e-3;
    naive_mle naive(graph, y, rec.n, Inference(graph), naive_options);
    naive_fit = fit(naive, fit_options{o.max_iterations});
    std::cout << "naive MLE (lambda 1e-3, projected tables; ignores the noise): " << naive_fit.iterations << " iterations, "
              << (naive_fit.converged ? "converged" : "NOT converged") << '\n';
    print_events(naive_fit.events);
    inference.marginals(naive_fit.parameter, mu_naive);
  }
  std::cout << "\nfitted marginal of each column" << (o.compare_naive ? " (CGM, in brackets naive)" : "") << ":\n";
  std::cout << std::fixed << std::setprecision(3);
  for (int v = 0; v < graph.num_nodes(); ++v) {
    std::cout << "  " << rec.tables().nodes[static_cast<std::size_t>(v)] << ':';
    for (int a = 0; a < graph.cardinality(v); ++a) {
      const Eigen::Index i = layout.node_offset(v) + a;
      std::cout << ' ' << rec.tables().levels[static_cast<std::size_t>(v)][static_cast<std::size_t>(a)] << ' ' << mu_cgm(i);
      if (o.compare_naive) std::cout << " [" << mu_naive(i) << ']';
    }
    std::cout << '\n';
  }
  std::cout << "\nfitted edge tables (expected counts N mu, rows: first column's levels):\n" << std::setprecision(1);
  for (int e = 0; e < graph.num_edges(); ++e) {
    const auto [u, v] = graph.edge(e);
    std::cout << "  " << rec.tables().nodes[static_cast<std::size_t>(u)] << " x "
              << rec.tables().nodes[static_cast<std::size_t>(v)] << ":";
    for (int a = 0; a < graph.cardinality(u); ++a) {
      std::cout << (a == 0 ? " " : " | ");
      for (int c = 0; c < graph.cardinality(v); ++c)
        std::cout << (c == 0 ? "" : " ") << rec.n * mu_cgm(edge_cell(graph, layout, e, a, c));
    }
    std::cout << '\n';
  }
  std::cout << std::defaultfloat;
  if (o.report) {
    auto& report = *o.report;
    report["privpost_version"] = privpost::version_string;
    report["release"] = privpost::tools::to_json(rec);
    report["point_estimate_settings"] = {{"pseudo_count", alpha0},
                                         {"max_iterations", o.max_iterations},
                                         {"back_end", back_end},
                                         {"evidence", evidence},
                                         {"accelerated", Inference::is_exact}};
    report["point_estimates"] = nlohmann::json::array();
    report["point_estimates"].push_back(point_estimate_json("cgm-map-em", cgm, marginals_json(rec, graph, layout, mu_cgm)));
    if (o.compare_naive)
      report["point_estimates"].push_back(
          point_estimate_json("naive-mle", naive_fit, marginals_json(rec, graph, layout, mu_naive)));
  }
  fits.emplace_back("cgm-map-em", mu_cgm);
  if (o.compare_naive) fits.emplace_back("naive-mle", mu_naive);
  if (!graph.is_forest())
    std::cout << "\nThis is a point estimate (MAP-EM). Posterior sampling for pairwise tables (the Bayesian CGM, spec "
                 "docs/design-cgm.md Sec. 6) is implemented for forests only; this graph has cycles.\n";
  return cgm.converged || !o.strict ? 0 : strict_exit_status;
}

// Names of the posterior's coordinates (table_layout order): "column=level" for node cells, "a=x:b=y" for edge cells
// (no comma: the names head the draws CSV's columns).
std::vector<std::string> cell_names(const release_record& rec, const pairwise_graph& graph) {
  std::vector<std::string> names;
  auto level = [&](int v, int a) { return rec.tables().levels[static_cast<std::size_t>(v)][static_cast<std::size_t>(a)]; };
  auto node = [&](int v) { return rec.tables().nodes[static_cast<std::size_t>(v)]; };
  for (int v = 0; v < graph.num_nodes(); ++v)
    for (int a = 0; a < graph.cardinality(v); ++a) names.push_back(node(v) + "=" + level(v, a));
  for (int e = 0; e < graph.num_edges(); ++e) {
    const auto [u, v] = graph.edge(e);
    for (int a = 0; a < graph.cardinality(u); ++a)
      for (int c = 0; c < graph.cardinality(v); ++c)
        names.push_back(node(u) + "=" + level(u, a) + ":" + node(v) + "=" + level(v, c));
  }
  return names;
}

// The cost of the posterior sampler, said before it starts and refused above --max-minutes: Gibbs-SS draws the D
// released cells jointly, a dense D x D normal product a sweep (Cholesky factorisations, O(D^3) time, a few D^2 doubles
// of memory per chain). A 50-column chain of 10 levels (D = 4900) takes some 16 s a sweep and 950 MB. The machine's speed is
// measured on a Cholesky factorisation of at most 300 x 300 and scaled by (D / m)^3; a sweep costs about eight such
// factorisations (measured at D = 4900: 15.6 s a sweep against 1.95 s for one factorisation); the memory is five D x D matrices
// per chain held at once (measured: 954 MB for one chain).
void tables_cost_estimate(Eigen::Index cells, const options& run) {
  const Eigen::Index m = std::min<Eigen::Index>(cells, 300);
  Eigen::MatrixXd a = Eigen::MatrixXd::Identity(m, m) * static_cast<double>(m);
  for (Eigen::Index i = 0; i + 1 < m; ++i) a(i, i + 1) = a(i + 1, i) = 1.0;
  const auto start = std::chrono::steady_clock::now();
  double seconds = 0.0;
  int repeats = 0;
  while (repeats < 1 || (seconds < 0.05 && repeats < 10000)) {
    const Eigen::LLT<Eigen::MatrixXd> llt(a);
    if (llt.info() != Eigen::Success) break;
    ++repeats;
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  const double scale = static_cast<double>(cells) / static_cast<double>(m);
  const double per_sweep = 8.0 * seconds / std::max(repeats, 1) * scale * scale * scale;
  const double sweeps = static_cast<double>(run.chains) *
                        (static_cast<double>(run.burnin) + static_cast<double>(run.draws) * static_cast<double>(run.thin));
  const double at_once = run.parallel ? std::min(2.0, static_cast<double>(run.chains)) : 1.0;
  const double total = per_sweep * sweeps / at_once;
  const double megabytes = 5.0 * at_once * static_cast<double>(cells) * static_cast<double>(cells) * 8.0 / 1e6;
  std::fprintf(stderr,
               "%s: posterior of %lld released cells: about %.3g s a sweep, %.0f sweeps: about %.3g min, some "
               "%.0f MB\n",
               tool_name(run), static_cast<long long>(cells), per_sweep, sweeps, total / 60.0, megabytes);
  if (total > 60.0 * run.max_minutes) {
    char what[320];
    std::snprintf(what, sizeof what,
                  "the posterior sampling is estimated at %.3g min (%lld released cells, %.3g s a sweep), over --max-minutes "
                  "%g: --point-estimate (MAP-EM only), fewer --draws/--burnin/--chains, or raise --max-minutes",
                  total / 60.0, static_cast<long long>(cells), per_sweep, run.max_minutes);
    throw std::invalid_argument(what);
  }
}

// The posterior's shift moves a sweep: --shift-moves, else tables_shift_moves where the mechanism's noise is exactly its
// scale mixture (Laplace, Gaussian; tree_cgm_model::shift_move) and none on lattice releases.
int shift_moves_of(const release_record& rec, const options& o) {
  const bool exact_mixture = rec.mechanism == "laplace" || rec.mechanism == "gaussian";
  if (o.shift_moves > 0 && !exact_mixture)
    throw std::invalid_argument("--shift-moves applies to Laplace and Gaussian releases (this release: " + rec.mechanism + ")");
  return o.shift_moves >= 0 ? o.shift_moves : exact_mixture ? tables_shift_moves : 0;
}

// The posterior's chains (tables_chains): the first round's settings, and the default extension when there is one.
struct tables_run {
  options run;  ///< the chains' settings for the first round (the only one when until_rhat is unset)
  /// Set: extend until R-hat <= 1.01 for at most tables_until_rounds rounds (infer_until, doubling the kept draws).
  std::optional<convergence_target> until_rhat;
  /// The draws a chain keeps at most: those of the last round allowed.
  int draws_longest() const { return static_cast<int>(longest_kept_draws(driver_options(run), until_rhat)); }
};

// The model's thinning (thin 0: tables_shift_thin with shift moves, else tables_thin) and, with shift moves (shifts > 0)
// and no chain length asked for (--draws, --burnin, --target-ess), tables_until_burnin burn-in sweeps and
// tables_until_draws draws a chain extended until R-hat <= 1.01 for at most tables_until_rounds rounds.
tables_run tables_chains(const options& o, int shifts) {
  tables_run t{o, std::nullopt};
  if (t.run.thin == 0) t.run.thin = shifts > 0 ? tables_shift_thin : tables_thin;
  if (shifts > 0 && !o.chain_length_given && !(o.target_ess > 0.0)) {
    t.run.burnin = tables_until_burnin;
    t.run.draws = tables_until_draws;
    t.until_rhat = rhat_target_for_rounds(driver_options(t.run), tables_until_rounds);
  }
  return t;
}

// The Bayesian CGM on a forest: Gibbs-SS over tree_cgm_model, hyper-Dirichlet(alpha_0) prior, the release's mechanism.
// Prints each column's posterior marginal (mean and 90% interval), each edge table's posterior mean as expected counts
// with its 90% interval, and the chains' diagnostics over every cell; adds the posterior mean to fits and the report.
int sample_tables(const release_record& rec, const options& o, const pairwise_graph& graph, const Eigen::VectorXd& y,
                  table_fits& fits) {
  const double alpha0 =
      o.prior.empty() ? 10.0
                      : prior_from(o.prior, 1, "the hyper-Dirichlet pseudo-count alpha_0", [](const std::vector<double>& v) {
                          check_positive_finite("hyper_dirichlet", "alpha_0", v[0]);
                          return v[0];
                        });
  const tree_cgm_model model(graph);
  const hyper_dirichlet prior(graph, alpha0);
  const tool_mechanism mechanism = mechanism_of(rec);
  const int shifts = shift_moves_of(rec, o);
  const tables_run chains = tables_chains(o, shifts);
  options run = chains.run;
  const inference_options io = driver_options(run);
  progress_line progress(std::string(tool_name(o)) + ": sweeps");
  auto tick = [&](const inference_progress& p) { progress(static_cast<long>(p.done), static_cast<long>(p.total)); };
  const auto names = cell_names(rec, graph);
  const inference_result r = run_chains(
      [&](auto& g) {
        gibbs_ss chain(model, prior, mechanism, y, rec.n, g);
        chain.set_collapsed_moves(o.collapsed_moves);
        chain.set_shift_moves(shifts);
        return chain;
      },
      run, io, tick, chains.until_rhat, stream_as{"gibbs", names});
  run.draws = static_cast<int>(r.draws.draws_per_chain());  // what was kept (every round's), for the header and the report
  const table_layout layout(graph);
  std::printf(
      "\nnoise-aware posterior (Bayesian CGM, Gibbs-SS; hyper-Dirichlet alpha_0 = %g): %d chains x %d draws (burn-in "
      "%d, thin %d, seed %llu%s%s)\nposterior marginal of each column: mean [5%%, 95%%]\n",
      alpha0, run.chains, run.draws, run.burnin, run.thin, static_cast<unsigned long long>(run.seed),
      o.collapsed_moves > 0 ? (", collapsed moves " + std::to_string(o.collapsed_moves)).c_str() : "",
      shifts > 0 ? (", shift moves " + std::to_string(shifts)).c_str() : "");
  for (int v = 0; v < graph.num_nodes(); ++v) {
    std::printf("  %s:", rec.tables().nodes[static_cast<std::size_t>(v)].c_str());
    for (int a = 0; a < graph.cardinality(v); ++a) {
      const Eigen::Index i = layout.node_offset(v) + a;
      std::printf(" %s %.3f [%.3f, %.3f]", rec.tables().levels[static_cast<std::size_t>(v)][static_cast<std::size_t>(a)].c_str(),
                  r.draws.mean(i), r.draws.quantile(0.05, i), r.draws.quantile(0.95, i));
    }
    std::printf("\n");
  }
  const double worst_rhat = r.draws.max_rhat(), worst_ess = r.draws.min_ess_bulk();
  const auto& e = r.events;
  std::printf(
      "  over all %lld cells: largest R-hat %.3f, smallest bulk ESS %.0f; %llu rejected draws (n < 0), %llu repairs "
      "of %lld sweeps\n",
      static_cast<long long>(r.draws.dimension()), worst_rhat, worst_ess, static_cast<unsigned long long>(e.rejected_draws),
      static_cast<unsigned long long>(e.projections), static_cast<long long>(r.sweeps));
  // The point estimate: the posterior mean of the marginals (consistent tables: a mean of consistent draws), its
  // Monte Carlo error trusted only once the chains agree (R-hat <= 1.01, the convergence target of --target-ess).
  Eigen::VectorXd mean(r.draws.dimension());
  for (Eigen::Index j = 0; j < mean.size(); ++j) mean(j) = r.draws.mean(j);
  const bool converged = worst_rhat <= 1.01;
  std::printf(
      "\npoint estimate: the posterior mean%s\nposterior mean of each edge table (expected counts N mu [5%%, 95%%], rows: "
      "first column's levels):\n",
      converged ? "" : " (NOT converged: R-hat above 1.01; raise --draws or --thin, or set --target-ess)");
  for (int e = 0; e < graph.num_edges(); ++e) {
    const auto [u, v] = graph.edge(e);
    std::printf("  %s x %s:", rec.tables().nodes[static_cast<std::size_t>(u)].c_str(),
                rec.tables().nodes[static_cast<std::size_t>(v)].c_str());
    for (int a = 0; a < graph.cardinality(u); ++a) {
      std::printf("%s", a == 0 ? " " : " | ");
      for (int c = 0; c < graph.cardinality(v); ++c) {
        const Eigen::Index i = edge_cell(graph, layout, e, a, c);
        std::printf("%s%.1f [%.1f, %.1f]", c == 0 ? "" : " ", rec.n * mean(i), rec.n * r.draws.quantile(0.05, i),
                    rec.n * r.draws.quantile(0.95, i));
      }
    }
    std::printf("\n");
  }
  // MAP-EM beside the posterior mean (the Bayes estimate under squared error): each edge cell where MAP-EM's fitted
  // probability differs from the posterior mean by more than 3 of the mean's Monte Carlo standard errors (sd / sqrt(ESS),
  // so not a difference the draws could explain), and MAP-EM's excess posterior expected squared error over the edge
  // cells, sum (map - mean)^2, against the Monte Carlo error of the mean's own, sum mcse^2.
  const auto map = std::find_if(fits.begin(), fits.end(), [](const auto& f) { return f.first == "cgm-map-em"; });
  const bool with_map = map != fits.end();  // before fits grows (the iterator would dangle)
  long beyond = 0;
  double excess = 0.0, monte_carlo = 0.0, largest_sds = 0.0;
  if (with_map) {
    for (Eigen::Index j = layout.edges_begin(); j < layout.size(); ++j) {
      const double difference = std::abs(map->second(j) - mean(j)), mcse = r.draws.mcse_mean(j), sd = r.draws.sd(j);
      if (difference > 3.0 * mcse) ++beyond;
      if (sd > 0.0) largest_sds = std::max(largest_sds, difference / sd);
      excess += difference * difference;
      monte_carlo += mcse * mcse;
    }
    const long cells = static_cast<long>(layout.size() - layout.edges_begin());
    std::printf(
        "MAP-EM against the posterior mean: %ld of %ld edge cells differ by more than 3 Monte Carlo standard errors "
        "(largest by %.2f posterior sds); MAP-EM's posterior expected squared error is above the mean's by %.3g, %.3g "
        "times the mean's Monte Carlo error%s\n",
        beyond, cells, largest_sds, excess, monte_carlo > 0.0 ? excess / monte_carlo : 0.0,
        excess > 3.0 * monte_carlo && converged ? ": use the posterior mean" : "");
  }
  fits.emplace_back("posterior-mean", mean);
  if (o.report) {
    nlohmann::json j = {{"method", "posterior-mean"},
                        {"draws", r.draws.size()},
                        {"largest_rhat", worst_rhat},
                        {"smallest_ess_bulk", worst_ess},
                        {"converged", converged}};
    if (with_map)
      j["map_em_against_mean"] = {{"cells_beyond_3_mcse", beyond},
                                  {"largest_difference_sd", largest_sds},
                                  {"excess_squared_error", excess},
                                  {"mean_monte_carlo_squared_error", monte_carlo}};
    j.update(marginals_json(rec, graph, layout, mean));
    (*o.report)["point_estimates"].push_back(j);
  }
  print_interrupted(r);
  const std::size_t warnings = warn("noise-aware", r, names);
  if (!o.draws_csv.empty()) write_draws(o.draws_csv, {{"gibbs", r}}, names);
  write_outputs(run, rec, run.thin, {{"gibbs", r}}, {"noise-aware Bayesian CGM (Gibbs-SS over the tree CGM)"}, names);
  return (o.strict && warnings > 0) ? strict_exit_status : 0;
}

// MAP-EM's evidence for the back end Inference: a Gaussian release's own density; for a Laplace release the Laplace
// density or the Gaussian surrogate of its variance (--map-em-evidence; auto: map_em_prefers_gaussian).
template <class Inference>
int with_evidence(const release_record& rec, const options& o, const pairwise_graph& graph, const Eigen::VectorXd& y,
                  const char* back_end, table_fits& fits) {
  if (rec.mechanism != "laplace")
    return run_tables<Inference>(rec, o, graph, y, cgm_evidence::gaussian(rec.noise), back_end, "Gaussian evidence", fits);
  const map_em_evidence choice = o.map_em_evidence == "gaussian" ? map_em_evidence::gaussian_surrogate
                                 : o.map_em_evidence == "exact"  ? map_em_evidence::exact
                                                                 : map_em_evidence::automatic;
  return with_map_em_evidence(choice, cgm_evidence::laplace(rec.noise), graph, rec.n, Inference::is_exact, [&](auto noise) {
    const bool gaussian = noise.is_gaussian();
    return run_tables<Inference>(rec, o, graph, y, noise, back_end,
                                 gaussian ? "Gaussian surrogate of the Laplace evidence" : "Laplace evidence", fits);
  });
}

int with_back_end(const release_record& rec, const options& o, const pairwise_graph& graph, const Eigen::VectorXd& y,
                  table_fits& fits) {
  if (graph.is_forest()) return with_evidence<tree_bp>(rec, o, graph, y, "tree belief propagation (exact)", fits);
  junction_tree_options narrow;
  narrow.max_clique_cells = std::int64_t{1} << 16;
  try {
    const junction_tree probe(graph, narrow);
  } catch (const std::invalid_argument&) {
    return with_evidence<loopy_bp>(rec, o, graph, y, "loopy belief propagation (Bethe approximation; not certified)", fits);
  }
  return with_evidence<junction_tree>(rec, o, graph, y, "junction tree (exact)", fits);
}

}  // namespace

int run_pairwise_tables(const release_record& rec, const options& o) {
  const auto& declared = rec.tables();
  std::vector<int> cardinalities;
  for (const auto& l : declared.levels) cardinalities.push_back(static_cast<int>(l.size()));
  const pairwise_graph graph(cardinalities, declared.edges);
  const bool sample = graph.is_forest() && !o.point_estimate;
  // MAP-EM's result goes to --format json and --output-dir too; the other outputs are of posterior draws.
  if (!sample && (!o.draws_csv.empty() || !o.plot.empty() || o.target_ess > 0 || o.parallel))
    throw std::invalid_argument(
        std::string("--draws-csv, --plot, --target-ess and --parallel apply to posterior sampling, which ") +
        (o.point_estimate ? "--point-estimate turns off"
                          : "for pairwise tables needs a forest (this graph has cycles; MAP-EM only)"));
  const table_layout layout(graph);
  if (static_cast<Eigen::Index>(rec.noisy_statistics.size()) != layout.released_size())
    throw std::invalid_argument("release record: " + std::to_string(rec.noisy_statistics.size()) +
                                " noisy statistics; the declared graph's edge tables have " +
                                std::to_string(layout.released_size()) + " cells");
  const Eigen::VectorXd y = Eigen::Map<const Eigen::VectorXd>(rec.noisy_statistics.data(), layout.released_size());
  if (sample) {  // said, and refused when too long, before any work (MAP-EM included); the longest run if extended
    const tables_run chains = tables_chains(o, shift_moves_of(rec, o));
    options run = chains.run;
    run.draws = chains.draws_longest();
    tables_cost_estimate(layout.released_size(), run);
  }
  std::cout << "pairwise tables: N = " << rec.n << ", " << graph.num_nodes() << " columns, " << graph.num_edges() << " edges, "
            << rec.mechanism << " noise " << rec.noise << " (epsilon " << rec.epsilon << ", " << declared.neighbours
            << " neighbours)\n";
  if (declared.neighbours == "add_remove")
    std::cout << "note: the release's sensitivity assumed add/remove neighbours (the dissertation's), not the library's "
                 "replace-one relation\n";
  table_fits fits;
  const int status = with_back_end(rec, o, graph, y, fits);
  const int sampled = sample ? sample_tables(rec, o, graph, y, fits) : 0;
  if (!o.output_dir.empty()) write_point_estimates(o.output_dir, rec, graph, layout, fits);
  return status != 0 ? status : sampled;
}

}  // namespace privpost::tools::infer_tool
