// No hangs, no NaN: every family sampler driven with adversarial releases. Each case builds the
// sampler and runs a few sweeps; it must either throw a documented exception (std::invalid_argument or
// std::domain_error, with a message) or give finite parameters after every sweep, in bounded time (a hang would trip
// the per-case clock below before CTest's timeout). Releases: 1e300 and -1e300 (beyond any sum), 1e15 and -1e15 (far
// outside the valid set), 0, the largest finite double; record counts n = 1 and n = 1e12; priors at the edge of
// validity (tiny and huge shape parameters). record_gibbs_releases (two releases of the same records) with the Poisson
// samplers and the naive regression posterior with the regression samplers. The lattice mechanisms
// under Gibbs-SS and the exact sampler; the regression samplers (Gibbs-SS over linear_regression_model, and
// record_regression) and the GLM samplers (glm_collapsed_gibbs: NUTS on the moment-matched model, with Laplace noise
// variances when the noise is Laplace) and the Bayesian tree CGM (gibbs_ss over tree_cgm_model with a hyper-Dirichlet
// prior), with the same releases in every coordinate.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "privpost/families/binomial.hpp"
#include "privpost/families/exponential.hpp"
#include "privpost/families/glm/glm_statistic.hpp"
#include "privpost/families/graphical/contingency_tables.hpp"
#include "privpost/families/graphical/hyper_dirichlet.hpp"
#include "privpost/families/graphical/tree_cgm_model.hpp"
#include "privpost/families/multinomial.hpp"
#include "privpost/families/poisson.hpp"
#include "privpost/families/regression/covariate_models.hpp"
#include "privpost/families/regression/linear_regression_model.hpp"
#include "privpost/mechanisms/discrete_gaussian.hpp"
#include "privpost/mechanisms/discrete_laplace.hpp"
#include "privpost/mechanisms/gaussian.hpp"
#include "privpost/mechanisms/laplace.hpp"
#include "privpost/samplers/conjugate.hpp"
#include "privpost/samplers/gibbs_ss.hpp"
#include "privpost/samplers/gibbs_ss_corrected.hpp"
#include "privpost/samplers/gibbs_ss_exact.hpp"
#include "privpost/samplers/gibbs_ss_truncated.hpp"
#include "privpost/samplers/gibbs_ss_window.hpp"
#include "privpost/samplers/glm/glm_collapsed_gibbs.hpp"
#include "privpost/samplers/glm/logistic_moment_model.hpp"
#include "privpost/samplers/glm/poisson_moment_model.hpp"
#include "privpost/samplers/record_augmented.hpp"
#include "privpost/samplers/record_regression.hpp"
#include "privpost/samplers/record_releases.hpp"
#include "support/adversarial.hpp"

using namespace privpost;

namespace {

constexpr double huge = std::numeric_limits<double>::max();
const std::vector<double> adversarial_releases = {1e300, -1e300, 1e15, -1e15, 0.0, huge, -huge};
const std::vector<double> adversarial_counts = {1.0, 1e12};

using outcome = privpost::test::adversarial_tally;

// Builds with make(z, n, g), runs 30 sweeps, under run_adversarial (support/adversarial.hpp): refused with a documented
// exception, or finite parameters after every sweep, within 5 seconds.
template <class Make>
void drive(const std::string& name, Make make, outcome& o, int dimension = 1) {
  for (const double zv : adversarial_releases) {
    for (const double n : adversarial_counts) {
      INFO(name << ": z " << zv << ", n " << n);
      std::mt19937_64 g(11);
      const Eigen::VectorXd z = Eigen::VectorXd::Constant(dimension, zv);
      privpost::test::run_adversarial(
          [&] {
            auto chain = make(z, n, g);
            for (int i = 0; i < 30; ++i) {
              chain.step(g);
              const Eigen::VectorXd theta = chain.parameter_vector();
              INFO("sweep " << i << ": theta " << theta.transpose());
              REQUIRE(theta.allFinite());
            }
          },
          o);
    }
  }
}

}  // namespace

TEST_CASE("adversarial releases: binomial samplers", "[adversarial][errors]") {
  outcome o;
  for (const auto& prior : {beta_prior(1.0, 1.0), beta_prior(1e-8, 1e-8), beta_prior(1e8, 1.0)}) {
    const laplace_mechanism lap(1.0, 0.5);
    const auto gauss = gaussian_mechanism::analytic(1.0, 0.5, 1e-6);
    drive(
        "gibbs_ss laplace", [&](const Eigen::VectorXd& z, double n, auto& g) { return gibbs_ss(prior, lap, z, n, g); }, o);
    drive(
        "gibbs_ss gaussian", [&](const Eigen::VectorXd& z, double n, auto& g) { return gibbs_ss(prior, gauss, z, n, g); }, o);
    drive(
        "gibbs_ss_exact", [&](const Eigen::VectorXd& z, double n, auto& g) { return gibbs_ss_exact(prior, lap, z, n, g); }, o);
    drive(
        "gibbs_ss_corrected laplace",
        [&](const Eigen::VectorXd& z, double n, auto& g) { return gibbs_ss_corrected(prior, lap, z, n, g); }, o);
    drive(
        "gibbs_ss_corrected gaussian",
        [&](const Eigen::VectorXd& z, double n, auto& g) { return gibbs_ss_corrected(prior, gauss, z, n, g); }, o);
    drive(
        "gibbs_ss_window", [&](const Eigen::VectorXd& z, double n, auto& g) { return gibbs_ss_window(prior, lap, z, n, g); }, o);
    drive(
        "record_gibbs", [&](const Eigen::VectorXd& z, double n, auto& g) { return record_gibbs(prior, lap, z, n, g); }, o);
    drive(
        "naive", [&](const Eigen::VectorXd& z, double n, auto& g) { return conjugate_sampler(prior, z, n, g); }, o);
  }
  INFO("finite " << o.finite << ", refused " << o.refused);
  CHECK(o.finite > 0);
}

TEST_CASE("adversarial releases: multinomial and Poisson samplers", "[adversarial][errors]") {
  outcome o;
  const laplace_mechanism lap(2.0, 0.5);
  for (const auto& prior :
       {dirichlet_prior<3>(Eigen::Vector3d(1.0, 1.0, 1.0)), dirichlet_prior<3>(Eigen::Vector3d(1e-8, 1e-8, 1e-8))}) {
    drive(
        "gibbs_ss multinomial", [&](const Eigen::VectorXd& z, double n, auto& g) { return gibbs_ss(prior, lap, z, n, g); }, o, 2);
    drive(
        "record_gibbs multinomial",
        [&](const Eigen::VectorXd& z, double n, auto& g) { return record_gibbs(prior, lap, z, n, g); }, o, 2);
  }
  for (const auto& prior : {poisson_gamma_prior(2.0, 0.4), poisson_gamma_prior(1e-8, 1e-8), poisson_gamma_prior(1e8, 1e-8)}) {
    const laplace_mechanism pl(10.0, 0.5);
    drive(
        "gibbs_ss poisson", [&](const Eigen::VectorXd& z, double n, auto& g) { return gibbs_ss(prior, pl, z, n, g); }, o);
    drive(
        "gibbs_ss_window poisson",
        [&](const Eigen::VectorXd& z, double n, auto& g) { return gibbs_ss_window(prior, pl, z, n, g); }, o);
    drive(
        "gibbs_ss_corrected poisson",
        [&](const Eigen::VectorXd& z, double n, auto& g) { return gibbs_ss_corrected(prior, pl, z, n, g); }, o);
    drive(
        "gibbs_ss_truncated poisson",
        [&](const Eigen::VectorXd& z, double n, auto& g) { return gibbs_ss_truncated(prior, pl, z, n, 0.0, 10.0, g); }, o);
    drive(
        "record_gibbs_releases poisson (two releases, one clamped)",
        [&](const Eigen::VectorXd& z, double n, auto& g) {
          return record_gibbs_releases(prior, n, g, record_release(pl, z),
                                       record_release(pl, z, clamped_contribution<poisson_family>(0.0, 10.0)));
        },
        o);
    drive(
        "record_gibbs truncated poisson",
        [&](const Eigen::VectorXd& z, double n, auto& g) {
          return record_gibbs(prior, pl, z, n, g, dropped_contribution<poisson_family>(0.0, 10.0));
        },
        o);
  }
  for (const auto& prior : {exponential_gamma_prior(2.0, 2.0), exponential_gamma_prior(1e-8, 1e8)}) {
    const laplace_mechanism el(8.0, 0.5);
    drive(
        "gibbs_ss_truncated exponential",
        [&](const Eigen::VectorXd& z, double n, auto& g) { return gibbs_ss_truncated(prior, el, z, n, 0.0, 8.0, g); }, o);
  }
  INFO("finite " << o.finite << ", refused " << o.refused);
  CHECK(o.finite > 0);
}

TEST_CASE("adversarial releases: the lattice mechanisms under the binomial samplers", "[adversarial][errors]") {
  outcome o;
  const discrete_laplace_mechanism dl(1.0, 0.5);
  const discrete_gaussian_mechanism dg(1.0, 0.5, 1e-6);
  for (const auto& prior : {beta_prior(1.0, 1.0), beta_prior(1e-8, 1e-8)}) {
    drive(
        "gibbs_ss discrete laplace", [&](const Eigen::VectorXd& z, double n, auto& g) { return gibbs_ss(prior, dl, z, n, g); },
        o);
    drive(
        "gibbs_ss discrete gaussian", [&](const Eigen::VectorXd& z, double n, auto& g) { return gibbs_ss(prior, dg, z, n, g); },
        o);
    drive(
        "gibbs_ss_exact discrete laplace",
        [&](const Eigen::VectorXd& z, double n, auto& g) { return gibbs_ss_exact(prior, dl, z, n, g); }, o);
    drive(
        "gibbs_ss_corrected discrete gaussian",
        [&](const Eigen::VectorXd& z, double n, auto& g) { return gibbs_ss_corrected(prior, dg, z, n, g); }, o);
  }
  INFO("finite " << o.finite << ", refused " << o.refused);
  CHECK(o.finite > 0);
}

TEST_CASE("adversarial releases: the regression samplers", "[adversarial][errors]") {
  outcome o;
  const regression_layout layout(1, true);  // statistics: sum x, sum x^2, sum y, sum x y, sum y^2 (dimension 5)
  const std::vector<interval> box_x{interval(-1.0, 1.0)};
  const interval box_y(-1.0, 1.0);
  const laplace_mechanism lap(layout.sensitivity(box_x, box_y).first, 1.0);
  const auto gauss = gaussian_mechanism::analytic(layout.sensitivity(box_x, box_y).second, 1.0, 1e-6);
  const auto moments = normal_covariate_moments(layout, Eigen::VectorXd::Zero(1), Eigen::MatrixXd::Identity(1, 1));
  const normal_covariate_law law{Eigen::VectorXd::Zero(1), Eigen::MatrixXd::Identity(1, 1)};
  for (const auto& prior : {nig_regression_prior(Eigen::Vector2d::Zero(), Eigen::Matrix2d::Identity(), 2.0, 1.0),
                            nig_regression_prior(Eigen::Vector2d::Zero(), Eigen::Matrix2d::Identity() * 1e-8, 1e-8, 1e8)}) {
    drive(
        "gibbs_ss regression laplace",
        [&](const Eigen::VectorXd& z, double n, auto& g) {
          return gibbs_ss(linear_regression_model(layout, fixed_covariates(moments)), prior, lap, z, n, g);
        },
        o, 5);
    drive(
        "gibbs_ss regression gaussian",
        [&](const Eigen::VectorXd& z, double n, auto& g) {
          return gibbs_ss(linear_regression_model(layout, fixed_covariates(moments)), prior, gauss, z, n, g);
        },
        o, 5);
    drive(
        "naive regression (conjugate_sampler)",
        [&](const Eigen::VectorXd& z, double n, auto& g) {
          return conjugate_sampler(linear_regression_model(layout, fixed_covariates(moments)), prior, z, n, g);
        },
        o, 5);
    drive(
        "record_regression laplace",
        [&](const Eigen::VectorXd& z, double n, auto& g) {
          return record_regression(layout, prior, law, box_x, box_y, lap, z, n, g);
        },
        o, 5);
  }
  INFO("finite " << o.finite << ", refused " << o.refused);
  CHECK(o.finite > 0);
}

TEST_CASE("adversarial releases: the GLM samplers", "[adversarial][errors]") {
  outcome o;
  const int d = 1;  // statistics (no intercept): sum y x and sum x x^T, dimension 2
  const auto logistic = glm_statistic::logistic(d, 1.0);
  const auto poisson = glm_statistic::poisson(d, 1.0, 10.0);
  nuts_options opt;
  opt.warmup = 10;
  opt.max_depth = 6;  // 30 sweeps of at most 64 leapfrog steps keep a case well inside the 5 s clock
  const laplace_mechanism lap(logistic.l1_sensitivity(), 1.0);
  const auto gauss = gaussian_mechanism::analytic(logistic.l2_sensitivity(), 1.0, 1e-6);
  const laplace_mechanism plap(poisson.l1_sensitivity(), 1.0);
  drive(
      "glm logistic laplace",
      [&](const Eigen::VectorXd& z, double n, auto& g) {
        return glm_collapsed_gibbs<logistic_moment_map<exact_logistic_link>, laplace_mechanism>(z, n, lap, d, glm_prior{}, {},
                                                                                                opt, g);
      },
      o, static_cast<int>(logistic.size()));
  drive(
      "glm logistic gaussian",
      [&](const Eigen::VectorXd& z, double n, auto& g) {
        return glm_collapsed_gibbs<logistic_moment_map<exact_logistic_link>, gaussian_mechanism>(z, n, gauss, d, glm_prior{}, {},
                                                                                                 opt, g);
      },
      o, static_cast<int>(logistic.size()));
  drive(
      "glm poisson laplace",
      [&](const Eigen::VectorXd& z, double n, auto& g) {
        return glm_collapsed_gibbs<poisson_moment_map, laplace_mechanism>(z, n, plap, d, glm_prior{}, {}, opt, g);
      },
      o, static_cast<int>(poisson.size()));
  INFO("finite " << o.finite << ", refused " << o.refused);
  CHECK(o.finite > 0);
}

TEST_CASE("adversarial releases: the Bayesian tree CGM", "[adversarial][errors]") {
  outcome o;
  const pairwise_graph tree = star_graph(3, 2);
  const auto released = static_cast<int>(table_layout(tree).released_size());
  const laplace_mechanism lap(contingency_l1_sensitivity(tree), 0.5);
  const auto gauss = gaussian_mechanism::analytic(contingency_l2_sensitivity(tree), 0.5, 1e-6);
  for (const double alpha : {9.0, 1e-8}) {
    const hyper_dirichlet prior(tree, alpha);
    drive(
        "gibbs_ss tree cgm laplace",
        [&](const Eigen::VectorXd& z, double n, auto& g) { return gibbs_ss(tree_cgm_model(tree), prior, lap, z, n, g); }, o,
        released);
    drive(
        "gibbs_ss tree cgm gaussian",
        [&](const Eigen::VectorXd& z, double n, auto& g) { return gibbs_ss(tree_cgm_model(tree), prior, gauss, z, n, g); }, o,
        released);
  }
  INFO("finite " << o.finite << ", refused " << o.refused);
  CHECK(o.finite > 0);
}
