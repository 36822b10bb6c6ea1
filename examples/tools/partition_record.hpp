// The JSON record of a partition release (sample and aggregate; privpost/mechanisms/sample_aggregate.hpp): released
// posterior probabilities of one regression coefficient at cutoffs and its quantiles at levels, with everything an
// analyst needs to recompute the post-processing and the noise-only intervals. privpost-release writes it
// (--partitions), privpost-infer reads it; the format field "privpost-partition-release-1" tells it from the SSP records.
#pragma once

#include <cmath>
#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <privpost/mechanisms/above_threshold.hpp>
#include <privpost/mechanisms/sample_aggregate.hpp>

#include "csv.hpp"
#include "json_fields.hpp"
#include "models.hpp"

namespace privpost::tools {

inline constexpr const char* partition_format = "privpost-partition-release-1";
/// The most cutoffs or levels a record may carry (a hostile record must not make the reader allocate without bound).
inline constexpr std::size_t max_partition_outputs = 1000;

struct partition_record {
  std::string version;
  std::string release_id;                                   ///< the release's identity (new_release_id); empty in older records
  double n = 0;                                             ///< records (public)
  std::vector<std::string> covariates;                      ///< covariate columns
  std::string response;                                     ///< response column
  bool intercept = true;                                    ///< an intercept column was part of the model
  std::string coefficient;                                  ///< the covariate whose coefficient is released
  std::vector<std::pair<double, double>> covariate_bounds;  ///< declared boxes (records clamped into them)
  std::pair<double, double> response_bounds{0, 0};
  double prior_precision = 1, prior_a = 1, prior_b = 1;  ///< the partition posteriors' NIG prior on the unit scale
  std::string partition_prior = "fractional";            ///< fractional|full
  double epsilon = 0;                                    ///< the whole release's budget
  std::optional<probability_release> probabilities;
  std::optional<quantile_release> quantiles;
  std::optional<bound_search_options> bound_options;
  // privpost-release --ledger (as for release_record)
  std::string ledger_file, ledger_label;
  privacy_budget ledger_spent{}, ledger_total{};
  std::size_t ledger_entries = 0;
};

/// True when j is a partition release record (the format field), false for any other record.
inline bool is_partition_record(const nlohmann::json& j) {
  return j.is_object() && j.contains("format") && j.at("format").is_string() &&
         j.at("format").get<std::string>() == partition_format;
}

inline nlohmann::json to_json(const partition_record& r) {
  nlohmann::json xb = nlohmann::json::array();
  for (const auto& b : r.covariate_bounds) xb.push_back({b.first, b.second});
  nlohmann::json j = {
      {"format", partition_format},
      {"privpost_version", r.version},
      {"model", "linreg"},
      {"method",
       "sample and aggregate (Amitai 2018): posterior of each of M random partitions, aggregated, Laplace noise; an "
       "approximation of the full-data posterior, whose error privpost-calibrate --partitions estimates"},
      {"n", r.n},
      {"epsilon", r.epsilon},
      {"regression",
       {{"covariates", r.covariates},
        {"response", r.response},
        {"intercept", r.intercept},
        {"coefficient", r.coefficient},
        {"covariate_bounds", xb},
        {"response_bounds", {r.response_bounds.first, r.response_bounds.second}}}},
      {"prior",
       {{"scale", "declared boxes mapped to [-1, 1]"},
        {"precision", r.prior_precision},
        {"a", r.prior_a},
        {"b", r.prior_b},
        {"partition_prior", r.partition_prior}}}};
  if (r.probabilities) {
    const auto& p = *r.probabilities;
    j["probabilities"] = {{"partitions", p.partitions},
                          {"cutoffs", p.cutoffs},
                          {"combiner", combiner_name(p.options.combiner)},
                          {"epsilon", p.options.epsilon},
                          {"p_star", p.options.p_star},
                          {"z_clip", p.options.z_clip},
                          {"fallback", p.options.fallback},
                          {"sensitivity_l1", p.sensitivity},
                          {"noise_scale", p.noise_scale},
                          {"noisy_aggregate", p.noisy_aggregate},
                          {"probability", p.probability}};
  }
  if (r.quantiles) {
    const auto& q = *r.quantiles;
    const auto& o = *r.bound_options;
    j["quantiles"] = {{"partitions", q.partitions},
                      {"levels", q.levels},
                      {"bound_search",
                       {{"center", o.center},
                        {"base_half_width", o.base_half_width},
                        {"fraction", o.fraction},
                        {"max_half_width", o.max_half_width},
                        {"epsilon", q.bounds.budget.epsilon},
                        {"doublings", q.bounds.doublings},
                        {"half_width", q.bounds.half_width},
                        {"capped", q.bounds.capped}}},
                      {"epsilon", q.epsilon_values},
                      {"sensitivity_l1", q.sensitivity},
                      {"noise_scale", q.noise_scale},
                      {"noisy_aggregate", q.noisy_aggregate},
                      {"values", q.values}};
  }
  if (!r.release_id.empty()) j["release_id"] = r.release_id;
  if (!r.ledger_file.empty())
    j["ledger"] = ledger_json(r.ledger_file, r.ledger_label, r.ledger_entries, r.ledger_spent, r.ledger_total);
  return j;
}

/// Parses and checks a partition release record: every field's type and range, the sensitivities and noise scales
/// recomputed from M, the cutoffs or levels and the budgets, the released values recomputed from the DP aggregates
/// (so a record whose numbers disagree with its own settings is refused). std::invalid_argument naming the field.
inline partition_record partition_from_json(const nlohmann::json& j) {
  const json_fields fields{"partition release record: "};
  auto fail = [&](const std::string& what) { fields.fail(what); };
  auto need = [&](const nlohmann::json& obj, const char* key) -> const nlohmann::json& { return fields.need(obj, key); };
  auto number = [&](const nlohmann::json& obj, const char* key) { return fields.number(obj, key); };
  auto text = [&](const nlohmann::json& obj, const char* key) { return fields.text(obj, key); };
  auto numbers = [&](const nlohmann::json& obj, const char* key) {
    const auto& v = need(obj, key);
    if (!v.is_array() || v.empty() || v.size() > max_partition_outputs)
      fail(std::string("field '") + key + "' is not a list of 1 to " + std::to_string(max_partition_outputs) + " numbers");
    std::vector<double> out;
    for (const auto& e : v) {
      if (!e.is_number() || !std::isfinite(e.get<double>()))
        fail(std::string("field '") + key + "' has an entry that is not a finite number");
      out.push_back(e.get<double>());
    }
    return out;
  };
  auto close = [](double recorded, double expected) {
    return std::abs(recorded - expected) <= 1e-9 * std::max(1.0, std::abs(expected));
  };
  auto whole = [&](const nlohmann::json& obj, const char* key, double lo, double hi) {
    const double x = number(obj, key);
    if (!(std::floor(x) == x && x >= lo && x <= hi))
      fail(std::string("field '") + key + "' is " + std::to_string(x) + "; accepted: a whole number in [" + std::to_string(lo) +
           ", " + std::to_string(hi) + "]");
    return x;
  };
  if (!is_partition_record(j)) fail(std::string("format is not '") + partition_format + "'");
  partition_record r;
  r.version = text(j, "privpost_version");
  r.release_id = read_release_id(j, fields);
  const model_row* model = model_named(text(j, "model"));
  if (model == nullptr || model->kind != model_kind::regression)
    fail("model is not 'linreg' (the one model of partition releases)");
  r.n = whole(j, "n", 4, 9007199254740992.0);
  r.epsilon = number(j, "epsilon");
  if (!(r.epsilon > 0)) fail("epsilon is not > 0");
  const auto& reg = need(j, "regression");
  for (const auto& c : need(reg, "covariates")) {
    if (!c.is_string() || c.get<std::string>().empty()) fail("regression.covariates has an entry that is not a name");
    r.covariates.push_back(c.get<std::string>());
  }
  if (r.covariates.empty() || r.covariates.size() > 1000) fail("regression.covariates is not a list of 1 to 1000 names");
  r.response = text(reg, "response");
  if (!need(reg, "intercept").is_boolean()) fail("regression.intercept is not true or false");
  r.intercept = reg.at("intercept").get<bool>();
  r.coefficient = text(reg, "coefficient");
  if (std::find(r.covariates.begin(), r.covariates.end(), r.coefficient) == r.covariates.end())
    fail("regression.coefficient '" + echo(r.coefficient) + "' is not one of the covariates");
  const auto& prior = need(j, "prior");
  r.prior_precision = number(prior, "precision");
  r.prior_a = number(prior, "a");
  r.prior_b = number(prior, "b");
  r.partition_prior = text(prior, "partition_prior");
  if (!(r.prior_precision > 0 && r.prior_a > 0 && r.prior_b > 0)) fail("prior precision, a and b must be > 0");
  if (r.partition_prior != "fractional" && r.partition_prior != "full") fail("prior.partition_prior is not fractional or full");
  double spent = 0.0;
  if (j.contains("probabilities")) {
    const auto& p = j.at("probabilities");
    probability_release pr;
    pr.partitions = static_cast<std::size_t>(whole(p, "partitions", 2, r.n / 2));
    pr.cutoffs = numbers(p, "cutoffs");
    try {
      pr.options.combiner = parse_probability_combiner(text(p, "combiner"));
    } catch (const std::invalid_argument& e) {
      fail(e.what());
    }
    pr.options.epsilon = number(p, "epsilon");
    pr.options.p_star = number(p, "p_star");
    pr.options.z_clip = number(p, "z_clip");
    pr.options.fallback = number(p, "fallback");
    pr.sensitivity = number(p, "sensitivity_l1");
    pr.noise_scale = number(p, "noise_scale");
    pr.noisy_aggregate = numbers(p, "noisy_aggregate");
    pr.probability = numbers(p, "probability");
    if (pr.noisy_aggregate.size() != pr.cutoffs.size() || pr.probability.size() != pr.cutoffs.size())
      fail("probabilities: noisy_aggregate and probability need one entry per cutoff");
    for (std::size_t k = 1; k < pr.cutoffs.size(); ++k)
      if (!(pr.cutoffs[k] > pr.cutoffs[k - 1])) fail("probabilities.cutoffs are not strictly increasing");
    if (!(pr.options.epsilon > 0 && pr.options.p_star > 0 && pr.options.p_star < 1 && pr.options.z_clip > 0 &&
          pr.options.fallback >= 0 && pr.options.fallback <= 1))
      fail("probabilities: epsilon > 0, p_star in (0, 1), z_clip > 0 and fallback in [0, 1] are required");
    const double sensitivity = static_cast<double>(pr.cutoffs.size()) * sample_aggregate_sensitivity(pr.options, pr.partitions);
    if (!close(pr.sensitivity, sensitivity) || !close(pr.noise_scale, sensitivity / pr.options.epsilon))
      fail("probabilities: sensitivity_l1 and noise_scale are not those of the combiner, M, the cutoffs and epsilon (" +
           std::to_string(sensitivity) + ", " + std::to_string(sensitivity / pr.options.epsilon) + ")");
    std::vector<double> recomputed(pr.cutoffs.size());
    for (std::size_t k = 0; k < recomputed.size(); ++k)
      recomputed[k] = combined_probability(pr.options, pr.partitions, pr.noisy_aggregate[k]);
    make_nondecreasing(recomputed);
    for (std::size_t k = 0; k < recomputed.size(); ++k)
      if (!close(pr.probability[k], recomputed[k]))
        fail("probabilities.probability is not the combiner's map of noisy_aggregate");
    pr.budget = {pr.options.epsilon, 0.0};
    spent += pr.options.epsilon;
    r.probabilities = std::move(pr);
  }
  if (j.contains("quantiles")) {
    const auto& q = j.at("quantiles");
    quantile_release qr;
    qr.partitions = static_cast<std::size_t>(whole(q, "partitions", 2, r.n / 2));
    qr.levels = numbers(q, "levels");
    for (std::size_t l = 0; l < qr.levels.size(); ++l)
      if (!(qr.levels[l] > 0 && qr.levels[l] < 1 && (l == 0 || qr.levels[l] > qr.levels[l - 1])))
        fail("quantiles.levels are not strictly increasing in (0, 1)");
    const auto& b = need(q, "bound_search");
    bound_search_options o;
    o.center = number(b, "center");
    o.base_half_width = number(b, "base_half_width");
    o.fraction = number(b, "fraction");
    o.max_half_width = number(b, "max_half_width");
    int last = 0;
    try {
      last = bound_search_last_index("quantiles.bound_search", o);
    } catch (const std::invalid_argument& e) {
      fail(e.what());
    }
    qr.bounds.center = o.center;
    qr.bounds.budget = {number(b, "epsilon"), 0.0};
    qr.bounds.doublings = static_cast<int>(whole(b, "doublings", 0, last));
    qr.bounds.half_width = number(b, "half_width");
    if (!need(b, "capped").is_boolean()) fail("quantiles.bound_search.capped is not true or false");
    qr.bounds.capped = b.at("capped").get<bool>();
    if (!close(qr.bounds.half_width, std::min(std::ldexp(o.base_half_width, qr.bounds.doublings), o.max_half_width)))
      fail("quantiles.bound_search.half_width is not min(base_half_width 2^doublings, max_half_width)");
    qr.epsilon_values = number(q, "epsilon");
    if (!(qr.bounds.budget.epsilon > 0 && qr.epsilon_values > 0)) fail("quantiles: both epsilons must be > 0");
    qr.sensitivity = number(q, "sensitivity_l1");
    qr.noise_scale = number(q, "noise_scale");
    const double sensitivity =
        static_cast<double>(qr.levels.size()) * 2.0 * qr.bounds.half_width / static_cast<double>(qr.partitions);
    if (!close(qr.sensitivity, sensitivity) || !close(qr.noise_scale, sensitivity / qr.epsilon_values))
      fail("quantiles: sensitivity_l1 and noise_scale are not L 2 b / M and that over epsilon");
    qr.noisy_aggregate = numbers(q, "noisy_aggregate");
    qr.values = numbers(q, "values");
    if (qr.noisy_aggregate.size() != qr.levels.size() || qr.values.size() != qr.levels.size())
      fail("quantiles: noisy_aggregate and values need one entry per level");
    auto sorted = qr.noisy_aggregate;
    std::sort(sorted.begin(), sorted.end());
    for (std::size_t l = 0; l < sorted.size(); ++l)
      if (!close(qr.values[l], sorted[l])) fail("quantiles.values are not noisy_aggregate sorted");
    qr.budget = {qr.bounds.budget.epsilon + qr.epsilon_values, 0.0};
    spent += qr.budget.epsilon;
    r.bound_options = o;
    r.quantiles = std::move(qr);
  }
  if (!r.probabilities && !r.quantiles) fail("neither 'probabilities' nor 'quantiles' is given");
  if (!close(spent, r.epsilon)) fail("epsilon is not the sum of the parts' epsilons (" + std::to_string(spent) + ")");
  return r;
}

/// privpost-infer on a partition record: prints the released values with their noise-only intervals (format "json": a
/// JSON document on standard output, the table on standard error). infer_partition.cpp.
int report_partition_release(const partition_record& r, const std::string& format);

}  // namespace privpost::tools
