// The models the tools know, one row each, made from one type per model. privpost-release, privpost-infer and
// privpost-calibrate find a model's row by name, take from it what the model accepts (its options, methods, default
// thinning), and call the implementation file of its kind: one file per kind and tool (release_<kind>.cpp,
// infer_<kind>.cpp, calibrate_<kind>.cpp).
//
// The family models and the GLMs are types with their behaviour, one file each in models/ (bounded_family_tool.hpp,
// truncated_family_tool.hpp, glm_tool.hpp): adding a family to the tools is its file and its entry in the kind's list.
// linreg, pairwise-tables and marginals, one model per kind, are types of the row's facts below, their behaviour in
// their kind's files; a new kind is its three files and one case in each tool's dispatch, which the compiler checks for
// completeness (-Wswitch). Every list of models a tool prints or accepts is derived from this table, so the help texts,
// the command-line checks and the error messages cannot drift apart.
#pragma once

#include <algorithm>
#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include "bounded_family_tool.hpp"
#include "glm_tool.hpp"
#include "model_flags.hpp"
#include "truncated_family_tool.hpp"

namespace privpost::tools {

struct model_row {
  std::string_view name;
  model_kind kind;
  /// The statistic is a vector of counts: on the unit lattice exactly (discrete mechanisms at granularity 1).
  bool counts;
  std::uint8_t methods;  ///< infer_method flags
  std::uint8_t options;  ///< infer_option flags
  /// privpost-infer's default thinning (samplers mix at different speeds; see infer_options.hpp).
  int default_thin;
};

/// Default thinning of the families' chains.
inline constexpr int family_thin = 2;
/// Default thinning of regression chains: their coefficients mix more slowly (bulk ESS ~ 600 of 4 x 1000 draws at thin
/// 2 on the cirrhosis release, where R-hat crossed 1.01 in ~1 of 10 fresh releases; 0 of 40 at thin 5).
inline constexpr int regression_thin = 5;
/// Every model's chains, unless a chain length or --target-ess is given or the model sets its own rule, are extended
/// until R-hat <= 1.01 and bulk and tail ESS >= 100 per chain for at most this many rounds, i.e. 8 times the default
/// kept draws (infer.hpp until_warning_thresholds). A posterior whose tail the release leaves to the prior (rayleigh's
/// truncated release when most records sit at the upper bound) gave tail ESS 311 of 4 x 1000 draws on one release.
inline constexpr int default_until_rounds = 4;
/// Regression chains, unless a chain length or --target-ess is given, are extended until R-hat <= 1.01 and bulk and
/// tail ESS >= 100 per chain for at most this many rounds (infer.hpp until_warning_thresholds): under the default
/// prior's weak precision (regression_prior_precision) the fixed cirrhosis release of the tests left R-hat 1.011 with
/// --moments prior after 4 x 1000 draws at thin 5.
inline constexpr int regression_until_rounds = 4;
/// The default prior precision of every regression coefficient on the declared box's [-1, 1] scale (privpost-infer's
/// linreg prior, privpost-release --partitions): a hundredth of a record. The box is public and often much wider than
/// the data (cirrhosis: wine declared in [0, 150], observed in [2, 31]); a precision of 1 then put a full pseudo-record
/// at the box's centre, far from every record, and decided the slope (0.53 against least squares' 2.86 at negligible
/// noise). At 0.01 the same release gives 2.74 (least squares' standard error 0.27; docs/model-regression.md).
inline constexpr double regression_prior_precision = 0.01;
/// Default thinning of NUTS chains (the GLMs): NUTS draws are nearly independent already.
inline constexpr int nuts_thin = 1;
/// Default thinning of the Bayesian CGM's chains (pairwise tables): the tables and the marginals move together slowly
/// where the noise is large against sd(n | mu) (bulk ESS ~ 35 of 4 x 1000 draws at thin 5 on the 10-chain at
/// epsilon 0.1, N = 10^4); --target-ess extends the chains where 10 is not enough.
inline constexpr int tables_thin = 10;
/// privpost-infer's default thinning of the Bayesian CGM's chains with its default shift moves (tables_shift_moves): the
/// moves take the tables and the marginals together by the posterior's width (on the 10-chain of docs/comparison.md,
/// 4 x (1000 + 1000 thin 2) with 4 moves a sweep: largest R-hat over 10 fits 1.003-1.029 where plain Gibbs-SS at thin
/// 10 reached 1.73).
inline constexpr int tables_shift_thin = 2;
/// @{
/// privpost-infer's default chain length for the Bayesian CGM with shift moves, unless --draws, --burnin or --target-ess
/// is given: 500 burn-in sweeps and 1000 draws a chain, then, where some cell's R-hat is above 1.01, once more as many
/// draws (infer_until's doubling: 2000 a chain). On the chain grid of docs/comparison.md 1000 draws left the largest
/// R-hat over 10 fits above 1.01 in 11 of 18 settings (up to 1.029); 2000 after 500 burn-in sweeps brought every
/// setting to 1.010 or below. A fit that converges in the first round costs 2500 sweeps a chain, one that needs the
/// second 4500.
inline constexpr int tables_until_burnin = 500;
inline constexpr int tables_until_draws = 1000;
inline constexpr int tables_until_rounds = 2;
/// @}
/// privpost-infer's default shift moves a sweep of the Bayesian CGM (gibbs_ss::set_shift_moves) on Laplace and Gaussian
/// releases.
inline constexpr int tables_shift_moves = 4;

/// Default thinning of the histogram sampler's chains (marginals): a sweep moves every record once, and the cells of a
/// declared 2-way table mix slowly under strong noise (bulk ESS ~ 600 of 4 x 1000 draws at thin 2 on the House votes
/// release of examples/housevotes_marginals.cpp, with R-hat up to 1.014).
inline constexpr int marginals_thin = 5;
/// privpost-infer's default for the histogram sampler (marginals, pairwise-tables --method records) unless --draws,
/// --burnin or --target-ess is given: the chains are extended (infer_until, doubling the kept draws) until every reported
/// quantity has R-hat <= 1.01 and bulk and tail ESS >= 100 per chain (the tools' own warning thresholds), for at most
/// this many rounds. On the House votes releases of docs/histogram-measurements.md (the joint marginals, and the pairwise
/// tables read by --method records) the first round (4 x 1000 draws at thin 5) left R-hat up to 1.03 and bulk ESS 146,
/// and fresh releases needed 3 to 6 rounds (21,000 to 161,000 sweeps a chain; 4-35 s with 2 chains at a time): the
/// sampler mixes slowly on some draws of the noise, and the cap, 641,000 sweeps a chain, leaves room for two more
/// doublings. The slow margins are those of columns in 1-way margins only, under the default prior's sparsity
/// (docs/histogram-measurements.md): a larger --prior mixes far faster.
inline constexpr int marginals_until_rounds = 8;

/// The kinds with one model each, as types like the families' and the GLMs': the row's facts (name, kind, whether the
/// statistic is a vector of counts, privpost-infer's --method values and options, default thinning). Their release,
/// inference and study are their kind's files (release_<kind>.cpp, infer_<kind>.cpp, calibrate_<kind>.cpp).
struct linreg_model {
  static constexpr std::string_view name = "linreg";
  static constexpr model_kind kind = model_kind::regression;
  static constexpr bool counts = false;
  static constexpr std::uint8_t methods = method_records;
  static constexpr std::uint8_t options = option_moments;
  static constexpr int default_thin = regression_thin;
  static constexpr std::string_view prior_meaning =
      "mu_0..mu_{p-1},lambda_0..lambda_{p-1} (diagonal precision),a,b of the normal-inverse-gamma prior (default zeros, "
      "0.01s, 2, 1; for releases on the declared box's [-1, 1] scale, the default, the prior is on that scale: intercept "
      "first)";
};
struct pairwise_tables_model {
  static constexpr std::string_view name = "pairwise-tables";
  static constexpr model_kind kind = model_kind::tables;
  static constexpr bool counts = true;
  static constexpr std::uint8_t methods = method_records;
  static constexpr std::uint8_t options = option_collapsed_moves | option_shift_moves | option_map_em | option_max_minutes;
  static constexpr int default_thin = tables_thin;
  static constexpr std::string_view prior_meaning =
      "alpha_0, the hyper-Dirichlet pseudo-count of MAP-EM and the posterior's prior (default 10)";
};
struct marginals_model {
  static constexpr std::string_view name = "marginals";
  static constexpr model_kind kind = model_kind::marginals;
  static constexpr bool counts = true;
  static constexpr std::uint8_t methods = method_records;
  static constexpr std::uint8_t options = 0;
  static constexpr int default_thin = marginals_thin;
  static constexpr std::string_view prior_meaning =
      "(and pairwise-tables --method records) alpha_0, the Dirichlet's total pseudo-count spread evenly over the table's "
      "cells (default 10), or one pseudo-count per cell";
};

namespace model_table_detail {
// The rows of the family models' types: M's row unless an earlier type of the list has its name (the multinomial
// models, one type per K, are one row).
// Whether names[i] is the first entry of its name.
template <std::size_t N>
constexpr bool first_named(const std::array<std::string_view, N>& names, std::size_t i) {
  for (std::size_t j = 0; j < i; ++j)
    if (names[j] == names[i]) return false;
  return true;
}
template <class... M>
constexpr std::size_t distinct_names(std::type_identity<std::tuple<M...>>) {
  const std::array<std::string_view, sizeof...(M)> names{M::name...};
  std::size_t count = 0;
  for (std::size_t i = 0; i < names.size(); ++i) count += first_named(names, i) ? 1 : 0;
  return count;
}
template <class M>
constexpr model_row family_row() {
  if constexpr (bounded_family_tool<M>)
    return {M::name, model_kind::bounded_family, true, M::methods, M::options, family_thin};
  else
    return {M::name, model_kind::unbounded_family, M::family::discrete, method_records, 0, family_thin};
}
template <class List>
constexpr auto family_rows() {
  return []<class... M>(std::type_identity<std::tuple<M...>>) {
    const std::array<model_row, sizeof...(M)> all{family_row<M>()...};
    const std::array<std::string_view, sizeof...(M)> names{M::name...};
    std::array<model_row, distinct_names(std::type_identity<List>{})> rows{};
    std::size_t k = 0;
    for (std::size_t i = 0; i < all.size(); ++i)
      if (first_named(names, i)) rows[k++] = all[i];
    return rows;
  }(std::type_identity<List>{});
}
template <class... M>
constexpr auto glm_rows(std::type_identity<std::tuple<M...>>) {
  return std::array<model_row, sizeof...(M)>{model_row{M::name, model_kind::glm, false, 0, M::options, nuts_thin}...};
}
template <class... M>
constexpr auto kind_rows(std::type_identity<std::tuple<M...>>) {
  return std::array<model_row, sizeof...(M)>{model_row{M::name, M::kind, M::counts, M::methods, M::options, M::default_thin}...};
}
template <std::size_t... N>
constexpr std::array<model_row, (N + ...)> join(const std::array<model_row, N>&... parts) {
  std::array<model_row, (N + ...)> out{};
  std::size_t k = 0;
  ((std::copy(parts.begin(), parts.end(), out.begin() + static_cast<std::ptrdiff_t>(k)), k += N), ...);
  return out;
}
}  // namespace model_table_detail

/// Every model, a row made from each type: the bounded and the truncated families, linreg, the GLMs, the tables.
inline constexpr auto models = model_table_detail::join(
    model_table_detail::family_rows<bounded_family_models>(), model_table_detail::family_rows<truncated_family_models>(),
    model_table_detail::kind_rows(std::type_identity<std::tuple<linreg_model>>{}),
    model_table_detail::glm_rows(std::type_identity<glm_models>{}),
    model_table_detail::kind_rows(std::type_identity<std::tuple<pairwise_tables_model, marginals_model>>{}));

/// The names of every model, in the table's order (for the command lines' checks).
inline std::vector<std::string> model_names() {
  std::vector<std::string> names;
  for (const auto& m : models) names.emplace_back(m.name);
  return names;
}

/// "binomial|multinomial|...": the --model help text (sep "|"), or a list for messages (sep ", ").
inline std::string model_choices(std::string_view sep = "|") {
  std::string text;
  for (const auto& m : models) text += (text.empty() ? "" : std::string(sep)) + std::string(m.name);
  return text;
}

/// The row of a model, or nullptr for a name no row has.
inline const model_row* model_named(std::string_view name) {
  for (const auto& m : models)
    if (m.name == name) return &m;
  return nullptr;
}

/// The row of a model; std::invalid_argument naming the accepted names for any other (a hostile release record's
/// "model" field reaches here).
inline const model_row& find_model(std::string_view name) {
  if (const model_row* m = model_named(name)) return *m;
  throw std::invalid_argument("model '" + std::string(name) + "' is unknown; accepted: " + model_choices());
}

/// The exponential-family models (one statistic vector: Gibbs-SS and its exact variants, the lattice mechanisms).
inline bool is_family_model(std::string_view name) {
  const model_row* m = model_named(name);
  return m != nullptr && (m->kind == model_kind::bounded_family || m->kind == model_kind::unbounded_family);
}

/// The kind of a model; std::invalid_argument for a name no row has.
inline model_kind kind_of(std::string_view name) { return find_model(name).kind; }

/// "binomial, multinomial, poisson, ...": the family models, for messages.
inline std::string family_model_list() {
  std::string text;
  for (const auto& m : models)
    if (is_family_model(m.name)) text += (text.empty() ? "" : ", ") + std::string(m.name);
  return text;
}

/// The models whose rows satisfy pred, as an English list for error messages: "binomial, multinomial and linreg";
/// when every unbounded family qualifies they are named together ("... and the unbounded models'"), so that the
/// message stays short as families are added.
template <std::predicate<const model_row&> Pred>
std::string models_where(Pred pred) {
  std::vector<std::string> names;
  bool all_unbounded = true, any_unbounded = false;
  for (const auto& m : models) {
    if (m.kind != model_kind::unbounded_family) continue;
    any_unbounded = true;
    all_unbounded = all_unbounded && pred(m);
  }
  const bool group = any_unbounded && all_unbounded;
  for (const auto& m : models)
    if (pred(m) && !(group && m.kind == model_kind::unbounded_family)) names.emplace_back(m.name);
  if (group) names.emplace_back("the unbounded models'");
  std::string text;
  for (std::size_t i = 0; i < names.size(); ++i) text += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  return text;
}

/// "binomial Beta a,b (default 1,1); ...": every model's --prior, for privpost-infer's help, from the model types (one
/// entry per name; the GLMs share one prior, glm_prior_meaning).
inline std::string prior_help() {
  std::string text;
  std::vector<std::string_view> seen;
  auto add = [&]<class... M>(std::type_identity<std::tuple<M...>>) {
    (
        [&] {
          if (std::find(seen.begin(), seen.end(), M::name) != seen.end()) return;  // a model with one type per K
          seen.push_back(M::name);
          std::string fallback;
          if constexpr (requires { M::prior_default_help; })
            fallback = M::prior_default_help;
          else
            fallback = M::prior_default;
          text += (text.empty() ? "" : "; ") + std::string(M::name) + " " + std::string(M::prior_meaning) +
                  (fallback.empty() ? std::string(" (required)") : " (default " + fallback + ")");
        }(),
        ...);
  };
  add(std::type_identity<bounded_family_models>{});
  add(std::type_identity<truncated_family_models>{});
  for (auto [name, meaning] : {std::pair{linreg_model::name, linreg_model::prior_meaning},
                               std::pair{pairwise_tables_model::name, pairwise_tables_model::prior_meaning},
                               std::pair{marginals_model::name, marginals_model::prior_meaning}})
    text += "; " + std::string(name) + " " + std::string(meaning);
  return text + "; " + models_where([](const model_row& m) { return m.kind == model_kind::glm; }) + " " +
         std::string(glm_prior_meaning);
}

/// "logistic, poisson-glm": the models whose rows satisfy pred, comma-separated in the table's order, for a help text's
/// "MODELS: what the option does" (generated, so that a new model is named wherever its options apply).
template <std::predicate<const model_row&> Pred>
std::string model_list(Pred pred) {
  std::string text;
  for (const auto& m : models)
    if (pred(m)) text += (text.empty() ? "" : ", ") + std::string(m.name);
  return text;
}

/// The rule "the row takes privpost-infer's option flag" (infer_option), for model_list.
inline auto takes_option(std::uint8_t flag) {
  return [flag](const model_row& m) { return (m.options & flag) != 0; };
}

/// The model rules the tools' option tables share (option_table.hpp for_models): which rows take an option.
namespace model_rules {
inline bool glm(const model_row& m) { return m.kind == model_kind::glm; }
/// The GLMs whose responses are counts with a declared bound (--y-bound).
inline bool glm_counts(const model_row& m) { return m.kind == model_kind::glm && tools::glm_counts(m.name); }
/// The GLMs whose responses are labels (--positive).
inline bool glm_labels(const model_row& m) { return m.kind == model_kind::glm && !tools::glm_counts(m.name); }
inline bool regression(const model_row& m) { return m.kind == model_kind::regression; }
/// Covariates and a response: linreg and the GLMs.
inline bool covariates(const model_row& m) { return regression(m) || glm(m); }
inline bool tables(const model_row& m) { return m.kind == model_kind::tables; }
inline bool marginals(const model_row& m) { return m.kind == model_kind::marginals; }
/// Records of discrete columns: pairwise-tables and marginals.
inline bool table_columns(const model_row& m) { return tables(m) || marginals(m); }
/// A --categories count (a family model with one type per K).
inline bool categories(const model_row& m) { return takes_categories(m.name); }
inline bool unbounded_family(const model_row& m) { return m.kind == model_kind::unbounded_family; }
}  // namespace model_rules

}  // namespace privpost::tools
