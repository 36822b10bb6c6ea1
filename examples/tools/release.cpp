// privpost-release: the data owner's tool. Reads records from a CSV column, computes the model's sufficient statistic
// with sensitivity from the declared bounds (never from the data), adds Laplace or Gaussian noise from the OS CSPRNG, and
// writes a JSON release record. Unbounded models refuse to run without bounds; records outside them are dropped.
// pairwise-tables releases the contingency tables of a declared graph over discrete columns.
// --ledger FILE charges the release to the data set's privacy budget ledger before any noise is drawn and refuses a
// release over the budget (ledger_file.hpp).
#include <CLI/CLI.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <iostream>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <privpost/privpost.hpp>

#include "ledger_file.hpp"
#include "output_file.hpp"
#include "release_record.hpp"
#include "tool_support.hpp"

namespace {

struct options {
  std::string input, column, model, mechanism = "laplace", output;
  double epsilon = 0, delta = 1e-6;
  std::optional<double> granularity;  // discrete mechanisms: the lattice's gamma
  std::optional<double> lower, upper;
  int categories = 0;
  // linreg
  std::string covariates, response, x_bounds, y_bounds;
  bool no_intercept = false, noisy_moments = false;
  bool mechanism_given = false;
  // logistic, poisson-glm
  std::optional<double> radius, y_bound;
  std::string positive;
  // pairwise-tables
  std::string columns, levels, edges, missing_level, neighbours = "replace";
  std::vector<std::string> levels_of;
  // the privacy budget ledger
  std::string ledger, budget;
};

// The ledger of this run (nullptr without --ledger) and the label of its entry.
privpost::tools::ledger_file* active_ledger = nullptr;
std::string ledger_label;

// Charges the release of mechanism m (and of the mechanisms in extra, released by the caller afterwards) to the ledger,
// all or nothing, then draws the noise from the OS CSPRNG: a release over the budget draws none.
template <class M, class... Extra>
Eigen::VectorXd charged_release(const M& m, const Eigen::VectorXd& s, const Extra&... extra) {
  if (active_ledger != nullptr) active_ledger->charge(ledger_label, m, extra...);
  return m.release(s);  // OS CSPRNG
}

// The same for a mechanism calibrated to add/remove neighbours: under the library's replace-one relation a record
// change is a removal and an addition, so the release is charged at the group-of-2 guarantee (2 epsilon,
// (1 + e^epsilon) delta; Dwork & Roth 2014, Thm. 2.2 and its (epsilon, delta) form) and 4 rho in zCDP (Bun & Steinke
// 2016, Prop. 1.9).
template <class M>
Eigen::VectorXd charged_release_add_remove(const M& m, const Eigen::VectorXd& s) {
  if (active_ledger != nullptr) {
    const privpost::privacy_budget b = m.budget();
    active_ledger->charge_entry(privpost::ledger_entry{ledger_label + " (add-remove neighbours, charged for replace-one)",
                                                       {2.0 * b.epsilon, (1.0 + std::exp(b.epsilon)) * b.delta},
                                                       4.0 * privpost::zcdp_rho(m)});
  }
  return m.release(s);  // OS CSPRNG
}

template <class Mechanism>
void finish(privpost::tools::release_record& r, const Mechanism& m, const Eigen::VectorXd& z) {
  r.epsilon = m.budget().epsilon;
  r.delta = m.budget().delta;
  r.noisy_statistics.assign(z.data(), z.data() + z.size());
}

// --budget EPSILON[,DELTA] (delta 0 when not given).
privpost::privacy_budget parse_budget(const std::string& text) {
  const auto v = privpost::tools::split_list(text);
  privpost::privacy_budget b;
  try {
    if (v.size() < 1 || v.size() > 2) throw std::invalid_argument("count");
    std::size_t used = 0;
    b.epsilon = std::stod(v[0], &used);
    if (used != v[0].size()) throw std::invalid_argument("trailing");
    if (v.size() == 2) {
      b.delta = std::stod(v[1], &used);
      if (used != v[1].size()) throw std::invalid_argument("trailing");
    }
  } catch (const std::exception&) {
    throw std::invalid_argument("--budget is '" + text + "'; accepted: EPSILON or EPSILON,DELTA (numbers)");
  }
  return b;  // the ranges are privacy_accountant's checks
}

std::pair<double, double> parse_bounds(const std::string& text, const char* flag) {
  const auto v = privpost::tools::split_list(text);
  if (v.size() != 2) throw std::invalid_argument(std::string(flag) + " is '" + text + "'; accepted: lo,hi");
  double lo = 0, hi = 0;
  try {
    lo = std::stod(v[0]);
    hi = std::stod(v[1]);
  } catch (const std::exception&) {
    throw std::invalid_argument(std::string(flag) + " is '" + text + "'; accepted: two numbers lo,hi");
  }
  if (!(std::isfinite(lo) && std::isfinite(hi) && lo < hi))
    throw std::invalid_argument(std::string(flag) + ": accepted finite lo < hi");
  return {lo, hi};
}

// Linear regression: [X^T X, X^T y, y^T y] (unique entries, the intercept's n c^2 public), records clamped into the
// declared box and mapped to [-1, 1] by it (x' = (x - centre) / half-width: public, so the statistics and their
// sensitivity depend on the declared box only, and the default priors of privpost-infer fit the scale); with
// --noisy-moments the budget is split evenly with a release of the fourth sample moments.
privpost::tools::release_record make_regression_release(const options& o) {
  using namespace privpost;
  if (o.covariates.empty() || o.response.empty())
    throw std::invalid_argument("linreg needs --covariates a,b,... and --response y");
  if (o.x_bounds.empty() || o.y_bounds.empty())
    throw std::invalid_argument("linreg needs declared bounds: --x-bounds lo,hi (every covariate) and --y-bounds lo,hi");
  tools::release_record r;
  r.model = "linreg";
  r.mechanism = o.mechanism;
  r.version = privpost::version_string;
  r.covariates = tools::split_list(o.covariates);
  r.response = o.response;
  r.intercept = !o.no_intercept;
  const auto xb = parse_bounds(o.x_bounds, "--x-bounds");
  r.response_bounds = parse_bounds(o.y_bounds, "--y-bounds");
  r.covariate_bounds.assign(r.covariates.size(), xb);
  r.policy = "clamp";
  r.unit_scaled = true;
  const double xc = 0.5 * (xb.first + xb.second), xh = 0.5 * (xb.second - xb.first);
  const double yc = 0.5 * (r.response_bounds.first + r.response_bounds.second),
               yh = 0.5 * (r.response_bounds.second - r.response_bounds.first);
  const int d = static_cast<int>(r.covariates.size());
  const regression_layout layout(d, r.intercept);
  std::vector<std::vector<double>> columns;
  for (const auto& c : r.covariates) columns.push_back(tools::read_csv_column(o.input, c));
  const std::vector<double> y = tools::read_csv_column(o.input, o.response);
  r.n = static_cast<double>(y.size());
  Eigen::VectorXd s = Eigen::VectorXd::Zero(layout.size());
  std::vector<Eigen::VectorXd> xs;
  for (std::size_t i = 0; i < y.size(); ++i) {
    Eigen::VectorXd x(d);
    for (int k = 0; k < d; ++k) x(k) = (std::clamp(columns[static_cast<std::size_t>(k)][i], xb.first, xb.second) - xc) / xh;
    xs.push_back(x);
    s += layout.record_statistic(x, (std::clamp(y[i], r.response_bounds.first, r.response_bounds.second) - yc) / yh);
  }
  std::vector<interval> box(static_cast<std::size_t>(d), interval(-1.0, 1.0));
  const auto [l1, l2] = layout.sensitivity(box, interval(-1.0, 1.0));
  const double share = o.noisy_moments ? 0.5 : 1.0;
  // The moments' mechanism is built first, so that both releases are charged to the ledger before any noise.
  std::optional<laplace_mechanism> moment_mechanism;
  std::optional<moment_release_layout> moments;
  if (o.noisy_moments) {
    if (!r.intercept) throw std::invalid_argument("--noisy-moments needs the intercept column");
    moments.emplace(layout);
    moment_mechanism.emplace(moments->sensitivity(box, r.n).first, o.epsilon * share);
  }
  auto release_both = [&](const auto& m) {
    return moment_mechanism ? charged_release(m, s, *moment_mechanism) : charged_release(m, s);
  };
  if (o.mechanism == "laplace") {
    const laplace_mechanism m(l1, o.epsilon * share);
    r.sensitivity = l1;
    r.noise = m.scale();
    finish(r, m, release_both(m));
  } else {
    const auto m = gaussian_mechanism::analytic(l2, o.epsilon * share, o.delta * share);
    r.sensitivity = l2;
    r.noise = m.sigma();
    r.calibration = "analytic";
    finish(r, m, release_both(m));
  }
  if (o.noisy_moments) {
    const double ml1 = moment_mechanism->l1_sensitivity();
    const laplace_mechanism& mm = *moment_mechanism;
    const Eigen::VectorXd zm = mm.release(moments->sample_moments(xs));  // OS CSPRNG; charged above
    r.noisy_moments.assign(zm.data(), zm.data() + zm.size());
    r.moment_sensitivity = ml1;
    r.moment_noise = mm.scale();
    r.moment_epsilon = o.epsilon * share;
  }
  std::cerr << "privpost-release: records mapped to [-1, 1] by the declared box; linreg statistic L1 sensitivity " << l1
            << " by intervals (the paper's bound would be "
            << regression_paper_sensitivity(2.0, 2.0, static_cast<std::size_t>(layout.columns())) << ")\n";
  return r;
}

std::vector<double> parse_numbers(const std::string& text, const char* flag) {
  std::vector<double> v;
  for (const auto& item : privpost::tools::split_list(text)) {
    char* end = nullptr;
    const double x = std::strtod(item.c_str(), &end);
    if (item.empty() || end != item.c_str() + item.size() || !std::isfinite(x))
      throw std::invalid_argument(std::string(flag) + ": '" + item + "' is not a finite number");
    v.push_back(x);
  }
  return v;
}

// DP-GLM (spec glm.md): the PASS-GLM order-2 statistics of admitted records under the analytic Gaussian
// mechanism with the exact L2 sensitivity for the declared bounds (or, with --mechanism laplace, the Laplace mechanism
// with glm_statistic::l1_sensitivity). Logistic: [y x~; t2(x~)], Lemma 3.3 (with the
// intercept's inner products); responses 0/1 or -1/+1, or text with --positive LABEL (LABEL -> +1, any other value ->
// -1). Poisson: [x; t2(x); y x~; y t2(x)] (intercept pairs of the t2 blocks left out, glm_statistic), the exact bound of
// spec Sec. 2.3 at sqrt(c^2 + R^2); counts integers >= 0, clamped to the declared --y-bound. Covariates either declared
// per column (--x-bounds: clamped into [lo, hi], mapped to [-1, 1] / sqrt(d), so ||x|| <= 1) or raw with a declared
// norm bound (--radius R: records longer than R scaled onto the ball). A covariate named column=LEVEL is the indicator
// of a text column's level (declare its range 0,1). Every record is kept: n is public.
privpost::tools::release_record make_glm_release(const options& o) {
  using namespace privpost;
  const bool poisson = o.model == "poisson-glm";
  const std::string& model = o.model;
  if (o.covariates.empty() || o.response.empty())
    throw std::invalid_argument(model + " needs --covariates a,b,... and --response y");
  if (o.x_bounds.empty() == !o.radius.has_value())
    throw std::invalid_argument(
        model +
        " needs exactly one of --x-bounds (declared ranges: lo,hi for every covariate, or lo1,hi1,lo2,hi2,... "
        "one pair per covariate) and --radius R (raw covariates, norm bound R)");
  // Gaussian unless --mechanism laplace is given (the paper's mechanism; Laplace is inferred by collapsed Gibbs).
  const bool laplace = o.mechanism_given && o.mechanism == "laplace";
  if (o.lower || o.upper || !o.y_bounds.empty() || o.noisy_moments)
    throw std::invalid_argument("--lower/--upper/--y-bounds/--noisy-moments do not apply to the " + model + " model");
  if (poisson && !o.positive.empty()) throw std::invalid_argument("--positive applies to the logistic model only");
  if (!poisson && o.y_bound) throw std::invalid_argument("--y-bound applies to the poisson-glm model only");
  if (poisson && !o.y_bound)
    throw std::invalid_argument("poisson-glm needs --y-bound R_y: the declared largest count (larger counts are clamped)");
  if (poisson && !(std::isfinite(*o.y_bound) && *o.y_bound >= 1.0))
    throw std::invalid_argument("--y-bound is " + std::to_string(*o.y_bound) + "; accepted: a finite number >= 1");
  tools::release_record r;
  r.model = model;
  r.mechanism = laplace ? "laplace" : "gaussian";
  r.version = privpost::version_string;
  r.covariates = tools::split_list(o.covariates);
  r.response = o.response;
  r.intercept = !o.no_intercept;
  r.intercept_value = 1.0;
  r.positive_label = o.positive;
  r.policy = "clamp";
  const int d = static_cast<int>(r.covariates.size());
  if (d < 1 || d > 64) throw std::invalid_argument("--covariates: " + std::to_string(d) + " names; accepted: 1 to 64");
  if (!o.x_bounds.empty()) {
    const auto v = parse_numbers(o.x_bounds, "--x-bounds");
    if (v.size() != 2 && v.size() != 2 * static_cast<std::size_t>(d))
      throw std::invalid_argument("--x-bounds has " + std::to_string(v.size()) +
                                  " numbers; accepted: 2 (one range for every covariate) or " + std::to_string(2 * d) +
                                  " (lo,hi per covariate)");
    for (int k = 0; k < d; ++k) {
      const std::size_t at = v.size() == 2 ? 0 : 2 * static_cast<std::size_t>(k);
      if (!(v[at] < v[at + 1]))
        throw std::invalid_argument("--x-bounds: covariate '" + r.covariates[static_cast<std::size_t>(k)] + "' has lo " +
                                    std::to_string(v[at]) + " >= hi " + std::to_string(v[at + 1]) + "; accepted: lo < hi");
      r.covariate_bounds.emplace_back(v[at], v[at + 1]);
    }
    r.glm_scale = "unit_ball";
    r.radius = 1.0;
  } else {
    if (!(std::isfinite(*o.radius) && *o.radius > 0))
      throw std::invalid_argument("--radius is " + std::to_string(*o.radius) + "; accepted: a finite number > 0");
    r.glm_scale = "raw";
    r.radius = *o.radius;
  }
  const std::optional<double> c = r.intercept ? std::optional<double>(r.intercept_value) : std::nullopt;
  if (poisson) r.y_bound = *o.y_bound;
  const auto statistic = poisson ? glm_statistic::poisson(d, r.radius, r.y_bound, c) : glm_statistic::logistic(d, r.radius, c);
  std::vector<std::vector<double>> columns;
  for (const auto& name : r.covariates) {
    // "column=LEVEL": the indicator of a text column's level (1 where the cell is LEVEL, else 0).
    const auto eq = name.find('=');
    if (eq == std::string::npos) {
      columns.push_back(tools::read_csv_column(o.input, name));
      continue;
    }
    const std::string column = name.substr(0, eq), level = name.substr(eq + 1);
    if (column.empty() || level.empty())
      throw std::invalid_argument("--covariates: '" + name + "'; accepted: a column name, or column=LEVEL (an indicator)");
    std::vector<double> indicator;
    for (const auto& cell : tools::read_csv_cells(o.input, column)) indicator.push_back(cell.second == level ? 1.0 : 0.0);
    columns.push_back(std::move(indicator));
  }
  std::vector<double> y;
  long clamped_y = 0;
  for (const auto& [line, cell] : tools::read_csv_cells(o.input, o.response)) {
    if (!poisson && !o.positive.empty()) {
      y.push_back(cell == o.positive ? 1.0 : -1.0);
      continue;
    }
    const bool number = tools::is_decimal_number(cell);
    const double v = number ? std::strtod(cell.c_str(), nullptr) : 0.0;
    if (poisson) {
      if (!number || !(std::isfinite(v) && v >= 0.0 && v == std::floor(v)))
        throw std::invalid_argument("CSV line " + std::to_string(line) + ": response '" + tools::echo(cell) +
                                    "'; accepted: a count (an integer >= 0)");
      if (v > r.y_bound) ++clamped_y;
    } else if (!number || !(v == 0.0 || v == 1.0 || v == -1.0)) {
      throw std::invalid_argument("CSV line " + std::to_string(line) + ": response '" + tools::echo(cell) +
                                  "'; accepted: 0, 1, -1 (or text labels with --positive LABEL)");
    }
    y.push_back(v);
  }
  r.n = static_cast<double>(y.size());
  Eigen::VectorXd s = Eigen::VectorXd::Zero(statistic.size());
  Eigen::VectorXd x(d);
  long clamped = 0, clipped = 0;
  for (std::size_t i = 0; i < y.size(); ++i) {
    for (int k = 0; k < d; ++k) {
      const double v = columns[static_cast<std::size_t>(k)][i];
      if (r.glm_scale == "unit_ball") {
        const auto& b = r.covariate_bounds[static_cast<std::size_t>(k)];
        if (v < b.first || v > b.second) ++clamped;
        x(k) = scale_to_declared_range(v, b.first, b.second, d);
      } else {
        x(k) = v;
      }
    }
    if (x.norm() > r.radius) ++clipped;
    statistic.add_record(x, y[i], s);  // admission: scaled onto the ball, counts clamped to R_y
  }
  r.statistic_names = statistic.names(r.covariates);  // the data's column names instead of x1..xd
  if (laplace) {
    const laplace_mechanism m(statistic.l1_sensitivity(), o.epsilon);
    r.sensitivity = statistic.l1_sensitivity();
    r.noise = m.scale();
    r.sensitivity_rule = "L1: min(sqrt(D) x L2 bound, sum of the blocks' largest changes) (glm_statistic::l1_sensitivity)";
    finish(r, m, charged_release(m, s));
  } else {
    const auto m = gaussian_mechanism::analytic(statistic.l2_sensitivity(), o.epsilon, o.delta);
    r.sensitivity = statistic.l2_sensitivity();
    r.noise = m.sigma();
    r.calibration = "analytic";
    if (poisson)
      r.sensitivity_rule = r.intercept ? "exact Poisson bound (spec glm.md Sec. 2.3) at sqrt(c^2 + R^2), equal noise"
                                       : "exact Poisson bound (spec glm.md Sec. 2.3), equal noise";
    else
      r.sensitivity_rule = r.intercept ? "Lemma 3.3 (exact), with the intercept column's inner products" : "Lemma 3.3 (exact)";
    finish(r, m, charged_release(m, s));
  }
  if (r.glm_scale == "unit_ball")
    std::cerr << "privpost-release: covariates mapped to [-1, 1] / sqrt(" << d << ") by their declared ranges; " << clamped
              << " value(s) clamped into a range\n";
  else
    std::cerr << "privpost-release: " << clipped << " record(s) longer than the radius " << r.radius << " scaled onto the ball\n";
  if (poisson)
    std::cerr << "privpost-release: " << clamped_y << " count(s) clamped to the declared y-bound " << r.y_bound << "\n";
  std::cerr << "privpost-release: " << model << " statistic " << (laplace ? "L1" : "L2") << " sensitivity " << r.sensitivity
            << " (" << r.sensitivity_rule << ")\n";
  return r;
}

// Pairwise tables (spec cgm.md Sec. 1.3): every declared edge's contingency table of discrete columns. The
// graph and every column's levels are declared (public): a cell outside its column's levels is an error naming the line
// (nothing is released), an empty cell too unless --missing-level names the level it stands for and the column
// declares that level. The L1 sensitivity is
// 2|E| under replace-one neighbours (the library's) and |E| under add-remove (the dissertation's, --neighbours
// add-remove: the release is then 2 epsilon-DP under replacement, and the record says so).
privpost::tools::release_record make_tables_release(const options& o) {
  using namespace privpost;
  if (o.columns.empty() || o.edges.empty())
    throw std::invalid_argument("pairwise-tables needs --columns a,b,... and --edges a:b,b:c,... (the declared graph)");
  tools::release_record r;
  r.model = o.model;
  r.mechanism = o.mechanism;
  r.version = privpost::version_string;
  r.nodes = tools::split_list(o.columns);
  for (std::size_t v = 0; v < r.nodes.size(); ++v)
    if (std::find(r.nodes.begin() + static_cast<std::ptrdiff_t>(v) + 1, r.nodes.end(), r.nodes[v]) != r.nodes.end())
      throw std::invalid_argument("--columns: '" + r.nodes[v] + "' is listed twice");
  if (r.nodes.size() > tools::max_table_nodes)
    throw std::invalid_argument("--columns: " + std::to_string(r.nodes.size()) + " columns; accepted: at most " +
                                std::to_string(tools::max_table_nodes));
  r.missing_level = o.missing_level;
  const std::vector<std::string> shared = tools::split_list(o.levels);
  r.levels.assign(r.nodes.size(), shared);
  auto node_index = [&](const std::string& name, const char* flag) {
    const auto at = std::find(r.nodes.begin(), r.nodes.end(), name);
    if (at == r.nodes.end()) throw std::invalid_argument(std::string(flag) + ": '" + name + "' is not one of --columns");
    return static_cast<int>(at - r.nodes.begin());
  };
  for (const std::string& spec : o.levels_of) {  // COLUMN=a/b/c
    const auto eq = spec.find('=');
    if (eq == std::string::npos) throw std::invalid_argument("--levels-of '" + spec + "'; accepted: COLUMN=level1/level2/...");
    std::vector<std::string> own;
    std::stringstream in(spec.substr(eq + 1));
    for (std::string level; std::getline(in, level, '/');)
      if (!level.empty()) own.push_back(level);
    r.levels[static_cast<std::size_t>(node_index(spec.substr(0, eq), "--levels-of"))] = own;
  }
  std::vector<int> cardinalities;
  for (std::size_t v = 0; v < r.nodes.size(); ++v) {
    const auto& l = r.levels[v];
    if (l.size() < 2 || l.size() > tools::max_table_levels)
      throw std::invalid_argument("column '" + r.nodes[v] + "' has " + std::to_string(l.size()) +
                                  " declared level(s); accepted: 2 to " + std::to_string(tools::max_table_levels) +
                                  " (--levels a,b,... or --levels-of " + r.nodes[v] + "=a/b)");
    for (std::size_t a = 0; a < l.size(); ++a)
      if (std::find(l.begin() + static_cast<std::ptrdiff_t>(a) + 1, l.end(), l[a]) != l.end())
        throw std::invalid_argument("column '" + r.nodes[v] + "': level '" + l[a] + "' is declared twice");
    cardinalities.push_back(static_cast<int>(l.size()));
  }
  for (const std::string& e : tools::split_list(o.edges)) {
    const auto colon = e.find(':');
    if (colon == std::string::npos) throw std::invalid_argument("--edges '" + e + "'; accepted: a:b (two column names)");
    r.edges.emplace_back(node_index(e.substr(0, colon), "--edges"), node_index(e.substr(colon + 1), "--edges"));
  }
  const pairwise_graph graph(cardinalities, r.edges);  // validates: no self loops, no duplicate edges
  // The record stores each edge as the graph lays out its table: (u, v) with u < v, rows u's levels (cell (a, c) at
  // a K_v + c), whatever order --edges named the two columns in.
  for (int e = 0; e < graph.num_edges(); ++e) r.edges[static_cast<std::size_t>(e)] = graph.edge(e);
  for (int v = 0; v < graph.num_nodes(); ++v)
    if (graph.incident(v).empty())
      throw std::invalid_argument("column '" + r.nodes[static_cast<std::size_t>(v)] +
                                  "' is in no declared edge: nothing about it would be released (join it by an edge or "
                                  "leave it out of --columns)");
  // Records: one row per CSV data row, each cell mapped to its column's state.
  Eigen::MatrixXi records;
  for (std::size_t v = 0; v < r.nodes.size(); ++v) {
    const auto cells = tools::read_csv_cells(o.input, r.nodes[v]);
    if (v == 0) records.resize(static_cast<Eigen::Index>(cells.size()), static_cast<Eigen::Index>(r.nodes.size()));
    const auto& l = r.levels[v];
    for (std::size_t i = 0; i < cells.size(); ++i) {
      const std::string& cell = cells[i].second.empty() ? r.missing_level : cells[i].second;
      const auto at = std::find(l.begin(), l.end(), cell);
      if (cell.empty() || at == l.end())
        throw std::invalid_argument(
            "CSV line " + std::to_string(cells[i].first) + ": " +
            (cells[i].second.empty()
                 ? (r.missing_level.empty()
                        ? std::string("an empty cell (declare the level it stands for with --missing-level)")
                        : "an empty cell, and --missing-level '" + r.missing_level + "' is not a declared level of this column")
                 : "'" + tools::echo(cells[i].second) + "' is not a declared level") +
            " in column '" + r.nodes[v] + "'; nothing was released");
      records(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(v)) = static_cast<int>(at - l.begin());
    }
  }
  r.n = static_cast<double>(records.rows());
  const Eigen::VectorXd s = edge_tables(graph, records);
  if (o.neighbours != "replace" && o.neighbours != "add-remove")
    throw std::invalid_argument("--neighbours '" + o.neighbours + "'; accepted: replace, add-remove");
  const auto relation = o.neighbours == "replace" ? neighbour_relation::replace_one : neighbour_relation::add_remove;
  r.neighbours = o.neighbours == "replace" ? "replace_one" : "add_remove";
  r.policy = "none";
  if (o.mechanism == "laplace") {
    const laplace_mechanism m(contingency_l1_sensitivity(graph, relation), o.epsilon);
    r.sensitivity = m.l1_sensitivity();
    r.noise = m.scale();
    finish(r, m, relation == neighbour_relation::add_remove ? charged_release_add_remove(m, s) : charged_release(m, s));
  } else {
    const auto m = gaussian_mechanism::analytic(contingency_l2_sensitivity(graph, relation), o.epsilon, o.delta);
    r.sensitivity = contingency_l2_sensitivity(graph, relation);
    r.noise = m.sigma();
    r.calibration = "analytic";
    finish(r, m, relation == neighbour_relation::add_remove ? charged_release_add_remove(m, s) : charged_release(m, s));
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

// --mechanism discrete-laplace|discrete-gaussian: the statistic on the lattice gamma Z^d, exact integer
// noise from the OS CSPRNG. Counts (binomial, multinomial, poisson) at gamma = 1 are on the lattice (exact); any other
// gamma, and the real-valued statistics (which need --granularity), are rounded to the nearest lattice point, and the
// lattice sensitivity grows by the rounding allowance (mechanisms/lattice.hpp).
void release_on_lattice(const options& o, privpost::tools::release_record& r, const Eigen::VectorXd& s, double l1, double l2) {
  using namespace privpost;
  const bool counts = o.model == "binomial" || o.model == "multinomial" || o.model == "poisson";
  if (!counts && !o.granularity)
    throw std::invalid_argument("--mechanism " + o.mechanism + " with the " + o.model +
                                " model: its statistics are real numbers; declare the lattice with --granularity G (each "
                                "statistic is rounded to a multiple of G, e.g. 0.01)");
  const double gamma = o.granularity.value_or(1.0);
  lattice lat{gamma, lattice_statistic::rounded, s.size()};
  if (counts && gamma == 1.0) lat.statistics = lattice_statistic::exact;
  r.granularity = gamma;
  r.lattice = lat.statistics == lattice_statistic::exact ? "exact" : "rounded";
  r.lattice_dimension = static_cast<int>(s.size());
  if (o.mechanism == "discrete-laplace") {
    const discrete_laplace_mechanism m(l1, o.epsilon, lat);
    r.sensitivity = l1;
    r.noise = m.scale();
    r.lattice_sensitivity = m.lattice_sensitivity();
    finish(r, m, charged_release(m, s));
  } else {
    const discrete_gaussian_mechanism m(l2, o.epsilon, o.delta, lat);
    r.sensitivity = l2;
    r.noise = m.sigma();
    r.calibration = "zcdp";
    r.lattice_sensitivity = m.lattice_sensitivity();
    finish(r, m, charged_release(m, s));
  }
}

privpost::tools::release_record make_release(const options& o) {
  using namespace privpost;
  if (tools::is_discrete(o.mechanism) && !tools::is_family_model(o.model))
    throw std::invalid_argument("--mechanism " + o.mechanism +
                                " serves the family models (binomial, multinomial, poisson, "
                                "exponential, normal-known-var, normal); the " +
                                o.model +
                                " model releases with laplace "
                                "or gaussian");
  if (o.granularity && !tools::is_discrete(o.mechanism))
    throw std::invalid_argument("--granularity is for --mechanism discrete-laplace or discrete-gaussian");
  if (o.model == "linreg") return make_regression_release(o);
  if (o.model == "logistic" || o.model == "poisson-glm") return make_glm_release(o);
  if (o.model == "pairwise-tables") return make_tables_release(o);
  // What privpost-infer cannot analyse is refused here, before the data are read or any budget is charged.
  if (o.model == "multinomial" && !(o.categories >= 2 && o.categories <= tools::max_categories))
    throw std::invalid_argument("--categories is " + std::to_string(o.categories) + "; accepted: an integer from 2 to " +
                                std::to_string(tools::max_categories) + " (the multinomial models privpost-infer analyses)");
  const std::vector<double> x = tools::read_csv_column(o.input, o.column);
  tools::release_record r;
  r.model = o.model;
  r.mechanism = o.mechanism;
  r.n = static_cast<double>(x.size());
  r.version = privpost::version_string;
  Eigen::VectorXd s;
  double l1 = 0, l2 = 0;
  if (o.model == "binomial" || o.model == "multinomial") {
    if (o.lower || o.upper) throw std::invalid_argument("--lower/--upper: the " + o.model + " model has fixed bounds");
    if (o.model == "binomial") {
      s = Eigen::VectorXd::Zero(1);
      for (std::size_t i = 0; i < x.size(); ++i) {
        if (x[i] != 0.0 && x[i] != 1.0)
          throw std::invalid_argument("record " + std::to_string(i + 1) + " is " + std::to_string(x[i]) + "; accepted: 0 or 1");
        s(0) += x[i];
      }
      l1 = binomial_family::l1_sensitivity;
      l2 = binomial_family::l2_sensitivity;
    } else {
      r.categories = o.categories;
      s = Eigen::VectorXd::Zero(o.categories - 1);
      for (std::size_t i = 0; i < x.size(); ++i) {
        if (!(x[i] >= 0 && x[i] < o.categories && std::floor(x[i]) == x[i]))
          throw std::invalid_argument("record " + std::to_string(i + 1) + " is " + std::to_string(x[i]) +
                                      "; accepted: a category 0.." + std::to_string(o.categories - 1));
        if (x[i] < o.categories - 1) s(static_cast<Eigen::Index>(x[i])) += 1.0;
      }
      l1 = 2.0;
      l2 = std::sqrt(2.0);
    }
    r.policy = "none";
  } else {
    if (!o.lower || !o.upper)
      throw std::invalid_argument("the " + o.model + " model is unbounded: declare record bounds with --lower and --upper");
    r.has_bounds = true;
    r.lower = *o.lower;
    r.upper = *o.upper;
    // Records outside the bounds are dropped: that is what the truncated models of privpost-infer assume (Sec. 4.3).
    r.policy = "drop";
    const auto policy = out_of_bounds::drop;
    std::vector<std::array<double, 1>> records(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) records[i][0] = x[i];
    auto compute = [&](auto family_tag) {
      using F = decltype(family_tag);
      const bounded_statistic<1, record_statistic<F>> stat({}, {interval(*o.lower, *o.upper)}, policy);
      s = stat.compute(records).statistic;
      l1 = stat.l1_sensitivity();
      l2 = stat.l2_sensitivity();
    };
    if (o.model == "poisson" && tools::is_discrete(o.mechanism)) {
      // counts on the lattice: a record that is not a whole number is an input error, named here (the lattice
      // mechanism would refuse the statistic without saying which record)
      for (std::size_t i = 0; i < x.size(); ++i)
        if (std::isfinite(x[i]) && std::floor(x[i]) != x[i])
          throw std::invalid_argument("record " + std::to_string(i + 1) + " is " + std::to_string(x[i]) +
                                      "; accepted by the poisson model with a lattice mechanism: a whole number");
    }
    if (o.model == "normal") {
      compute(normal_family{});
    } else {
      compute(exponential_rate_family{});  // t(x) = x for exponential, poisson and normal-known-var alike
    }
  }
  if (o.mechanism == "laplace") {
    const laplace_mechanism m(l1, o.epsilon);
    r.sensitivity = l1;
    r.noise = m.scale();
    finish(r, m, charged_release(m, s));
  } else if (o.mechanism == "gaussian") {
    const auto m = gaussian_mechanism::analytic(l2, o.epsilon, o.delta);
    r.sensitivity = l2;
    r.noise = m.sigma();
    r.calibration = "analytic";
    finish(r, m, charged_release(m, s));
  } else {
    release_on_lattice(o, r, s, l1, l2);
  }
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"privpost-release: release a model's sufficient statistics under differential privacy"};
  options o;
  app.add_option("--input", o.input, "CSV file with a header row")->required();
  app.add_option("--column", o.column, "the column holding one value per record (all models but linreg)");
  app.add_option("--model", o.model,
                 "binomial|multinomial|poisson|exponential|normal-known-var|normal|linreg|logistic|poisson-glm|"
                 "pairwise-tables")
      ->required()
      ->check(CLI::IsMember({"binomial", "multinomial", "poisson", "exponential", "normal-known-var", "normal", "linreg",
                             "logistic", "poisson-glm", "pairwise-tables"}));
  app.add_option("--covariates", o.covariates,
                 "linreg, logistic, poisson-glm: comma list of covariate columns (logistic, poisson-glm: column=LEVEL is "
                 "the indicator of a text column's level)");
  app.add_option("--response", o.response,
                 "linreg, logistic, poisson-glm: the response column (logistic: 0/1, -1/+1, or see --positive; poisson-glm: "
                 "counts)");
  app.add_option(
      "--x-bounds", o.x_bounds,
      "linreg: lo,hi declared for every covariate (records are clamped into it); logistic, poisson-glm: lo,hi for every "
      "covariate or lo1,hi1,lo2,hi2,... one declared range per covariate (clamped, mapped to [-1, 1] / sqrt(d))");
  app.add_option("--radius", o.radius,
                 "logistic, poisson-glm: declared norm bound R of the raw covariates (instead of --x-bounds; longer records "
                 "are scaled onto the ball)");
  app.add_option("--y-bound", o.y_bound, "poisson-glm: declared largest count R_y (larger counts are clamped to it)");
  app.add_option("--positive", o.positive, "logistic: the response label coded +1 (every other value is -1)");
  app.add_option("--y-bounds", o.y_bounds, "linreg: lo,hi declared for the response (records are clamped into it)");
  app.add_flag("--no-intercept", o.no_intercept, "linreg, logistic, poisson-glm: no intercept column");
  app.add_flag("--noisy-moments", o.noisy_moments,
               "linreg: also release the covariates' fourth sample moments (Gibbs-SS-Noisy), splitting epsilon evenly");
  app.add_option("--epsilon", o.epsilon, "privacy budget epsilon")->required();
  auto* mechanism_option =
      app.add_option("--mechanism", o.mechanism,
                     "laplace|gaussian (analytic calibration)|discrete-laplace|discrete-gaussian (exact lattice noise: the "
                     "choice for real releases, family models); logistic, poisson-glm: gaussian by default, laplace when given")
          ->check(CLI::IsMember({"laplace", "gaussian", "discrete-laplace", "discrete-gaussian"}));
  app.add_option("--granularity", o.granularity,
                 "discrete mechanisms: the lattice spacing gamma (default 1 for the count models; required for the "
                 "real-valued ones); the release is gamma x whole numbers")
      ->check(CLI::PositiveNumber);
  app.add_option("--delta", o.delta, "delta of the Gaussian mechanism");
  app.add_option("--lower", o.lower, "declared lower bound of a record (unbounded models)");
  app.add_option("--upper", o.upper, "declared upper bound of a record (unbounded models)");
  app.add_option("--categories", o.categories, "K for the multinomial model (records are categories 0..K-1)");
  app.add_option("--columns", o.columns, "pairwise-tables: comma list of the discrete columns (the graph's nodes)");
  app.add_option("--levels", o.levels, "pairwise-tables: comma list of the declared levels of every column (in state order)");
  app.add_option("--levels-of", o.levels_of,
                 "pairwise-tables: COLUMN=a/b/c, one column's declared levels (overrides --levels; repeat per column)");
  app.add_option("--edges", o.edges, "pairwise-tables: comma list of the declared graph's edges a:b (column names)");
  app.add_option("--missing-level", o.missing_level, "pairwise-tables: the declared level an empty cell stands for");
  app.add_option("--neighbours", o.neighbours,
                 "pairwise-tables: replace (default: sensitivity 2|E|) or add-remove (|E|, the dissertation's; 2 epsilon-DP "
                 "under replacement)")
      ->check(CLI::IsMember({"replace", "add-remove"}));
  app.add_option("--output", o.output, "write the release record here (default: standard output)");
  app.add_option("--ledger", o.ledger,
                 "the data set's privacy budget ledger (JSON, created when absent): the release is charged to it before any "
                 "noise is drawn and refused when it would exceed the total; concurrent releases are serialised by a lock");
  app.add_option("--budget", o.budget, "with --ledger: the data set's total budget EPSILON[,DELTA] (needed to create a ledger)");
  CLI11_PARSE(app, argc, argv);
  o.mechanism_given = mechanism_option->count() > 0;
  try {
    if (o.model != "linreg" && o.model != "logistic" && o.model != "poisson-glm" && o.model != "pairwise-tables" &&
        o.column.empty())
      throw std::invalid_argument("--column is required for the " + o.model + " model");
    // The output is opened first: an unwritable --output is refused before anything is charged or drawn.
    privpost::tools::output_file output(o.output);
    std::optional<privpost::tools::ledger_file> ledger;
    if (!o.budget.empty() && o.ledger.empty()) throw std::invalid_argument("--budget needs --ledger FILE");
    if (!o.ledger.empty()) {
      std::optional<privpost::privacy_budget> total;
      if (!o.budget.empty()) total = parse_budget(o.budget);
      ledger.emplace(o.ledger, total);
      active_ledger = &*ledger;
      ledger_label = "privpost-release --model " + o.model + (o.column.empty() ? "" : " --column " + o.column) + " --input " +
                     o.input + (o.output.empty() ? "" : " --output " + o.output);
    }
    const std::size_t entries_before = ledger ? ledger->accountant().entries().size() : 0;
    auto record = make_release(o);
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
    const std::string text = privpost::tools::to_json(record).dump(2) + "\n";
    // The order is: charge (above, before any noise), then write the record whole. A record lost at this point keeps
    // its charge (the noise was drawn; refunding it would trust that nothing leaked): say so loudly and exit 3.
    try {
      output.commit(text);
    } catch (const std::exception& e) {
      const std::string where = o.output.empty() ? std::string("standard output") : "'" + o.output + "'";
      if (ledger && ledger->accountant().entries().size() > entries_before) {
        const auto& entries = ledger->accountant().entries();
        std::cerr << "privpost-release: ERROR: the release record could not be written to " << where << " (" << e.what()
                  << "). The release WAS CHARGED to the ledger '" << o.ledger << "':";
        for (std::size_t i = entries_before; i < entries.size(); ++i)
          std::cerr << " entry " << i + 1 << " ('" << entries[i].label << "', epsilon " << entries[i].budget.epsilon << ", delta "
                    << entries[i].budget.delta << ")";
        std::cerr << ". The noisy statistics are lost and that budget stays spent.\n";
        return 3;
      }
      std::cerr << "privpost-release: error: the release record could not be written to " << where << " (" << e.what()
                << "); nothing was released\n";
      return 1;
    }
    std::cerr << "privpost-release: released " << record.noisy_statistics.size() << " statistic(s) of n = " << record.n
              << " records with " << record.mechanism << " noise " << record.noise << " (sensitivity " << record.sensitivity
              << ")\n";
    return 0;
  } catch (const privpost::budget_exceeded& e) {
    std::cerr << "privpost-release: error: over the privacy budget of the ledger '" << o.ledger << "': " << e.what()
              << "; nothing was released\n";
    return 1;
  } catch (const std::exception& e) {
    std::cerr << "privpost-release: error: "
              << privpost::tools::for_the_user(e,
                                               "the declared bounds (--lower/--upper, --x-bounds, --y-bounds, --radius, "
                                               "--y-bound), --epsilon/--delta and the records of --input")
              << '\n';
    return 1;
  }
}
