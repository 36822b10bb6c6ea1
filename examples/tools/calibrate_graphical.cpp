// privpost-calibrate, pairwise tables (docs/design-cgm.md Sec. 6, AT-B1): the Bayesian CGM on a chain or a star of
// --nodes nodes with --categories states each. Per trial all marginals mu ~ hyper-Dirichlet(alpha_0 = --pseudo-count),
// the exact edge tables of --n records, every edge table released with Laplace noise at 2|E| / epsilon (or the analytic
// Gaussian at sqrt(2|E|)), replace-one neighbours. Methods: gibbs (Gibbs-SS over tree_cgm_model), naive (the
// hyper-Dirichlet posterior on the repaired release), nonprivate (on the exact tables). Parameters: one marginal cell per
// edge, edge e's cell (e mod K^2) (testing/cgm_study.hpp, default_reported_cells); parameter j is edge j.
#include <iostream>
#include <stdexcept>
#include <string>

#include <privpost/families/graphical/pairwise_graph.hpp>
#include <privpost/mechanisms/gaussian.hpp>
#include <privpost/mechanisms/laplace.hpp>
#include <privpost/testing/cgm_study.hpp>

#include "calibrate.hpp"

namespace privpost::tools::calibrate {

int run_graphical_model(const cli_options& o, const privpost::study_settings& settings) {
  if (o.graph != "chain" && o.graph != "star") throw std::invalid_argument("--graph is '" + o.graph + "'; accepted: chain, star");
  if (o.nodes < 2 || o.nodes > 50)
    throw std::invalid_argument("--nodes is " + std::to_string(o.nodes) + "; accepted: 2 to 50 (pairwise-tables)");
  if (o.categories < 2 || o.categories > 10)
    throw std::invalid_argument("--categories is " + std::to_string(o.categories) + "; accepted: 2 to 10 (pairwise-tables)");
  if (!(o.pseudo_count > 0.0 && o.pseudo_count < 1e9))
    throw std::invalid_argument("--pseudo-count is " + std::to_string(o.pseudo_count) + "; accepted: a number in (0, 1e9)");
  for (const auto& m : settings.methods)
    if (m == "ops") throw std::invalid_argument("--methods: ops is available for the binomial model only");
  const pairwise_graph graph = o.graph == "chain" ? chain_graph(o.nodes, o.categories) : star_graph(o.nodes, o.categories);
  const bool laplace = o.mechanism == "laplace";
  const privpost::tree_cgm_study study(
      graph, o.pseudo_count,
      [&](double l1, double l2) {
        return laplace ? tool_mechanism(privpost::laplace_mechanism(l1, o.epsilon))
                       : tool_mechanism(privpost::gaussian_mechanism::analytic(l2, o.epsilon, o.delta));
      },
      settings);
  std::cerr << "privpost-calibrate: pairwise tables of a " << o.graph << " of " << o.nodes << " nodes with " << o.categories
            << " states (" << graph.num_edges() << " edge tables, " << table_layout(graph).released_size() << " cells), "
            << (laplace ? "Laplace, L1" : "Gaussian, L2") << " sensitivity "
            << (laplace ? contingency_l1_sensitivity(graph) : contingency_l2_sensitivity(graph))
            << " (replace-one), hyper-Dirichlet alpha_0 " << o.pseudo_count << "; parameter j = edge j's cell "
            << "(j mod " << o.categories * o.categories << ") of P(x_u, x_v)\n";
  return run(study, o);
}

}  // namespace privpost::tools::calibrate
