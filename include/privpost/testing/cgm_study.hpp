// privpost/testing/cgm_study.hpp
// The CGM study designs:
// - tree_cgm_study: simulation-based calibration of the Bayesian CGM on a forest (docs/design-cgm.md Sec. 6, AT-B1): all
//   marginals mu from the hyper-Dirichlet prior, the exact edge tables of N records by conditional multinomials
//   (tree_count_sampler), every edge table released through the mechanism, then each method's posterior of a few edge
//   cells. The mechanism's sensitivity comes from the declared graph (contingency_l1/l2_sensitivity, replace-one
//   neighbours), never from the data.
// - cgm_point_study: the dissertation's point-estimation study (docs/design-cgm.md Sec. 4.1): models with Dirichlet(1) edge
//   potentials, a population of N records each, Laplace releases of its tables, and the exact KL from the truth of
//   CGM MAP-EM, the naive MLE at three lambdas (projected targets) and at 1e-3 on raw targets, the non-private fit (and
//   the non-private hyper-Dirichlet posterior mean with one pseudo-count per cell), the uniform model and the text's random
//   estimator (docs/design-cgm.md Sec. 2.3: random marginals, then the MLE; its distribution is unstated, E6: here every edge
//   table ~ Dirichlet(1) independently, fitted by the naive MLE at lambda 1e-4); on request also the Bayesian CGM's posterior
//   mean (Gibbs-SS, cgm_posterior_settings), with its chains' largest R-hat and its time a fit; and, for a sink, every release
//   with its truth and privpost's KL of it (cgm_point_release), so that other systems can be scored on the same releases.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/progress.hpp"
#include "privpost/families/graphical/contingency_tables.hpp"
#include "privpost/families/graphical/count_sampling.hpp"
#include "privpost/families/graphical/hyper_dirichlet.hpp"
#include "privpost/families/graphical/moments.hpp"
#include "privpost/families/graphical/pairwise_graph.hpp"
#include "privpost/families/graphical/tree_bp.hpp"
#include "privpost/families/graphical/tree_cgm_model.hpp"
#include "privpost/inference/calibration_study.hpp"
#include "privpost/inference/fit.hpp"
#include "privpost/inference/infer.hpp"
#include "privpost/mechanisms/laplace.hpp"
#include "privpost/samplers/cgm/cgm_em.hpp"
#include "privpost/samplers/cgm/cgm_noise.hpp"
#include "privpost/samplers/cgm/naive_mle.hpp"
#include "privpost/samplers/conjugate.hpp"
#include "privpost/samplers/gibbs_ss.hpp"
#include "privpost/testing/family_study.hpp"

namespace privpost {

/// One simulated trial of a tree CGM release.
struct tree_cgm_trial {
  Eigen::VectorXd truth;   ///< the reported cells of the true marginals mu
  Eigen::VectorXd counts;  ///< the exact edge tables (private: the non-private reference only)
  Eigen::VectorXd y;       ///< the released edge tables
  /// The number of records.
  double n = 0.0;
};

/// One reported cell per edge, cycling through the cells: edge e's cell (e mod (K_u K_v)), as an index of the full
/// marginal vector (table_layout order). Edge 0 reports its cell (0, 0), edge 1 its cell (0, 1), ...
inline std::vector<Eigen::Index> default_reported_cells(const pairwise_graph& graph) {
  const table_layout layout(graph);
  std::vector<Eigen::Index> cells;
  for (int e = 0; e < graph.num_edges(); ++e) {
    const auto [u, v] = graph.edge(e);
    const Eigen::Index size = static_cast<Eigen::Index>(graph.cardinality(u)) * graph.cardinality(v);
    cells.push_back(layout.edge_offset(e) + e % size);
  }
  return cells;
}

/// Calibration trials of the Bayesian tree CGM. make_mechanism(l1, l2) builds the mechanism from the sensitivities of
/// all edge tables under replace-one neighbours (2|E| and sqrt(2|E|)). Standard methods: gibbs (Gibbs-SS over
/// tree_cgm_model, the library's noise-aware method), naive (the conjugate hyper-Dirichlet posterior on the release
/// after the counted repair of tree_table_support), nonprivate (the conjugate posterior on the exact tables); any other
/// is one more named_method. The parameters ranked are the marginal cells `cells` (empty: default_reported_cells).
/// Errors (std::invalid_argument): a graph with a cycle or an isolated node, alpha0 outside (0, inf), the settings of
/// check_study_settings, a cell outside the edge tables, an unknown method name.
template <scale_mixture_noise Mechanism>
class tree_cgm_study : public study_methods<tree_cgm_trial> {
 public:
  /// The trial type.
  using trial_type = tree_cgm_trial;
  /// Whether Gibbs-SS runs shift moves under this mechanism (study_settings::shift_moves; gibbs_ss::set_shift_moves).
  static constexpr bool shiftable = shift_moving_model<tree_cgm_model, hyper_dirichlet, Mechanism>;

  /// The study of graph's tree CGM under a hyper-Dirichlet prior of pseudo-count alpha0, released by make_mechanism's mechanism,
  /// reporting these cells (default_reported_cells when empty).
  template <mechanism_factory MakeMechanism>
  tree_cgm_study(const pairwise_graph& graph, double alpha0, MakeMechanism make_mechanism, study_settings settings,
                 std::vector<Eigen::Index> cells = {})
      : study_methods<trial_type>("tree_cgm_study"),
        graph_(graph),
        prior_(graph, alpha0),
        model_(graph),
        mechanism_(make_mechanism(contingency_l1_sensitivity(graph), contingency_l2_sensitivity(graph))),
        settings_(std::move(settings)),
        cells_(cells.empty() ? default_reported_cells(graph) : std::move(cells)) {
    detail::check_study_settings("tree_cgm_study", settings_, {.shift = true});
    if (!shiftable && settings_.shift_moves != 0)
      throw_invalid("tree_cgm_study", "shift_moves", settings_.shift_moves, "0 (the mechanism reports no noise_variance())");
    const table_layout layout(graph_);
    for (const Eigen::Index c : cells_)
      if (c < layout.edges_begin() || c >= layout.size())
        throw_invalid(
            "tree_cgm_study", "reported cell", static_cast<double>(c),
            "an index of an edge table in [" + std::to_string(layout.edges_begin()) + ", " + std::to_string(layout.size()) + ")");
    this->set_methods(select_methods(standard_methods(), settings_.methods, "tree_cgm_study"));
  }

  /// gibbs, naive and nonprivate (see the class comment).
  std::vector<named_method<trial_type>> standard_methods() const {
    const tree_cgm_model model = model_;
    const hyper_dirichlet prior = prior_;
    const Mechanism mechanism = mechanism_;
    const study_settings st = settings_;
    const std::vector<Eigen::Index> cells = cells_;
    auto reported = [cells](const Eigen::MatrixXd& draws) {
      Eigen::MatrixXd out(draws.rows(), static_cast<Eigen::Index>(cells.size()));
      for (std::size_t j = 0; j < cells.size(); ++j) out.col(static_cast<Eigen::Index>(j)) = draws.col(cells[j]);
      return out;
    };
    return {{"gibbs",
             [=](const trial_type& t, std::mt19937_64& g) {
               return reported(single_chain(
                   [&](std::mt19937_64& e) {
                     gibbs_ss chain(model, prior, mechanism, t.y, t.n, e);
                     chain.set_collapsed_moves(st.collapsed_moves);
                     if constexpr (shiftable) chain.set_shift_moves(st.shift_moves);
                     return chain;
                   },
                   st.burnin, st.draws, g, st.thin));
             }},
            {"naive",
             [=](const trial_type& t, std::mt19937_64& g) {
               return reported(single_chain([&](std::mt19937_64& e) { return conjugate_sampler(model, prior, t.y, t.n, e); }, 0,
                                            st.draws, g));
             }},
            {"nonprivate", [=](const trial_type& t, std::mt19937_64& g) {
               return reported(single_chain([&](std::mt19937_64& e) { return conjugate_sampler(model, prior, t.counts, t.n, e); },
                                            0, st.draws, g));
             }}};
  }

  /// mu from the prior, the exact tables of n records, their release (deterministic given g).
  trial_type simulate(std::mt19937_64& g) const {
    const table_layout layout(graph_);
    const Eigen::VectorXd mu = prior_.draw(g);
    tree_count_sampler sampler(graph_);
    Eigen::VectorXd all_counts;
    sampler.sample(g, mu, static_cast<std::int64_t>(settings_.n), all_counts);
    trial_type t;
    t.truth.resize(static_cast<Eigen::Index>(cells_.size()));
    for (std::size_t j = 0; j < cells_.size(); ++j) t.truth(static_cast<Eigen::Index>(j)) = mu(cells_[j]);
    t.counts = all_counts.tail(layout.released_size());
    t.y = mechanism_.release(t.counts, g);
    t.n = settings_.n;
    return t;
  }

  /// One trial: the truth, the tables, the release, and every method's draws.
  std::vector<method_draws> trial(std::mt19937_64& g) const { return this->run_on(simulate(g), g); }

  /// The study's settings.
  const study_settings& settings() const noexcept { return settings_; }
  /// The release mechanism.
  const Mechanism& mechanism() const noexcept { return mechanism_; }
  /// The graph.
  const pairwise_graph& graph() const noexcept { return graph_; }
  /// The ranked marginal cells (indices of the full marginal vector, table_layout order).
  const std::vector<Eigen::Index>& reported_cells() const noexcept { return cells_; }

 private:
  pairwise_graph graph_;
  hyper_dirichlet prior_;
  tree_cgm_model model_;
  Mechanism mechanism_;
  study_settings settings_;
  std::vector<Eigen::Index> cells_;
};

/// The mechanism type is the factory's result.
template <mechanism_factory MakeMechanism>
tree_cgm_study(const pairwise_graph&, double, MakeMechanism, study_settings, std::vector<Eigen::Index> = {})
    -> tree_cgm_study<std::remove_cvref_t<std::invoke_result_t<const MakeMechanism&, double, double>>>;

/// Every edge table ~ Dirichlet(1) independently (released-cell order; not consistent in general): the random
/// estimator's marginals.
template <random_engine G>
Eigen::VectorXd dirichlet_tables(const pairwise_graph& graph, G& g) {
  const table_layout layout(graph);
  Eigen::VectorXd out(layout.released_size());
  std::exponential_distribution<double> e(1.0);
  for (int k = 0; k < graph.num_edges(); ++k) {
    const auto [u, v] = graph.edge(k);
    const Eigen::Index cells = static_cast<Eigen::Index>(graph.cardinality(u)) * graph.cardinality(v);
    const Eigen::Index o = layout.edge_offset(k) - layout.edges_begin();
    for (Eigen::Index i = 0; i < cells; ++i) out(o + i) = e(g);
    out.segment(o, cells) /= out.segment(o, cells).sum();
  }
  return out;
}

/// Edge log-potentials log Dirichlet(1) per edge table, node potentials 0: the study models of docs/design-cgm.md Sec. 4.1.
template <random_engine G>
Eigen::VectorXd dirichlet_edge_potentials(const pairwise_graph& graph, G& g) {
  const table_layout layout(graph);
  Eigen::VectorXd theta = Eigen::VectorXd::Zero(layout.size());
  theta.tail(layout.released_size()) = dirichlet_tables(graph, g).array().log().matrix();
  return theta;
}

/// The Bayesian CGM in cgm_point_study (docs/design-cgm.md Sec. 6): Gibbs-SS over tree_cgm_model with the hyper-Dirichlet prior
/// at MAP-EM's pseudo-count, its point estimate the model whose pseudo-moment parameters are those of the posterior mean of the
/// marginals. The defaults are privpost-infer's for pairwise tables: 500 burn-in sweeps and 1000 draws a chain, extended
/// (infer_until, doubling the draws) while some cell's R-hat is above 1.01, for at most 2 rounds.
struct cgm_posterior_settings {
  int chains = 4;           ///< chains, >= 2 (R-hat needs two)
  int burnin = 500;         ///< burn-in sweeps per chain
  int draws = 1000;         ///< kept draws per chain in the first round
  int rounds = 2;           ///< at most this many rounds (1: one run of draws a chain), >= 1
  int thin = 2;             ///< sweeps per kept draw
  int collapsed_moves = 0;  ///< gibbs_ss::set_collapsed_moves, in [0, 1000]
  int shift_moves = 4;      ///< gibbs_ss::set_shift_moves, in [0, 1000]
  bool parallel = true;     ///< one thread per chain
};

/// One release of cgm_point_study as its sink (cgm_point_study_settings::on_release) sees it: enough for another
/// estimator to be run on exactly this release and scored against the same truth, so that a comparison with a system
/// outside privpost can be paired release by release instead of set against another set's median. The references
/// live until the sink returns.
struct cgm_point_release {
  int model = 0;    ///< the model's index in the study, from 0
  int release = 0;  ///< the release's index within its model, from 0
  double n = 0.0;   ///< records
  /// The Laplace scale of every released cell.
  double scale = 0.0;
  /// The truth's node and edge marginals (table_layout order; a forest's distribution is the product of its edge
  /// marginals over its node marginals raised to degree - 1, so they give the exact KL of any fit).
  const Eigen::VectorXd& marginals;
  const Eigen::VectorXd& tables;  ///< the exact edge tables (released layout)
  const Eigen::VectorXd& y;       ///< the released edge tables
  /// @{
  /// KL(truth || fit) of this release's MAP-EM fit, and of the posterior mean (NaN without settings.posterior).
  double cgm_kl = 0.0, posterior_kl = 0.0;
  /// @}
};

/// Settings of cgm_point_study (the dissertation's study at one N and epsilon).
struct cgm_point_study_settings {
  double n = 1e4;        ///< records per population
  double epsilon = 0.1;  ///< Laplace at contingency_l1_sensitivity(graph, relation) / epsilon
  int models = 5;        ///< models (Dirichlet(1) edge potentials), one population each
  int releases = 5;      ///< releases per population
  neighbour_relation relation = neighbour_relation::add_remove;  ///< the text's scale |E| / epsilon by default (D1)
  /// Seed of the study.
  std::uint64_t seed = 2017;
  int em_iterations = 2000;  ///< MAP-EM's cap
  /// alpha_0 of MAP-EM and of the posterior's hyper-Dirichlet prior (privpost-infer's --prior for pairwise tables), > 0.
  double pseudo_count = 10.0;
  int naive_iterations = 5000;  ///< the naive MLE's cap
  int em_run_on = 0;  ///< further iterations for the fits still moving at the cap (docs/design-cgm.md Sec. 3.6: value at the
                      ///< cap and at convergence); 0: none
  /// MAP-EM's evidence (cgm_noise.hpp): the Laplace density by default, the spec's study.
  map_em_evidence evidence = map_em_evidence::exact;
  /// Set: the Bayesian CGM's posterior mean too (its chains seeded apart: the other columns do not change).
  std::optional<cgm_posterior_settings> posterior;
  /// Set: called after every release's fits with the release and its KLs (cgm_point_release), in study order.
  std::function<void(const cgm_point_release&)> on_release;
};

/// Per method, the exact KL(truth || estimate) of every trial (models x releases; non-private and uniform: one per
/// model), and how many MAP-EM fits stopped at the cap.
struct cgm_point_study_result {
  /// @{
  /// Per method, the KL of every trial.
  std::vector<double> cgm, naive4, naive3, naive2, raw3, nonprivate, uniform;
  /// @}
  /// Per model, the non-private hyper-Dirichlet posterior mean of the exact tables with one pseudo-count per cell
  /// (alpha_0 = the edge tables' mean cell count; exactly one per cell when every table has as many cells, as in a
  /// chain): the reference whose KL is sampling error only.
  std::vector<double> nonprivate_pseudo;
  std::vector<double> random;  ///< one per trial, from an engine of its own (seed + 1): the other columns are unchanged
  /// MAP-EM fits that stopped at the cap.
  int cgm_capped = 0;
  /// MAP-EM fits through the Gaussian surrogate of the Laplace evidence (settings.evidence).
  int cgm_surrogate = 0;
  /// @{
  /// With em_run_on > 0: per trial the KL after running the capped fits on (a fit converged at the cap keeps its KL),
  /// and how many were still moving after em_iterations + em_run_on iterations.
  std::vector<double> cgm_run_on;
  int cgm_capped_after_run_on = 0;
  /// @}
  /// @{
  /// With settings.posterior: per trial the KL of the posterior-mean model, the largest R-hat over the edge cells and
  /// the wall-clock seconds of the sampling.
  std::vector<double> posterior_mean, posterior_rhat, posterior_seconds;
  /// @}
};

/// Runs the study on a forest with the tree BP back end. population(truth, n, g) returns the edge tables
/// (table_layout(graph).released_size() entries) of n records of the model with log-potentials truth (for chains:
/// tree_count_sampler on tree_bp's marginals, or forward-sampled records). Deterministic given settings.seed.
/// progress(done, total) after every trial when given. std::invalid_argument for a graph with cycles, n not a whole
/// number >= 1, epsilon not finite and > 0, models or releases < 1, em_run_on < 0, posterior settings out of range.
template <class Population, class Progress = void (*)(int, int)>
requires std::is_invocable_r_v<Eigen::VectorXd, Population&, const Eigen::VectorXd&, double, std::mt19937_64&> &&
    std::is_invocable_v<Progress&, int, int>
        cgm_point_study_result cgm_point_study(const pairwise_graph& graph, const cgm_point_study_settings& settings,
                                               Population population, Progress progress = nullptr) {
  constexpr const char* f = "cgm_point_study";
  if (!graph.is_forest()) throw_invalid(f, "number of edges", graph.num_edges(), "a forest (the study uses tree BP)");
  if (!(settings.n >= 1.0 && settings.n <= 1e12 && std::floor(settings.n) == settings.n))
    throw_invalid(f, "n", settings.n, "a whole number in [1, 1e12]");
  check_positive_finite(f, "epsilon", settings.epsilon);
  if (settings.models < 1) throw_invalid(f, "models", settings.models, "an integer >= 1");
  if (settings.releases < 1) throw_invalid(f, "releases", settings.releases, "an integer >= 1");
  if (settings.em_run_on < 0) throw_invalid(f, "em_run_on", settings.em_run_on, "an integer >= 0");
  check_positive_finite(f, "pseudo_count", settings.pseudo_count);
  if (const auto& p = settings.posterior) {
    if (p->chains < 2) throw_invalid(f, "posterior chains", p->chains, "an integer >= 2");
    if (p->burnin < 0) throw_invalid(f, "posterior burn-in", p->burnin, "an integer >= 0");
    if (p->draws < 4) throw_invalid(f, "posterior draws", p->draws, "an integer >= 4");
    if (p->rounds < 1 || p->rounds > 20) throw_invalid(f, "posterior rounds", p->rounds, "an integer in [1, 20]");
    if (p->thin < 1) throw_invalid(f, "posterior thin", p->thin, "an integer >= 1");
    if (p->collapsed_moves < 0 || p->collapsed_moves > 1000)
      throw_invalid(f, "posterior collapsed moves", p->collapsed_moves, "an integer in [0, 1000]");
    if (p->shift_moves < 0 || p->shift_moves > 1000)
      throw_invalid(f, "posterior shift moves", p->shift_moves, "an integer in [0, 1000]");
  }
  std::mt19937_64 g(settings.seed), random_tables(settings.seed + 1);
  const double n = settings.n;
  const laplace_mechanism mechanism(contingency_l1_sensitivity(graph, settings.relation), settings.epsilon);
  tree_bp bp(graph);
  const table_layout layout(graph);
  const tree_cgm_model model(graph);
  const hyper_dirichlet prior(graph, settings.pseudo_count);
  cgm_point_study_result out;
  int done = 0;
  for (int m = 0; m < settings.models; ++m) {
    const Eigen::VectorXd truth = dirichlet_edge_potentials(graph, g);
    out.uniform.push_back(exact_kl(bp, truth, Eigen::VectorXd::Zero(truth.size())));
    const Eigen::VectorXd tables = population(truth, n, g);
    Eigen::VectorXd truth_marginals;
    if (settings.on_release) bp.marginals(truth, truth_marginals);
    auto naive_kl = [&](const Eigen::VectorXd& data, double lambda, naive_targets targets) {
      naive_mle_options options;
      options.lambda = lambda;
      options.targets = targets;
      naive_mle naive(graph, data, n, tree_bp(graph), options);
      return exact_kl(bp, truth, fit(naive, fit_options{settings.naive_iterations}).parameter);
    };
    out.nonprivate.push_back(naive_kl(tables, 1e-4, naive_targets::projected));
    {
      const hyper_dirichlet one_per_cell(graph, static_cast<double>(layout.released_size()) / graph.num_edges());
      Eigen::VectorXd theta;
      pseudo_moment_parameters(graph, one_per_cell.posterior(tables).mean(), theta);
      out.nonprivate_pseudo.push_back(exact_kl(bp, truth, theta));
    }
    for (int r = 0; r < settings.releases; ++r) {
      const Eigen::VectorXd y = mechanism.release(tables, g);
      cgm_em_options em_options;
      em_options.keep_trace = false;
      em_options.pseudo_count = settings.pseudo_count;
      bool surrogate = false;
      with_map_em_evidence(
          settings.evidence, make_cgm_noise(mechanism), graph, n, true,
          [&](auto noise) {
            cgm_em em(graph, y, n, noise, tree_bp(graph), em_options);
            const fit_result fitted = fit(em, fit_options{settings.em_iterations});
            out.cgm_capped += fitted.converged ? 0 : 1;
            out.cgm.push_back(exact_kl(bp, truth, fitted.parameter));
            if (settings.em_run_on > 0) {
              if (fitted.converged) {
                out.cgm_run_on.push_back(out.cgm.back());
              } else {
                const fit_result more = fit(em, fit_options{settings.em_run_on});  // fit() resumes from em's state
                out.cgm_capped_after_run_on += more.converged ? 0 : 1;
                out.cgm_run_on.push_back(exact_kl(bp, truth, more.parameter));
              }
            }
          },
          &surrogate);
      out.cgm_surrogate += surrogate ? 1 : 0;
      out.naive4.push_back(naive_kl(y, 1e-4, naive_targets::projected));
      out.naive3.push_back(naive_kl(y, 1e-3, naive_targets::projected));
      out.naive2.push_back(naive_kl(y, 1e-2, naive_targets::projected));
      out.raw3.push_back(naive_kl(y, 1e-3, naive_targets::raw));
      out.random.push_back(naive_kl(n * dirichlet_tables(graph, random_tables), 1e-4, naive_targets::projected));
      if (const auto& p = settings.posterior) {
        inference_options io;
        io.chains = p->chains;
        io.burnin = p->burnin;
        io.draws = p->draws;
        io.thin = p->thin;
        io.parallel = p->parallel;
        io.seed = settings.seed + 2 + static_cast<std::uint64_t>(done);
        const convergence_target target = rhat_target_for_rounds(io, p->rounds);
        const auto start = std::chrono::steady_clock::now();
        const inference_result post = infer_until(
                                          [&](std::mt19937_64& e) {
                                            gibbs_ss chain(model, prior, mechanism, y, n, e);
                                            chain.set_collapsed_moves(p->collapsed_moves);
                                            chain.set_shift_moves(p->shift_moves);
                                            return chain;
                                          },
                                          io, target)
                                          .result;
        out.posterior_seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        out.posterior_rhat.push_back(post.draws.max_rhat(layout.edges_begin(), layout.size()));
        const Eigen::VectorXd mean = post.draws.draw_matrix().colwise().mean().transpose();
        Eigen::VectorXd theta;
        pseudo_moment_parameters(graph, mean, theta);
        out.posterior_mean.push_back(exact_kl(bp, truth, theta));
      }
      if (settings.on_release)
        settings.on_release(
            cgm_point_release{m, r, n, mechanism.scale(), truth_marginals, tables, y, out.cgm.back(),
                              settings.posterior ? out.posterior_mean.back() : std::numeric_limits<double>::quiet_NaN()});
      ++done;
      detail::report_progress(progress, done, settings.models * settings.releases);
    }
  }
  return out;
}

}  // namespace privpost
