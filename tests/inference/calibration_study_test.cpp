// Tests of the calibration harness as a library (privpost/inference/calibration_study.hpp). Properties:
//  1. a simulation_study runs any list of named methods on each simulated trial, in order, and run_calibration reports
//     them by name; an exact method is calibrated, a method that ignores the data is not (the harness can fail);
//  2. adding a method to a paper's study (testing/) is one more named_method: the study runs it beside the standard ones;
//  3. select_methods keeps the requested order and rejects an unknown or empty list, naming the available methods;
//  4. calibration_options::stop ends the run before the next trial: the report covers the trials
//     done; fewer than 2 is interrupted_error.
#include <catch2/catch.hpp>

#include <Eigen/Core>
#include <atomic>
#include <random>
#include <string>
#include <vector>

#include "privpost/core/random/normal.hpp"
#include "privpost/families/binomial.hpp"
#include "privpost/families/multinomial.hpp"
#include "privpost/inference/calibration_study.hpp"
#include "privpost/mechanisms/laplace.hpp"
#include "privpost/samplers/conjugate.hpp"
#include "privpost/testing/family_study.hpp"

using namespace privpost;

namespace {
// mu ~ N(0, 1), x | mu ~ N(mu, 1): the posterior of mu given x is N(x / 2, 1 / 2).
struct normal_trial {
  Eigen::VectorXd truth;
  double x = 0.0;
};
struct simulate_normal {
  normal_trial operator()(std::mt19937_64& g) const {
    normal_trial t;
    t.truth = Eigen::VectorXd::Constant(1, draw_normal(g));
    t.x = t.truth(0) + draw_normal(g);
    return t;
  }
};
Eigen::MatrixXd normal_draws(double mean, double sd, std::mt19937_64& g) {
  Eigen::MatrixXd d(400, 1);
  for (Eigen::Index i = 0; i < d.rows(); ++i) d(i, 0) = mean + sd * draw_normal(g);
  return d;
}
}  // namespace

TEST_CASE("simulation_study runs named methods; the harness tells calibrated from not", "[calibration][study]") {
  const simulation_study study(
      simulate_normal{},
      std::vector<named_method<normal_trial>>{
          {"exact", [](const normal_trial& t, std::mt19937_64& g) { return normal_draws(t.x / 2.0, std::sqrt(0.5), g); }},
          {"prior", [](const normal_trial&, std::mt19937_64& g) { return normal_draws(0.0, 0.2, g); }}});
  static_assert(calibration_study<decltype(study)>);
  const auto acc = run_calibration(study, {400, 3, 0});
  CHECK(acc.methods() == std::vector<std::string>{"exact", "prior"});
  const auto rows = acc.report();
  REQUIRE(rows.size() == 2);
  CHECK(rows[0].ks_pvalue > 0.001);
  CHECK(std::abs(rows[0].coverage90 - 0.9) < 3.5 * std::sqrt(0.9 * 0.1 / 400));
  CHECK(rows[1].ks_pvalue < 1e-6);
  CHECK(rows[1].coverage90 < 0.5);
}

TEST_CASE("a paper's study takes one more named method", "[calibration][study]") {
  study_settings settings;
  settings.n = 50;
  settings.burnin = 50;
  settings.draws = 200;
  settings.methods = {"naive", "gibbs"};
  bounded_family_study study(beta_prior(1.0, 1.0), laplace_mechanism(1.0, 1.0), settings);
  using trial = bounded_family_study<beta_prior, laplace_mechanism>::trial_type;
  auto methods = study.methods();
  CHECK(methods.size() == 2);
  CHECK(methods[0].name == "naive");  // the requested order
  // A user's method: the conjugate posterior given the release with the noise's variance ignored, thinned to 100 draws.
  methods.push_back({"half_naive", [](const trial& t, std::mt19937_64& g) {
                       return single_chain([&](auto& cg) { return conjugate_sampler(beta_prior(1.0, 1.0), t.z, t.n, cg); }, 0,
                                           100, g);
                     }});
  study.set_methods(methods);
  std::mt19937_64 g(5);
  const auto out = study.trial(g);
  REQUIRE(out.size() == 3);
  CHECK(out[2].method == "half_naive");
  CHECK(out[2].draws.rows() == 100);
  CHECK(out[2].truth == out[0].truth);
}

TEST_CASE("select_methods: order kept, unknown and empty rejected", "[calibration][study][errors]") {
  const std::vector<named_method<normal_trial>> available{{"a", {}}, {"b", {}}, {"c", {}}};
  const auto picked = select_methods(available, {"c", "a"}, "test");
  REQUIRE(picked.size() == 2);
  CHECK(picked[0].name == "c");
  CHECK(picked[1].name == "a");
  CHECK_THROWS_WITH(select_methods(available, {"a", "zz"}, "test"), "test: method is 'zz'; accepted: a, b, c");
  CHECK_THROWS_AS(select_methods(available, {}, "test"), std::invalid_argument);
  CHECK_THROWS_AS(simulation_study(simulate_normal{}, std::vector<named_method<normal_trial>>{}), std::invalid_argument);
  study_settings settings;
  settings.methods = {"gibbs", "ops"};  // ops is binomial-only: not among a multinomial study's methods
  CHECK_THROWS_AS(bounded_family_study(dirichlet_prior<3>(Eigen::Vector3d::Ones()), laplace_mechanism(2.0, 1.0), settings),
                  std::invalid_argument);
}

TEST_CASE("a stop flag ends a calibration run with the trials done", "[calibration][study]") {
  std::atomic<bool> stop{false};
  int calls = 0;
  int stop_after = 0;
  const simulation_study study(simulate_normal{},
                               std::vector<named_method<normal_trial>>{{"exact", [&](const normal_trial& t, std::mt19937_64& g) {
                                                                          if (++calls == stop_after) stop = true;
                                                                          return normal_draws(t.x / 2.0, std::sqrt(0.5), g);
                                                                        }}});
  calibration_options o{50, 3, 0};
  o.stop = &stop;
  stop_after = 7;
  const auto rows = run_calibration(study, o).report();
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].trials == 7);
  CHECK(calls == 7);
  stop = false;
  calls = 0;
  stop_after = 1;
  CHECK_THROWS_AS(run_calibration(study, o), interrupted_error);
  CHECK(calls == 1);
  stop = false;
  calls = 0;
  stop_after = 1000;
  CHECK(run_calibration(study, o).report()[0].trials == 50);
}
