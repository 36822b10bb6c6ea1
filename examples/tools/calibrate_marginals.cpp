// privpost-calibrate, marginals (docs/histogram-measurements.md B.9-4): a table of --nodes columns with --categories
// levels each, theta ~ Dirichlet(1) over its cells, --n records, and one release of its 1-way marginals (--queries
// one-way, the default) or of the whole histogram (--queries identity), Laplace at L1 2K / epsilon (or the analytic
// Gaussian at sqrt(2K)). Methods: records (the record-level histogram sampler, exact) and naive (identity only: the
// noisy counts as if exact, Dirichlet(1 + max(z, 0))). Parameters: the cells, row-major (testing/histogram_study.hpp).
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include <privpost/mechanisms/gaussian.hpp>
#include <privpost/mechanisms/laplace.hpp>
#include <privpost/testing/histogram_study.hpp>

#include "calibrate.hpp"

namespace privpost::tools::calibrate {

int run_marginals_model(const cli_options& o, const privpost::study_settings& settings) {
  if (o.nodes < 1 || o.nodes > 6)
    throw std::invalid_argument("--nodes is " + std::to_string(o.nodes) + "; accepted: 1 to 6 (marginals: the table's columns)");
  if (o.categories < 2 || o.categories > 10)
    throw std::invalid_argument("--categories is " + std::to_string(o.categories) + "; accepted: 2 to 10 (marginals)");
  if (o.queries != "one-way" && o.queries != "identity")
    throw std::invalid_argument("--queries is '" + o.queries + "'; accepted: one-way, identity");
  std::vector<std::size_t> levels(static_cast<std::size_t>(o.nodes), static_cast<std::size_t>(o.categories));
  double cells = 1.0;
  for (auto l : levels) cells *= static_cast<double>(l);
  if (cells > 1000.0)
    throw std::invalid_argument("--nodes and --categories give " + std::to_string(static_cast<long long>(cells)) +
                                " cells; accepted: at most 1000 (every cell is a reported parameter)");
  std::vector<std::vector<std::size_t>> tables;
  for (std::size_t v = 0; v < levels.size(); ++v) tables.push_back({v});
  const auto q = o.queries == "identity" ? linear_queries::identity(static_cast<std::size_t>(cells))
                                         : linear_queries::marginals(levels, tables);
  privpost::histogram_study_settings s;
  s.n = o.n;
  s.burnin = settings.burnin;
  s.draws = settings.draws;
  s.thin = settings.thin;
  s.methods = settings.methods;
  const Eigen::VectorXd alpha = Eigen::VectorXd::Ones(static_cast<Eigen::Index>(cells));
  std::cerr << "privpost-calibrate: marginals of a table of " << o.nodes << " column(s) with " << o.categories << " levels ("
            << cells << " cells), " << (o.queries == "identity" ? "the histogram" : "the 1-way marginals") << " released ("
            << q.rows() << " counts), " << (o.mechanism == "laplace" ? "Laplace, L1" : "Gaussian, L2") << " sensitivity "
            << (o.mechanism == "laplace" ? q.l1_sensitivity() : q.l2_sensitivity()) << "; Dirichlet(1); parameter j = cell j\n";
  if (o.mechanism == "laplace")
    return run(privpost::histogram_study(q, laplace_mechanism(q.l1_sensitivity(), o.epsilon), alpha, s), o);
  return run(privpost::histogram_study(q, gaussian_mechanism::analytic(q.l2_sensitivity(), o.epsilon, o.delta), alpha, s), o);
}

}  // namespace privpost::tools::calibrate
