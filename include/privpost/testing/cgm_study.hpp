// privpost/testing/cgm_study.hpp
// tree_cgm_study: simulation-based calibration of the Bayesian CGM on a forest (issue #11, spec cgm.md Sec. 6, AT-B1):
// all marginals mu from the hyper-Dirichlet prior, the exact edge tables of N records by conditional multinomials
// (tree_count_sampler), every edge table released through the mechanism, then each method's posterior of a few edge
// cells. The mechanism's sensitivity comes from the declared graph (contingency_l1/l2_sensitivity, replace-one
// neighbours), never from the data.
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/families/graphical/contingency_tables.hpp"
#include "privpost/families/graphical/count_sampling.hpp"
#include "privpost/families/graphical/hyper_dirichlet.hpp"
#include "privpost/families/graphical/pairwise_graph.hpp"
#include "privpost/families/graphical/tree_cgm_model.hpp"
#include "privpost/inference/calibration_study.hpp"
#include "privpost/samplers/conjugate.hpp"
#include "privpost/samplers/gibbs_ss.hpp"
#include "privpost/testing/family_study.hpp"

namespace privpost {

/// One simulated trial of a tree CGM release.
struct tree_cgm_trial {
  Eigen::VectorXd truth;   ///< the reported cells of the true marginals mu
  Eigen::VectorXd counts;  ///< the exact edge tables (private: the non-private reference only)
  Eigen::VectorXd y;       ///< the released edge tables
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
/// is one more named_method. The parameters ranked are the marginal cells `cells` (default_reported_cells by default).
/// Errors (std::invalid_argument): a graph with a cycle or an isolated node, alpha0 outside (0, inf), the settings of
/// check_study_settings, an empty cell list or a cell outside the edge tables, an unknown method name.
template <scale_mixture_noise Mechanism>
class tree_cgm_study {
 public:
  using trial_type = tree_cgm_trial;

  template <mechanism_factory MakeMechanism>
  tree_cgm_study(const pairwise_graph& graph, double alpha0, MakeMechanism make_mechanism, study_settings settings,
                 std::vector<Eigen::Index> cells = {})
      : graph_(graph),
        prior_(graph, alpha0),
        model_(graph),
        mechanism_(make_mechanism(contingency_l1_sensitivity(graph), contingency_l2_sensitivity(graph))),
        settings_(std::move(settings)),
        cells_(cells.empty() ? default_reported_cells(graph) : std::move(cells)) {
    detail::check_study_settings("tree_cgm_study", settings_);
    const table_layout layout(graph_);
    for (const Eigen::Index c : cells_)
      if (c < layout.edges_begin() || c >= layout.size())
        throw_invalid(
            "tree_cgm_study", "reported cell", static_cast<double>(c),
            "an index of an edge table in [" + std::to_string(layout.edges_begin()) + ", " + std::to_string(layout.size()) + ")");
    methods_ = select_methods(standard_methods(), settings_.methods, "tree_cgm_study");
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
               return reported(single_chain([&](std::mt19937_64& e) { return gibbs_ss(model, prior, mechanism, t.y, t.n, e); },
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
  std::vector<method_draws> trial(std::mt19937_64& g) const { return run_methods(simulate(g), methods_, g); }

  const study_settings& settings() const noexcept { return settings_; }
  const Mechanism& mechanism() const noexcept { return mechanism_; }
  const pairwise_graph& graph() const noexcept { return graph_; }
  /// The ranked marginal cells (indices of the full marginal vector, table_layout order).
  const std::vector<Eigen::Index>& reported_cells() const noexcept { return cells_; }
  /// Replaces the methods (adding one is one more named_method).
  void set_methods(std::vector<named_method<trial_type>> methods) {
    if (methods.empty()) throw std::invalid_argument("tree_cgm_study: no method; accepted: at least one named_method");
    methods_ = std::move(methods);
  }
  const std::vector<named_method<trial_type>>& methods() const noexcept { return methods_; }

 private:
  pairwise_graph graph_;
  hyper_dirichlet prior_;
  tree_cgm_model model_;
  Mechanism mechanism_;
  study_settings settings_;
  std::vector<Eigen::Index> cells_;
  std::vector<named_method<trial_type>> methods_;
};

/// The mechanism type is the factory's result.
template <mechanism_factory MakeMechanism>
tree_cgm_study(const pairwise_graph&, double, MakeMechanism, study_settings, std::vector<Eigen::Index> = {})
    -> tree_cgm_study<std::remove_cvref_t<std::invoke_result_t<const MakeMechanism&, double, double>>>;

}  // namespace privpost
