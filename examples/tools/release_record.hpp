// The JSON release record shared by privpost-release (writes it) and privpost-infer (reads it); CSV reading is csv.hpp.
// A release record holds only public information: the model, n, the mechanism and its parameters, the declared bounds
// and policy, and the noisy statistics.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include <privpost/core/concepts.hpp>
#include <privpost/core/interval.hpp>
#include <privpost/families/glm/glm_statistic.hpp>
#include <privpost/families/graphical/contingency_tables.hpp>
#include <privpost/families/graphical/pairwise_graph.hpp>
#include <privpost/families/regression/regression_layout.hpp>
#include <privpost/families/truncation.hpp>
#include <privpost/mechanisms/linear_queries.hpp>
#include <privpost/mechanisms/reachable.hpp>
#include <privpost/mechanisms/ssp.hpp>

#include "bounded_family_tool.hpp"
#include "csv.hpp"
#include "glm_tool.hpp"
#include "json_fields.hpp"
#include "models.hpp"
#include "truncated_family_tool.hpp"

namespace privpost::tools {

/// The family models' part of a record (binomial, multinomial and the truncated families).
struct family_release {
  int categories = 0;  ///< K, multinomial only
  bool has_bounds = false;
  double lower = 0, upper = 0;  ///< declared record bounds (the truncated families)
  /// The CSV column the records were read from (privpost-synthesize names its column so; records written before it was
  /// recorded have none, and their synthetic column is called x).
  std::string column;
};

/// What linreg and the GLMs share: the covariates and the response they were released from.
struct covariate_block {
  std::vector<std::string> covariates;  ///< covariate column names
  std::string response;
  bool intercept = true;
  std::vector<std::pair<double, double>> covariate_bounds;
};

/// linreg's part of a record ("regression" in the JSON).
struct regression_release : covariate_block {
  std::pair<double, double> response_bounds{0, 0};
  /// true: every record was mapped to [-1, 1] by the declared box (x' = (x - centre) / half-width) before the
  /// statistics were computed, so the noisy statistics are on that scale (what privpost-release writes).
  bool unit_scaled = false;
  std::vector<double> noisy_moments;  ///< Gibbs-SS-Noisy: released normalised fourth moments (may be empty)
  double moment_sensitivity = 0, moment_noise = 0, moment_epsilon = 0;
};

/// The GLMs' part of a record (logistic, poisson-glm; "glm" in the JSON).
struct glm_release : covariate_block {
  double intercept_value = 1.0;  ///< the public constant c of the intercept column (when intercept)
  double radius = 1.0;           ///< R: the norm bound of the (scaled) covariates
  /// "unit_ball": each covariate mapped from its declared range [lo, hi] to [-1, 1] / sqrt(d) (so ||x|| <= 1 = R);
  /// "raw": covariates as recorded, records longer than R scaled onto the ball.
  std::string glm_scale;
  std::string positive_label;                ///< the response label mapped to +1 (empty: numeric 0/1 or -1/+1)
  std::vector<std::string> statistic_names;  ///< glm_statistic::names(covariates), in the order of noisy_statistics
  std::string sensitivity_rule;              ///< which result gave the sensitivity
  double y_bound = 0;                        ///< GLMs of counts: R_y, the declared largest count (larger ones clamped)
};

/// What pairwise-tables and marginals share: the table's declared columns and their levels.
struct table_columns_block {
  std::vector<std::string> nodes;                ///< one node (column) per declared column, by column name
  std::vector<std::vector<std::string>> levels;  ///< each column's declared levels, in state order
  std::string missing_level;                     ///< the level empty cells were read as (empty: none allowed)
};

/// pairwise-tables' part of a record ("graph" in the JSON): noisy_statistics are its edge tables in table_layout order.
struct tables_release : table_columns_block {
  std::vector<std::pair<int, int>> edges;  ///< node indices, as declared
  std::string neighbours = "replace_one";  ///< replace_one (the library's) or add_remove (the dissertation's)
};

/// marginals' part of a record: each released table lists its columns' indices.
struct marginals_release : table_columns_block {
  std::vector<std::vector<std::size_t>> marginal_tables;  ///< increasing column indices per table, in release order
};

/// A record's model-specific part: one schema per model kind (kind_of), each read and written by its own
/// read_payload/payload_json below.
using release_payload = std::variant<family_release, regression_release, glm_release, tables_release, marginals_release>;

/// The payload type a model kind's records carry.
inline release_payload payload_for(model_kind kind) {
  switch (kind) {
    case model_kind::regression:
      return regression_release{};
    case model_kind::glm:
      return glm_release{};
    case model_kind::tables:
      return tables_release{};
    case model_kind::marginals:
      return marginals_release{};
    case model_kind::bounded_family:
    case model_kind::unbounded_family:
      return family_release{};
  }
  throw std::logic_error("payload_for: a model kind without a record part");  // every kind is a case (-Wswitch)
}

/// A release record: the header every release has (model, n, mechanism, statistics, identity, ledger) and the model's
/// own part (payload). The accessors family(), regression(), glm(), tables() and marginals() return the payload of
/// that kind and throw std::logic_error for a record of another kind (a tool bug, never a user's input).
struct release_record {
  std::string model;      ///< a model of the tools' table (models.hpp)
  double n = 0;           ///< number of records (public)
  std::string mechanism;  ///< laplace|gaussian|discrete-laplace|discrete-gaussian
  double epsilon = 0, delta = 0;
  double sensitivity = 0;   ///< L1 (Laplace) or L2 (Gaussian)
  double noise = 0;         ///< Laplace scale b, or Gaussian sigma (discrete: the continuous view's, gamma t or gamma sigma)
  std::string calibration;  ///< Gaussian: analytic; discrete Gaussian: zcdp
  // discrete-laplace and discrete-gaussian: the lattice gamma Z^d the release lies on
  double granularity = 0;          ///< gamma
  std::string lattice;             ///< exact (statistics on the lattice) | rounded (to the nearest lattice point)
  int lattice_dimension = 0;       ///< d, the rounding allowance's dimension
  double lattice_sensitivity = 0;  ///< the lattice point's sensitivity in lattice units
  std::string policy;              ///< drop|clamp|none
  std::vector<double> noisy_statistics;
  std::string version;
  /// The release's identity (new_release_id), drawn by privpost-release; empty in older records and other tools'.
  std::string release_id;
  // privpost-release --ledger: the ledger this release was charged to, and its state after the charge
  std::string ledger_file;         ///< the ledger's path as given (empty: no ledger)
  std::string ledger_label;        ///< the entry's label
  privacy_budget ledger_spent{};   ///< the data set's composed spend after this release
  privacy_budget ledger_total{};   ///< the data set's total budget
  std::size_t ledger_entries = 0;  ///< entries in the ledger after this release
  release_payload payload;         ///< the model's own part; its alternative follows kind_of(model)

  family_release& family() { return part<family_release>(); }
  const family_release& family() const { return part<family_release>(); }
  regression_release& regression() { return part<regression_release>(); }
  const regression_release& regression() const { return part<regression_release>(); }
  glm_release& glm() { return part<glm_release>(); }
  const glm_release& glm() const { return part<glm_release>(); }
  tables_release& tables() { return part<tables_release>(); }
  const tables_release& tables() const { return part<tables_release>(); }
  marginals_release& marginals() { return part<marginals_release>(); }
  const marginals_release& marginals() const { return part<marginals_release>(); }

  /// The part the covariate models (linreg and the GLMs) share.
  const covariate_block& covariate_part() const {
    if (const auto* g = std::get_if<glm_release>(&payload)) return *g;
    return part<regression_release>();
  }

  /// The part the table models (pairwise-tables and marginals) share.
  const table_columns_block& table_part() const {
    if (const auto* g = std::get_if<tables_release>(&payload)) return *g;
    return part<marginals_release>();
  }

  /// A record of `model` with the empty payload of its kind.
  static release_record of_model(const std::string& name) {
    release_record r;
    r.model = name;
    r.payload = payload_for(kind_of(name));
    return r;
  }

 private:
  template <class P>
  P& part() {
    if (auto* p = std::get_if<P>(&payload)) return *p;
    throw std::logic_error("release record of the " + model + " model has no " + payload_name<P>() + " part");
  }
  template <class P>
  const P& part() const {
    if (const auto* p = std::get_if<P>(&payload)) return *p;
    throw std::logic_error("release record of the " + model + " model has no " + payload_name<P>() + " part");
  }
  template <class P>
  static const char* payload_name() {
    if constexpr (std::is_same_v<P, family_release>)
      return "family";
    else if constexpr (std::is_same_v<P, regression_release>)
      return "regression";
    else if constexpr (std::is_same_v<P, glm_release>)
      return "glm";
    else if constexpr (std::is_same_v<P, tables_release>)
      return "graph";
    else
      return "marginals";
  }
};

/// The lattice mechanisms (mechanisms/discrete_laplace.hpp, discrete_gaussian.hpp).
inline bool is_discrete(const std::string& mechanism) {
  return mechanism == "discrete-laplace" || mechanism == "discrete-gaussian";
}

// Each payload's fields in the record's JSON object j (the header is written by to_json).
inline void payload_json(nlohmann::json& j, const release_record& r, const family_release& f) {
  if (takes_categories(r.model)) j["categories"] = f.categories;
  if (!f.column.empty()) j["column"] = f.column;
  if (f.has_bounds) j["bounds"] = {{"lower", f.lower}, {"upper", f.upper}};
}

inline nlohmann::json covariate_bounds_json(const covariate_block& c) {
  nlohmann::json xb = nlohmann::json::array();
  for (const auto& b : c.covariate_bounds) xb.push_back({b.first, b.second});
  return xb;
}

inline void payload_json(nlohmann::json& j, const release_record&, const regression_release& g) {
  j["regression"] = {{"covariates", g.covariates},
                     {"response", g.response},
                     {"intercept", g.intercept},
                     {"covariate_bounds", covariate_bounds_json(g)},
                     {"response_bounds", {g.response_bounds.first, g.response_bounds.second}},
                     {"scale", g.unit_scaled ? "unit_box" : "raw"}};
  if (!g.noisy_moments.empty()) {
    j["regression"]["noisy_moments"] = g.noisy_moments;
    j["regression"]["moments_mechanism"] = {
        {"name", "laplace"}, {"epsilon", g.moment_epsilon}, {"sensitivity", g.moment_sensitivity}, {"scale", g.moment_noise}};
    j["regression"]["budget_split"] = "even: half of epsilon on the statistics, half on the fourth sample moments";
  }
}

inline void payload_json(nlohmann::json& j, const release_record& r, const glm_release& g) {
  j["glm"] = {{"covariates", g.covariates},
              {"response", g.response},
              {"intercept", g.intercept ? nlohmann::json(g.intercept_value) : nlohmann::json(nullptr)},
              {"radius", g.radius},
              {"scale", g.glm_scale},
              {"covariate_bounds", covariate_bounds_json(g)},
              {"statistic_names", g.statistic_names},
              {"sensitivity_rule", g.sensitivity_rule}};
  if (!g.positive_label.empty()) j["glm"]["positive_label"] = g.positive_label;
  if (glm_counts(r.model)) j["glm"]["y_bound"] = g.y_bound;
}

inline void payload_json(nlohmann::json& j, const release_record&, const tables_release& g) {
  nlohmann::json edges = nlohmann::json::array();
  for (const auto& e : g.edges) edges.push_back({e.first, e.second});
  j["graph"] = {{"nodes", g.nodes},
                {"levels", g.levels},
                {"edges", edges},
                {"neighbours", g.neighbours},
                {"released", "edge tables, cell (a, c) of edge (u, v) at a * K_v + c"}};
  if (!g.missing_level.empty()) j["graph"]["missing_level"] = g.missing_level;
}

inline void payload_json(nlohmann::json& j, const release_record&, const marginals_release& g) {
  j["marginals"] = {{"columns", g.nodes},
                    {"levels", g.levels},
                    {"tables", g.marginal_tables},
                    {"released", "each table's counts in turn, row-major over its columns' levels (the last column fastest)"}};
  if (!g.missing_level.empty()) j["marginals"]["missing_level"] = g.missing_level;
}

inline nlohmann::json to_json(const release_record& r) {
  if (r.payload.index() != payload_for(kind_of(r.model)).index())
    throw std::logic_error("release record of the " + r.model + " model carries another kind's payload");
  nlohmann::json mech = {{"name", r.mechanism}, {"epsilon", r.epsilon}, {"sensitivity", r.sensitivity}};
  if (r.mechanism == "laplace" || r.mechanism == "discrete-laplace") {
    mech["sensitivity_norm"] = "L1";
    mech["scale"] = r.noise;
  } else {
    mech["sensitivity_norm"] = "L2";
    mech["delta"] = r.delta;
    mech["sigma"] = r.noise;
    mech["calibration"] = r.calibration;
  }
  if (is_discrete(r.mechanism)) {
    mech["granularity"] = r.granularity;
    mech["lattice"] = r.lattice;
    mech["lattice_dimension"] = r.lattice_dimension;
    mech["lattice_sensitivity"] = r.lattice_sensitivity;
    mech["noise"] =
        "exact integer sampling (Canonne, Kamath & Steinke 2020) from the OS CSPRNG; every noisy statistic is "
        "granularity x a whole number";
  }
  nlohmann::json j = {{"format", "privpost-release-1"},
                      {"privpost_version", r.version},
                      {"model", r.model},
                      {"n", r.n},
                      {"mechanism", mech},
                      {"truncation_policy", r.policy},
                      {"noisy_statistics", r.noisy_statistics}};
  if (!r.release_id.empty()) j["release_id"] = r.release_id;
  if (!r.ledger_file.empty())
    j["ledger"] = ledger_json(r.ledger_file, r.ledger_label, r.ledger_entries, r.ledger_spent, r.ledger_total);
  std::visit([&](const auto& part) { payload_json(j, r, part); }, r.payload);
  return j;
}

/// The largest multinomial K that privpost-infer analyses (its Dirichlet samplers are compiled for K = 2..5):
/// privpost-release refuses more before any noise is drawn, so no budget is spent on a release nobody can analyse.
inline constexpr int max_categories = 5;

/// The largest pairwise-tables graph the record format takes: nodes, and declared levels per node. Both tools use them,
/// so that privpost-release refuses a graph privpost-infer would refuse.
inline constexpr std::size_t max_table_nodes = 1000;
/// The most declared levels of one pairwise-tables column (see max_table_nodes).
inline constexpr std::size_t max_table_levels = 1000;
/// The most cells (product of the columns' levels) of a marginals release and of a pairwise-tables release analysed by
/// --method records: privpost-infer keeps one latent table of this many cells per chain (histogram_gibbs), and
/// privpost-release refuses a larger table before anything is charged.
inline constexpr std::size_t max_histogram_cells = 10000;

/// The queries of a marginals release (or of a pairwise-tables release's edge tables): levels per column, tables of
/// increasing column indices. std::invalid_argument above max_histogram_cells cells.
inline privpost::linear_queries marginal_queries(const std::vector<std::vector<std::string>>& levels,
                                                 const std::vector<std::vector<std::size_t>>& tables) {
  std::vector<std::size_t> sizes;
  double cells = 1.0;
  for (const auto& l : levels) {
    sizes.push_back(l.size());
    cells *= static_cast<double>(l.size());
  }
  if (!(cells <= static_cast<double>(max_histogram_cells)))
    throw std::invalid_argument("the table has " + std::to_string(static_cast<long long>(std::min(cells, 9e18))) +
                                " cells (the product of the columns' levels); accepted: at most " +
                                std::to_string(max_histogram_cells) + " (one latent table per chain)");
  return privpost::linear_queries::marginals(sizes, tables);
}

// Released values no honest release produces are refused by the library's one rule, privpost::max_noise_scales_outside
// (mechanisms/reachable.hpp), applied here to the record's declared statistic range before any sampler sees it.

/// true when recorded is the finite value expected (relative tolerance 1e-9). A NaN or an overflow to infinity on
/// either side is a mismatch: a plain |a - b| > tol test passes them, which let a y_bound of 1e100 through.
inline bool same_value(double recorded, double expected) {
  return std::isfinite(recorded) && std::isfinite(expected) &&
         std::abs(recorded - expected) <= 1e-9 * std::max(std::abs(expected), std::abs(recorded));
}

namespace record_detail {

// x for a message: whole numbers as integers (4294967298, not 4.29497e+09), others to 10 significant digits.
inline std::string show(double x) {
  char buffer[40];
  if (std::isfinite(x) && std::floor(x) == x && std::abs(x) <= 9007199254740992.0)
    std::snprintf(buffer, sizeof buffer, "%.0f", x);
  else
    std::snprintf(buffer, sizeof buffer, "%.10g", x);
  return buffer;
}

// What privpost-release's statistic of r's truncated family model says, with r's declared bounds and the drop policy
// (bounded_statistic<1, record_statistic<F>>, mechanisms/ssp.hpp): the sensitivities and what one record can add to
// each coordinate.
struct truncated_statistic_view {
  double l1, l2;
  std::vector<interval> ranges;
};

inline truncated_statistic_view truncated_statistic(const release_record& r) {
  const family_release& f = r.family();
  return visit_truncated_family(r.model, [&]<class M>(std::type_identity<M>) {
    const bounded_statistic<1, record_statistic<typename M::family>> stat({}, {interval(f.lower, f.upper)}, out_of_bounds::drop);
    return truncated_statistic_view{stat.l1_sensitivity(), stat.l2_sensitivity(),
                                    std::vector<interval>(stat.ranges().begin(), stat.ranges().end())};
  });
}

// The sensitivity privpost-release computes for each payload from its declared bounds: {L1, L2}. Throws
// std::invalid_argument (through the library's checks) for bounds it cannot use.
inline std::pair<double, double> payload_sensitivity(const release_record& r, const family_release& f) {
  if (kind_of(r.model) == model_kind::bounded_family)  // the family's own: its records are bounded by the model
    return visit_bounded_family(r.model, f.categories, [&]<class M>(std::type_identity<M>) {
      return std::pair<double, double>{M::family::l1_sensitivity, M::family::l2_sensitivity};
    });
  const auto stat = truncated_statistic(r);  // records in [lower, upper], out-of-bounds ones dropped
  return {stat.l1, stat.l2};
}

inline std::pair<double, double> payload_sensitivity(const release_record&, const regression_release& g) {
  const regression_layout layout(static_cast<int>(g.covariates.size()), g.intercept);
  std::vector<interval> box;
  for (const auto& b : g.covariate_bounds) box.push_back(g.unit_scaled ? interval(-1.0, 1.0) : interval(b.first, b.second));
  const interval ybox = g.unit_scaled ? interval(-1.0, 1.0) : interval(g.response_bounds.first, g.response_bounds.second);
  const auto [s1, s2] = layout.sensitivity(box, ybox);
  return {s1, s2};
}

inline std::pair<double, double> payload_sensitivity(const release_record& r, const glm_release& g) {
  const std::optional<double> c = g.intercept ? std::optional<double>(g.intercept_value) : std::nullopt;
  const auto statistic = glm_statistic_of(r.model, static_cast<int>(g.covariates.size()), g.radius, g.y_bound, c);
  return {statistic.l1_sensitivity(), statistic.l2_sensitivity()};
}

inline std::pair<double, double> payload_sensitivity(const release_record&, const marginals_release& g) {
  const auto q = marginal_queries(g.levels, g.marginal_tables);
  return {q.l1_sensitivity(), q.l2_sensitivity()};
}

inline std::pair<double, double> payload_sensitivity(const release_record&, const tables_release& g) {
  std::vector<int> cardinalities;
  for (const auto& l : g.levels) cardinalities.push_back(static_cast<int>(l.size()));
  const pairwise_graph graph(cardinalities, g.edges);
  const auto relation = g.neighbours == "add_remove" ? neighbour_relation::add_remove : neighbour_relation::replace_one;
  return {contingency_l1_sensitivity(graph, relation), contingency_l2_sensitivity(graph, relation)};
}

// The sensitivity privpost-release computes for r from its declared bounds: L1 for the Laplace mechanisms, L2 for the
// Gaussian ones.
inline double declared_sensitivity(const release_record& r) {
  const auto [l1, l2] = std::visit([&](const auto& part) { return payload_sensitivity(r, part); }, r.payload);
  return r.mechanism == "laplace" || r.mechanism == "discrete-laplace" ? l1 : l2;
}

// For each of r's `count` statistics, [lo, hi] containing every value it can take before noise, for the one rule of
// max_noise_scales_outside. Loose where the exact range is tedious (it only has to contain the true range).
inline std::vector<std::pair<double, double>> payload_ranges(const release_record& r, const family_release&, std::size_t count) {
  const double n = r.n;
  if (kind_of(r.model) == model_kind::bounded_family) return std::vector<std::pair<double, double>>(count, {0.0, n});
  const auto ranges = truncated_statistic(r).ranges;  // n times what one record adds (0 when it is dropped)
  // a statistic the family does not have is refused by its length check, not here
  std::vector<std::pair<double, double>> out(count,
                                             {-std::numeric_limits<double>::infinity(), std::numeric_limits<double>::infinity()});
  for (std::size_t i = 0; i < std::min(count, ranges.size()); ++i) out[i] = {n * ranges[i].lo, n * ranges[i].hi};
  return out;
}

inline std::vector<std::pair<double, double>> payload_ranges(const release_record& r, const table_columns_block&,
                                                             std::size_t count) {
  return std::vector<std::pair<double, double>>(count, {0.0, r.n});  // counts of records
}

inline std::vector<std::pair<double, double>> payload_ranges(const release_record& r, const regression_release& g,
                                                             std::size_t count) {
  double x = 1.0, y = 1.0;  // the largest |entry| of one record's statistic is the largest of x^2, x y, y^2
  if (!g.unit_scaled) {
    for (const auto& b : g.covariate_bounds) x = std::max({x, std::abs(b.first), std::abs(b.second)});
    y = std::max({std::abs(g.response_bounds.first), std::abs(g.response_bounds.second), 1.0});
  }
  const double entry = std::max({x * x, x * y, y * y});
  return std::vector<std::pair<double, double>>(count, {-r.n * entry, r.n * entry});
}

inline std::vector<std::pair<double, double>> payload_ranges(const release_record& r, const glm_release& g, std::size_t count) {
  // ||[c, x]|| <= sqrt(c^2 + R^2) =: a, entries of y x~ and t2 at most max(1, R_y) max(a, a^2)
  const double c = g.intercept ? g.intercept_value : 0.0;
  const double a = std::hypot(c, g.radius);
  const double entry = std::max(1.0, glm_counts(r.model) ? g.y_bound : 1.0) * std::max(a, a * a);
  return std::vector<std::pair<double, double>>(count, {-r.n * entry, r.n * entry});
}

inline std::vector<std::pair<double, double>> statistic_ranges(const release_record& r, std::size_t count) {
  return std::visit([&](const auto& part) { return payload_ranges(r, part, count); }, r.payload);
}

// The checked readers of from_json beyond json_fields': whole numbers, declared ranges and lists of names.
struct record_reader : json_fields {
  // A whole number in [lo, hi], checked as a double before any conversion (4294967298 must not wrap to 2).
  long long whole(const nlohmann::json& v, const std::string& what, double lo, double hi) const {
    if (!v.is_number()) fail(what + " is not a number");
    const double x = v.get<double>();
    if (!(std::isfinite(x) && std::floor(x) == x && x >= lo && x <= hi))
      fail(what + " is " + show(x) + "; accepted: a whole number in [" + show(lo) + ", " + show(hi) + "]");
    return static_cast<long long>(x);
  }
  // A declared range [lo, hi]: two finite numbers, lo < hi, and a finite width (hi - lo must not overflow).
  std::pair<double, double> range(const nlohmann::json& v, const std::string& what) const {
    if (!v.is_array() || v.size() != 2 || !v.at(0).is_number() || !v.at(1).is_number())
      fail(what + " is not a pair of numbers [lo, hi]");
    const double lo = v.at(0).get<double>(), hi = v.at(1).get<double>();
    if (!(std::isfinite(lo) && std::isfinite(hi) && lo < hi && std::isfinite(hi - lo)))
      fail(what + " is " + v.dump() + "; accepted: finite lo < hi with a finite width hi - lo");
    return {lo, hi};
  }
  // A list of distinct non-empty names.
  std::vector<std::string> names(const nlohmann::json& v, const std::string& what) const {
    if (!v.is_array()) fail(what + " is not a list of names");
    std::vector<std::string> out;
    for (const auto& e : v) {
      if (!e.is_string() || e.get<std::string>().empty()) fail(what + ": an entry is not a non-empty string");
      const std::string name = e.get<std::string>();
      if (std::find(out.begin(), out.end(), name) != out.end()) fail(what + ": '" + echo(name) + "' is given twice");
      out.push_back(name);
    }
    return out;
  }
};

}  // namespace record_detail

// Each payload but the families' (whose fields lie in the record's top level), read from its JSON object in j.
inline void read_payload(const record_detail::record_reader& fields, const nlohmann::json& j, const release_record&,
                         regression_release& p) {
  const auto& g = fields.need(j, "regression");
  p.covariates = fields.names(fields.need(g, "covariates"), "regression covariates");
  p.response = fields.text(g, "response");
  if (!fields.need(g, "intercept").is_boolean()) fields.fail("regression field 'intercept' is not true or false");
  p.intercept = g.at("intercept").get<bool>();
  const auto& xb = fields.need(g, "covariate_bounds");
  if (!xb.is_array()) fields.fail("regression covariate_bounds is not a list of [lo, hi] pairs");
  for (const auto& b : xb) p.covariate_bounds.push_back(fields.range(b, "a regression covariate bound"));
  p.response_bounds = fields.range(fields.need(g, "response_bounds"), "regression response_bounds");
  const auto& sc = g.contains("scale") ? g.at("scale") : nlohmann::json("raw");
  const std::string scale = sc.is_string() ? sc.get<std::string>() : std::string("(not a string)");
  if (scale != "raw" && scale != "unit_box") fields.fail("regression scale '" + echo(scale) + "'; accepted: raw, unit_box");
  p.unit_scaled = scale == "unit_box";
  if (p.covariates.empty() || p.covariates.size() > 64 || p.covariate_bounds.size() != p.covariates.size())
    fields.fail("regression covariates: accepted 1 to 64 names, and one covariate bound per name");
  if (g.contains("noisy_moments")) {
    if (!g.at("noisy_moments").is_array()) fields.fail("regression noisy_moments is not an array");
    for (const auto& v : g.at("noisy_moments")) {
      if (!v.is_number() || !std::isfinite(v.get<double>())) fields.fail("a noisy moment is not a finite number");
      p.noisy_moments.push_back(v.get<double>());
    }
    p.moment_epsilon = fields.number(fields.need(g, "moments_mechanism"), "epsilon");
    if (!(p.moment_epsilon > 0.0)) fields.fail("moments_mechanism epsilon must be > 0");
  }
}

inline void read_payload(const record_detail::record_reader& fields, const nlohmann::json& j, const release_record& r,
                         glm_release& p) {
  const auto& g = fields.need(j, "glm");
  p.covariates = fields.names(fields.need(g, "covariates"), "glm covariates");
  p.response = fields.text(g, "response");
  // intercept: the public constant c of the intercept column, true for c = 1, false or null for none.
  const auto& c = fields.need(g, "intercept");
  if (c.is_boolean()) {
    p.intercept = c.get<bool>();
    p.intercept_value = 1.0;
  } else if (c.is_null()) {
    p.intercept = false;
  } else {
    p.intercept = true;
    p.intercept_value = fields.number(g, "intercept");
    if (!(p.intercept_value > 0.0 && p.intercept_value <= 1e6))
      fields.fail("glm intercept is " + std::to_string(p.intercept_value) +
                  "; accepted: a number in (0, 1e6], true, false or null");
  }
  p.radius = fields.number(g, "radius");
  if (!(p.radius > 0 && p.radius <= 1e6))
    fields.fail("glm radius is " + std::to_string(p.radius) + "; accepted: a number in (0, 1e6]");
  p.glm_scale = fields.text(g, "scale");
  if (p.glm_scale != "unit_ball" && p.glm_scale != "raw")
    fields.fail("glm scale '" + echo(p.glm_scale) + "'; accepted: unit_ball, raw");
  const auto& xb = fields.need(g, "covariate_bounds");
  if (!xb.is_array()) fields.fail("glm covariate_bounds is not a list of [lo, hi] pairs");
  for (const auto& b : xb) p.covariate_bounds.push_back(fields.range(b, "a glm covariate bound"));
  if (p.covariates.empty() || p.covariates.size() > 64) fields.fail("glm covariates: accepted 1 to 64 names");
  if (p.glm_scale == "unit_ball" && p.covariate_bounds.size() != p.covariates.size())
    fields.fail("glm scale unit_ball needs one covariate bound per covariate");
  if (p.glm_scale == "unit_ball" && p.radius != 1.0) fields.fail("glm scale unit_ball has radius 1");
  if (!fields.need(g, "statistic_names").is_array()) fields.fail("glm statistic_names is not a list");
  for (const auto& v : g.at("statistic_names")) {
    if (!v.is_string()) fields.fail("glm statistic_names: an entry is not a string");
    p.statistic_names.push_back(v.get<std::string>());
  }
  p.sensitivity_rule = g.contains("sensitivity_rule") && g.at("sensitivity_rule").is_string()
                           ? g.at("sensitivity_rule").get<std::string>()
                           : std::string();
  if (g.contains("positive_label")) p.positive_label = fields.text(g, "positive_label");
  if (glm_counts(r.model)) {
    p.y_bound = fields.number(g, "y_bound");
    if (!(p.y_bound >= 1.0 && p.y_bound <= 1e9))
      fields.fail("glm y_bound is " + std::to_string(p.y_bound) + "; accepted: a number in [1, 1e9]");
  }
  // The statistics are matched to the model by name: a record of another tool, or one whose statistics come in
  // another order, would otherwise run silently on the wrong statistics.
  const int d = static_cast<int>(p.covariates.size());
  const std::optional<double> cc = p.intercept ? std::optional<double>(p.intercept_value) : std::nullopt;
  const auto statistic = glm_statistic_of(r.model, d, p.radius, p.y_bound, cc);
  // Names by the data's columns ("y*glucose"), or the generic x1..xd of earlier privpost releases.
  const auto expected = p.statistic_names == statistic.names() ? statistic.names() : statistic.names(p.covariates);
  if (p.statistic_names.size() != expected.size())
    fields.fail("glm statistic_names has " + std::to_string(p.statistic_names.size()) + " names; the " + r.model +
                " model with " + std::to_string(d) + " covariate(s)" + (p.intercept ? " and an intercept" : "") + " releases " +
                std::to_string(expected.size()));
  for (std::size_t i = 0; i < expected.size(); ++i)
    if (p.statistic_names[i] != expected[i])
      fields.fail("glm statistic_names[" + std::to_string(i) + "] is '" + echo(p.statistic_names[i]) + "'; privpost releases '" +
                  echo(expected[i]) + "' there (statistics in another order cannot be analysed)");
}

// The declared levels of a table part's columns: one list of 2 to `most` distinct names per column; `what` names the
// record's object ("graph", "marginals") and `unit` its columns ("node", "column") in the refusals.
inline void read_levels(const record_detail::record_reader& fields, const nlohmann::json& g, table_columns_block& p,
                        const std::string& what, const std::string& unit, std::size_t most) {
  const auto& levels = fields.need(g, "levels");
  if (!levels.is_array() || levels.size() != p.nodes.size())
    fields.fail(what + " levels: accepted one list of levels per " + unit);
  for (std::size_t v = 0; v < p.nodes.size(); ++v) {
    const std::string where = what + " levels of " + unit + " '" + echo(p.nodes[v]) + "'";
    p.levels.push_back(fields.names(levels.at(v), where));
    if (p.levels.back().size() < 2 || p.levels.back().size() > most)
      fields.fail(where + ": accepted 2 to " + std::to_string(most) + " levels");
  }
}

inline void read_payload(const record_detail::record_reader& fields, const nlohmann::json& j, const release_record&,
                         tables_release& p) {
  const auto& g = fields.need(j, "graph");
  p.nodes = fields.names(fields.need(g, "nodes"), "graph nodes");
  if (p.nodes.size() < 2 || p.nodes.size() > max_table_nodes)
    fields.fail("graph nodes: accepted 2 to " + std::to_string(max_table_nodes) + " names");
  read_levels(fields, g, p, "graph", "node", max_table_levels);
  const auto& edges = fields.need(g, "edges");
  if (!edges.is_array() || edges.empty()) fields.fail("graph edges: accepted a non-empty list of [u, v] node index pairs");
  const double last = static_cast<double>(p.nodes.size() - 1);
  for (const auto& e : edges) {
    if (!e.is_array() || e.size() != 2) fields.fail("a graph edge is not a pair of node indices [u, v]");
    const auto u = fields.whole(e.at(0), "a graph edge's first node index", 0, last);
    const auto v = fields.whole(e.at(1), "a graph edge's second node index", 0, last);
    // The table of edge (u, v) has u's levels as rows (cell (a, c) at a K_v + c) and privpost lays it out with the
    // smaller index first: an edge stored the other way round would be read transposed.
    if (!(u < v))
      fields.fail("graph edge " + e.dump() +
                  "; accepted: [u, v] with u < v (the edge table's rows are node u's levels; a record that stored an edge "
                  "as declared, larger index first, laid its table out with the smaller index's levels as rows)");
    p.edges.emplace_back(static_cast<int>(u), static_cast<int>(v));
  }
  p.neighbours = fields.text(g, "neighbours");
  if (p.neighbours != "replace_one" && p.neighbours != "add_remove")
    fields.fail("graph neighbours '" + echo(p.neighbours) + "'; accepted: replace_one, add_remove");
  if (g.contains("missing_level")) p.missing_level = fields.text(g, "missing_level");
}

inline void read_payload(const record_detail::record_reader& fields, const nlohmann::json& j, const release_record& r,
                         marginals_release& p) {
  const auto& g = fields.need(j, "marginals");
  p.nodes = fields.names(fields.need(g, "columns"), "marginals columns");
  if (p.nodes.empty() || p.nodes.size() > 64) fields.fail("marginals columns: accepted 1 to 64 names");
  read_levels(fields, g, p, "marginals", "column", max_histogram_cells);
  const auto& tables = fields.need(g, "tables");
  if (!tables.is_array() || tables.empty() || tables.size() > 1000)
    fields.fail("marginals tables: accepted 1 to 1000 lists of column indices");
  const double last = static_cast<double>(p.nodes.size() - 1);
  for (const auto& t : tables) {
    if (!t.is_array() || t.empty()) fields.fail("a marginals table is not a non-empty list of column indices");
    std::vector<std::size_t> columns;
    for (const auto& c : t) {
      const auto v = static_cast<std::size_t>(fields.whole(c, "a marginals table's column index", 0, last));
      if (!columns.empty() && v <= columns.back())
        fields.fail("marginals table " + t.dump() + "; accepted: increasing column indices, each once");
      columns.push_back(v);
    }
    p.marginal_tables.push_back(columns);
  }
  if (g.contains("missing_level")) p.missing_level = fields.text(g, "missing_level");
  std::size_t rows = 0;
  try {
    rows = marginal_queries(p.levels, p.marginal_tables).rows();
  } catch (const std::invalid_argument& e) {
    fields.fail(std::string("marginals: ") + e.what());
  }
  if (r.noisy_statistics.size() != rows)
    fields.fail("noisy_statistics has " + std::to_string(r.noisy_statistics.size()) + " values; the declared tables have " +
                std::to_string(rows) + " cells");
}

/// Parses and checks a release record: every field of every record type, with overflow-safe arithmetic and
/// range-checked integers; the declared bounds must give the recorded sensitivity exactly as privpost-release computes
/// it, and every released value must be one the declared mechanism can produce (max_noise_scales_outside). Throws
/// std::invalid_argument naming the field and the accepted values.
inline release_record from_json(const nlohmann::json& j) {
  const record_detail::record_reader fields{{"release record: "}};
  auto fail = [&](const std::string& what) { fields.fail(what); };
  auto need = [&](const nlohmann::json& obj, const char* key) -> const nlohmann::json& { return fields.need(obj, key); };
  auto number = [&](const nlohmann::json& obj, const char* key) { return fields.number(obj, key); };
  auto text = [&](const nlohmann::json& obj, const char* key) { return fields.text(obj, key); };

  release_record r;
  if (!j.is_object()) fail("not a JSON object");
  if (need(j, "format") != "privpost-release-1") fail("unknown format (expected privpost-release-1)");
  r.model = text(j, "model");
  if (model_named(r.model) == nullptr) fail("model '" + echo(r.model) + "'; accepted: " + model_choices(", "));
  const model_kind kind = kind_of(r.model);
  r.payload = payload_for(kind);
  if (j.contains("column")) {
    if (!is_family_model(r.model)) fail("field 'column' belongs to the family models (" + family_model_list() + ")");
    r.family().column = text(j, "column");
    // a CSV header name: no line breaks or other control characters (privpost-synthesize writes it as given)
    if (r.family().column.empty() || std::any_of(r.family().column.begin(), r.family().column.end(),
                                                 [](char c) { return static_cast<unsigned char>(c) < 32; }))
      fail("column '" + echo(r.family().column) + "'; accepted: a non-empty name without control characters");
  }
  // n up to 2^53: every whole number below it is a double, so n, n - 1 and the counts are exact.
  r.n = static_cast<double>(fields.whole(need(j, "n"), "n", 1.0, 9007199254740992.0));
  const auto& m = need(j, "mechanism");
  r.mechanism = text(m, "name");
  r.epsilon = number(m, "epsilon");
  r.sensitivity = number(m, "sensitivity");
  if (r.mechanism == "laplace" || r.mechanism == "discrete-laplace") {
    r.noise = number(m, "scale");
  } else if (r.mechanism == "gaussian" || r.mechanism == "discrete-gaussian") {
    r.delta = number(m, "delta");
    r.noise = number(m, "sigma");
    r.calibration = text(m, "calibration");
    const std::string expected = r.mechanism == "gaussian" ? "analytic" : "zcdp";
    if (r.calibration != expected)
      fail("mechanism field 'calibration' is '" + echo(r.calibration) + "'; accepted for " + r.mechanism + ": " + expected);
  } else {
    fail("mechanism '" + echo(r.mechanism) + "'; accepted: laplace, gaussian, discrete-laplace, discrete-gaussian");
  }
  if (is_discrete(r.mechanism)) {
    r.granularity = number(m, "granularity");
    r.lattice = text(m, "lattice");
    if (r.lattice != "exact" && r.lattice != "rounded")
      fail("mechanism field 'lattice' is '" + echo(r.lattice) + "'; accepted: exact, rounded");
    r.lattice_dimension =
        static_cast<int>(fields.whole(need(m, "lattice_dimension"), "mechanism field 'lattice_dimension'", 1, 100000));
    if (m.contains("lattice_sensitivity")) {
      r.lattice_sensitivity = number(m, "lattice_sensitivity");
      if (!(r.lattice_sensitivity > 0.0))
        fail("mechanism field 'lattice_sensitivity' is " + std::to_string(r.lattice_sensitivity) +
             "; accepted: a finite number > 0");
    }
  }
  // The mechanism's parameters must describe a valid release (found by fuzzing: epsilon 0 was read, and refused only
  // later by the sampler's mechanism).
  auto positive = [&](const char* key, double x) {
    if (!(x > 0.0))
      fail(std::string("mechanism field '") + key + "' is " + std::to_string(x) + "; accepted: a finite number > 0");
  };
  positive("epsilon", r.epsilon);
  if (!(r.epsilon >= privpost::detail::min_epsilon))  // the mechanisms' floor (check_epsilon), named as a field
    fail("mechanism field 'epsilon' is " + record_detail::show(r.epsilon) + "; accepted: a finite number >= 2^-50");
  positive("sensitivity", r.sensitivity);
  positive(r.mechanism == "laplace" || r.mechanism == "discrete-laplace" ? "scale" : "sigma", r.noise);
  if (is_discrete(r.mechanism)) positive("granularity", r.granularity);
  if (is_discrete(r.mechanism) && !is_family_model(r.model) && kind != model_kind::marginals)
    fail("mechanism '" + r.mechanism + "' with the " + r.model + " model; the lattice mechanisms serve the family models (" +
         family_model_list() + ") and marginals");
  if (is_discrete(r.mechanism) && kind == model_kind::marginals && (r.granularity != 1.0 || r.lattice != "exact"))
    fail("mechanism granularity " + record_detail::show(r.granularity) + " and lattice '" + echo(r.lattice) +
         "' with the marginals model; accepted: granularity 1 and lattice exact (counts)");
  if ((r.mechanism == "gaussian" || r.mechanism == "discrete-gaussian") && !(r.delta > 0.0 && r.delta < 1.0))
    fail("mechanism field 'delta' is " + std::to_string(r.delta) + "; accepted: a number in (0, 1)");

  // truncation_policy: what privpost-release does with records outside the declared bounds. It means something only
  // for the unbounded families (drop: the truncated samplers assume it), where it is required; elsewhere it may be
  // left out, and when given it must be the model's own (linreg and the GLMs clamp, the count models have no bounds).
  const bool truncated = kind == model_kind::unbounded_family;
  const std::string own_policy = truncated                                                   ? "drop"
                                 : kind == model_kind::regression || kind == model_kind::glm ? "clamp"
                                                                                             : "none";
  r.policy = truncated || j.contains("truncation_policy") ? text(j, "truncation_policy") : own_policy;
  if (r.policy != own_policy)
    fail("truncation_policy '" + echo(r.policy) + "'; accepted for the " + r.model + " model: " + own_policy);
  if (truncated) {
    const auto& b = need(j, "bounds");
    const auto lu = fields.range(nlohmann::json::array({need(b, "lower"), need(b, "upper")}), "bounds [lower, upper]");
    r.family().has_bounds = true;
    r.family().lower = lu.first;
    r.family().upper = lu.second;
  } else if (j.contains("bounds")) {
    fail("field 'bounds' does not apply to the " + r.model + " model");
  }
  if (takes_categories(r.model))
    r.family().categories = static_cast<int>(fields.whole(need(j, "categories"), "categories", 2, max_categories));
  const auto& z = need(j, "noisy_statistics");
  if (!z.is_array()) fail("noisy_statistics is not an array");
  for (const auto& v : z) {
    if (!v.is_number() || !std::isfinite(v.get<double>())) fail("a noisy statistic is not a finite number");
    r.noisy_statistics.push_back(v.get<double>());
  }
  r.release_id = read_release_id(j, fields);
  const auto& version = j.contains("privpost_version") ? j.at("privpost_version") : nlohmann::json("unknown");
  r.version = version.is_string() ? echo(version.get<std::string>()) : std::string("unknown");
  std::visit(
      [&]<class P>(P& part) {
        if constexpr (!std::is_same_v<P, family_release>) read_payload(fields, j, r, part);
      },
      r.payload);
  // The sensitivity follows from the declared bounds alone: recompute it as privpost-release does.
  double expected = 0.0;
  try {
    expected = record_detail::declared_sensitivity(r);
  } catch (const std::invalid_argument& e) {
    fail(std::string("the declared bounds give no sensitivity: ") + e.what());
  }
  if (!same_value(r.sensitivity, expected))
    fail("mechanism field 'sensitivity' is " + record_detail::show(r.sensitivity) + "; the declared bounds of this " + r.model +
         " release give " + record_detail::show(expected));
  // One rule for values no honest release produces (see max_noise_scales_outside).
  const auto ranges = record_detail::statistic_ranges(r, r.noisy_statistics.size());
  for (std::size_t i = 0; i < r.noisy_statistics.size(); ++i) {
    const auto [lo, hi] = ranges[i];
    const double zi = r.noisy_statistics[i];
    const double outside = zi < lo ? lo - zi : (zi > hi ? zi - hi : 0.0);
    if (!(outside <= max_noise_scales_outside * r.noise))
      fail("noisy_statistics[" + std::to_string(i) + "] is " + record_detail::show(zi) +
           ", but the statistic of n = " + record_detail::show(r.n) + " records lies in [" + record_detail::show(lo) + ", " +
           record_detail::show(hi) + "] and the noise scale is " + record_detail::show(r.noise) + ": a value more than " +
           record_detail::show(max_noise_scales_outside) +
           " noise scales outside is no release of this mechanism (probability below 1e-21); refusing rather than "
           "printing a posterior");
  }
  return r;
}

/// Refuses a set of release records that holds one release twice: two records with the same release_id (one file given
/// twice, or a copy of it), naming both files; analysed as two releases, its noise would be counted twice. Records
/// without an identity (older privpost versions, other tools) cannot be told apart from two releases that happen to be
/// equal: for equal records of that kind a warning is returned. paths[i] is the file records[i] came from.
inline std::vector<std::string> check_distinct_releases(const std::vector<std::string>& paths,
                                                        const std::vector<release_record>& records,
                                                        const std::vector<nlohmann::json>& texts) {
  std::vector<std::string> warnings;
  for (std::size_t a = 0; a < records.size(); ++a)
    for (std::size_t b = a + 1; b < records.size(); ++b) {
      const std::string& ia = records[a].release_id;
      const std::string& ib = records[b].release_id;
      if (!ia.empty() && ia == ib)
        throw std::invalid_argument("'" + paths[a] + "' and '" + paths[b] + "' are the same release (release_id " + ia +
                                    "); accepted: each release once (its noise counted twice would make the posterior "
                                    "too narrow)");
      if ((ia.empty() || ib.empty()) && texts[a] == texts[b])
        warnings.push_back("'" + paths[a] + "' and '" + paths[b] +
                           "' are equal records without a release_id (older files or another tool's): if they are one "
                           "release given twice, the posterior counts its noise twice and is too narrow");
    }
  return warnings;
}

}  // namespace privpost::tools
