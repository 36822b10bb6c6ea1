// privpost-infer's dispatch of a release to its model's inference (shared with privpost-synthesize, which runs the
// same inference before it draws synthetic records): the release file's reading, the options the model does not
// take refused by name, the model's default thinning, then the model kind's source file (infer_options.hpp).
#pragma once

#include <cstdint>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>
#include <privpost/inference/writers.hpp>

#include "infer_options.hpp"
#include "models.hpp"
#include "release_record.hpp"

namespace privpost::tools::infer_tool {

// The release record's fields for the CmdStan files' "release" block: each top-level key of its JSON with the value's
// JSON text (strings unquoted).
inline std::vector<std::pair<std::string, std::string>> cmdstan_release_fields(const nlohmann::json& record) {
  std::vector<std::pair<std::string, std::string>> out;
  for (auto it = record.begin(); it != record.end(); ++it)
    out.emplace_back(it.key(), it.value().is_string() ? it.value().template get<std::string>() : it.value().dump());
  return out;
}

// The JSON document of a release record file; std::invalid_argument naming the file when it cannot be opened or is not
// JSON.
inline nlohmann::json read_release_json(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw std::invalid_argument("cannot open release record '" + path + "'");
  nlohmann::json j;
  try {
    f >> j;
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument("malformed release record '" + path + "': " + e.what());
  }
  return j;
}

// The release record in j (read from path); std::invalid_argument naming the file when a field is malformed.
inline release_record release_from_json(const nlohmann::json& j, const std::string& path) {
  try {
    return from_json(j);
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument("malformed release record '" + path + "': " + e.what());
  }
}

// Refuses an option the release's model does not take, naming the models that take it.
inline void check_applies(bool given, std::uint8_t flag, const privpost::tools::model_row& row, const std::string& what) {
  if (!given || (row.options & flag) != 0) return;
  throw std::invalid_argument(what + " applies to " +
                              privpost::tools::models_where([&](const auto& m) { return (m.options & flag) != 0; }) +
                              " releases only");
}

inline int dispatch(const std::vector<privpost::tools::release_record>& recs, options o) {
  using privpost::tools::model_kind;
  const privpost::tools::release_record& rec = recs.front();
  const auto& row = privpost::tools::find_model(rec.model);
  const bool histogram = row.kind == model_kind::marginals || (row.kind == model_kind::tables && o.method == "records");
  if (o.thin == 0 && histogram) o.thin = privpost::tools::marginals_thin;
  if (o.thin == 0 && row.kind != model_kind::tables) o.thin = row.default_thin;  // tables: MAP-EM has no thin
  for (const auto& r : recs)
    if (r.model != rec.model || (recs.size() > 1 && row.kind != model_kind::marginals))
      throw std::invalid_argument("several release records are analysed together for the marginals model only (release " +
                                  std::string("models: ") + rec.model + ", " + r.model + ")");
  const std::uint8_t method = o.method == "exact"       ? privpost::tools::method_exact
                              : o.method == "corrected" ? privpost::tools::method_corrected
                              : o.method == "records"   ? privpost::tools::method_records
                                                        : 0;
  if (method != 0 && (row.methods & method) == 0)
    throw std::invalid_argument("--method " + o.method + " applies to " +
                                privpost::tools::models_where([&](const auto& m) { return (m.methods & method) != 0; }) +
                                " releases only (the " + rec.model + " model has none)");
  check_applies(o.collapsed_moves != 0, privpost::tools::option_collapsed_moves, row, "--collapsed-moves");
  check_applies(o.shift_moves != -1, privpost::tools::option_shift_moves, row, "--shift-moves");
  check_applies(o.link != "exact", privpost::tools::option_link, row, "--link");
  check_applies(o.target_accept != 0.8, privpost::tools::option_target_accept, row, "--target-accept");
  check_applies(!o.moments.empty(), privpost::tools::option_moments, row, "--moments");
  check_applies(o.metric != "dense", privpost::tools::option_metric, row, "--metric");
  check_applies(o.max_iterations != options{}.max_iterations, privpost::tools::option_map_em, row, "--max-iterations");
  check_applies(o.point_estimate, privpost::tools::option_map_em, row, "--point-estimate");
  check_applies(o.map_em_evidence != options{}.map_em_evidence, privpost::tools::option_map_em, row, "--map-em-evidence");
  check_applies(o.max_minutes != options{}.max_minutes, privpost::tools::option_max_minutes, row, "--max-minutes");
  if (o.max_sweeps != options{}.max_sweeps && !(o.target_ess > 0.0))
    throw std::invalid_argument("--max-sweeps applies to runs with --target-ess only (it caps the extended chains)");
  // --output-dir: one CmdStan CSV writer for every method, made before any chain runs so that runs can stream into it.
  if (!o.output_dir.empty())
    o.cmdstan = std::make_shared<privpost::cmdstan_csv_writer>(
        o.output_dir, rec.model, cmdstan_release_fields(privpost::tools::to_json(rec)), "release", "release_");
  switch (row.kind) {
    case model_kind::bounded_family:
      return infer_bounded(rec, o);
    case model_kind::unbounded_family:
      return infer_unbounded(rec, o);
    case model_kind::regression:
      return run_regression(rec, o);
    case model_kind::glm:
      return run_glm(rec, o);
    case model_kind::tables:
      return histogram ? run_marginals(recs, o) : run_pairwise_tables(rec, o);
    case model_kind::marginals:
      return run_marginals(recs, o);
  }
  throw std::logic_error("privpost-infer: a model kind without a dispatch case");
}

}  // namespace privpost::tools::infer_tool
