// The release record reader (examples/tools/release_record.hpp from_json): every field of every record type is checked
// with overflow-safe arithmetic and range-checked integers, the declared bounds must give the recorded sensitivity,
// and released values no honest release produces are refused. Each refusal names the field and the accepted values.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>
#include <string>
#include <variant>
#include <vector>

#include "../../examples/tools/release_record.hpp"

using nlohmann::json;
using privpost::tools::from_json;
using privpost::tools::release_record;
using privpost::tools::to_json;

namespace {

std::string refusal(const json& j) {
  try {
    from_json(j);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "accepted";
}

// A consistent record of each kind, as privpost-release writes it (Laplace, epsilon 1, every statistic 0).
json consistent(release_record r) {
  r.mechanism = "laplace";
  r.epsilon = 1.0;
  r.version = "test";
  r.sensitivity = privpost::tools::record_detail::declared_sensitivity(r);
  r.noise = r.sensitivity;
  return to_json(r);
}

json binomial() {
  auto r = release_record::of_model("binomial");
  r.n = 100;
  r.policy = "none";
  r.noisy_statistics = {40.5};
  return consistent(r);
}

// A truncated family's record: records in [0, 8], 50 of them, the out-of-bounds ones dropped.
json truncated(const std::string& model, double noisy) {
  auto r = release_record::of_model(model);
  r.n = 50;
  r.policy = "drop";
  r.family().has_bounds = true;
  r.family().lower = 0;
  r.family().upper = 8;
  r.noisy_statistics = {noisy};
  return consistent(r);
}

json exponential() { return truncated("exponential", 120); }

// A truncated family added to the tools in one file (examples/tools/models/rayleigh.hpp): t(x) = x^2.
json rayleigh() { return truncated("rayleigh", 400); }

json linreg() {
  auto r = release_record::of_model("linreg");
  r.n = 30;
  r.policy = "clamp";
  r.regression().covariates = {"x1", "x2"};
  r.regression().response = "y";
  r.regression().covariate_bounds = {{0, 10}, {-1, 1}};
  r.regression().response_bounds = {0, 100};
  r.regression().unit_scaled = true;
  r.noisy_statistics.assign(static_cast<std::size_t>(privpost::regression_layout(2, true).size()), 0.0);
  return consistent(r);
}

json logistic() {
  auto r = release_record::of_model("logistic");
  r.n = 200;
  r.policy = "clamp";
  r.glm().covariates = {"glucose", "age"};
  r.glm().response = "diabetes";
  r.glm().glm_scale = "unit_ball";
  r.glm().radius = 1.0;
  r.glm().covariate_bounds = {{0, 200}, {20, 80}};
  const auto statistic = privpost::glm_statistic::logistic(2, 1.0, 1.0);
  r.glm().statistic_names = statistic.names(r.glm().covariates);
  r.noisy_statistics.assign(static_cast<std::size_t>(statistic.size()), 0.0);
  return consistent(r);
}

json tables() {
  auto r = release_record::of_model("pairwise-tables");
  r.n = 100;
  r.policy = "none";
  r.tables().nodes = {"a", "b", "c"};
  r.tables().levels = {{"y", "n"}, {"y", "n"}, {"lo", "mid", "hi"}};
  r.tables().edges = {{0, 1}, {1, 2}};
  r.noisy_statistics.assign(4 + 6, 10.0);
  return consistent(r);
}

// A marginals record: two columns, released as the first column's 1-way table and the 2-way table.
json marginals() {
  auto r = release_record::of_model("marginals");
  r.n = 100;
  r.policy = "none";
  r.marginals().nodes = {"a", "b"};
  r.marginals().levels = {{"y", "n"}, {"lo", "mid", "hi"}};
  r.marginals().marginal_tables = {{0}, {0, 1}};
  r.noisy_statistics.assign(2 + 6, 10.0);
  return consistent(r);
}

}  // namespace

TEST_CASE("release record: consistent records of every kind are read", "[record]") {
  for (const json& j : {binomial(), exponential(), rayleigh(), linreg(), logistic(), tables(), marginals()}) {
    INFO(j.dump());
    CHECK(refusal(j) == "accepted");
  }
  const auto r = from_json(tables());
  CHECK(r.tables().edges == std::vector<std::pair<int, int>>{{0, 1}, {1, 2}});
}

TEST_CASE("release record: each model kind has its own typed part, and a record reads back as written", "[record]") {
  using privpost::tools::family_release;
  using privpost::tools::glm_release;
  using privpost::tools::marginals_release;
  using privpost::tools::regression_release;
  using privpost::tools::tables_release;
  const auto r = from_json(logistic());
  CHECK(std::holds_alternative<family_release>(from_json(binomial()).payload));
  CHECK(std::holds_alternative<family_release>(from_json(exponential()).payload));
  CHECK(std::holds_alternative<regression_release>(from_json(linreg()).payload));
  CHECK(std::holds_alternative<glm_release>(r.payload));
  CHECK(std::holds_alternative<tables_release>(from_json(tables()).payload));
  CHECK(std::holds_alternative<marginals_release>(from_json(marginals()).payload));
  CHECK(r.glm().covariates == std::vector<std::string>{"glucose", "age"});
  CHECK(r.covariate_part().response == "diabetes");
  CHECK(from_json(marginals()).table_part().nodes == std::vector<std::string>{"a", "b"});
  for (const json& j : {binomial(), exponential(), rayleigh(), linreg(), logistic(), tables(), marginals()}) {
    INFO(j.dump());
    CHECK(to_json(from_json(j)) == j);
  }
  // Asking a record for another kind's part, or writing a record whose part is not its model's, is a tool bug.
  CHECK_THROWS_WITH(r.tables(), "release record of the logistic model has no graph part");
  CHECK_THROWS_AS(from_json(binomial()).regression(), std::logic_error);
  auto wrong = release_record::of_model("logistic");
  wrong.payload = tables_release{};
  CHECK_THROWS_AS(to_json(wrong), std::logic_error);
}

TEST_CASE("release record: values no honest release produces are refused by one rule", "[record]") {
  json j = binomial();
  // 40 noise scales below the smallest count: improbable (e^-40) but a release; 51 scales: refused.
  j["noisy_statistics"] = {-40.0};
  CHECK(refusal(j) == "accepted");
  for (const double z : {1e20, 1e10, 151.0, -51.0}) {
    j["noisy_statistics"] = {z};
    INFO(z);
    CHECK_THAT(refusal(j), Catch::Contains("noisy_statistics[0] is") && Catch::Contains("lies in [0, 100]") &&
                               Catch::Contains("50 noise scales outside is no release of this mechanism"));
  }
  // A truncated family's range is n times what one record adds, from its statistic on the declared bounds (x^2 in
  // [0, 64] for the rayleigh model, 50 records, noise scale 64).
  json r = rayleigh();
  r["noisy_statistics"] = {50.0 * 64.0 + 50.0 * 64.0};
  CHECK(refusal(r) == "accepted");
  r["noisy_statistics"] = {50.0 * 64.0 + 51.0 * 64.0};
  CHECK_THAT(refusal(r), Catch::Contains("lies in [0, 3200]"));
  r["noisy_statistics"] = {1.0, 2.0};  // a second statistic the family does not have: left to the length check
  CHECK(refusal(r) == "accepted");
  json g = logistic();
  g["noisy_statistics"][3] = 1e15;
  CHECK_THAT(refusal(g), Catch::Contains("noisy_statistics[3] is 1000000000000000"));
}

TEST_CASE("release record: the sensitivity must follow from the declared bounds, overflow included", "[record]") {
  json j = binomial();
  j["mechanism"]["sensitivity"] = 2.0;
  CHECK_THAT(refusal(j), Catch::Contains("'sensitivity' is 2; the declared bounds of this binomial release give 1"));
  json e = exponential();
  e["bounds"]["upper"] = 4.0;  // bounds that do not give the recorded sensitivity 8
  CHECK_THAT(refusal(e), Catch::Contains("the declared bounds of this exponential release give 4"));
  json ry = rayleigh();
  ry["mechanism"]["sensitivity"] = 8.0;  // the exponential's sensitivity on these bounds, not x^2's
  ry["mechanism"]["scale"] = 8.0;
  CHECK_THAT(refusal(ry), Catch::Contains("the declared bounds of this rayleigh release give 64"));
  e = exponential();
  e["bounds"] = {{"lower", -1e308}, {"upper", 1e308}};
  CHECK_THAT(refusal(e), Catch::Contains("accepted: finite lo < hi with a finite width"));
  json l = linreg();
  l["regression"]["response_bounds"] = {100, 0};  // reversed: would flip the slope's sign
  CHECK_THAT(refusal(l), Catch::Contains("regression response_bounds is [100,0]; accepted: finite lo < hi"));
  l = linreg();
  l["regression"]["covariate_bounds"][0] = {1, 1};  // equal: sigma^2 = 0
  CHECK_THAT(refusal(l), Catch::Contains("a regression covariate bound is [1,1]"));
  l = linreg();
  l["regression"]["scale"] = "raw";  // the raw scale's bounds give another sensitivity than the recorded unit box's
  CHECK_THAT(refusal(l), Catch::Contains("the declared bounds of this linreg release give"));
  json g = logistic();
  g["glm"]["radius"] = 1e300;
  CHECK_THAT(refusal(g), Catch::Contains("glm radius is") && Catch::Contains("accepted: a number in (0, 1e6]"));
  auto p = release_record::of_model("poisson-glm");
  p.n = 10;
  p.glm().covariates = {"x"};
  p.glm().glm_scale = "raw";
  p.glm().radius = 2.0;
  p.glm().y_bound = 5.0;
  p.policy = "clamp";
  const auto ps = privpost::glm_statistic::poisson(1, 2.0, 5.0, 1.0);
  p.glm().statistic_names = ps.names(p.glm().covariates);
  p.noisy_statistics.assign(static_cast<std::size_t>(ps.size()), 0.0);
  json pj = consistent(p);
  CHECK(refusal(pj) == "accepted");
  pj["glm"]["y_bound"] = 1e100;
  CHECK_THAT(refusal(pj), Catch::Contains("glm y_bound is") && Catch::Contains("accepted: a number in [1, 1e9]"));
}

TEST_CASE("release record: integers are range-checked before any conversion", "[record]") {
  json t = tables();
  t["graph"]["edges"][1] = {1, 4294967298.0};
  CHECK_THAT(refusal(t), Catch::Contains("a graph edge's second node index is 4294967298; accepted: a whole number in [0, 2]"));
  t["graph"]["edges"][1] = {1, 1.5};
  CHECK_THAT(refusal(t), Catch::Contains("second node index is 1.5"));
  json m = binomial();
  m["model"] = "multinomial";
  m["mechanism"]["sensitivity"] = 2.0;
  m["mechanism"]["scale"] = 2.0;
  m["noisy_statistics"] = {10.0, 20.0};
  for (const double k : {1e300, 6.0, 1.0, -2147483648.0}) {
    m["categories"] = k;
    INFO(k);
    CHECK_THAT(refusal(m), Catch::Contains("categories is") && Catch::Contains("accepted: a whole number in [2, 5]"));
  }
  m["categories"] = 3;
  CHECK(refusal(m) == "accepted");
  json n = binomial();
  n["n"] = 1e300;
  CHECK_THAT(refusal(n), Catch::Contains("n is 1e+300; accepted: a whole number in [1, 9007199254740992]"));
}

TEST_CASE("release record: a family's column name is read back; a bad one or one on another model is refused", "[record]") {
  json b = binomial();
  CHECK(from_json(b).family().column.empty());  // records written before the field: no name
  b["column"] = "sick, \"yes\"";
  CHECK(from_json(b).family().column == "sick, \"yes\"");
  b["column"] = "two\nlines";
  CHECK_THAT(refusal(b), Catch::Contains("accepted: a non-empty name without control characters"));
  b["column"] = "";
  CHECK_THAT(refusal(b), Catch::Contains("accepted: a non-empty name"));
  b["column"] = 3;
  CHECK(refusal(b) != "accepted");
  json l = linreg();
  l["column"] = "y";
  CHECK_THAT(refusal(l), Catch::Contains("field 'column' belongs to the family models"));
}

TEST_CASE("release record: names, policies, orientation and lattice fields are checked", "[record]") {
  json t = tables();
  t["graph"]["nodes"][2] = "a";
  CHECK_THAT(refusal(t), Catch::Contains("graph nodes: 'a' is given twice"));
  t = tables();
  t["graph"]["levels"][2] = {"lo", "lo", "hi"};
  CHECK_THAT(refusal(t), Catch::Contains("graph levels of node 'c': 'lo' is given twice"));
  t = tables();
  t["graph"]["edges"][0] = {1, 0};  // stored as declared, larger index first: its table would be read transposed
  CHECK_THAT(refusal(t), Catch::Contains("graph edge [1,0]; accepted: [u, v] with u < v"));
  json l = linreg();
  l["regression"]["covariates"] = {"x1", "x1"};
  CHECK_THAT(refusal(l), Catch::Contains("regression covariates: 'x1' is given twice"));
  l = linreg();
  l["regression"]["intercept"] = 1;
  CHECK_THAT(refusal(l), Catch::Contains("regression field 'intercept' is not true or false"));

  json e = exponential();
  e["truncation_policy"] = "maybe";
  CHECK_THAT(refusal(e), Catch::Contains("truncation_policy 'maybe'; accepted for the exponential model: drop"));
  e.erase("truncation_policy");
  CHECK_THAT(refusal(e), Catch::Contains("missing field 'truncation_policy'"));
  json b = binomial();
  b.erase("truncation_policy");  // means nothing for counts: may be left out
  CHECK(refusal(b) == "accepted");
  b["truncation_policy"] = "clamp";
  CHECK_THAT(refusal(b), Catch::Contains("accepted for the binomial model: none"));

  json d = binomial();
  d["mechanism"] = {{"name", "discrete-laplace"}, {"epsilon", 1},       {"sensitivity", 1},       {"scale", 1},
                    {"granularity", 1},           {"lattice", "exact"}, {"lattice_dimension", 1}, {"lattice_sensitivity", -1}};
  d["noisy_statistics"] = {40.0};
  CHECK_THAT(refusal(d), Catch::Contains("'lattice_sensitivity' is -1.000000; accepted: a finite number > 0"));
  d["mechanism"]["lattice_sensitivity"] = 1;
  CHECK(refusal(d) == "accepted");
  d["mechanism"]["lattice_dimension"] = 4294967297.0;
  CHECK_THAT(refusal(d), Catch::Contains("'lattice_dimension' is 4294967297; accepted: a whole number in [1, 100000"));
}

TEST_CASE("release record: GLM statistics are matched to the model by name", "[record]") {
  json g = logistic();
  auto names = g["glm"]["statistic_names"];
  std::reverse(names.begin(), names.end());
  g["glm"]["statistic_names"] = names;
  CHECK_THAT(refusal(g),
             Catch::Contains("glm statistic_names[0] is") && Catch::Contains("(statistics in another order cannot be analysed)"));
  g = logistic();
  g["glm"]["statistic_names"].erase(0);
  CHECK_THAT(refusal(g), Catch::Contains("glm statistic_names has 7 names; the logistic model with 2 covariate(s) and an "
                                         "intercept releases 8"));
  // intercept: true (c = 1), a number, false or null (none); false is read as no intercept, not "not a number".
  g = logistic();
  g["glm"]["intercept"] = true;
  CHECK(refusal(g) == "accepted");
  g["glm"]["intercept"] = false;
  CHECK_THAT(refusal(g), Catch::Contains("glm statistic_names has 8 names; the logistic model with 2 covariate(s) releases 5"));
}
