// libFuzzer harness: the model samplers and estimators beyond the families (samplers_fuzz.cpp covers those), built
// from arbitrary releases z, record counts n, prior parameters and epsilon: Gibbs-SS over linear_regression_model
// (Laplace and analytic Gaussian noise) and record_regression; glm_collapsed_gibbs for logistic (Laplace, Gaussian) and
// Poisson (Laplace) releases; Gibbs-SS over the Bayesian tree CGM; CGM-EM and the naive MLE (20 iterations of fit());
// the OPS baseline; record_gibbs_releases (two releases of the same Poisson records, one clamped); the naive regression
// posterior (conjugate_sampler over linear_regression_model); the PASS-GLM closed form. Contract: refused with
// std::invalid_argument or std::domain_error, or finite parameters after every sweep (and finite counts, draws, means).
// record_regression and record_gibbs_releases hold n records, so they are driven only for n <= 1e3 (a larger n is
// valid and only slow); NUTS runs at tree depth 4 to keep an execution short.
#include <Eigen/Core>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

#include "fuzz_support.hpp"
#include "privpost/families/binomial.hpp"
#include "privpost/families/glm/glm_statistic.hpp"
#include "privpost/families/graphical/contingency_tables.hpp"
#include "privpost/families/graphical/hyper_dirichlet.hpp"
#include "privpost/families/graphical/pairwise_graph.hpp"
#include "privpost/families/graphical/tree_bp.hpp"
#include "privpost/families/graphical/tree_cgm_model.hpp"
#include "privpost/families/poisson.hpp"
#include "privpost/families/regression/covariate_models.hpp"
#include "privpost/families/regression/linear_regression_model.hpp"
#include "privpost/inference/fit.hpp"
#include "privpost/mechanisms/gaussian.hpp"
#include "privpost/mechanisms/laplace.hpp"
#include "privpost/samplers/cgm/cgm_em.hpp"
#include "privpost/samplers/cgm/cgm_noise.hpp"
#include "privpost/samplers/cgm/naive_mle.hpp"
#include "privpost/samplers/conjugate.hpp"
#include "privpost/samplers/gibbs_ss.hpp"
#include "privpost/samplers/glm/glm_collapsed_gibbs.hpp"
#include "privpost/samplers/glm/logistic_moment_model.hpp"
#include "privpost/samplers/glm/pass_glm.hpp"
#include "privpost/samplers/glm/poisson_moment_model.hpp"
#include "privpost/samplers/ops.hpp"
#include "privpost/samplers/record_regression.hpp"
#include "privpost/samplers/record_releases.hpp"

namespace {

using privpost::fuzz::violated;

template <class Make>
void sweeps(Make make) {
  std::mt19937_64 g(7);
  auto chain = make(g);
  for (int i = 0; i < 3; ++i) {
    chain.step(g);
    if (!chain.parameter_vector().allFinite()) violated("a parameter that is not finite");
  }
}

template <class Estimator>
void iterations(Estimator& estimator) {
  privpost::fit_options options;
  options.max_iterations = 20;
  const privpost::fit_result r = privpost::fit(estimator, options);
  if (!r.parameter.allFinite()) violated("an estimate that is not finite");
  if constexpr (requires { estimator.counts(); })
    if (!estimator.counts().allFinite()) violated("E-step counts that are not finite");
}

// The release: z0, z1, z2 repeated to the statistic's dimension.
Eigen::VectorXd release(const double (&z)[3], Eigen::Index dimension) {
  Eigen::VectorXd out(dimension);
  for (Eigen::Index i = 0; i < dimension; ++i) out(i) = z[i % 3];
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace privpost;
  fuzz::input in(data, size);
  const std::uint8_t which = in.byte() % 13;
  const double z[3] = {in.real(), in.real(), in.real()};
  const double n = in.real(), a = in.real(), b = in.real(), epsilon = in.real();
  try {
    switch (which) {
      case 0:
      case 1:
      case 2: {
        const regression_layout layout(1, true);  // sum x, sum x^2, sum y, sum x y, sum y^2
        const std::vector<interval> box_x{interval(-1.0, 1.0)};
        const interval box_y(-1.0, 1.0);
        const auto [l1, l2] = layout.sensitivity(box_x, box_y);
        const nig_regression_prior prior(Eigen::Vector2d::Zero(), a * Eigen::Matrix2d::Identity(), b, 1.0);
        const auto moments = normal_covariate_moments(layout, Eigen::VectorXd::Zero(1), Eigen::MatrixXd::Identity(1, 1));
        const Eigen::VectorXd zr = release(z, 5);
        if (which == 0) {
          const laplace_mechanism lap(l1, epsilon);
          sweeps([&](auto& g) {
            return gibbs_ss(linear_regression_model(layout, fixed_covariates(moments)), prior, lap, zr, n, g);
          });
        } else if (which == 1) {
          const auto gauss = gaussian_mechanism::analytic(l2, epsilon, 1e-6);
          sweeps([&](auto& g) {
            return gibbs_ss(linear_regression_model(layout, fixed_covariates(moments)), prior, gauss, zr, n, g);
          });
        } else if (n <= 1e3) {
          const laplace_mechanism lap(l1, epsilon);
          const normal_covariate_law law{Eigen::VectorXd::Zero(1), Eigen::MatrixXd::Identity(1, 1)};
          sweeps([&](auto& g) { return record_regression(layout, prior, law, box_x, box_y, lap, zr, n, g); });
        }
        break;
      }
      case 3:
      case 4:
      case 5: {
        const int d = 1;
        nuts_options opt;
        opt.warmup = 3;
        opt.max_depth = 4;
        glm_prior prior;
        prior.s_max = a;
        if (which == 5) {
          const auto poisson = glm_statistic::poisson(d, 1.0, 10.0);
          const laplace_mechanism lap(poisson.l1_sensitivity(), epsilon);
          const Eigen::VectorXd zg = release(z, static_cast<Eigen::Index>(poisson.size()));
          sweeps([&](auto& g) {
            return glm_collapsed_gibbs<poisson_moment_map, laplace_mechanism>(zg, n, lap, d, prior, {}, opt, g);
          });
          break;
        }
        const auto logistic = glm_statistic::logistic(d, 1.0);
        const Eigen::VectorXd zg = release(z, static_cast<Eigen::Index>(logistic.size()));
        if (which == 3) {
          const laplace_mechanism lap(logistic.l1_sensitivity(), epsilon);
          sweeps([&](auto& g) {
            return glm_collapsed_gibbs<logistic_moment_map<exact_logistic_link>, laplace_mechanism>(zg, n, lap, d, prior, {}, opt,
                                                                                                    g);
          });
        } else {
          const auto gauss = gaussian_mechanism::analytic(logistic.l2_sensitivity(), epsilon, 1e-6);
          sweeps([&](auto& g) {
            return glm_collapsed_gibbs<logistic_moment_map<exact_logistic_link>, gaussian_mechanism>(zg, n, gauss, d, prior, {},
                                                                                                     opt, g);
          });
        }
        break;
      }
      case 6: {
        const pairwise_graph tree = star_graph(3, 2);
        const laplace_mechanism lap(contingency_l1_sensitivity(tree), epsilon);
        const hyper_dirichlet prior(tree, a);
        const Eigen::VectorXd zt = release(z, static_cast<Eigen::Index>(table_layout(tree).released_size()));
        sweeps([&](auto& g) { return gibbs_ss(tree_cgm_model(tree), prior, lap, zt, n, g); });
        break;
      }
      case 7:
      case 8: {
        const pairwise_graph chain = chain_graph(3, 2);
        const Eigen::VectorXd y = release(z, table_layout(chain).released_size());
        if (which == 7) {
          cgm_em_options options;
          options.pseudo_count = a;
          cgm_em<tree_bp, cgm_evidence> em(chain, y, n, cgm_evidence::laplace(b), tree_bp(chain), options);
          iterations(em);
        } else {
          naive_mle_options options;
          options.lambda = a;
          naive_mle<tree_bp> naive(chain, y, n, tree_bp(chain), options);
          iterations(naive);
        }
        break;
      }
      case 9: {
        ops_options options;
        options.epsilon = epsilon;
        options.draws = 5;
        std::mt19937_64 g(7);
        const Eigen::VectorXd draws = ops_binomial(beta_prior(a, b), z[0], n, options, g);
        if (!draws.allFinite()) violated("an OPS draw that is not finite");
        if (draws.minCoeff() < options.a0 || draws.maxCoeff() > 1.0 - options.a0) violated("an OPS draw outside [a0, 1 - a0]");
        break;
      }
      case 10: {
        // Two releases of the same records (record_gibbs_releases): a Laplace release of the sum and a Gaussian release
        // of the clamped Poisson sum; n <= 1e3 as for record_regression.
        if (n > 1e3) break;
        const laplace_mechanism lap(10.0, epsilon);
        const auto gauss = gaussian_mechanism::analytic(10.0, epsilon, 1e-6);
        Eigen::VectorXd z0(1), z1(1);
        z0 << z[0];
        z1 << z[1];
        sweeps([&](auto& g) {
          return record_gibbs_releases(poisson_gamma_prior(a, b), n, g, record_release(lap, z0),
                                       record_release(gauss, z1, clamped_contribution<poisson_family>(0.0, 10.0)));
        });
        break;
      }
      case 11: {
        // The naive regression posterior: the release read as the exact statistic.
        const regression_layout layout(1, true);
        const nig_regression_prior prior(Eigen::Vector2d::Zero(), a * Eigen::Matrix2d::Identity(), b, 1.0);
        const auto moments = normal_covariate_moments(layout, Eigen::VectorXd::Zero(1), Eigen::MatrixXd::Identity(1, 1));
        const Eigen::VectorXd zr = release(z, 5);
        sweeps([&](auto& g) {
          return conjugate_sampler(linear_regression_model(layout, fixed_covariates(moments)), prior, zr, n, g);
        });
        break;
      }
      default: {
        const pass_glm_posterior post(release(z, 2), 1, a);
        std::mt19937_64 g(7);
        if (!(post.mean().allFinite() && post.covariance().allFinite() && post.draws(g, 3).allFinite()))
          violated("a PASS-GLM posterior that is not finite");
        break;
      }
    }
  } catch (const std::invalid_argument&) {
  } catch (const std::domain_error&) {
  }
  return 0;
}
