// The tools' model types and what is generated from them: a type that lacks a member of its concept is no model of
// that kind (so a half-written model file fails to compile where it is listed, not at run time), and the option
// tables' words name the models their rules take, from the table itself.
#include <catch2/catch.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "../../examples/tools/bounded_family_tool.hpp"
#include "../../examples/tools/glm_tool.hpp"
#include "../../examples/tools/models.hpp"
#include "../../examples/tools/option_table.hpp"
#include "../../examples/tools/truncated_family_tool.hpp"
#include "privpost/inference/infer.hpp"

namespace tool_models_test {

using namespace privpost::tools;

// logistic_model without its title: no glm_tool.
struct untitled_glm {
  static constexpr std::string_view name = "untitled";
  static constexpr privpost::glm_kind kind = privpost::glm_kind::logistic;
  static constexpr std::uint8_t options = 0;
  static privpost::glm_statistic statistic(int d, double radius, double, std::optional<double> c) {
    return privpost::glm_statistic::logistic(d, radius, c);
  }
  static std::string sensitivity_rule(bool) { return ""; }
  using study_model = logistic_model::study_model;
  static constexpr privpost::glm_prior study_prior = logistic_model::study_prior;
  static constexpr double study_y_bound = 1.0;
  static constexpr std::string_view study_title = "", study_l1_note = "", study_l2_note = "";
};

// A placement that cannot hand the root's result to the other processes.
struct no_share {
  bool runs(int) const { return true; }
  int chains_here(int c) const { return c; }
  bool is_root() const { return true; }
  template <class F>
  void collectively(F&& f) const {
    f();
  }
  void gather(std::vector<privpost::detail::chain_payload>&) const {}
  bool agree(bool v) const { return v; }
  bool any(bool v) const { return v; }
};

static_assert(glm_tool<logistic_model> && glm_tool<poisson_glm_model>);
static_assert(!glm_tool<untitled_glm>);
static_assert(!truncated_family_tool<logistic_model> && !bounded_family_tool<logistic_model>);
static_assert(!glm_tool<int> && !truncated_family_tool<int> && !bounded_family_tool<int>);
// model_list and models_where take a rule over a row, not over a name or a kind.
template <class Pred>
concept row_rule = requires(Pred p) {
  model_list(p);
  models_where(p);
};
static_assert(row_rule<decltype(&model_rules::glm)> && row_rule<decltype(takes_option(0))>);
static_assert(!row_rule<bool (*)(std::string_view)> && !row_rule<int>);
static_assert(privpost::chain_placement<privpost::this_process>);
static_assert(!privpost::chain_placement<no_share>);

struct run_kind {
  const model_row* model = nullptr;
};

TEST_CASE("tool models: an option's words name the models its rule takes, from the model table", "[tools]") {
  CHECK(models_where(model_rules::glm) == "logistic and poisson-glm");
  CHECK(models_where(model_rules::covariates) == "linreg, logistic and poisson-glm");
  CHECK(models_where(model_rules::glm_counts) == "poisson-glm");
  CHECK(models_where(model_rules::glm_labels) == "logistic");
  CHECK(models_where(model_rules::table_columns) == "pairwise-tables and marginals");
  CHECK(models_where(model_rules::categories) == "multinomial");
  const auto row = for_models<run_kind, model_rules::glm>("--radius", "1", "the ", " releases");
  CHECK(row.applies_to == "the logistic and poisson-glm releases");
  // The rule and the words agree on every model (a name as a whole word: "poisson" is no GLM).
  std::string words = " " + row.applies_to + " ";
  for (char& c : words)
    if (c == ',') c = ' ';
  for (const auto& m : models) {
    const run_kind k{&m};
    CHECK(row.applies(k) == (m.kind == model_kind::glm));
    CHECK((words.find(" " + std::string(m.name) + " ") != std::string::npos) == (m.kind == model_kind::glm));
  }
}

TEST_CASE("tool models: the table is made from the model types, in order", "[tools]") {
  CHECK(model_choices(", ") ==
        "binomial, multinomial, poisson, exponential, normal-known-var, normal, rayleigh, linreg, logistic, poisson-glm, "
        "pairwise-tables, marginals");
  const model_row& linreg = find_model(linreg_model::name);
  CHECK(linreg.kind == model_kind::regression);
  CHECK(linreg.options == linreg_model::options);
  CHECK(linreg.default_thin == regression_thin);
  CHECK(find_model(pairwise_tables_model::name).options == pairwise_tables_model::options);
  CHECK(find_model(marginals_model::name).default_thin == marginals_thin);
  CHECK(find_model("logistic").kind == model_kind::glm);
  CHECK_THROWS_WITH(find_model("linear"), Catch::Contains("model 'linear' is unknown; accepted: binomial|multinomial|"));
}

}  // namespace tool_models_test
