// record_frame (samplers/record_frame.hpp) on user-written record models: dapper's normal-mean example
// (examples/dapper_model.hpp, a model with a block update for theta | records and the transport move) and a
// regression with fixed per-record covariates (a conjugate update on the summed statistic, a record law and a
// contribution that depend on the record's index, and a two-coordinate transport move). Both have closed-form
// posteriors given the release. Simulation-based calibration of the first at n = 100 with the naive update as the
// negative control; without the transport move the same chain at n = 10^4 barely moves (the reason for the move).
#include <catch2/catch.hpp>

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <Eigen/LU>
#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <vector>

#include "../../examples/dapper_model.hpp"
#include "privpost/core/random/normal.hpp"
#include "privpost/diagnostics/calibration.hpp"
#include "privpost/diagnostics/convergence.hpp"
#include "privpost/mechanisms/gaussian.hpp"
#include "privpost/samplers/record_frame.hpp"
#include "support/calibration_checks.hpp"

using namespace privpost;

namespace {

Eigen::VectorXd frame_z(double v) { return Eigen::VectorXd::Constant(1, v); }

// The dapper model without its transport move: the plain record-level sweep (theta | records, then the records).
struct frame_untransported {
  my::normal_mean_model m;
  using parameter_type = double;
  using record_type = double;
  using vector_type = my::normal_mean_model::vector_type;
  template <class G>
  double draw_prior(G& g) const {
    return m.draw_prior(g);
  }
  template <class G>
  double draw_record(double theta, std::size_t i, G& g) const {
    return m.draw_record(theta, i, g);
  }
  vector_type contribution(double y, std::size_t i) const { return m.contribution(y, i); }
  template <class G>
  void update_parameter(double& theta, const std::vector<double>& y, G& g) const {
    m.update_parameter(theta, y, g);
  }
  Eigen::VectorXd parameter_vector(double theta) const { return m.parameter_vector(theta); }
};

// y_i ~ N(theta_0 + theta_1 x_i, 1) with public covariates x_i, theta ~ N(0, 4 I); the owner releases
// S = sum_i (y_i, x_i y_i) with Gaussian noise. theta | y is the conjugate normal update on T = S.
struct frame_covariate_regression {
  using parameter_type = Eigen::VectorXd;
  using record_type = double;
  using vector_type = Eigen::Vector2d;
  using statistic_type = Eigen::Vector2d;
  std::vector<double> x;
  Eigen::Matrix2d gram() const {  // X'X
    Eigen::Matrix2d a = Eigen::Matrix2d::Zero();
    for (const double v : x) a += Eigen::Vector2d(1.0, v) * Eigen::Vector2d(1.0, v).transpose();
    return a;
  }
  template <class G>
  Eigen::VectorXd draw_prior(G& g) const {
    return Eigen::Vector2d(2.0 * draw_normal(g), 2.0 * draw_normal(g));
  }
  template <class G>
  double draw_record(const Eigen::VectorXd& theta, std::size_t i, G& g) const {
    return theta(0) + theta(1) * x[i] + draw_normal(g);
  }
  vector_type contribution(double y, std::size_t i) const { return {y, x[i] * y}; }
  statistic_type statistic(double y, std::size_t i) const { return {y, x[i] * y}; }
  template <class G>
  Eigen::VectorXd draw_given_statistic(const statistic_type& t, double, G& g) const {
    const Eigen::Matrix2d precision = gram() + 0.25 * Eigen::Matrix2d::Identity();
    const Eigen::LLT<Eigen::Matrix2d> llt(precision);
    const Eigen::Vector2d e(draw_normal(g), draw_normal(g));
    return llt.solve(t) + llt.matrixU().solve(e);
  }
  Eigen::VectorXd parameter_vector(const Eigen::VectorXd& theta) const { return theta; }
  double transport(double y, std::size_t i, const Eigen::VectorXd& from, const Eigen::VectorXd& to) const {
    return y + (to(0) - from(0)) + (to(1) - from(1)) * x[i];
  }
  double log_prior(const Eigen::VectorXd& theta) const { return -0.125 * theta.squaredNorm(); }
};

struct frame_vector_noise {
  double sd;
  template <class Z, class S>
  double log_likelihood(const Z& z, const S& s) const {
    return -0.5 * ((z - s) / sd).squaredNorm();
  }
};

}  // namespace

static_assert(record_model<my::normal_mean_model> && transported_record_model<my::normal_mean_model>);
static_assert(block_record_update<my::normal_mean_model> && !conjugate_record_update<my::normal_mean_model>);
static_assert(record_model<frame_untransported> && !transported_record_model<frame_untransported>);
static_assert(record_model<frame_covariate_regression> && conjugate_record_update<frame_covariate_regression> &&
              transported_record_model<frame_covariate_regression>);
static_assert(record_model_for<my::normal_mean_model, record_release<my::mean_noise>>);
static_assert(!record_model<double>);

TEST_CASE("record_frame: dapper's example matches its closed-form posterior, and mixes where the noise dominates",
          "[records][frame]") {
  // n = 10^4: the noise sd on the mean (1/3) is 33 times the records' sampling sd (0.01). The transport move gives a
  // bulk ESS near the number of sweeps; the record sweep alone, about 1 (theta moves by the sampling sd per sweep).
  const double n = 1e4, noise_sd = 1.0 / 3.0;
  std::mt19937_64 g(31);
  double mean_y = 0.0;
  for (int i = 0; i < static_cast<int>(n); ++i) mean_y += (-2.0 + draw_normal(g)) / n;
  const double z = mean_y + noise_sd * draw_normal(g);
  const my::normal_mean_model model{n};
  const my::normal_mean_posterior exact(model, noise_sd, z);

  auto run = [&](auto m, int sweeps) {
    record_frame chain(m, n, g, record_release(my::mean_noise{noise_sd}, frame_z(z)));
    for (int s = 0; s < 200; ++s) chain.step(g);
    Eigen::MatrixXd draws(sweeps, 1);
    for (int s = 0; s < sweeps; ++s) {
      chain.step(g);
      draws(s, 0) = chain.parameter();
    }
    CHECK(chain.events().inner_solver_nonconverged == 0);
    return draws;
  };
  const Eigen::MatrixXd draws = run(model, 2000);
  const double mean = draws.mean(), sd = std::sqrt((draws.array() - mean).square().sum() / (draws.rows() - 1));
  const double ess = ess_bulk(draws);
  INFO("exact " << exact.mean << " (" << exact.sd << "), chain " << mean << " (" << sd << "), ESS " << ess);
  CHECK(ess >= 800);  // of 2000 sweeps (measured: about 1900)
  CHECK(std::abs(mean - exact.mean) <= 4.0 * sd / std::sqrt(ess));
  CHECK(std::abs(sd / exact.sd - 1.0) <= 0.1);

  const Eigen::MatrixXd stuck = run(frame_untransported{model}, 1000);
  INFO("without the transport move: ESS " << ess_bulk(stuck));
  CHECK(ess_bulk(stuck) < 20);
}

TEST_CASE("record_frame: a library mechanism built from the published noise sd reads dapper's release",
          "[records][frame][published]") {
  // The analyst knows the noise sd (1/3 on the mean), not the owner's budget: gaussian_mechanism::published(sd) is the
  // kernel, with no invented sensitivity. n = 1000, 2000 sweeps against the closed form.
  const double n = 1000, noise_sd = 1.0 / 3.0;
  std::mt19937_64 g(34);
  const my::normal_mean_model model{n};
  const double z = -2.0 + noise_sd * draw_normal(g);
  const my::normal_mean_posterior exact(model, noise_sd, z);
  record_frame chain(model, n, g, record_release(gaussian_mechanism::published(noise_sd), frame_z(z)));
  for (int s = 0; s < 200; ++s) chain.step(g);
  Eigen::MatrixXd draws(2000, 1);
  for (int s = 0; s < 2000; ++s) {
    chain.step(g);
    draws(s, 0) = chain.parameter();
  }
  const double mean = draws.mean(), sd = std::sqrt((draws.array() - mean).square().sum() / (draws.rows() - 1));
  const double ess = ess_bulk(draws);
  INFO("exact " << exact.mean << " (" << exact.sd << "), chain " << mean << " (" << sd << "), ESS " << ess);
  CHECK(ess >= 800);
  CHECK(std::abs(mean - exact.mean) <= 4.0 * sd / std::sqrt(ess));
  CHECK(std::abs(sd / exact.sd - 1.0) <= 0.1);
}

TEST_CASE("record_frame: a conjugate user model with per-record covariates and a vector transport move", "[records][frame]") {
  // n = 200 covariates on [-1, 1]; S = (sum y, sum x y) released with noise sd 20 (the records' sampling sd of S is about
  // 14 and 8). z | theta ~ N(G theta, G + sd^2 I) with G = X'X: the posterior is normal in closed form.
  std::mt19937_64 g(32);
  frame_covariate_regression model;
  const int n = 200;
  for (int i = 0; i < n; ++i) model.x.push_back(-1.0 + 2.0 * (i + 0.5) / n);
  const double noise_sd = 20.0;
  const Eigen::Vector2d truth(0.5, -1.0);
  Eigen::Vector2d s = Eigen::Vector2d::Zero();
  for (int i = 0; i < n; ++i) s += model.contribution(model.draw_record(Eigen::VectorXd(truth), i, g), i);
  const Eigen::Vector2d z = s + noise_sd * Eigen::Vector2d(draw_normal(g), draw_normal(g));
  const Eigen::Matrix2d gram = model.gram();
  const Eigen::Matrix2d v = gram + noise_sd * noise_sd * Eigen::Matrix2d::Identity();
  const Eigen::Matrix2d covariance = (0.25 * Eigen::Matrix2d::Identity() + gram * v.inverse() * gram).inverse();
  const Eigen::Vector2d exact_mean = covariance * gram * v.inverse() * z;

  record_frame chain(model, n, g, record_release(frame_vector_noise{noise_sd}, Eigen::VectorXd(z)));
  for (int k = 0; k < 200; ++k) chain.step(g);
  const int sweeps = 4000;
  Eigen::MatrixXd draws(sweeps, 2);
  for (int k = 0; k < sweeps; ++k) {
    chain.step(g);
    draws.row(k) = chain.parameter_vector().transpose();
  }
  for (int j = 0; j < 2; ++j) {
    const Eigen::MatrixXd col = draws.col(j);
    const double mean = col.mean(), sd = std::sqrt((col.array() - mean).square().sum() / (sweeps - 1));
    const double ess = ess_bulk(col);
    INFO("theta[" << j << "]: exact " << exact_mean(j) << " (" << std::sqrt(covariance(j, j)) << "), chain " << mean << " (" << sd
                  << "), ESS " << ess);
    CHECK(ess >= 400);
    CHECK(std::abs(mean - exact_mean(j)) <= 4.0 * sd / std::sqrt(ess));
    CHECK(std::abs(sd / std::sqrt(covariance(j, j)) - 1.0) <= 0.1);
  }
  // The running T equals the records' sum, and the release's sum the same (the contribution is the statistic).
  Eigen::Vector2d t = Eigen::Vector2d::Zero();
  for (int i = 0; i < n; ++i) t += model.statistic(chain.records()[static_cast<std::size_t>(i)], static_cast<std::size_t>(i));
  CHECK((chain.statistic() - t).norm() <= 1e-9 * (1.0 + t.norm()));
  CHECK((chain.release_sum(0) - t).norm() <= 1e-9 * (1.0 + t.norm()));
}

TEST_CASE("record_frame: calibrated on dapper's example at n = 100; the naive update is not",
          "[calibration][records][frame-records-sbc]") {
  // M = 500 trials: theta from the prior, 100 records, z = mean + N(0, 1/9); 200 burn-in and 1000 kept sweeps. The rule
  // of support/calibration_checks.hpp (KS p > 0.001, 50% and 90% coverage within 3.5 binomial sds). Naive: theta | z as
  // if z were the exact mean (posterior sd 0.1 against the true 0.34): its 90% intervals cover about a third of the time.
  const int trials = 500;
  const double n = 100, noise_sd = 1.0 / 3.0;
  const my::normal_mean_model model{n};
  std::vector<double> frame_q, naive_q;
  for (int t = 0; t < trials; ++t) {
    std::mt19937_64 g(7000 + static_cast<std::uint64_t>(t));
    const double theta = model.draw_prior(g);
    double mean_y = 0.0;
    for (int i = 0; i < static_cast<int>(n); ++i) mean_y += model.draw_record(theta, 0, g) / n;
    const double z = mean_y + noise_sd * draw_normal(g);
    record_frame chain(model, n, g, record_release(my::mean_noise{noise_sd}, frame_z(z)));
    for (int s = 0; s < 200; ++s) chain.step(g);
    Eigen::VectorXd draws(1000);
    for (int s = 0; s < 1000; ++s) {
      chain.step(g);
      draws(s) = chain.parameter();
    }
    frame_q.push_back(posterior_quantile(theta, draws));
    const double naive_var = 1.0 / (0.25 + n), naive_mean = naive_var * n * z;
    for (int s = 0; s < 1000; ++s) draws(s) = naive_mean + std::sqrt(naive_var) * draw_normal(g);
    naive_q.push_back(posterior_quantile(theta, draws));
  }
  test::check_calibrated(test::row_of_quantiles("record_frame", 0, frame_q));
  const auto naive = test::row_of_quantiles("naive", 0, naive_q);
  INFO("naive: KS p " << naive.ks_pvalue << ", coverage " << naive.coverage50 << " / " << naive.coverage90);
  CHECK(test::miscalibrated(naive));
  CHECK(naive.coverage90 < 0.6);
}

TEST_CASE("record_frame: bad input is refused with the value and the accepted range", "[records][frame]") {
  std::mt19937_64 g(33);
  const my::normal_mean_model model{10};
  const auto release = [](double z) { return record_release(my::mean_noise{0.3}, frame_z(z)); };
  CHECK_THROWS_WITH(record_frame(model, 0.0, g, release(0.0)), Catch::Contains("n"));
  CHECK_THROWS_WITH(record_frame(model, 2.5, g, release(0.0)), Catch::Contains("a whole number in [1, 1e7]"));
  CHECK_THROWS_WITH(record_frame(model, 2e7, g, release(0.0)), Catch::Contains("a whole number in [1, 1e7]"));
  CHECK_THROWS_WITH(record_frame(model, 10.0, g, release(std::numeric_limits<double>::quiet_NaN())),
                    Catch::Contains("release z"));
  CHECK_THROWS_WITH(record_frame(model, 10.0, g, record_release(my::mean_noise{0.3}, Eigen::VectorXd::Zero(2))),
                    Catch::Contains("the contribution's size"));
  CHECK_THROWS_AS(record_frame(model, 10.0, g, static_cast<record_init>(7), release(0.0)), std::invalid_argument);
  record_frame chain(model, 10.0, g, release(0.0));
  CHECK_THROWS_WITH(chain.release_sum(1), Catch::Contains("a release index in [0, 0]"));
  CHECK_THROWS_AS(chain.set_records(std::vector<double>(3, 0.0)), std::invalid_argument);
}
