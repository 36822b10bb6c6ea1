// privpost-release for the contingency tables of a declared graph over discrete columns (model pairwise-tables).
#include <algorithm>
#include <array>
#include <cmath>
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <privpost/privpost.hpp>

#include "release_tool.hpp"

namespace privpost::tools::release_tool {

// --columns, --levels, --levels-of and --missing-level into r (nodes, levels, missing_level): distinct column names, each
// with 2 to max_table_levels distinct declared levels. Returns the columns' level counts.
std::vector<int> read_declared_columns(const options& o, privpost::tools::table_columns_block& t) {
  t.nodes = tools::split_list(o.columns, "--columns");
  for (std::size_t v = 0; v < t.nodes.size(); ++v)
    if (std::find(t.nodes.begin() + static_cast<std::ptrdiff_t>(v) + 1, t.nodes.end(), t.nodes[v]) != t.nodes.end())
      throw std::invalid_argument("--columns: '" + t.nodes[v] + "' is listed twice");
  if (t.nodes.size() > tools::max_table_nodes)
    throw std::invalid_argument("--columns: " + std::to_string(t.nodes.size()) + " columns; accepted: at most " +
                                std::to_string(tools::max_table_nodes));
  t.missing_level = o.missing_level;
  const std::vector<std::string> shared = tools::split_list(o.levels, "--levels");
  t.levels.assign(t.nodes.size(), shared);
  for (const std::string& spec : o.levels_of) {  // COLUMN=a/b/c
    const auto eq = spec.find('=');
    if (eq == std::string::npos) throw std::invalid_argument("--levels-of '" + spec + "'; accepted: COLUMN=level1/level2/...");
    std::vector<std::string> own;
    std::stringstream in(spec.substr(eq + 1));
    for (std::string level; std::getline(in, level, '/');)
      if (!level.empty()) own.push_back(level);
    t.levels[static_cast<std::size_t>(column_index(t, spec.substr(0, eq), "--levels-of"))] = own;
  }
  std::vector<int> cardinalities;
  for (std::size_t v = 0; v < t.nodes.size(); ++v) {
    const auto& l = t.levels[v];
    if (l.size() < 2 || l.size() > tools::max_table_levels)
      throw std::invalid_argument("column '" + t.nodes[v] + "' has " + std::to_string(l.size()) +
                                  " declared level(s); accepted: 2 to " + std::to_string(tools::max_table_levels) +
                                  " (--levels a,b,... or --levels-of " + t.nodes[v] + "=a/b)");
    for (std::size_t a = 0; a < l.size(); ++a)
      if (std::find(l.begin() + static_cast<std::ptrdiff_t>(a) + 1, l.end(), l[a]) != l.end())
        throw std::invalid_argument("column '" + t.nodes[v] + "': level '" + l[a] + "' is declared twice");
    cardinalities.push_back(static_cast<int>(l.size()));
  }
  return cardinalities;
}

int column_index(const privpost::tools::table_columns_block& t, const std::string& name, const char* flag) {
  const auto at = std::find(t.nodes.begin(), t.nodes.end(), name);
  if (at == t.nodes.end()) throw std::invalid_argument(std::string(flag) + ": '" + name + "' is not one of --columns");
  return static_cast<int>(at - t.nodes.begin());
}

// The records of `input` (--input, or this rank's shard) as states of r's declared columns (one row per CSV data row): a cell
// outside its column's levels is an error naming the line (nothing is released), an empty cell too unless --missing-level names a
// declared level.
Eigen::MatrixXi read_declared_records(const std::string& input, const privpost::tools::table_columns_block& t) {
  Eigen::MatrixXi records;
  for (std::size_t v = 0; v < t.nodes.size(); ++v) {
    const auto cells = tools::read_csv_cells(input, t.nodes[v], shard_rows());
    if (v == 0) records.resize(static_cast<Eigen::Index>(cells.size()), static_cast<Eigen::Index>(t.nodes.size()));
    const auto& l = t.levels[v];
    for (std::size_t i = 0; i < cells.size(); ++i) {
      const std::string& cell = cells[i].second.empty() ? t.missing_level : cells[i].second;
      const auto at = std::find(l.begin(), l.end(), cell);
      if (cell.empty() || at == l.end())
        throw std::invalid_argument(
            "CSV line " + std::to_string(cells[i].first) + ": " +
            (cells[i].second.empty()
                 ? (t.missing_level.empty()
                        ? std::string("an empty cell (declare the level it stands for with --missing-level)")
                        : "an empty cell, and --missing-level '" + t.missing_level + "' is not a declared level of this column")
                 : "'" + tools::echo(cells[i].second) + "' is not a declared level") +
            " in column '" + t.nodes[v] + "'; nothing was released");
      records(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(v)) = static_cast<int>(at - l.begin());
    }
  }
  return records;
}

// Pairwise tables (docs/design-cgm.md Sec. 1.3): every declared edge's contingency table of discrete columns. The
// graph and every column's levels are declared (public): a cell outside its column's levels is an error naming the line
// (nothing is released), an empty cell too unless --missing-level names the level it stands for and the column
// declares that level. The L1 sensitivity is
// 2|E| under replace-one neighbours (the library's) and |E| under add-remove (the dissertation's, --neighbours
// add-remove: the release is then 2 epsilon-DP under replacement, and the record says so).
privpost::tools::release_record make_tables_release(const options& o) {
  using namespace privpost;
  if (o.columns.empty() || o.edges.empty())
    throw std::invalid_argument("pairwise-tables needs --columns a,b,... and --edges a:b,b:c,... (the declared graph)");
  auto r = tools::release_record::of_model(o.model);
  auto& declared = r.tables();
  r.mechanism = o.mechanism;
  r.version = privpost::version_string;
  const std::vector<int> cardinalities = read_declared_columns(o, r.tables());
  auto node_index = [&](const std::string& name, const char* flag) { return column_index(r.tables(), name, flag); };
  for (const std::string& e : tools::split_list(o.edges, "--edges")) {
    const auto colon = e.find(':');
    if (colon == std::string::npos) throw std::invalid_argument("--edges '" + e + "'; accepted: a:b (two column names)");
    declared.edges.emplace_back(node_index(e.substr(0, colon), "--edges"), node_index(e.substr(colon + 1), "--edges"));
  }
  const pairwise_graph graph(cardinalities, declared.edges);  // validates: no self loops, no duplicate edges
  // The record stores each edge as the graph lays out its table: (u, v) with u < v, rows u's levels (cell (a, c) at
  // a K_v + c), whatever order --edges named the two columns in.
  for (int e = 0; e < graph.num_edges(); ++e) declared.edges[static_cast<std::size_t>(e)] = graph.edge(e);
  for (int v = 0; v < graph.num_nodes(); ++v)
    if (graph.incident(v).empty())
      throw std::invalid_argument("column '" + declared.nodes[static_cast<std::size_t>(v)] +
                                  "' is in no declared edge: nothing about it would be released (join it by an edge or "
                                  "leave it out of --columns)");
  const std::string input = shard_path(o.input);
  // This process's records (its shard under mpirun) and its tables: counts, exact in doubles; summed over the ranks.
  shard_sums part = read_shard([&] {
    const Eigen::MatrixXi records = read_declared_records(input, r.tables());
    const Eigen::VectorXd tables = edge_tables(graph, records);
    shard_sums p(static_cast<std::size_t>(tables.size()));
    p.add(tables);
    p.records = static_cast<double>(records.rows());
    return p;
  });
  const Eigen::VectorXd s = combine(part);  // every rank's part; the ranks other than 0 stop here
  r.n = part.records;
  if (o.neighbours != "replace" && o.neighbours != "add-remove")
    throw std::invalid_argument("--neighbours '" + o.neighbours + "'; accepted: replace, add-remove");
  const auto relation = o.neighbours == "replace" ? neighbour_relation::replace_one : neighbour_relation::add_remove;
  declared.neighbours = o.neighbours == "replace" ? "replace_one" : "add_remove";
  r.policy = "none";
  if (o.mechanism == "laplace") {
    const laplace_mechanism m(contingency_l1_sensitivity(graph, relation), o.epsilon);
    r.sensitivity = m.l1_sensitivity();
    r.noise = m.scale();
    release_into(r, m, s, relation == neighbour_relation::add_remove ? calibrated_for::add_remove : calibrated_for::replace_one);
  } else {
    const auto m = gaussian_mechanism::analytic(contingency_l2_sensitivity(graph, relation), o.epsilon, o.delta);
    r.sensitivity = contingency_l2_sensitivity(graph, relation);
    r.noise = m.sigma();
    r.calibration = "analytic";
    release_into(r, m, s, relation == neighbour_relation::add_remove ? calibrated_for::add_remove : calibrated_for::replace_one);
  }
  if (relation == neighbour_relation::add_remove) {
    std::cerr << "privpost-release: note: sensitivity under add/remove neighbours (the dissertation's); under the "
                 "library's replace-one relation this release is ";
    if (o.mechanism == "laplace") {
      std::cerr << 2.0 * r.epsilon << "-DP\n";
    } else {
      std::cerr << "(" << 2.0 * r.epsilon << ", " << (1.0 + std::exp(r.epsilon)) * r.delta << ")-DP by group privacy\n";
    }
  }
  return r;
}

}  // namespace privpost::tools::release_tool
