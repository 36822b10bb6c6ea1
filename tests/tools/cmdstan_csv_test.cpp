// Tests of privpost-infer's CmdStan CSV files: examples/tools/cmdstan_csv.hpp writes, the
// independent reader of tests/support/cmdstan_csv.hpp reads back.
//  1. the reader accepts a file laid out as CmdStan writes one (configuration comments, sampler columns, adaptation
//     and timing comments) and refuses each broken rule with a message naming it;
//  2. a NUTS run (Stan's seven sampler columns) and a Gibbs-SS run (none) round-trip exactly: configuration, column
//     names theta.1 ... theta.D with their labels, every draw and diagnostic bit for bit;
//  3. the writer refuses labels that do not match the draws.
#include <catch2/catch.hpp>

#include <Eigen/Core>
#include <cmath>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "../../examples/tools/cmdstan_csv.hpp"
#include "privpost/families/binomial.hpp"
#include "privpost/inference/infer.hpp"
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

// Writes every chain of r, reads each back and checks it against r.
void round_trip(const inference_result& r, const tools::cmdstan_run& run, const std::vector<std::string>& labels) {
  for (std::size_t c = 0; c < r.draws.chains().size(); ++c) {
    std::stringstream file;
    tools::write_cmdstan_chain(file, run, r, c, labels);
    const auto back = read_cmdstan_csv(file);
    CHECK(back.at("model") == run.model);
    CHECK(back.at("algorithm") == run.algorithm);
    CHECK(back.at("id") == std::to_string(c + 1));
    CHECK(back.at("seed") == std::to_string(run.seed));
    CHECK(back.at("thin") == std::to_string(run.thin));
    CHECK(back.at("num_warmup") == std::to_string(run.num_warmup));
    CHECK(back.at("release_epsilon") == "0.5");
    const Eigen::MatrixXd& x = r.draws.chains()[c];
    REQUIRE(back.sampler_columns == r.diagnostic_names.size());
    REQUIRE(back.columns.size() == r.diagnostic_names.size() + labels.size());
    for (std::size_t k = 0; k < r.diagnostic_names.size(); ++k) CHECK(back.columns[k] == r.diagnostic_names[k]);
    for (std::size_t j = 0; j < labels.size(); ++j) {
      const std::string name = "theta." + std::to_string(j + 1);
      CHECK(back.columns[back.sampler_columns + j] == name);
      CHECK(back.at(name) == labels[j]);
    }
    REQUIRE(static_cast<Eigen::Index>(back.rows.size()) == x.rows());
    for (Eigen::Index i = 0; i < x.rows(); ++i) {
      const auto& row = back.rows[static_cast<std::size_t>(i)];
      for (std::size_t k = 0; k < back.sampler_columns; ++k) CHECK(row[k] == r.diagnostics[c](i, static_cast<Eigen::Index>(k)));
      for (Eigen::Index j = 0; j < x.cols(); ++j) CHECK(row[back.sampler_columns + static_cast<std::size_t>(j)] == x(i, j));
    }
  }
}

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

TEST_CASE("privpost-infer's CmdStan CSV files round-trip exactly, with and without sampler columns", "[cmdstan]") {
  tools::cmdstan_run run;
  run.model = "test";
  run.num_warmup = 60;
  run.thin = 3;
  run.seed = 99;
  run.release = {{"epsilon", "0.5"}, {"n", "200.0"}};
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
    run.algorithm = "nuts";
    round_trip(r, run, {"mu", "sd(x)"});
  }
  SECTION("Gibbs-SS: no sampler columns") {
    const beta_prior prior(2.0, 3.0);
    const laplace_mechanism m(1.0, 0.5);
    const Eigen::VectorXd z = Eigen::VectorXd::Constant(1, 41.3);
    const auto r = infer([&](std::mt19937_64& g) { return gibbs_ss(prior, m, z, 200.0, g); }, io);
    REQUIRE(r.diagnostic_names.empty());
    run.algorithm = "gibbs";
    round_trip(r, run, {"theta"});
    std::ostringstream os;
    CHECK_THROWS_WITH(tools::write_cmdstan_chain(os, run, r, 0, {"a", "b"}), Catch::Contains("2 labels for 1 parameters"));
    CHECK_THROWS_WITH(tools::write_cmdstan_chain(os, run, r, 2, {"theta"}), Catch::Contains("chain 2; accepted: below 2"));
  }
}
