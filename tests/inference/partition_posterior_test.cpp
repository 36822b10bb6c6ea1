// Tests of privpost/inference/partition_posterior.hpp (the studies of spec A.9 items 5 and 7 are in
// partition_study_test.cpp). Properties:
//  1. regression_coefficient_posterior equals the conjugate update computed independently: the NIG Student-t
//     marginal (nig_regression_prior::update), the known-variance normal, a tempered update (likelihood power w equals
//     w copies of the records) and the fractional prior (prior power 1/M);
//  2. partition_cdf and partition_quantiles: the same outputs for 1 and 3 threads; draws and closed forms agree; a
//     posterior that throws gives an empty output and a private failure count, and the release replaces it by the
//     fallback (no exception escapes);
//  3. a proportion, a rate, a category probability: conjugate_partition_posterior (the prior raised by prior_power,
//     the tempered update, the closed form of families/marginals.hpp, or draws when a prior has no closed form) and
//     privpost's conjugate sampler run through run() on each partition (sampler_partition_posterior) give the same
//     CDFs and quantiles;
//  4. bad input; the partition_posterior, closed_form_marginal and powered_prior concepts (static_asserts).
#include <catch2/catch.hpp>

#include <Eigen/Dense>
#include <boost/math/distributions/beta.hpp>
#include <boost/math/distributions/gamma.hpp>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <numeric>
#include <random>
#include <stdexcept>
#include <vector>

#include "privpost/families/marginals.hpp"
#include "privpost/families/normal.hpp"
#include "privpost/families/regression/coefficient_posterior.hpp"
#include "privpost/families/regression/normal_inverse_gamma_regression.hpp"
#include "privpost/inference/partition_posterior.hpp"
#include "privpost/mechanisms/sample_aggregate.hpp"
#include "privpost/samplers/conjugate.hpp"
#include "privpost/samplers/semi_conjugate_regression.hpp"

using namespace privpost;

namespace sample_aggregate_inference {
struct small_data {
  Eigen::MatrixXd x;
  Eigen::VectorXd y;
};

small_data make_data(int n, std::uint64_t seed) {
  std::mt19937_64 g(seed);
  small_data d{Eigen::MatrixXd(n, 2), Eigen::VectorXd(n)};
  for (int i = 0; i < n; ++i) {
    d.x(i, 0) = 1.0;
    d.x(i, 1) = draw_normal(g);
    d.y(i) = 0.5 - 1.5 * d.x(i, 1) + 0.8 * draw_normal(g);
  }
  return d;
}

std::vector<std::size_t> all_records(int n) {
  std::vector<std::size_t> v(static_cast<std::size_t>(n));
  std::iota(v.begin(), v.end(), std::size_t{0});
  return v;
}
}  // namespace sample_aggregate_inference

using namespace sample_aggregate_inference;

// The concepts of a partition posterior: draws (Eigen or std::vector) or a closed form, taking the task and an engine.
namespace sample_aggregate_inference {
using draws_posterior = Eigen::VectorXd (*)(const partition_task&, std::mt19937_64&);
using vector_posterior = std::vector<double> (*)(const partition_task&, std::mt19937_64&);
using scalar_posterior = double (*)(const partition_task&, std::mt19937_64&);
using engineless_posterior = Eigen::VectorXd (*)(const partition_task&);
}  // namespace sample_aggregate_inference
static_assert(partition_posterior<draws_posterior>);
static_assert(partition_posterior<vector_posterior>);
static_assert(partition_posterior<regression_coefficient_posterior>);
static_assert(partition_posterior<conjugate_partition_posterior<beta_prior>>);
static_assert(partition_posterior<conjugate_partition_posterior<poisson_gamma_prior>>);
static_assert(partition_posterior<conjugate_partition_posterior<dirichlet_prior<3>>>);
static_assert(sampler<semi_conjugate_regression_sampler>);
static_assert(!partition_posterior<scalar_posterior>);      // a number is neither draws nor a distribution
static_assert(!partition_posterior<engineless_posterior>);  // must take the partition's engine
static_assert(closed_form_marginal<scalar_marginal>);
static_assert(closed_form_marginal<boost::math::beta_distribution<double>>);  // a Boost distribution as it is
static_assert(!closed_form_marginal<Eigen::VectorXd>);
static_assert(powered_prior<beta_prior> && powered_prior<dirichlet_prior<3>> && powered_prior<normal_mean_prior>);
static_assert(prior_with_marginals<poisson_gamma_prior> && prior_with_marginals<exponential_gamma_prior>);
static_assert(!powered_prior<normal_inverse_gamma_prior>);  // its power can be improper: no prior_power

TEST_CASE("regression_coefficient_posterior is the conjugate update", "[sample_aggregate_inference]") {
  const auto d = make_data(60, 1);
  const auto members = all_records(40);  // the first 40 records
  Eigen::MatrixXd lambda0(2, 2);
  lambda0 << 2.0, 0.3, 0.3, 1.5;
  const Eigen::Vector2d mu0(0.1, -0.2);
  std::mt19937_64 g(0);
  const Eigen::MatrixXd x = d.x.topRows(40);
  const Eigen::VectorXd y = d.y.head(40);
  for (double w : {1.0, 2.5}) {
    for (double q : {1.0, 0.25}) {
      // Independent computation: the NIG update of the prior raised to q, on w copies of the records.
      const double a = 3.0, b = 2.0;
      const double aq = q * (a + 1.0 + 1.0) - 2.0;  // (a + 1 + p/2) q - 1 - p/2, p = 2
      INFO("w = " << w << ", q = " << q);
      const regression_coefficient_posterior posterior(d.x, d.y, {mu0, lambda0, 0.0, a, b, 0.0}, 1);
      const auto m = posterior(partition_task{0, members, w, q}, g);
      if (aq > 0.0) {
        const auto post = nig_regression_prior(mu0, q * lambda0, aq, q * b)
                              .update(w * x.transpose() * x, w * x.transpose() * y, w * y.squaredNorm(), w * 40.0);
        const double scale = std::sqrt(post.b() / post.a() * post.lambda().inverse()(1, 1));
        CHECK(m.location == Approx(post.mu()(1)).epsilon(1e-10));
        CHECK(m.scale == Approx(scale).epsilon(1e-10));
        CHECK(m.degrees_of_freedom == Approx(2.0 * post.a()));
        const boost::math::students_t_distribution<double> t(2.0 * post.a());
        CHECK(cdf(m, post.mu()(1) + 0.7 * scale) == Approx(boost::math::cdf(t, 0.7)).epsilon(1e-10));
        CHECK(quantile(m, 0.9) == Approx(post.mu()(1) + scale * boost::math::quantile(t, 0.9)).epsilon(1e-10));
      } else {
        // An improper fractional factor: the posterior is still proper (a_n = aq + w n / 2 > 0).
        CHECK(m.degrees_of_freedom == Approx(2.0 * (aq + 0.5 * w * 40.0)));
      }
      // Known variance: N(mu_n, sigma^2 (Lambda_n^{-1})_kk) with the same mean.
      const regression_coefficient_posterior known(d.x, d.y, {mu0, lambda0, 0.0, a, b, 0.64}, 1);
      const auto k = known(partition_task{0, members, w, q}, g);
      const Eigen::MatrixXd lambda_n = q * lambda0 + w * x.transpose() * x;
      const Eigen::VectorXd mu_n = lambda_n.ldlt().solve(q * lambda0 * mu0 + w * x.transpose() * y);
      CHECK(k.location == Approx(mu_n(1)).epsilon(1e-10));
      CHECK(k.scale == Approx(std::sqrt(0.64 * lambda_n.inverse()(1, 1))).epsilon(1e-10));
      CHECK(std::isinf(k.degrees_of_freedom));
    }
  }
  // Zellner's g-prior: Lambda_0 = X_j^T X_j / g.
  const regression_coefficient_posterior zellner(d.x, d.y, {Eigen::Vector2d::Zero(), Eigen::MatrixXd(), 40.0, 1.0, 1.0, 1.0}, 1);
  const auto z = zellner(partition_task{0, members, 1.0, 1.0}, g);
  const Eigen::MatrixXd xtx = x.transpose() * x;
  CHECK(z.location == Approx((xtx * (1.0 + 1.0 / 40.0)).ldlt().solve(x.transpose() * y)(1)).epsilon(1e-10));
  // Too few records for a fractional NIG prior: a domain error naming the shape (a partition failure in a release).
  const regression_coefficient_posterior vague(d.x, d.y, {mu0, lambda0, 0.0, 0.5, 1.0, 0.0}, 1);
  const std::vector<std::size_t> two = {0, 1};
  CHECK_THROWS_AS(vague(partition_task{0, two, 1.0, 0.001}, g), std::domain_error);
}

TEST_CASE("partition posteriors: thread-count independence, draws against closed forms, failures",
          "[sample_aggregate_inference]") {
  const auto d = make_data(400, 2);
  std::mt19937_64 g(3);
  const partition_plan plan(400, 8, g);
  const regression_coefficient_posterior closed(d.x, d.y,
                                                {Eigen::Vector2d::Zero(), Eigen::Matrix2d::Identity(), 0.0, 2.0, 1.0, 0.0}, 1);
  // The same posterior by draws: 20000 draws of the Student-t marginal from the partition's engine.
  auto by_draws = [&](const partition_task& task, std::mt19937_64& e) {
    const auto m = closed(task, e);
    Eigen::VectorXd draws(20000);
    for (auto& v : draws) v = quantile(m, draw_uniform(e));
    return draws;
  };
  const std::vector<double> cutoffs = {-1.6, -1.5, -1.4};
  const std::vector<double> levels = {0.1, 0.5, 0.9};
  const auto one = partition_cdf(plan, by_draws, cutoffs, {7, 1});
  const auto three = partition_cdf(plan, by_draws, cutoffs, {7, 3});
  CHECK(one.values == three.values);
  const auto exact = partition_cdf(plan, closed, cutoffs, {7, 2});
  for (std::size_t j = 0; j < 8; ++j)
    for (std::size_t k = 0; k < 3; ++k) CHECK(one.values[j][k] == Approx(exact.values[j][k]).margin(0.015));
  const auto q1 = partition_quantiles(plan, by_draws, levels, {7, 1});
  const auto q3 = partition_quantiles(plan, by_draws, levels, {7, 3});
  CHECK(q1.values == q3.values);
  const auto qe = partition_quantiles(plan, closed, levels, {7, 1});
  for (std::size_t j = 0; j < 8; ++j)
    for (std::size_t l = 0; l < 3; ++l) CHECK(q1.values[j][l] == Approx(qe.values[j][l]).margin(0.03));
  // Tempered: the quantiles of the tempered posterior are M^{1/2} times closer to the mean than the untempered ones.
  const auto qu = partition_cdf(plan, closed, std::vector<double>{qe.values[0][2]}, {7, 1}, partition_prior::full);
  CHECK(qu.values[0][0] < 0.9);
  CHECK(qu.values[0][0] > 0.5);

  // A posterior that throws on some partitions: no exception escapes, their outputs are empty, the count is private,
  // and the release uses the fallback for them.
  auto flaky = [&](const partition_task& task, std::mt19937_64& e) {
    if (task.partition % 3 == 0) throw std::runtime_error("sampler failed");
    return closed(task, e);
  };
  const auto out = partition_cdf(plan, flaky, cutoffs, {7, 2});
  CHECK(out.failures == 3);
  CHECK(out.values[0].empty());
  CHECK(out.values[3].empty());
  CHECK(out.values[1] == exact.values[1]);
  probability_release_options o;
  o.epsilon = 1.0;
  const auto r = release_posterior_probabilities(out.values, cutoffs, o, g);
  CHECK(r.fallbacks == 9);  // 3 partitions x 3 cutoffs
  // A posterior that returns NaN (a closed form at a bad input): the release replaces it by the fallback.
  auto nan_posterior = [](const partition_task&, std::mt19937_64&) {
    return std::vector<double>{std::numeric_limits<double>::quiet_NaN()};
  };
  const auto nans = partition_quantiles(plan, nan_posterior, levels, {7, 1});
  CHECK(nans.failures == 8);  // sample_quantile refuses NaN draws: a failure, not a NaN output
  bound_search_result bounds;
  bounds.half_width = 1.0;
  const auto qr = release_posterior_quantiles(nans.values, levels, bounds, 1.0, g);
  CHECK(qr.fallbacks == 24);
  for (double v : qr.values) CHECK(std::isfinite(v));

  CHECK_THROWS_AS(partition_cdf(plan, closed, std::vector<double>{}, {7, 1}), std::invalid_argument);
  CHECK_THROWS_AS(partition_cdf(plan, closed, cutoffs, {7, 0}), std::invalid_argument);
  CHECK_THROWS_AS(partition_quantiles(plan, closed, std::vector<double>{0.0}, {7, 1}), std::invalid_argument);
  CHECK_THROWS_AS(partition_quantiles(plan, closed, std::vector<double>{1.0}, {7, 1}), std::invalid_argument);
  CHECK_THROWS_AS(
      regression_coefficient_posterior(d.x, d.y, {Eigen::Vector2d::Zero(), Eigen::Matrix2d::Identity(), 0.0, 2.0, 1.0, 0.0}, 2),
      std::invalid_argument);
  CHECK_THROWS_AS(
      regression_coefficient_posterior(d.x, d.y, {Eigen::Vector2d::Zero(), -Eigen::Matrix2d::Identity(), 0.0, 2.0, 1.0, 0.0}, 0),
      std::invalid_argument);
  CHECK_THROWS_AS(
      regression_coefficient_posterior(d.x, d.y, {Eigen::Vector2d::Zero(), Eigen::Matrix2d::Identity(), 0.0, 0.0, 1.0, 0.0}, 0),
      std::invalid_argument);
  CHECK_THROWS_AS(
      regression_coefficient_posterior(d.x, d.y, {Eigen::Vector2d::Zero(), Eigen::Matrix2d::Identity(), 0.0, 1.0, 1.0, -1.0}, 0),
      std::invalid_argument);
  CHECK_THROWS_AS(regression_coefficient_posterior(d.x, d.y.head(3),
                                                   {Eigen::Vector2d::Zero(), Eigen::Matrix2d::Identity(), 0.0, 1.0, 1.0, 0.0}, 0),
                  std::invalid_argument);
}

namespace sample_aggregate_inference {
// The closed form against privpost's conjugate sampler run through run() on the same partitions (make(task) builds
// the sampler of the fractional prior given the tempered statistic; `coordinate` is the parameter's coordinate of
// interest): the partition CDFs agree within Monte Carlo error (8000 draws: sd <= 0.0056, margin 0.02), the quantiles
// within `quantile_margin`, for one and two threads alike.
template <class Closed, class Make>
void check_against_sampler(const partition_plan& plan, const Closed& closed, Make make, Eigen::Index coordinate,
                           const std::vector<double>& cutoffs, const std::vector<double>& levels, double quantile_margin) {
  run_options o;
  o.inference.chains = 2;
  o.inference.burnin = 0;
  o.inference.draws = 4000;
  const sampler_partition_posterior sampled(make, o, coordinate);
  const auto pc = partition_cdf(plan, closed, cutoffs, {5, 1});
  const auto ps = partition_cdf(plan, sampled, cutoffs, {5, 1});
  CHECK(pc.failures == 0);
  CHECK(ps.failures == 0);
  CHECK(ps.values == partition_cdf(plan, sampled, cutoffs, {5, 2}).values);
  for (std::size_t j = 0; j < plan.partitions(); ++j)
    for (std::size_t k = 0; k < cutoffs.size(); ++k) CHECK(ps.values[j][k] == Approx(pc.values[j][k]).margin(0.02));
  const auto qc = partition_quantiles(plan, closed, levels, {5, 1});
  const auto qs = partition_quantiles(plan, sampled, levels, {5, 2});
  for (std::size_t j = 0; j < plan.partitions(); ++j)
    for (std::size_t l = 0; l < levels.size(); ++l) CHECK(qs.values[j][l] == Approx(qc.values[j][l]).margin(quantile_margin));
}
}  // namespace sample_aggregate_inference

namespace sample_aggregate_inference {
// beta_prior without parameter_marginal: conjugate_partition_posterior falls back to draws.
struct beta_without_marginal {
  using family = binomial_family;
  beta_prior p;
  beta_without_marginal update(const binomial_family::vector_type& s, double n) const { return {p.update(s, n)}; }
  double draw(std::mt19937_64& g) const { return p.draw(g); }
  friend beta_without_marginal prior_power(const beta_without_marginal& b, double q) { return {prior_power(b.p, q)}; }
};
static_assert(powered_prior<beta_without_marginal> && !prior_with_marginals<beta_without_marginal>);
}  // namespace sample_aggregate_inference

TEST_CASE("a proportion: the closed form and privpost's conjugate sampler through run agree", "[sample_aggregate_inference]") {
  std::mt19937_64 g(12);
  std::vector<double> records(600);
  for (auto& r : records) r = draw_uniform(g) < 0.3 ? 1.0 : 0.0;
  const partition_plan plan(600, 6, g);
  const beta_prior prior(2.0, 3.0);
  const conjugate_partition_posterior closed(records, prior);
  // The sampler of partition j: the conjugate posterior of the fractional prior given the tempered statistic.
  auto make = [&](const partition_task& task) {
    double s = 0.0;
    for (std::size_t i : task.members) s += records[i];
    const double n = static_cast<double>(task.members.size()), w = task.likelihood_power;
    const beta_prior p = prior_power(prior, task.prior_power);
    return [p, s, n, w](std::mt19937_64& e) {
      const Eigen::VectorXd statistic = Eigen::VectorXd::Constant(1, w * s);
      return conjugate_sampler(p, statistic, w * n, e);
    };
  };
  const std::vector<double> cutoffs = {0.25, 0.3, 0.35};
  check_against_sampler(plan, closed, make, 0, cutoffs, {0.1, 0.5, 0.9}, 0.003);
  const auto qc = partition_quantiles(plan, closed, std::vector<double>{0.1, 0.5, 0.9}, {3, 1});
  // Tempered by n / n_j = 6: the partition quantiles' 10-90% width is that of the full data's posterior.
  const boost::math::beta_distribution<double> full(2.0 + 180.0, 3.0 + 420.0);
  const double full_width = quantile(full, 0.9) - quantile(full, 0.1);
  CHECK(qc.values[0][2] - qc.values[0][0] == Approx(full_width).epsilon(0.1));

  const beta_prior half = prior_power(prior, 0.5);
  CHECK(half.a() == Approx(1.5));
  CHECK(half.b() == Approx(2.0));
  CHECK_THROWS_AS(prior_power(prior, 0.0), std::invalid_argument);
  CHECK_THROWS_AS(prior_power(prior, 1.5), std::invalid_argument);
  // A prior with no closed form (a user's, say): the partition posterior is 4000 draws of the updated prior; its CDFs
  // agree with the closed form within Monte Carlo error (sd <= 0.008, margin 0.03).
  const conjugate_partition_posterior drawn(records, sample_aggregate_inference::beta_without_marginal{prior});
  const auto pd = partition_cdf(plan, drawn, cutoffs, {5, 1});
  const auto pc = partition_cdf(plan, closed, cutoffs, {5, 1});
  for (std::size_t j = 0; j < plan.partitions(); ++j)
    for (std::size_t k = 0; k < cutoffs.size(); ++k) CHECK(pd.values[j][k] == Approx(pc.values[j][k]).margin(0.03));
  const std::vector<double> two = {0.0, 2.0};
  CHECK_THROWS_AS(conjugate_partition_posterior(two, prior), std::invalid_argument);
  CHECK_THROWS_AS(conjugate_partition_posterior(records, prior, 1), std::invalid_argument);  // theta has one coordinate
  run_options o;
  o.inference.draws = 1000;
  auto bad = o;
  bad.inference.draws = 0;
  CHECK_THROWS_AS(sampler_partition_posterior(make, bad, 0), std::invalid_argument);
  // A coordinate the sampler does not have: a failure of every partition (the release's fallback), not an escape.
  const sampler_partition_posterior wrong(make, o, 3);
  CHECK(partition_cdf(plan, wrong, cutoffs, {3, 1}).failures == 6);
}

TEST_CASE("a Poisson rate: the Gamma closed form and privpost's conjugate sampler through run agree",
          "[sample_aggregate_inference]") {
  std::mt19937_64 g(21);
  std::vector<double> records(500);
  std::poisson_distribution<int> poisson(2.0);
  for (auto& r : records) r = poisson(g);
  const partition_plan plan(500, 5, g);
  const poisson_gamma_prior prior(3.0, 2.0);
  const conjugate_partition_posterior closed(records, prior);
  auto make = [&](const partition_task& task) {
    double s = 0.0;
    for (std::size_t i : task.members) s += records[i];
    const double n = static_cast<double>(task.members.size()), w = task.likelihood_power;
    const poisson_gamma_prior p = prior_power(prior, task.prior_power);
    return [p, s, n, w](std::mt19937_64& e) { return conjugate_sampler(p, Eigen::VectorXd::Constant(1, w * s), w * n, e); };
  };
  // Tempered posterior sd of a partition rate ~ sqrt(2 / 500) = 0.063: the Monte Carlo sd of a 10% quantile from 8000
  // draws is ~0.0012, the margin 0.01.
  check_against_sampler(plan, closed, make, 0, {1.8, 2.0, 2.2}, {0.1, 0.5, 0.9}, 0.01);

  // The fractional prior: Gamma(3, 2)^(1/2) = Gamma(2, 1); the full-data posterior is the product of the M tempered
  // partition posteriors' likelihoods with the prior once.
  const poisson_gamma_prior half = prior_power(prior, 0.5);
  CHECK(half.shape() == Approx(2.0));
  CHECK(half.rate() == Approx(1.0));
  const double total = std::accumulate(records.begin(), records.end(), 0.0);
  const boost::math::gamma_distribution<double> full(3.0 + total, 1.0 / (2.0 + 500.0));
  std::mt19937_64 unused(0);
  const auto members = all_records(500);
  const partition_task everything{0, members, 1.0, 1.0};
  CHECK(closed(everything, unused).shape() == Approx(full.shape()));
  CHECK(closed(everything, unused).scale() == Approx(full.scale()));
  CHECK(cdf(full, 0.0) == 0.0);
  CHECK(cdf(full, quantile(full, 0.3)) == Approx(0.3));
  // Below the support a cutoff's probability is 0 (Boost's cdf would throw there: a partition failure).
  CHECK(partition_cdf(plan, closed, std::vector<double>{-1.0}, {3, 1}).values[0] == std::vector<double>{0.0});
  CHECK_THROWS_AS(prior_power(prior, 0.0), std::invalid_argument);
  CHECK_THROWS_AS(prior_power(prior, 2.0), std::invalid_argument);
  const std::vector<std::vector<double>> bad_records = {{1.0, 1.5}, {-1.0}, {std::nan("")}};
  for (const auto& bad : bad_records) CHECK_THROWS_AS(conjugate_partition_posterior(bad, prior), std::invalid_argument);
}

TEST_CASE("a category probability: the Beta marginal of the Dirichlet and privpost's conjugate sampler through run agree",
          "[sample_aggregate_inference]") {
  std::mt19937_64 g(22);
  std::vector<int> records(600);
  for (auto& r : records) {
    const double u = draw_uniform(g);
    r = u < 0.2 ? 0 : (u < 0.7 ? 1 : 2);
  }
  const partition_plan plan(600, 6, g);
  const dirichlet_prior<3> prior(Eigen::Vector3d(2.0, 1.0, 0.5));
  const conjugate_partition_posterior closed(records, prior, 1);
  auto make = [&](const partition_task& task) {
    Eigen::VectorXd s = Eigen::VectorXd::Zero(2);
    for (std::size_t i : task.members)
      if (records[i] < 2) s(records[i]) += 1.0;
    const double n = static_cast<double>(task.members.size()), w = task.likelihood_power;
    const dirichlet_prior<3> p = prior_power(prior, task.prior_power);
    return [p, s, n, w](std::mt19937_64& e) { return conjugate_sampler(p, Eigen::VectorXd(w * s), w * n, e); };
  };
  // theta_1 (coordinate 1 of the Dirichlet sampler's parameter): tempered sd ~ sqrt(0.25 / 600) = 0.02, Monte Carlo sd
  // of a 10% quantile ~0.0004, the margin 0.005.
  check_against_sampler(plan, closed, make, 1, {0.45, 0.5, 0.55}, {0.1, 0.5, 0.9}, 0.005);

  // Dirichlet(2, 1, 0.5)^(1/2) = Dirichlet(1.5, 1, 0.75).
  const dirichlet_prior<3> half = prior_power(prior, 0.5);
  CHECK(half.alpha()(0) == Approx(1.5));
  CHECK(half.alpha()(1) == Approx(1.0));
  CHECK(half.alpha()(2) == Approx(0.75));
  CHECK_THROWS_AS(prior_power(prior, -0.5), std::invalid_argument);
  CHECK_THROWS_AS(conjugate_partition_posterior(records, prior, 3), std::invalid_argument);
  CHECK_THROWS_AS(conjugate_partition_posterior(records, prior, -1), std::invalid_argument);
  const std::vector<int> outside = {0, 3};
  CHECK_THROWS_AS(conjugate_partition_posterior(outside, prior, 0), std::invalid_argument);
}
