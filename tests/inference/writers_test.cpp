// Tests of run() and its writers (inference/run.hpp, inference/writers.hpp). The CmdStan CSV files are read back by
// the independent reader of tests/support/cmdstan_csv.hpp, the JSON by nlohmann-json.
//  1. the reader accepts a file laid out as CmdStan writes one (configuration comments, sampler columns, adaptation
//     and timing comments) and refuses each broken rule with a message naming it;
//  2. a NUTS run (Stan's seven sampler columns) and a Gibbs-SS run (none) round-trip exactly: configuration, column
//     names theta.1 ... theta.D with their labels, every draw and diagnostic bit for bit;
//  3. the CmdStan writer refuses labels that do not match the draws;
//  4. run() gives every writer the same result that infer (or infer_until, with a target) returns for the seed, and
//     tells writers with progress() the run's progress; names of the wrong length are refused;
//  5. the draws CSV writer's rows read back to the draws (17 digits) under one header for several methods;
//  6. the JSON summary is valid JSON whose figures are the posterior's, NaN written as null, names escaped;
//  7. the summary table names every parameter and the repairs.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <catch2/catch.hpp>

#include <Eigen/Core>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "privpost/families/binomial.hpp"
#include "privpost/inference/infer.hpp"
#include "privpost/inference/run.hpp"
#include "privpost/inference/writers.hpp"
#include "privpost/mechanisms/laplace.hpp"
#include "privpost/samplers/gibbs_ss.hpp"
#include "privpost/samplers/nuts.hpp"
#include "support/cmdstan_csv.hpp"

using namespace privpost;
using privpost::test::read_cmdstan_csv;

namespace {

// A file in the layout of CmdStan's own output (bernoulli example, abridged).
const char* const cmdstan_like = R"(# stan_version_major = 2
# model = bernoulli_model
# method = sample (Default)
#   sample
#     num_samples = 6
#     num_warmup = 1000 (Default)
#     save_warmup = 0 (Default)
#     thin = 2
#     algorithm = hmc (Default)
# id = 1 (Default)
# random
#   seed = 1234
lp__,accept_stat__,stepsize__,treedepth__,n_leapfrog__,divergent__,energy__,theta,beta.1,beta.2
# Adaptation terminated
# Step size = 0.93
# Diagonal elements of inverse mass matrix:
# 0.51
-7.3,0.95,0.93,1,3,0,7.5,0.2,1e-3,-4
-6.9,1,0.93,2,3,0,7.2,0.25,nan,inf
-7.0,0.8,0.93,1,1,0,7.1,0.22,0,-inf
#
#  Elapsed Time: 0.005 seconds (Warm-up)
)";

// The reader's message for `text`, or "" when it reads.
std::string refusal(const std::string& text) {
  std::istringstream in(text);
  try {
    (void)read_cmdstan_csv(in);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

std::string replaced(std::string s, const std::string& from, const std::string& to) {
  const auto at = s.find(from);
  REQUIRE(at != std::string::npos);
  return s.replace(at, from.size(), to);
}

struct standard_normal_2 {
  Eigen::Index dimension() const { return 2; }
  double log_density_gradient(const Eigen::VectorXd& u, Eigen::VectorXd& grad) const {
    grad = -u;
    return -0.5 * u.squaredNorm();
  }
};

// Writes every chain of r, reads each back and checks it against r and the header.
void round_trip(const inference_result& r, const run_header& h) {
  const cmdstan_csv_writer writer("unused", "test", {{"epsilon", "0.5"}, {"n", "200.0"}}, "release", "release_");
  for (std::size_t c = 0; c < r.draws.chains().size(); ++c) {
    std::stringstream file;
    writer.write_chain(file, h, r, c);
    const auto back = read_cmdstan_csv(file);
    CHECK(back.at("model") == "test");
    CHECK(back.at("algorithm") == h.method);
    CHECK(back.at("id") == std::to_string(c + 1));
    CHECK(back.at("seed") == std::to_string(h.seed));
    CHECK(back.at("thin") == std::to_string(h.thin));
    CHECK(back.at("num_warmup") == std::to_string(h.burnin));
    CHECK(back.at("release_epsilon") == "0.5");
    const Eigen::MatrixXd& x = r.draws.chains()[c];
    REQUIRE(back.sampler_columns == r.diagnostic_names.size());
    REQUIRE(back.columns.size() == r.diagnostic_names.size() + h.names.size());
    for (std::size_t k = 0; k < r.diagnostic_names.size(); ++k) CHECK(back.columns[k] == r.diagnostic_names[k]);
    for (std::size_t j = 0; j < h.names.size(); ++j) {
      const std::string name = "theta." + std::to_string(j + 1);
      CHECK(back.columns[back.sampler_columns + j] == name);
      CHECK(back.at(name) == h.names[j]);
    }
    REQUIRE(static_cast<Eigen::Index>(back.rows.size()) == x.rows());
    for (Eigen::Index i = 0; i < x.rows(); ++i) {
      const auto& row = back.rows[static_cast<std::size_t>(i)];
      for (std::size_t k = 0; k < back.sampler_columns; ++k) CHECK(row[k] == r.diagnostics[c](i, static_cast<Eigen::Index>(k)));
      for (Eigen::Index j = 0; j < x.cols(); ++j) CHECK(row[back.sampler_columns + static_cast<std::size_t>(j)] == x(i, j));
    }
  }
}

run_header header_of(const std::string& method, const inference_options& io, std::vector<std::string> names) {
  return {method, method, std::move(names), io.burnin, io.thin, io.seed, true};
}

// A writer that keeps what it is told.
struct recording_writer {
  int progress_calls = 0;
  std::int64_t last_done = 0;
  std::vector<run_header> headers;
  std::vector<Eigen::MatrixXd> first_chains;
  void progress(const inference_progress& p) {
    ++progress_calls;
    last_done = p.done;
  }
  void write(const run_header& h, const inference_result& r) {
    headers.push_back(h);
    first_chains.push_back(r.draws.chains().front());
  }
};

}  // namespace

TEST_CASE("the CmdStan CSV reader accepts CmdStan's layout and refuses broken files by name", "[cmdstan]") {
  std::istringstream in(cmdstan_like);
  const auto f = read_cmdstan_csv(in);
  CHECK(f.at("model") == "bernoulli_model");
  CHECK(f.at("method") == "sample");
  CHECK(f.sampler_columns == 7);
  REQUIRE(f.rows.size() == 3);
  CHECK(f.rows[1][7] == 0.25);
  CHECK(std::isnan(f.rows[1][8]));
  CHECK(f.rows[2][9] == -std::numeric_limits<double>::infinity());
  const std::string text = cmdstan_like;
  CHECK_THAT(refusal(replaced(text, ",beta.1,", ",beta.0,")), Catch::Contains("'beta.0' is not a Stan name"));
  CHECK_THAT(refusal(replaced(text, ",beta.1,", ",1beta,")), Catch::Contains("'1beta' is not a Stan name"));
  CHECK_THAT(refusal(replaced(text, ",beta.1,", ",theta,")), Catch::Contains("'theta' appears twice"));
  CHECK_THAT(refusal(replaced(text, "energy__,theta", "theta,energy__")), Catch::Contains("sampler column 'energy__' after"));
  CHECK_THAT(refusal(replaced(text, ",0.25,nan,inf", ",0.25,nan")), Catch::Contains("9 fields for 10 columns"));
  CHECK_THAT(refusal(replaced(text, "0.22,0,-inf", "0.22,0,x")), Catch::Contains("field 'x' is not a number"));
  CHECK_THAT(refusal(replaced(text, "num_samples = 6", "num_samples = 8")), Catch::Contains("num_samples 8 / thin 2"));
  CHECK_THAT(refusal(replaced(text, "method = sample (Default)", "method = optimize")), Catch::Contains("not sample"));
  CHECK_THAT(refusal(replaced(text, "# method = sample (Default)\n", "")), Catch::Contains("no configuration key 'method'"));
  CHECK_THAT(refusal("# method = sample\n"), Catch::Contains("no header row"));
}

TEST_CASE("CmdStan CSV files round-trip exactly, with and without sampler columns", "[cmdstan]") {
  inference_options io;
  io.chains = 2;
  io.burnin = 60;
  io.draws = 40;
  io.thin = 3;
  io.seed = 99;
  SECTION("NUTS: Stan's seven sampler columns first") {
    nuts_options no;
    no.warmup = 60;
    const auto r = infer([&](std::mt19937_64& g) { return nuts_sampler<standard_normal_2>(standard_normal_2{}, no, g); }, io);
    REQUIRE(r.diagnostic_names.size() == 7);
    round_trip(r, header_of("nuts", io, {"mu", "sd(x)"}));
  }
  SECTION("Gibbs-SS: no sampler columns") {
    const beta_prior prior(2.0, 3.0);
    const laplace_mechanism m(1.0, 0.5);
    const Eigen::VectorXd z = Eigen::VectorXd::Constant(1, 41.3);
    const auto r = infer([&](std::mt19937_64& g) { return gibbs_ss(prior, m, z, 200.0, g); }, io);
    REQUIRE(r.diagnostic_names.empty());
    round_trip(r, header_of("gibbs", io, {"theta"}));
    const cmdstan_csv_writer writer("unused", "test");
    std::ostringstream os;
    CHECK_THROWS_WITH(writer.write_chain(os, header_of("gibbs", io, {"a", "b"}), r, 0),
                      Catch::Contains("2 labels for 1 parameters"));
    CHECK_THROWS_WITH(writer.write_chain(os, header_of("gibbs", io, {"theta"}), r, 2),
                      Catch::Contains("chain 2; accepted: below 2"));
  }
}

// What counts as a writer: write(header, result) is required; a callback is a writer only through progress_writer.
static_assert(run_writer<summary_writer> && run_writer<json_summary_writer> && run_writer<draws_csv_writer>);
static_assert(!run_writer<int> && !run_writer<std::ostream>);
static_assert(run_writer<progress_writer<void (*)(const inference_progress&)>>);
template <class F>
concept makes_progress_writer = requires {
  typename progress_writer<F>;
};
static_assert(makes_progress_writer<void (*)(const inference_progress&)> && !makes_progress_writer<int>);

// The binomial release the run() tests sample (Beta(2, 3), Laplace at epsilon 0.5, n = 200), and run options for it.
struct binomial_release {
  beta_prior prior{2.0, 3.0};
  laplace_mechanism m{1.0, 0.5};
  Eigen::VectorXd z = Eigen::VectorXd::Constant(1, 41.3);
  auto make() const {
    return [this](std::mt19937_64& g) { return gibbs_ss(prior, m, z, 200.0, g); };
  }
  static run_options options(int chains, int burnin, int draws, std::uint64_t seed) {
    run_options ro;
    ro.inference.chains = chains;
    ro.inference.burnin = burnin;
    ro.inference.draws = draws;
    ro.inference.seed = seed;
    ro.method = "gibbs";
    ro.names = {"theta"};
    return ro;
  }
};

TEST_CASE("run() hands infer's result to every writer, and infer_until's with a target", "[run]") {
  const binomial_release release;
  const auto make = release.make();
  run_options ro = binomial_release::options(2, 50, 100, 7);
  recording_writer a, b;
  const auto out = run(make, ro, a, b);
  const auto direct = infer(make, ro.inference);
  CHECK(out.reached);
  CHECK(out.rounds == 1);
  CHECK(out.sweeps_per_chain == 150);
  REQUIRE(a.headers.size() == 1);
  REQUIRE(b.headers.size() == 1);
  CHECK(a.headers[0].title == "gibbs");  // the method when no title is given
  CHECK(a.headers[0].names == std::vector<std::string>{"theta"});
  CHECK(a.first_chains[0] == direct.draws.chains().front());
  CHECK(b.first_chains[0] == direct.draws.chains().front());
  CHECK(out.result.draws.chains().front() == direct.draws.chains().front());
  CHECK(a.progress_calls > 0);
  CHECK(a.last_done == 300);

  SECTION("a convergence target runs infer_until") {
    ro.target = convergence_target{1.01, 1000.0, 2000};
    recording_writer c;
    const auto extended = run(make, ro, c);
    const auto until = infer_until(make, ro.inference, *ro.target);
    CHECK(extended.rounds == until.rounds);
    CHECK(extended.rounds > 1);
    CHECK(c.first_chains[0] == until.result.draws.chains().front());
  }
  SECTION("default names, and names of the wrong length refused") {
    ro.names.clear();
    recording_writer c;
    (void)run(make, ro, c);
    CHECK(c.headers[0].names == std::vector<std::string>{"theta[0]"});
    ro.names = {"a", "b"};
    CHECK_THROWS_WITH(run(make, ro, c), Catch::Contains("run: names has size 2"));
  }
  SECTION("a progress-only writer") {
    int calls = 0;
    (void)run(make, ro, progress_writer{[&](const inference_progress&) { ++calls; }});
    CHECK(calls > 0);
  }
}

// A writer that keeps every streamed draw (chain, index, parameters) and what write() was told.
struct streaming_recorder {
  std::vector<std::tuple<int, std::int64_t, std::vector<double>>> draws;
  int writes = 0;
  std::size_t draws_at_write = 0;
  void draw(const run_header& h, const kept_draw& d) {
    CHECK(h.names == std::vector<std::string>{"theta"});
    CHECK(h.draws == 100);
    CHECK(d.diagnostic_names != nullptr);
    draws.emplace_back(d.chain, d.index, std::vector<double>(d.parameters.begin(), d.parameters.end()));
  }
  void write(const run_header&, const inference_result&) {
    ++writes;
    draws_at_write = draws.size();
  }
};
static_assert(streaming_writer<streaming_recorder> && streaming_writer<cmdstan_csv_writer>);
static_assert(!streaming_writer<recording_writer> && run_writer<recording_writer>);

TEST_CASE("run() streams every kept draw to the writers that take them, each chain in order, before write()", "[run]") {
  const binomial_release release;
  const auto make = release.make();
  run_options ro = binomial_release::options(3, 20, 100, 5);
  ro.inference.thin = 2;
  for (const bool parallel : {false, true}) {
    ro.inference.parallel = parallel;
    streaming_recorder w;
    recording_writer plain;  // a writer without draw() is told the result only, as before
    const auto out = run(make, ro, w, plain);
    CHECK(w.writes == 1);
    REQUIRE(w.draws_at_write == 300);
    std::vector<std::int64_t> next(3, 0);
    for (const auto& [chain, index, values] : w.draws) {
      REQUIRE(chain >= 0);
      REQUIRE(chain < 3);
      CHECK(index == next[static_cast<std::size_t>(chain)]++);  // in order within a chain
      REQUIRE(values.size() == 1);
      CHECK(values[0] == out.result.draws.chains()[static_cast<std::size_t>(chain)](index, 0));
    }
    CHECK(plain.first_chains.at(0) == out.result.draws.chains().front());
  }
}

// Streams a run to CmdStan CSV files in `directory`, the way privpost-infer does; the final files are what write_chain
// gives for the result, byte for byte.
TEST_CASE("cmdstan_csv_writer under run(): the final files equal write_chain's of the result", "[run][cmdstan]") {
  const auto dir = std::filesystem::temp_directory_path() / ("privpost_stream_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  const binomial_release release;
  const run_options ro = binomial_release::options(2, 20, 50, 0);
  cmdstan_csv_writer writer(dir.string(), "binomial", {{"epsilon", "1"}});
  const auto out = run(release.make(), ro, writer);
  REQUIRE(writer.paths().size() == 2);
  run_header h = header_of("gibbs", ro.inference, {"theta"});
  h.draws = 50;
  for (std::size_t c = 0; c < 2; ++c) {
    std::ifstream f(writer.paths()[c]);
    std::stringstream on_disk, expected;
    on_disk << f.rdbuf();
    writer.write_chain(expected, h, out.result, c);
    CHECK(on_disk.str() == expected.str());
  }
  std::filesystem::remove_all(dir);
}

// A sampler slow enough to be killed in the middle of its run: 2 ms a sweep, the sweep count as its parameter.
struct slow_counter {
  double sweeps = 0.0;
  template <class G>
  void step(G&) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    sweeps += 1.0;
  }
  Eigen::VectorXd parameter_vector() const { return Eigen::VectorXd::Constant(1, sweeps); }
  numerical_events events() const { return {}; }
};

// The guarantee of streaming: a run killed outright (SIGKILL: no destructor, no flush) leaves each chain's file a valid
// CmdStan CSV (the reader of tests/support/cmdstan_csv.hpp accepts it) holding the draws made so far, in order.
TEST_CASE("cmdstan_csv_writer under run(): a run killed with SIGKILL leaves valid CmdStan CSV files", "[run][cmdstan]") {
  const auto dir = std::filesystem::temp_directory_path() / ("privpost_kill_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  const auto path = dir / "slow_1.csv";
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    // The child runs 10^5 draws (over 3 minutes): it never finishes on its own within the test.
    run_options ro;
    ro.inference.chains = 1;
    ro.inference.burnin = 5;
    ro.inference.draws = 100000;
    ro.method = "slow";
    cmdstan_csv_writer writer(dir.string(), "counter");
    (void)run([](std::mt19937_64&) { return slow_counter{}; }, ro, writer);
    ::_exit(0);
  }
  // Wait (at most 60 s) until the file holds at least 40 draws, then kill the child outright.
  auto rows_on_disk = [&] {
    std::ifstream f(path);
    std::string line;
    int rows = 0;
    while (std::getline(f, line))
      if (!line.empty() && line[0] != '#' && line[0] != 't') ++rows;
    return rows;
  };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (rows_on_disk() < 40 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  REQUIRE(WIFSIGNALED(status));
  std::ifstream f(path);
  const auto csv = read_cmdstan_csv(f, true);  // throws on a broken header or a partial row
  CHECK(csv.at("algorithm") == "slow");
  CHECK(csv.at("num_samples") == "100000");  // the planned run, as CmdStan writes its configuration first
  CHECK(csv.at("interrupted") == "0");
  REQUIRE(csv.rows.size() >= 40);
  REQUIRE(csv.rows.size() < 100000);
  for (std::size_t i = 0; i < csv.rows.size(); ++i) CHECK(csv.rows[i] == std::vector<double>{6.0 + static_cast<double>(i)});
  std::filesystem::remove_all(dir);
}

TEST_CASE("the draws CSV, JSON summary and summary table writers", "[run]") {
  const beta_prior prior(2.0, 3.0);
  const laplace_mechanism m(1.0, 0.5);
  const Eigen::VectorXd z = Eigen::VectorXd::Constant(1, 41.3);
  run_options ro;
  ro.inference.chains = 2;
  ro.inference.burnin = 50;
  ro.inference.draws = 60;
  ro.inference.seed = 3;
  ro.method = "gibbs";
  ro.title = "noise-aware \"Gibbs-SS\"";
  ro.names = {"theta\tone"};
  std::ostringstream csv, json, table;
  draws_csv_writer csv_writer(csv);
  json_summary_writer json_writer(json);
  summary_writer table_writer(table);
  const auto out =
      run([&](std::mt19937_64& g) { return gibbs_ss(prior, m, z, 200.0, g); }, ro, csv_writer, json_writer, table_writer).result;
  ro.method = "again";
  (void)run([&](std::mt19937_64& g) { return gibbs_ss(prior, m, z, 200.0, g); }, ro, csv_writer);

  // 5. one header, then 2 methods x 2 chains x 60 rows that read back to the draws
  std::istringstream lines(csv.str());
  std::string line;
  std::getline(lines, line);
  CHECK(line == "method,chain,draw,theta\tone");
  int rows = 0;
  while (std::getline(lines, line)) {
    const auto a = line.find(','), b = line.find(',', a + 1), c = line.find(',', b + 1);
    const std::string method = line.substr(0, a);
    const auto chain = std::stoul(line.substr(a + 1, b - a - 1));
    const auto draw = std::stol(line.substr(b + 1, c - b - 1));
    if (method == "gibbs") CHECK(std::stod(line.substr(c + 1)) == out.draws.chains()[chain](draw, 0));
    ++rows;
  }
  CHECK(rows == 240);

  // 6. valid JSON with the posterior's figures
  const auto j = nlohmann::json::parse(json.str());
  CHECK(j.at("title") == "noise-aware \"Gibbs-SS\"");
  CHECK(j.at("chains") == 2);
  CHECK(j.at("draws_per_chain") == 60);
  const auto& p = j.at("parameters").at(0);
  CHECK(p.at("name") == "theta\tone");
  CHECK(p.at("mean").get<double>() == out.draws.mean(0));
  CHECK(p.at("quantiles").at("q95").get<double>() == out.draws.quantile(0.95, 0));
  CHECK(p.at("rhat").get<double>() == out.draws.rhat(0));
  CHECK(j.at("numerical_events").at("projections") == out.events.projections);
  CHECK(j.at("warnings").is_array());
  CHECK(detail::json_number(std::nan("")) == "null");
  CHECK(detail::json_number(2.0) == "2.0");
  CHECK(detail::json_number(0.1) == "0.1");
  CHECK(detail::json_string(std::string("a\x01") + '"') == "\"a\\u0001\\\"\"");

  // 7. the table
  CHECK_THAT(table.str(), Catch::Contains("noise-aware \"Gibbs-SS\"") && Catch::Contains("theta\tone") &&
                              Catch::Contains("numerical repairs: 0 projections"));
}

TEST_CASE("summary_writer's layout: the GLM's 95% table with its zero flag and NUTS line, long names whole, bad layouts refused",
          "[run]") {
  const beta_prior prior(2.0, 3.0);
  const laplace_mechanism m(1.0, 0.5);
  const Eigen::VectorXd z = Eigen::VectorXd::Constant(1, 41.3);
  inference_options io;
  io.chains = 2;
  io.burnin = 30;
  io.draws = 60;
  io.seed = 3;
  const auto r = infer([&](std::mt19937_64& g) { return gibbs_ss(prior, m, z, 200.0, g); }, io);
  const auto header = [](const std::string& title, const std::string& name) {
    run_header h;
    h.method = "m";
    h.title = title;
    h.names = {name};
    return h;
  };
  summary_layout glm;
  glm.name_width = 18;
  glm.quantiles = {{0.025, "2.5%"}, {0.975, "97.5%"}};
  glm.flagged = 1;
  glm.last_line = summary_layout::footer::nuts;
  std::ostringstream flagged, unflagged;
  summary_writer(flagged, glm).write(header("a table", "theta"), r);
  glm.flag_value = r.draws.mean(0);  // inside the interval: no flag
  summary_writer(unflagged, glm).write(header("a table", "theta"), r);
  char row[160];
  std::snprintf(row, sizeof row, "  %-18s %10.4g %10.4g %10.4g %10.4g   * ", "theta", r.draws.mean(0), r.draws.sd(0),
                r.draws.quantile(0.025, 0), r.draws.quantile(0.975, 0));
  CHECK_THAT(flagged.str(), Catch::StartsWith("a table\n  parameter          ") && Catch::Contains("2.5%") &&
                                Catch::Contains("97.5%") && Catch::Contains(row) &&
                                Catch::EndsWith("  NUTS after warm-up: 0 divergent transitions, 0 at the maximum tree depth\n"));
  CHECK_THAT(unflagged.str(), !Catch::Contains("   * "));
  // A name longer than any buffer is written whole, as the default table writes it.
  const std::string long_name(300, 'x');
  std::ostringstream plain;
  summary_writer(plain).write(header("t", long_name), r);
  CHECK_THAT(plain.str(),
             Catch::Contains("  " + long_name + " ") && Catch::Contains("q50") && Catch::EndsWith("rejected draws\n"));
  std::ostringstream os;
  summary_layout bad;
  bad.name_width = 0;
  CHECK_THROWS_AS(summary_writer(os, bad), std::invalid_argument);
  bad = {};
  bad.quantiles.clear();
  CHECK_THROWS_AS(summary_writer(os, bad), std::invalid_argument);
  bad = {};
  bad.quantiles = {{1.0, "q100"}};
  CHECK_THROWS_AS(summary_writer(os, bad), std::invalid_argument);
  bad = {};
  bad.quantiles = {{0.5, "q50"}};
  bad.flagged = 1;
  CHECK_THROWS_AS(summary_writer(os, bad), std::invalid_argument);
}
