// privpost-release for declared marginal tables of a contingency table (model marginals; docs/histogram-measurements.md,
// B.8.1).
#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include <privpost/privpost.hpp>

#include "release_tool.hpp"

namespace privpost::tools::release_tool {

// The columns and their levels are declared (public), as for pairwise-tables; --marginals lists the released tables
// (A, A:B, A:B:C: column names joined by ':'), each released as its counts in turn, row-major over its columns' levels.
// The statistic is Q h for the records' histogram h over the full table; under replace-one neighbours a record leaves one
// cell of every table and enters another: L1 sensitivity 2K, L2 sqrt(2K) for K tables (linear_queries::marginals).
// The table may have at most max_histogram_cells cells, the most privpost-infer analyses.
privpost::tools::release_record make_marginals_release(const options& o) {
  using namespace privpost;
  if (o.columns.empty() || o.marginals.empty())
    throw std::invalid_argument("marginals needs --columns a,b,... and --marginals a,b,a:b,... (the released tables)");
  if (o.granularity && *o.granularity != 1.0)
    throw std::invalid_argument("--granularity with the marginals model: counts are on the unit lattice; accepted: 1");
  auto r = tools::release_record::of_model(o.model);
  auto& declared = r.marginals();
  r.mechanism = o.mechanism;
  r.version = privpost::version_string;
  (void)read_declared_columns(o, r.marginals());
  for (const std::string& spec : tools::split_list(o.marginals, "--marginals")) {
    std::vector<std::size_t> table;
    std::size_t from = 0;
    while (from <= spec.size()) {
      const std::size_t colon = std::min(spec.find(':', from), spec.size());
      table.push_back(static_cast<std::size_t>(column_index(r.marginals(), spec.substr(from, colon - from), "--marginals")));
      from = colon + 1;
    }
    std::sort(table.begin(), table.end());
    if (std::adjacent_find(table.begin(), table.end()) != table.end())
      throw std::invalid_argument("--marginals '" + spec + "' names a column twice");
    if (std::find(declared.marginal_tables.begin(), declared.marginal_tables.end(), table) != declared.marginal_tables.end())
      throw std::invalid_argument("--marginals '" + spec + "' is listed twice");
    declared.marginal_tables.push_back(table);
  }
  const linear_queries q = tools::marginal_queries(declared.levels, declared.marginal_tables);  // refuses a table over the cap
  const std::string input = shard_path(o.input);
  // This process's records (its shard under mpirun) and their marginal tables: counts, exact in doubles; summed over
  // the ranks.
  shard_sums part = read_shard([&] {
    const Eigen::MatrixXi records = read_declared_records(input, r.marginals());
    // The cell of a record: row-major over all declared columns (the last fastest), as linear_queries::marginals.
    Eigen::VectorXd h = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(q.cells()));
    for (Eigen::Index i = 0; i < records.rows(); ++i) {
      std::size_t cell = 0;
      for (std::size_t v = 0; v < declared.nodes.size(); ++v)
        cell = cell * declared.levels[v].size() + static_cast<std::size_t>(records(i, static_cast<Eigen::Index>(v)));
      h(static_cast<Eigen::Index>(cell)) += 1.0;
    }
    const Eigen::VectorXd tables = q.apply(h);
    shard_sums p(static_cast<std::size_t>(tables.size()));
    p.add(tables);
    p.records = static_cast<double>(records.rows());
    return p;
  });
  const Eigen::VectorXd s = combine(part);  // every rank's part; the ranks other than 0 stop here
  if (part.records < 1) throw std::invalid_argument("--input has no records; nothing was released");
  r.n = part.records;
  r.policy = "none";
  if (tools::is_discrete(o.mechanism)) {
    release_on_lattice(o, r, s, q.l1_sensitivity(), q.l2_sensitivity());
  } else if (o.mechanism == "laplace") {
    const laplace_mechanism m(q.l1_sensitivity(), o.epsilon);
    r.sensitivity = m.l1_sensitivity();
    r.noise = m.scale();
    release_into(r, m, s);
  } else {
    const auto m = gaussian_mechanism::analytic(q.l2_sensitivity(), o.epsilon, o.delta);
    r.sensitivity = q.l2_sensitivity();
    r.noise = m.sigma();
    r.calibration = "analytic";
    release_into(r, m, s);
  }
  return r;
}

}  // namespace privpost::tools::release_tool
