// The JSON release record shared by privpost-release (writes it) and privpost-infer (reads it), and CSV reading.
// A release record holds only public information: the model, n, the mechanism and its parameters, the declared bounds
// and policy, and the noisy statistics.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <privpost/core/concepts.hpp>

namespace privpost::tools {

struct release_record {
  std::string
      model;     ///< binomial|multinomial|poisson|exponential|normal-known-var|normal|linreg|logistic|poisson-glm|pairwise-tables
  double n = 0;  ///< number of records (public)
  int categories = 0;     ///< K, multinomial only
  std::string mechanism;  ///< laplace|gaussian|discrete-laplace|discrete-gaussian
  double epsilon = 0, delta = 0;
  double sensitivity = 0;   ///< L1 (Laplace) or L2 (Gaussian)
  double noise = 0;         ///< Laplace scale b, or Gaussian sigma (discrete: the continuous view's, gamma t or gamma sigma)
  std::string calibration;  ///< Gaussian: analytic; discrete Gaussian: zcdp
  // discrete-laplace and discrete-gaussian (issue #13): the lattice gamma Z^d the release lies on
  double granularity = 0;          ///< gamma
  std::string lattice;             ///< exact (statistics on the lattice) | rounded (to the nearest lattice point)
  int lattice_dimension = 0;       ///< d, the rounding allowance's dimension
  double lattice_sensitivity = 0;  ///< the lattice point's sensitivity in lattice units
  bool has_bounds = false;
  double lower = 0, upper = 0;  ///< declared record bounds
  std::string policy;           ///< drop|clamp
  std::vector<double> noisy_statistics;
  std::string version;
  // linreg only
  std::vector<std::string> covariates;  ///< covariate column names
  std::string response;
  bool intercept = true;
  std::vector<std::pair<double, double>> covariate_bounds;
  std::pair<double, double> response_bounds{0, 0};
  /// true: every record was mapped to [-1, 1] by the declared box (x' = (x - centre) / half-width) before the
  /// statistics were computed, so the noisy statistics are on that scale (privpost-release since issue #8).
  bool unit_scaled = false;
  std::vector<double> noisy_moments;  ///< Gibbs-SS-Noisy: released normalised fourth moments (may be empty)
  double moment_sensitivity = 0, moment_noise = 0, moment_epsilon = 0;
  // logistic and poisson-glm (also covariates, response, intercept, covariate_bounds above)
  double intercept_value = 1.0;  ///< the public constant c of the intercept column (when intercept)
  double radius = 1.0;           ///< R: the norm bound of the (scaled) covariates
  /// "unit_ball": each covariate mapped from its declared range [lo, hi] to [-1, 1] / sqrt(d) (so ||x|| <= 1 = R);
  /// "raw": covariates as recorded, records longer than R scaled onto the ball.
  std::string glm_scale;
  std::string positive_label;                ///< the response label mapped to +1 (empty: numeric 0/1 or -1/+1)
  std::vector<std::string> statistic_names;  ///< glm_statistic::names(covariates), in the order of noisy_statistics
  std::string sensitivity_rule;              ///< which result gave the sensitivity
  double y_bound = 0;                        ///< poisson-glm: R_y, the declared largest count (larger ones clamped)
  // pairwise-tables (issue #11): the declared graph; noisy_statistics are its edge tables in table_layout order
  std::vector<std::string> nodes;                ///< one node per column, by column name
  std::vector<std::vector<std::string>> levels;  ///< each node's declared levels, in state order
  std::vector<std::pair<int, int>> edges;        ///< node indices, as declared
  std::string neighbours = "replace_one";        ///< replace_one (the library's) or add_remove (the dissertation's)
  std::string missing_level;                     ///< the level empty cells were read as (empty: none allowed)
  // privpost-release --ledger (issue #13): the ledger this release was charged to, and its state after the charge
  std::string ledger_file;         ///< the ledger's path as given (empty: no ledger)
  std::string ledger_label;        ///< the entry's label
  privacy_budget ledger_spent{};   ///< the data set's composed spend after this release
  privacy_budget ledger_total{};   ///< the data set's total budget
  std::size_t ledger_entries = 0;  ///< entries in the ledger after this release
};

/// The exponential-family models (one statistic vector, Gibbs-SS and its exact variants).
inline bool is_family_model(const std::string& model) {
  return model == "binomial" || model == "multinomial" || model == "poisson" || model == "exponential" ||
         model == "normal-known-var" || model == "normal";
}

/// The lattice mechanisms (mechanisms/discrete_laplace.hpp, discrete_gaussian.hpp).
inline bool is_discrete(const std::string& mechanism) {
  return mechanism == "discrete-laplace" || mechanism == "discrete-gaussian";
}

inline nlohmann::json to_json(const release_record& r) {
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
  if (r.model == "multinomial") j["categories"] = r.categories;
  if (!r.ledger_file.empty())
    j["ledger"] = {{"file", r.ledger_file},
                   {"entry", r.ledger_label},
                   {"entries", r.ledger_entries},
                   {"spent", {{"epsilon", r.ledger_spent.epsilon}, {"delta", r.ledger_spent.delta}}},
                   {"total", {{"epsilon", r.ledger_total.epsilon}, {"delta", r.ledger_total.delta}}}};
  if (r.has_bounds) j["bounds"] = {{"lower", r.lower}, {"upper", r.upper}};
  if (r.model == "linreg") {
    nlohmann::json xb = nlohmann::json::array();
    for (const auto& b : r.covariate_bounds) xb.push_back({b.first, b.second});
    j["regression"] = {{"covariates", r.covariates},
                       {"response", r.response},
                       {"intercept", r.intercept},
                       {"covariate_bounds", xb},
                       {"response_bounds", {r.response_bounds.first, r.response_bounds.second}},
                       {"scale", r.unit_scaled ? "unit_box" : "raw"}};
    if (!r.noisy_moments.empty()) {
      j["regression"]["noisy_moments"] = r.noisy_moments;
      j["regression"]["moments_mechanism"] = {
          {"name", "laplace"}, {"epsilon", r.moment_epsilon}, {"sensitivity", r.moment_sensitivity}, {"scale", r.moment_noise}};
      j["regression"]["budget_split"] = "even: half of epsilon on the statistics, half on the fourth sample moments";
    }
  }
  if (r.model == "logistic" || r.model == "poisson-glm") {
    nlohmann::json xb = nlohmann::json::array();
    for (const auto& b : r.covariate_bounds) xb.push_back({b.first, b.second});
    j["glm"] = {{"covariates", r.covariates},
                {"response", r.response},
                {"intercept", r.intercept ? nlohmann::json(r.intercept_value) : nlohmann::json(nullptr)},
                {"radius", r.radius},
                {"scale", r.glm_scale},
                {"covariate_bounds", xb},
                {"statistic_names", r.statistic_names},
                {"sensitivity_rule", r.sensitivity_rule}};
    if (!r.positive_label.empty()) j["glm"]["positive_label"] = r.positive_label;
    if (r.model == "poisson-glm") j["glm"]["y_bound"] = r.y_bound;
  }
  if (r.model == "pairwise-tables") {
    nlohmann::json edges = nlohmann::json::array();
    for (const auto& e : r.edges) edges.push_back({e.first, e.second});
    j["graph"] = {{"nodes", r.nodes},
                  {"levels", r.levels},
                  {"edges", edges},
                  {"neighbours", r.neighbours},
                  {"released", "edge tables, cell (a, c) of edge (u, v) at a * K_v + c"}};
    if (!r.missing_level.empty()) j["graph"]["missing_level"] = r.missing_level;
  }
  return j;
}

/// Parses and checks a release record; throws std::invalid_argument naming the offending field.
inline release_record from_json(const nlohmann::json& j) {
  auto need = [&](const nlohmann::json& obj, const char* key) -> const nlohmann::json& {
    if (!obj.is_object() || !obj.contains(key))
      throw std::invalid_argument(std::string("release record: missing field '") + key + "'");
    return obj.at(key);
  };
  auto number = [&](const nlohmann::json& obj, const char* key) {
    const auto& v = need(obj, key);
    if (!v.is_number()) throw std::invalid_argument(std::string("release record: field '") + key + "' is not a number");
    const double x = v.get<double>();
    if (!std::isfinite(x)) throw std::invalid_argument(std::string("release record: field '") + key + "' is not finite");
    return x;
  };
  release_record r;
  if (need(j, "format") != "privpost-release-1")
    throw std::invalid_argument("release record: unknown format (expected privpost-release-1)");
  r.model = need(j, "model").get<std::string>();
  r.n = number(j, "n");
  if (!(r.n >= 1 && std::floor(r.n) == r.n))
    throw std::invalid_argument("release record: n is " + std::to_string(r.n) + "; accepted: a whole number >= 1");
  const auto& m = need(j, "mechanism");
  r.mechanism = need(m, "name").get<std::string>();
  r.epsilon = number(m, "epsilon");
  r.sensitivity = number(m, "sensitivity");
  if (r.mechanism == "laplace" || r.mechanism == "discrete-laplace") {
    r.noise = number(m, "scale");
  } else if (r.mechanism == "gaussian" || r.mechanism == "discrete-gaussian") {
    r.delta = number(m, "delta");
    r.noise = number(m, "sigma");
    r.calibration = need(m, "calibration").get<std::string>();
  } else {
    throw std::invalid_argument("release record: mechanism '" + r.mechanism +
                                "'; accepted: laplace, gaussian, discrete-laplace, discrete-gaussian");
  }
  if (is_discrete(r.mechanism)) {
    r.granularity = number(m, "granularity");
    r.lattice = need(m, "lattice").get<std::string>();
    if (r.lattice != "exact" && r.lattice != "rounded")
      throw std::invalid_argument("release record: mechanism field 'lattice' is '" + r.lattice + "'; accepted: exact, rounded");
    const double d = number(m, "lattice_dimension");
    if (!(d >= 1 && d <= 100000 && std::floor(d) == d))
      throw std::invalid_argument("release record: mechanism field 'lattice_dimension' is " + std::to_string(d) +
                                  "; accepted: a whole number in [1, 100000]");
    r.lattice_dimension = static_cast<int>(d);
    r.lattice_sensitivity = m.contains("lattice_sensitivity") ? number(m, "lattice_sensitivity") : 0.0;
  }
  // The mechanism's parameters must describe a valid release (found by fuzzing: epsilon 0 was read, and refused only
  // later by the sampler's mechanism).
  auto positive = [](const char* key, double x) {
    if (!(x > 0.0))
      throw std::invalid_argument(std::string("release record: mechanism field '") + key + "' is " + std::to_string(x) +
                                  "; accepted: a finite number > 0");
  };
  positive("epsilon", r.epsilon);
  positive("sensitivity", r.sensitivity);
  positive(r.mechanism == "laplace" || r.mechanism == "discrete-laplace" ? "scale" : "sigma", r.noise);
  if (is_discrete(r.mechanism)) positive("granularity", r.granularity);
  if (is_discrete(r.mechanism) && !is_family_model(r.model))
    throw std::invalid_argument("release record: mechanism '" + r.mechanism + "' with the " + r.model +
                                " model; the lattice mechanisms serve the family models (binomial, multinomial, poisson, "
                                "exponential, normal-known-var, normal)");
  if ((r.mechanism == "gaussian" || r.mechanism == "discrete-gaussian") && !(r.delta > 0.0 && r.delta < 1.0))
    throw std::invalid_argument("release record: mechanism field 'delta' is " + std::to_string(r.delta) +
                                "; accepted: a number in (0, 1)");
  r.policy = need(j, "truncation_policy").get<std::string>();
  if (j.contains("bounds")) {
    r.has_bounds = true;
    r.lower = number(j.at("bounds"), "lower");
    r.upper = number(j.at("bounds"), "upper");
  }
  if (r.model == "multinomial") r.categories = static_cast<int>(number(j, "categories"));
  const auto& z = need(j, "noisy_statistics");
  if (!z.is_array()) throw std::invalid_argument("release record: noisy_statistics is not an array");
  for (const auto& v : z) {
    if (!v.is_number() || !std::isfinite(v.get<double>()))
      throw std::invalid_argument("release record: a noisy statistic is not a finite number");
    r.noisy_statistics.push_back(v.get<double>());
  }
  r.version = j.value("privpost_version", std::string("unknown"));
  if (r.model == "linreg") {
    const auto& g = need(j, "regression");
    for (const auto& c : need(g, "covariates")) r.covariates.push_back(c.get<std::string>());
    r.response = need(g, "response").get<std::string>();
    r.intercept = need(g, "intercept").get<bool>();
    for (const auto& b : need(g, "covariate_bounds"))
      r.covariate_bounds.emplace_back(b.at(0).get<double>(), b.at(1).get<double>());
    r.response_bounds = {need(g, "response_bounds").at(0).get<double>(), need(g, "response_bounds").at(1).get<double>()};
    const std::string scale = g.value("scale", std::string("raw"));
    if (scale != "raw" && scale != "unit_box")
      throw std::invalid_argument("release record: regression scale '" + scale + "'; accepted: raw, unit_box");
    r.unit_scaled = scale == "unit_box";
    if (r.covariates.empty() || r.covariate_bounds.size() != r.covariates.size())
      throw std::invalid_argument(
          "release record: regression covariates and covariate_bounds must be non-empty and of equal length");
    if (g.contains("noisy_moments")) {
      for (const auto& v : g.at("noisy_moments")) {
        if (!v.is_number() || !std::isfinite(v.get<double>()))
          throw std::invalid_argument("release record: a noisy moment is not a finite number");
        r.noisy_moments.push_back(v.get<double>());
      }
      r.moment_epsilon = number(need(g, "moments_mechanism"), "epsilon");
    }
  }
  if (r.model == "logistic" || r.model == "poisson-glm") {
    const auto& g = need(j, "glm");
    for (const auto& c : need(g, "covariates")) r.covariates.push_back(c.get<std::string>());
    r.response = need(g, "response").get<std::string>();
    const auto& c = need(g, "intercept");
    r.intercept = !c.is_null();
    if (r.intercept) r.intercept_value = number(g, "intercept");
    r.radius = number(g, "radius");
    if (!(r.radius > 0)) throw std::invalid_argument("release record: glm radius must be > 0");
    r.glm_scale = need(g, "scale").get<std::string>();
    if (r.glm_scale != "unit_ball" && r.glm_scale != "raw")
      throw std::invalid_argument("release record: glm scale '" + r.glm_scale + "'; accepted: unit_ball, raw");
    for (const auto& b : need(g, "covariate_bounds")) {
      if (!b.is_array() || b.size() != 2 || !b.at(0).is_number() || !b.at(1).is_number() ||
          !(b.at(0).get<double>() < b.at(1).get<double>()))
        throw std::invalid_argument("release record: a glm covariate bound is not a pair lo < hi");
      r.covariate_bounds.emplace_back(b.at(0).get<double>(), b.at(1).get<double>());
    }
    if (r.covariates.empty() || r.covariates.size() > 64)
      throw std::invalid_argument("release record: glm covariates: accepted 1 to 64 names");
    if (r.glm_scale == "unit_ball" && r.covariate_bounds.size() != r.covariates.size())
      throw std::invalid_argument("release record: glm scale unit_ball needs one covariate bound per covariate");
    for (const auto& v : need(g, "statistic_names")) r.statistic_names.push_back(v.get<std::string>());
    r.sensitivity_rule = g.value("sensitivity_rule", std::string());
    r.positive_label = g.value("positive_label", std::string());
    if (r.model == "poisson-glm") {
      r.y_bound = number(g, "y_bound");
      if (!(r.y_bound >= 1.0)) throw std::invalid_argument("release record: glm y_bound must be >= 1");
    }
  }
  if (r.model == "pairwise-tables") {
    const auto& g = need(j, "graph");
    for (const auto& v : need(g, "nodes")) r.nodes.push_back(v.get<std::string>());
    for (const auto& l : need(g, "levels")) {
      r.levels.emplace_back();
      for (const auto& v : l) r.levels.back().push_back(v.get<std::string>());
    }
    for (const auto& e : need(g, "edges")) {
      if (!e.is_array() || e.size() != 2 || !e.at(0).is_number_integer() || !e.at(1).is_number_integer())
        throw std::invalid_argument("release record: a graph edge is not a pair of node indices");
      r.edges.emplace_back(e.at(0).get<int>(), e.at(1).get<int>());
    }
    r.neighbours = need(g, "neighbours").get<std::string>();
    if (r.neighbours != "replace_one" && r.neighbours != "add_remove")
      throw std::invalid_argument("release record: graph neighbours '" + r.neighbours + "'; accepted: replace_one, add_remove");
    r.missing_level = g.value("missing_level", std::string());
    if (r.nodes.empty() || r.levels.size() != r.nodes.size() || r.edges.empty())
      throw std::invalid_argument("release record: graph needs nodes, one level list per node and at least one edge");
  }
  return r;
}

/// Reads one named column of a CSV file with a header row (comma-separated, no quoting) as text, one cell per data row
/// (blank lines skipped), each with its line number. Throws on a missing column, a short row or a quoted field.
inline std::vector<std::pair<std::size_t, std::string>> read_csv_cells(const std::string& path, const std::string& column) {
  std::ifstream in(path);
  if (!in) throw std::invalid_argument("cannot open CSV file '" + path + "'");
  std::string line;
  if (!std::getline(in, line)) throw std::invalid_argument("CSV file '" + path + "' is empty");
  auto split = [](const std::string& s) {
    std::vector<std::string> out;
    std::string cell;
    std::stringstream ss(s);
    while (std::getline(ss, cell, ',')) {
      while (!cell.empty() && (cell.back() == '\r' || cell.back() == ' ')) cell.pop_back();
      while (!cell.empty() && cell.front() == ' ') cell.erase(cell.begin());
      out.push_back(cell);
    }
    if (!s.empty() && s.back() == ',') out.emplace_back();
    return out;
  };
  const auto header = split(line);
  std::size_t index = header.size();
  for (std::size_t i = 0; i < header.size(); ++i)
    if (header[i] == column) index = i;
  if (index == header.size()) throw std::invalid_argument("CSV file '" + path + "' has no column '" + column + "'");
  std::vector<std::pair<std::size_t, std::string>> cells_out;
  for (std::size_t number = 2; std::getline(in, line); ++number) {
    if (line.empty() || line == "\r") continue;
    if (line.find('"') != std::string::npos)
      throw std::invalid_argument("CSV line " + std::to_string(number) + ": quoted fields are not supported");
    const auto cells = split(line);
    if (cells.size() <= index) throw std::invalid_argument("CSV line " + std::to_string(number) + ": too few fields");
    cells_out.emplace_back(number, cells[index]);
  }
  if (cells_out.empty()) throw std::invalid_argument("CSV file '" + path + "' has no data rows");
  return cells_out;
}

/// Reads one named numeric column of a CSV file with a header row (comma-separated, no quoting). Throws with the line
/// number on a missing column, a short row, an unparsable or non-finite value.
inline std::vector<double> read_csv_column(const std::string& path, const std::string& column) {
  std::vector<double> values;
  for (const auto& [number, cell] : read_csv_cells(path, column)) {
    char* end = nullptr;
    const double x = std::strtod(cell.c_str(), &end);
    if (cell.empty() || end != cell.c_str() + cell.size() || !std::isfinite(x))
      throw std::invalid_argument("CSV line " + std::to_string(number) + ": '" + cell + "' in column '" + column +
                                  "' is not a finite number");
    values.push_back(x);
  }
  return values;
}

}  // namespace privpost::tools
