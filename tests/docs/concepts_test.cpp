// The minimal examples of docs/concepts.md, compiled and run here so that the page cannot drift
// from the library: the page shows the code between the //! [name] markers (Doxygen's \snippet). Each example is a
// user's type for one customisation point, checked against its concept and driven by the library:
//  1. a release mechanism (Gaussian noise of fixed sd, a scale mixture with fixed variance) under Gibbs-SS;
//  2. a sampler run by infer, with the optional per-draw diagnostics;
//  3. a differentiable model sampled by NUTS;
//  4. a calibration study run by run_calibration;
//  5. a writer composed by run with the library's summary writer;
//  6. a closed-form partition posterior run on every partition of a sample-and-aggregate release;
//  7. a mechanism written outside the library, given its coordinate view by noise_traits, under the histogram,
//     sharded (histogram and record frame) and record samplers (draw for draw the chains of the library's own Laplace
//     mechanism).
// Each run's answer is checked against a value known in closed form.
#include <catch2/catch.hpp>

#include <Eigen/Core>
#include <boost/math/distributions/normal.hpp>
#include <cmath>
#include <numbers>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "privpost/core/random/beta.hpp"
#include "privpost/core/random/normal.hpp"
#include "privpost/families/binomial.hpp"
#include "privpost/inference/calibration_study.hpp"
#include "privpost/inference/infer.hpp"
#include "privpost/inference/partition_posterior.hpp"
#include "privpost/inference/run.hpp"
#include "privpost/inference/writers.hpp"
#include "privpost/mechanisms/discrete_laplace.hpp"
#include "privpost/mechanisms/gaussian.hpp"
#include "privpost/mechanisms/laplace.hpp"
#include "privpost/mechanisms/linear_queries.hpp"
#include "privpost/mechanisms/noise_views.hpp"
#include "privpost/mechanisms/sample_aggregate.hpp"
#include "privpost/samplers/cgm/cgm_noise.hpp"
#include "privpost/samplers/gibbs_ss.hpp"
#include "privpost/samplers/nuts.hpp"
#include "privpost/samplers/record_histogram.hpp"
#include "privpost/samplers/record_releases.hpp"
#include "privpost/samplers/record_sharded.hpp"
#include "privpost/samplers/record_sharded_histogram.hpp"

//! [coordinate view]
namespace their {
// A Laplace mechanism written outside privpost, parametrised by its rate lambda = 1 / b, that knows nothing of the
// library: it reaches the samplers through a specialisation of noise_traits (below) and its own log_likelihood.
struct laplace_by_rate {
  double rate;
  double log_likelihood(const Eigen::VectorXd& z, const Eigen::VectorXd& s) const {
    return static_cast<double>(z.size()) * std::log(0.5 * rate) - rate * (z - s).cwiseAbs().sum();
  }
};
}  // namespace their

template <>
struct privpost::noise_traits<their::laplace_by_rate> {
  static privpost::coordinate_noise coordinate(const their::laplace_by_rate& m) {
    return privpost::coordinate_noise::laplace(1.0 / m.rate);
  }
};
static_assert(privpost::coordinatewise_mechanism<their::laplace_by_rate>);
//! [coordinate view]

namespace docs {

//! [mechanism]
// Gaussian noise of a fixed standard deviation sigma on every coordinate. The member tag opts in: it promises that
// release() meets budget(). A scale mixture with a constant variance, so Gibbs-SS can use it.
struct fixed_gaussian_noise {
  using mechanism_category = privpost::mechanism_tag;
  using vector_type = Eigen::VectorXd;
  static constexpr bool fixed_variance = true;
  double sigma = 1.0;
  privpost::privacy_budget guarantee{1.0, 1e-5};  // what sigma was calibrated to (by the caller)

  template <class G>
  vector_type release(const vector_type& s, G& g) const {
    vector_type z = s;
    for (auto& v : z) v += sigma * privpost::draw_normal(g);
    return z;
  }
  double log_likelihood(const vector_type& z, const vector_type& s) const {
    return -0.5 * (z - s).squaredNorm() / (sigma * sigma) -
           static_cast<double>(z.size()) * std::log(sigma * std::sqrt(2 * std::numbers::pi));
  }
  privpost::privacy_budget budget() const { return guarantee; }
  template <class G>
  double draw_variance(G&) const {
    return sigma * sigma;
  }
  template <class G>
  double redraw_variance(double, G&) const {
    return sigma * sigma;
  }
};
static_assert(privpost::release_mechanism<fixed_gaussian_noise>);
static_assert(privpost::scale_mixture_noise<fixed_gaussian_noise>);
//! [mechanism]

//! [sampler]
// Independent draws from the Beta(a, b) posterior: any type with step(g), parameter_vector() and events() runs under
// privpost::infer (chains, burn-in, thinning, seeds, diagnostics). Optional: end_warmup(), and per-draw diagnostics
// (draw_diagnostic_names(), draw_diagnostics()) that infer keeps beside the draws.
struct beta_draws {
  double a = 1.0, b = 1.0, theta = 0.5;
  template <class G>
  void step(G& g) {
    theta = privpost::draw_beta(g, a, b);
  }
  Eigen::VectorXd parameter_vector() const { return Eigen::VectorXd::Constant(1, theta); }
  privpost::numerical_events events() const { return {}; }
  static std::vector<std::string> draw_diagnostic_names() { return {"log_odds__"}; }
  Eigen::VectorXd draw_diagnostics() const { return Eigen::VectorXd::Constant(1, std::log(theta / (1 - theta))); }
};
static_assert(privpost::sampler<beta_draws>);
static_assert(privpost::reports_draw_diagnostics<beta_draws>);
//! [sampler]

//! [model]
// A target for NUTS: the log density on an unconstrained space, with its gradient. Here a correlated 2-d Gaussian
// (correlation 0.5, unit variances).
struct correlated_normal {
  Eigen::Index dimension() const { return 2; }
  double log_density_gradient(const Eigen::VectorXd& u, Eigen::VectorXd& grad) const {
    const double r = 0.5, k = 1.0 / (1.0 - r * r);
    grad(0) = -k * (u(0) - r * u(1));
    grad(1) = -k * (u(1) - r * u(0));
    return -0.5 * k * (u(0) * u(0) - 2 * r * u(0) * u(1) + u(1) * u(1));
  }
};
static_assert(privpost::differentiable_model<correlated_normal>);
//! [model]

}  // namespace docs

TEST_CASE("docs/concepts.md: a user's mechanism reaches the histogram, sharded and record samplers and CGM-EM", "[docs]") {
  using namespace privpost;
  // their::laplace_by_rate at rate 1/2 is Laplace noise of scale 2 exactly, so each chain must equal, draw for draw,
  // the chain of the same release through laplace_mechanism::published(2): marginal tables (the table path), queries
  // that are not aligned (the scatter path), K = 2 shards, and record_gibbs_releases.
  const their::laplace_by_rate theirs{0.5};
  const auto ours = laplace_mechanism::published(2.0);
  CHECK(coordinate_view(theirs).log_kernel(3.0, 1.0) == coordinate_view(ours).log_kernel(3.0, 1.0));
  const auto tables = linear_queries::marginals({2, 2}, {{0}, {1}});
  const linear_queries mixed(2, 4, {{0, 0, 1.0}, {0, 1, 1.0}, {1, 1, 0.5}, {1, 3, 1.0}});
  for (const auto& q : {tables, mixed}) {
    const Eigen::VectorXd z = Eigen::VectorXd::LinSpaced(q.rows(), 3.0, 7.0);
    auto chains = [&](const auto& mechanism) {
      std::vector<histogram_measurement> m;
      m.emplace_back(q, mechanism, z);
      std::mt19937_64 g(11), h(12);
      histogram_gibbs serial(Eigen::VectorXd::Ones(4), 12.0, m, g);
      sharded_histogram_gibbs sharded(Eigen::VectorXd::Ones(4), 12.0, m, h, record_sharding{2});
      for (int sweep = 0; sweep < 30; ++sweep) {
        serial.step(g);
        sharded.step(h);
      }
      CHECK(std::isinf(m.front().budget().epsilon));  // a kernel without a budget is of unknown cost
      return std::pair(serial.parameter_vector(), sharded.parameter_vector());
    };
    const auto [serial_theirs, sharded_theirs] = chains(theirs);
    const auto [serial_ours, sharded_ours] = chains(ours);
    CHECK(serial_theirs == serial_ours);
    CHECK(sharded_theirs == sharded_ours);
  }
  auto binomial_chain = [](const auto& mechanism) {
    std::mt19937_64 g(13);
    record_gibbs_releases chain(beta_prior(1.0, 1.0), 20.0, g, record_release(mechanism, Eigen::VectorXd::Constant(1, 6.5)));
    for (int sweep = 0; sweep < 30; ++sweep) chain.step(g);
    return chain.parameter_vector();
  };
  CHECK(binomial_chain(theirs) == binomial_chain(ours));
  // The sharded frame splits the user's noise through its coordinate view: the same K = 3 chain as the published
  // Laplace's, whose own scale mixture makes the same draws.
  auto sharded_chain = [](const auto& mechanism) {
    std::mt19937_64 g(14);
    sharded_record_frame chain(conjugate_record_model<beta_prior>{beta_prior(1.0, 1.0)}, 20.0, g, record_sharding{3},
                               record_release(mechanism, Eigen::VectorXd::Constant(1, 6.5)));
    for (int sweep = 0; sweep < 30; ++sweep) chain.step(g);
    return chain.parameter_vector();
  };
  CHECK(sharded_chain(theirs) == sharded_chain(ours));
  std::mt19937_64 g(15);
  CHECK_THROWS_WITH(sharded_record_frame(conjugate_record_model<beta_prior>{beta_prior(1.0, 1.0)}, 20.0, g, record_sharding{3},
                                         record_release(discrete_laplace_mechanism(1.0, 1.0), Eigen::VectorXd::Constant(1, 6.0))),
                    Catch::Contains("granularity"));
  // CGM-EM's evidence term is read from the same view: the same Laplace term, refused for noise on a lattice.
  const cgm_evidence cgm_theirs = make_cgm_noise(theirs), cgm_ours = make_cgm_noise(ours);
  const Eigen::VectorXd y = Eigen::VectorXd::LinSpaced(4, 3.0, 7.0), counts = Eigen::VectorXd::Constant(4, 5.0);
  CHECK(!cgm_theirs.is_gaussian());
  CHECK(cgm_theirs.scale() == cgm_ours.scale());
  CHECK(cgm_theirs.log_likelihood(y, counts) == cgm_ours.log_likelihood(y, counts));
  CHECK(cgm_evidence(gaussian_mechanism::published(3.0)).dual_quadratic() == Approx(9.0));
  CHECK_THROWS_WITH(cgm_evidence(discrete_laplace_mechanism(1.0, 1.0)), Catch::Contains("granularity"));
  // The view refuses what no noise is.
  CHECK_THROWS_WITH(coordinate_noise::laplace(0.0), Catch::Contains("Laplace scale b") && Catch::Contains("0"));
  CHECK_THROWS_WITH(coordinate_noise::gaussian(1.0, -1.0), Catch::Contains("granularity"));
  CHECK_THROWS_AS(coordinate_noise::laplace(1e-320), std::invalid_argument);
}

TEST_CASE("docs/concepts.md: a user's mechanism under Gibbs-SS", "[docs]") {
  //! [mechanism use]
  const docs::fixed_gaussian_noise noise{5.0};
  std::mt19937_64 owner(7);
  const Eigen::VectorXd z = noise.release(Eigen::VectorXd::Constant(1, 60.0), owner);  // 60 of 200 records
  privpost::inference_options o;
  o.seed = 1;
  const auto r =
      privpost::infer([&](auto& g) { return privpost::gibbs_ss(privpost::beta_prior(1.0, 1.0), noise, z, 200.0, g); }, o);
  //! [mechanism use]
  // The exact posterior mean given z: theta's Beta(1 + s, 1 + n - s) mixed over s | z (the binomial likelihood times
  // the Gaussian noise), summed over s = 0..200 in closed form.
  double num = 0.0, den = 0.0;
  for (int s = 0; s <= 200; ++s) {
    const double w = std::exp(std::lgamma(201.0) - std::lgamma(s + 1.0) - std::lgamma(201.0 - s) + std::lgamma(s + 1.0) +
                              std::lgamma(201.0 - s) - std::lgamma(202.0) - 0.5 * std::pow((z(0) - s) / 5.0, 2));
    num += w * (s + 1.0) / 202.0;
    den += w;
  }
  CHECK(r.draws.mean() == Approx(num / den).margin(4 * r.draws.mcse_mean() + 1e-3));
}

TEST_CASE("docs/concepts.md: a user's sampler under infer", "[docs]") {
  privpost::inference_options o;
  o.chains = 2;
  o.draws = 4000;
  const auto r = privpost::infer([](auto&) { return docs::beta_draws{3.0, 7.0}; }, o);
  CHECK(r.draws.mean() == Approx(0.3).margin(0.01));
  REQUIRE(r.diagnostic_names == std::vector<std::string>{"log_odds__"});
  CHECK(r.diagnostics[0](0, 0) == Approx(std::log(r.draws.chains()[0](0, 0) / (1 - r.draws.chains()[0](0, 0)))));
}

TEST_CASE("docs/concepts.md: a user's model under NUTS", "[docs]") {
  //! [model use]
  privpost::nuts_options nuts;
  nuts.warmup = 500;
  privpost::inference_options o;
  o.burnin = nuts.warmup;  // infer tells NUTS when warm-up ends
  o.draws = 1000;
  o.seed = 3;
  const auto r = privpost::infer(
      [&](std::mt19937_64& g) { return privpost::nuts_sampler<docs::correlated_normal>(docs::correlated_normal{}, nuts, g); }, o);
  //! [model use]
  for (Eigen::Index j = 0; j < 2; ++j) {
    CHECK(std::abs(r.draws.mean(j)) < 5 * r.draws.mcse_mean(j));
    CHECK(r.draws.sd(j) == Approx(1.0).margin(0.1));
  }
}

TEST_CASE("docs/concepts.md: a user's calibration study", "[docs]") {
  //! [study]
  // mu ~ N(0, 1), x | mu ~ N(mu, 1): the exact posterior is N(x / 2, 1 / 2). A study simulates a truth and data, and
  // names its methods; run_calibration ranks the truth in each method's draws over many trials.
  struct trial {
    Eigen::VectorXd truth;
    double x = 0.0;
  };
  auto simulate = [](std::mt19937_64& g) {
    trial t{Eigen::VectorXd::Constant(1, privpost::draw_normal(g))};
    t.x = t.truth(0) + privpost::draw_normal(g);
    return t;
  };
  auto exact = [](const trial& t, std::mt19937_64& g) {
    Eigen::MatrixXd d(500, 1);
    for (Eigen::Index i = 0; i < d.rows(); ++i) d(i, 0) = t.x / 2 + std::sqrt(0.5) * privpost::draw_normal(g);
    return d;
  };
  const privpost::simulation_study study(simulate, std::vector<privpost::named_method<trial>>{{"exact", exact}});
  static_assert(privpost::calibration_study<decltype(study)>);
  privpost::calibration_options co;
  co.trials = 300;
  co.seed = 11;
  co.mmd_draws = 0;
  const auto rows = privpost::run_calibration(study, co).report();
  //! [study]
  REQUIRE(rows.size() == 1);
  CHECK(rows[0].ks_pvalue > 0.001);
  CHECK(std::abs(rows[0].coverage90 - 0.9) < 3.5 * std::sqrt(0.9 * 0.1 / 300));
}

TEST_CASE("docs/concepts.md: a user's writer composed by run", "[docs]") {
  //! [writer]
  // Keeps the posterior mean of each run; run() calls write() once the chains are done and progress() (optional)
  // about a hundred times while they run.
  struct mean_writer {
    std::vector<double> means;
    long progress_calls = 0;
    void progress(const privpost::inference_progress&) { ++progress_calls; }
    void write(const privpost::run_header&, const privpost::inference_result& r) { means.push_back(r.draws.mean(0)); }
  };
  static_assert(privpost::run_writer<mean_writer>);
  privpost::run_options options;
  options.inference.seed = 5;
  options.method = "beta";
  options.names = {"theta"};
  mean_writer mine;
  std::ostringstream table;
  (void)privpost::run(
      [](std::mt19937_64&) {
        return docs::beta_draws{3.0, 7.0};
      },
      options, mine, privpost::summary_writer(table));
  //! [writer]
  REQUIRE(mine.means.size() == 1);
  CHECK(std::abs(mine.means[0] - 0.3) < 0.01);  // Beta(3, 7) has mean 0.3; sd 0.138 / sqrt(4000) ~ 0.002
  CHECK(mine.progress_calls > 0);
  CHECK_THAT(table.str(), Catch::Contains("theta"));
}

TEST_CASE("docs/concepts.md: a user's partition posterior", "[docs]") {
  //! [partition]
  // x_i ~ N(mu, 1) with mu ~ N(0, 10^2). Partition j's posterior is closed form: the prior raised to task.prior_power
  // q (N(0, 10^2 / q)), the likelihood to task.likelihood_power w, so N(w sum x / (q / 100 + w n_j), 1 / (q / 100 + w n_j)).
  // A Boost distribution is a closed_form_marginal as it is (its non-member cdf and quantile).
  struct normal_mean_posterior {  // a partition_posterior: reads only the task's members
    const std::vector<double>& x;
    boost::math::normal_distribution<double> operator()(const privpost::partition_task& task, std::mt19937_64&) const {
      double sum = 0.0;
      for (std::size_t i : task.members) sum += x[i];
      const double precision = task.prior_power / 100.0 + task.likelihood_power * static_cast<double>(task.members.size());
      return {task.likelihood_power * sum / precision, 1.0 / std::sqrt(precision)};
    }
  };
  static_assert(privpost::partition_posterior<normal_mean_posterior>);
  std::mt19937_64 g(8);
  std::vector<double> x(2000);
  for (double& v : x) v = 0.3 + privpost::draw_normal(g);
  const privpost::partition_plan plan(x.size(), 20, g);  // a seeded plan; a release uses the OS CSPRNG
  const std::vector<double> cutoffs = {0.25, 0.3, 0.35};
  const auto p = privpost::partition_cdf(plan, normal_mean_posterior{x}, cutoffs, {1, 2});  // fractional prior
  privpost::probability_release_options o;
  o.combiner = privpost::probability_combiner::stouffer_clipped;
  o.epsilon = 1.0;
  const auto release = privpost::release_posterior_probabilities(p.values, cutoffs, o, g);
  //! [partition]
  // Equal partitions and the fractional prior: sqrt(M) times the mean z-score is the full posterior's z-score exactly,
  // so the noiseless Stouffer aggregate is the full-data posterior probability.
  std::size_t fallbacks = 0;
  const auto aggregate = privpost::aggregate_partition_probabilities(p.values, cutoffs.size(), o, fallbacks);
  double sum = 0.0;
  for (double v : x) sum += v;
  const boost::math::normal_distribution<double> full(sum / (0.01 + 2000.0), 1.0 / std::sqrt(0.01 + 2000.0));
  for (std::size_t k = 0; k < cutoffs.size(); ++k)
    CHECK(privpost::combined_probability(o, 20, aggregate[k]) == Approx(cdf(full, cutoffs[k])).margin(1e-9));
  CHECK(fallbacks == 0);
  CHECK(p.failures == 0);
  REQUIRE(release.probability.size() == 3);
  CHECK(release.probability[0] <= release.probability[2]);
}
