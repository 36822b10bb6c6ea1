// Tests of privpost/core/concepts.hpp: for every user-facing concept, known-good types satisfy it and known-bad ones do
// not (mp-units / stdexec style). In particular a type with release() but without the opt-in is not a release mechanism
// (docs/concepts.md, the explicit opt-in), and the opt-in also works from outside a type through enable_release_mechanism.
#include <catch2/catch.hpp>

#include <Eigen/Core>
#include <array>
#include <cmath>
#include <random>
#include <vector>

#include "privpost/core/concepts.hpp"
#include "privpost/families/autodiff_family.hpp"
#include "privpost/families/binomial.hpp"
#include "privpost/families/exponential.hpp"
#include "privpost/families/family_model.hpp"
#include "privpost/families/graphical/brute_force.hpp"
#include "privpost/families/graphical/hyper_dirichlet.hpp"
#include "privpost/families/graphical/junction_tree.hpp"
#include "privpost/families/graphical/loopy_bp.hpp"
#include "privpost/families/graphical/tree_bp.hpp"
#include "privpost/families/graphical/tree_cgm_model.hpp"
#include "privpost/families/multinomial.hpp"
#include "privpost/families/normal.hpp"
#include "privpost/families/poisson.hpp"
#include "privpost/families/regression/covariate_models.hpp"
#include "privpost/families/regression/linear_regression_model.hpp"
#include "privpost/families/support.hpp"
#include "privpost/families/truncation.hpp"
#include "privpost/inference/calibration_study.hpp"
#include "privpost/inference/synthetic_regression.hpp"
#include "privpost/mechanisms/discrete_gaussian.hpp"
#include "privpost/mechanisms/discrete_laplace.hpp"
#include "privpost/mechanisms/gaussian.hpp"
#include "privpost/mechanisms/laplace.hpp"
#include "privpost/mechanisms/mechanism_variant.hpp"
#include "privpost/samplers/cgm/cgm_em.hpp"
#include "privpost/samplers/cgm/cgm_noise.hpp"
#include "privpost/samplers/cgm/naive_mle.hpp"
#include "privpost/samplers/conjugate.hpp"
#include "privpost/samplers/gibbs_ss.hpp"
#include "privpost/samplers/gibbs_ss_truncated.hpp"
#include "privpost/samplers/nuts.hpp"

using namespace privpost;

namespace {
// Looks like a mechanism but makes no promise.
struct lookalike {
  using vector_type = Eigen::VectorXd;
  template <class G>
  vector_type release(const vector_type& s, G&) const {
    return s;
  }
  double log_likelihood(const vector_type&, const vector_type&) const { return 0.0; }
  privacy_budget budget() const { return {1.0, 0.0}; }
};
struct opted_in_lookalike : lookalike {
  using mechanism_category = mechanism_tag;
};
// A type "from another library" that cannot be edited: opted in from outside below.
struct third_party_mechanism : lookalike {};
struct wrong_tag : lookalike {
  using mechanism_category = int;
};

// A support policy without a projection; a model without moments; a prior for another model.
struct no_projection {
  [[maybe_unused]] static constexpr int rejection_tries = 1;
  static bool contains(const Eigen::Matrix<double, 1, 1>&, double) { return true; }
};
struct model_without_moments {
  using parameter_type = double;
  using vector_type = Eigen::Matrix<double, 1, 1>;
  using matrix_type = Eigen::Matrix<double, 1, 1>;
  static constexpr int static_size = 1;
  Eigen::Index size() const { return 1; }
  nonnegative_orthant<1> support() const { return {}; }
  Eigen::VectorXd parameter_vector(double t) const { return Eigen::VectorXd::Constant(1, t); }
};
// A family missing its valid set.
struct family_without_support {
  static constexpr int dimension = 1;
  static constexpr int parameter_dimension = 1;
  using record_type = double;
  using parameter_type = double;
  static Eigen::Matrix<double, 1, 1> statistic(double x) { return Eigen::Matrix<double, 1, 1>(x); }
  static Eigen::Matrix<double, 1, 1> mean_statistic(double t) { return Eigen::Matrix<double, 1, 1>(t); }
  static Eigen::Matrix<double, 1, 1> covariance_statistic(double t) { return Eigen::Matrix<double, 1, 1>(t); }
};
struct family_with_support : family_without_support {
  using support_type = nonnegative_orthant<1>;
};
// A prior whose update returns another type.
struct sloppy_prior {
  using family = binomial_family;
  double update(const Eigen::Matrix<double, 1, 1>&, double) const { return 0.0; }
  template <class G>
  double draw(G&) const {
    return 0.5;
  }
};
struct no_covariates {};
struct adaptive_chain {
  template <class G>
  void step(G&) {}
  Eigen::VectorXd parameter_vector() const { return Eigen::VectorXd::Zero(1); }
  numerical_events events() const { return {}; }
  void end_warmup() {}
};
struct not_a_chain {
  Eigen::VectorXd parameter_vector() const { return Eigen::VectorXd::Zero(1); }
};
struct good_study {
  template <class G>
  std::vector<method_draws> trial(G&) const {
    return {};
  }
};
struct bad_study {
  template <class G>
  std::vector<int> trial(G&) const {
    return {};
  }
};
struct square_statistic {
  template <class T>
  std::array<T, 1> operator()(const std::array<T, 1>& x) const {
    return {square(x[0])};
  }
};
struct double_only_statistic {
  std::array<double, 1> operator()(const std::array<double, 1>& x) const { return {x[0] * x[0]}; }
};
struct quadratic_target {  // a differentiable_model: dimension and log density with gradient
  Eigen::Index dimension() const { return 2; }
  double log_density_gradient(const Eigen::VectorXd& u, Eigen::VectorXd& grad) {
    grad = -u;
    return -0.5 * u.squaredNorm();
  }
};
struct flat_layout {
  Eigen::Index size() const { return 4; }
  Eigen::Index edges_begin() const { return 0; }
};
struct inference_without_exactness {  // marginals, log Z and a layout but no is_exact: not a marginal_inference
  privpost::inference_report marginals(const Eigen::VectorXd&, Eigen::VectorXd&) { return {}; }
  double log_partition() const { return 0.0; }
  flat_layout layout() const { return {}; }
};
struct estimator_without_status {  // iterate() returns nothing to tell convergence by: not an iterative_estimator
  void iterate() {}
  bool converged() const { return false; }
  Eigen::VectorXd parameter_vector() const { return {}; }
  privpost::numerical_events events() const { return {}; }
};
struct noise_without_gap {  // value and supergradient but no dual pieces: not a cgm_noise
  double log_likelihood(const Eigen::VectorXd&, const Eigen::VectorXd&) const { return 0.0; }
  void supergradient(const Eigen::VectorXd&, const Eigen::VectorXd&, Eigen::VectorXd&) const {}
};
struct inference_without_layout {  // is_exact but no layout(): the E-step could not find the released cells
  static constexpr bool is_exact = true;
  privpost::inference_report marginals(const Eigen::VectorXd&, Eigen::VectorXd&) { return {}; }
  double log_partition() const { return 0.0; }
};
struct value_only_target {  // no gradient: not a differentiable_model
  Eigen::Index dimension() const { return 2; }
  double log_density(const Eigen::VectorXd& u) const { return -0.5 * u.squaredNorm(); }
};
// A family in its defining members only: complete_family derives the sizes, discreteness and moments.
struct minimal_bernoulli {
  using record_type = int;
  using parameter_type = double;
  using support_type = simplex_support<1>;
  static Eigen::Matrix<double, 1, 1> statistic(int x) { return Eigen::Matrix<double, 1, 1>(x); }
  static Eigen::Matrix<double, 1, 1> natural_parameter(double t) { return Eigen::Matrix<double, 1, 1>(std::log(t / (1.0 - t))); }
  template <class T>
  static T log_partition(const std::array<T, 1>& eta) {
    using std::exp;
    using std::log;
    return log(1.0 + exp(eta[0]));
  }
};
// The same with the sizes declared and real-valued records (exponential_family still wants moments).
struct logistic_without_moments : minimal_bernoulli {
  static constexpr int dimension = 1;
  static constexpr int parameter_dimension = 1;
  using record_type = double;
  static Eigen::Matrix<double, 1, 1> statistic(double x) { return Eigen::Matrix<double, 1, 1>(x); }
};
// minimal_bernoulli with a closed-form mean and covariance, which complete_family must use instead of autodiff.
struct closed_form_bernoulli : minimal_bernoulli {
  static inline int closed_form_calls = 0;
  static Eigen::Matrix<double, 1, 1> mean_statistic(double t) {
    ++closed_form_calls;
    return Eigen::Matrix<double, 1, 1>(t);
  }
  static Eigen::Matrix<double, 1, 1> covariance_statistic(double t) {
    ++closed_form_calls;
    return Eigen::Matrix<double, 1, 1>(t * (1.0 - t));
  }
};
// Two statistics (x, x^2) and a parameter that is not a number: the sizes come from statistic and to_vector.
struct minimal_normal {
  struct parameter {
    double mu, sigma2;
  };
  using record_type = double;
  using parameter_type = parameter;
  using support_type = mean_square_support;
  static Eigen::Vector2d statistic(double x) { return {x, x * x}; }
  static Eigen::Vector2d natural_parameter(const parameter& p) { return {p.mu / p.sigma2, -0.5 / p.sigma2}; }
  static Eigen::Vector2d to_vector(const parameter& p) { return {p.mu, p.sigma2}; }
  template <class T>
  static T log_partition(const std::array<T, 2>& eta) {
    using std::log;
    return -eta[0] * eta[0] / (4.0 * eta[1]) - 0.5 * log(-2.0 * eta[1]);
  }
};
}  // namespace

template <>
inline constexpr bool privpost::enable_release_mechanism<third_party_mechanism> = true;

// random_engine
static_assert(random_engine<std::mt19937_64>);
static_assert(random_engine<std::mt19937&>);
static_assert(!random_engine<int>);
// release_mechanism, scale_mixture_noise, sensitivity_calibrated, mechanism_factory
static_assert(release_mechanism<laplace_mechanism>);
static_assert(release_mechanism<gaussian_mechanism>);
static_assert(scale_mixture_noise<laplace_mechanism>);
static_assert(scale_mixture_noise<gaussian_mechanism>);
static_assert(!release_mechanism<lookalike>);
static_assert(!release_mechanism<wrong_tag>);
static_assert(release_mechanism<opted_in_lookalike>);
static_assert(release_mechanism<third_party_mechanism>);
static_assert(!scale_mixture_noise<opted_in_lookalike>);
static_assert(!release_mechanism<int>);
static_assert(sensitivity_calibrated<laplace_mechanism>);
static_assert(sensitivity_calibrated<gaussian_mechanism>);
// the lattice mechanisms run in every Gibbs sampler and carry a zCDP view
static_assert(scale_mixture_noise<discrete_laplace_mechanism> && sensitivity_calibrated<discrete_laplace_mechanism>);
static_assert(scale_mixture_noise<discrete_gaussian_mechanism> && sensitivity_calibrated<discrete_gaussian_mechanism>);
static_assert(!discrete_laplace_mechanism::fixed_variance && discrete_gaussian_mechanism::fixed_variance);
static_assert(zcdp_mechanism<discrete_gaussian_mechanism> && !zcdp_mechanism<discrete_laplace_mechanism>);
// exact_scale_mixture_noise: Laplace, Gaussian and their variants split exactly; lattice noise does not
static_assert(exact_scale_mixture_noise<laplace_mechanism> && exact_scale_mixture_noise<gaussian_mechanism>);
static_assert(exact_scale_mixture_noise<mechanism_variant<laplace_mechanism, gaussian_mechanism>>);
static_assert(!exact_scale_mixture_noise<discrete_laplace_mechanism> && !exact_scale_mixture_noise<discrete_gaussian_mechanism>);
static_assert(!exact_scale_mixture_noise<mechanism_variant<laplace_mechanism, discrete_laplace_mechanism>>);
static_assert(!exact_scale_mixture_noise<opted_in_lookalike>);
static_assert(!sensitivity_calibrated<opted_in_lookalike>);
inline constexpr auto make_laplace = [](double l1, double) { return laplace_mechanism(l1, 1.0); };
inline constexpr auto make_lookalike = [](double, double) { return lookalike{}; };
static_assert(mechanism_factory<decltype(make_laplace)>);
static_assert(!mechanism_factory<decltype(make_lookalike)>);
// per_record_statistic
static_assert(per_record_statistic<square_statistic, 1>);
static_assert(!per_record_statistic<double_only_statistic, 1>);
// support policies
static_assert(support_policy<simplex_support<3>, Eigen::Vector3d>);
static_assert(support_policy<nonnegative_orthant<1>, Eigen::Matrix<double, 1, 1>>);
static_assert(support_policy<real_space<2>, Eigen::Vector2d>);
static_assert(support_policy<mean_square_support, Eigen::Vector2d>);
static_assert(support_policy<gram_support, Eigen::VectorXd>);
static_assert(!support_policy<no_projection, Eigen::Matrix<double, 1, 1>>);
static_assert(interval_support<simplex_support<1>>);
static_assert(!interval_support<mean_square_support>);
// models
static_assert(statistic_model<family_model<binomial_family>>);
static_assert(statistic_model<family_model<multinomial_family<4>>>);
static_assert(statistic_model<linear_regression_model<fixed_covariates>>);
static_assert(statistic_model<linear_regression_model<hierarchical_normal_covariates>>);
static_assert(!statistic_model<model_without_moments>);
static_assert(conjugate_model<model_without_moments>);
static_assert(conjugate_model<linear_regression_statistic>);
static_assert(!statistic_model<linear_regression_statistic>);
static_assert(has_nuisance<linear_regression_model<hierarchical_normal_covariates>>);
static_assert(!has_nuisance<linear_regression_model<fixed_covariates>>);
static_assert(!has_nuisance<family_model<binomial_family>>);
static_assert(conjugate_prior_for<beta_prior, family_model<binomial_family>>);
static_assert(conjugate_prior_for<nig_regression_prior, linear_regression_model<fixed_covariates>>);
static_assert(!conjugate_prior_for<beta_prior, linear_regression_model<fixed_covariates>>);
static_assert(!conjugate_prior_for<dirichlet_prior<3>, family_model<binomial_family>>);
// The optional in-place forms gibbs_ss detects (regression sweeps allocate nothing).
static_assert(in_place_update<linear_regression_model<fixed_covariates>, nig_regression_prior>);
static_assert(in_place_update<linear_regression_model<hierarchical_normal_covariates>, nig_regression_prior>);
static_assert(!in_place_update<family_model<binomial_family>, beta_prior>);
static_assert(!in_place_update<linear_regression_model<fixed_covariates>, beta_prior>);
// The Bayesian tree CGM (docs/design-cgm.md Sec. 6): a statistic_model with a singular covariance and its conjugate prior.
static_assert(statistic_model<tree_cgm_model>);
static_assert(semidefinite_statistic_model<tree_cgm_model>);
static_assert(!semidefinite_statistic_model<linear_regression_model<fixed_covariates>>);
static_assert(!semidefinite_statistic_model<family_model<binomial_family>>);
static_assert(normal_drawing_model<tree_cgm_model, std::mt19937_64>);
static_assert(!normal_drawing_model<family_model<binomial_family>, std::mt19937_64>);
static_assert(support_policy<tree_table_support, Eigen::VectorXd>);
static_assert(conjugate_prior_for<hyper_dirichlet, tree_cgm_model>);
static_assert(!conjugate_prior_for<nig_regression_prior, tree_cgm_model>);
static_assert(in_place_update<tree_cgm_model, hyper_dirichlet>);
static_assert(in_place_draw<hyper_dirichlet, Eigen::VectorXd>);
static_assert(!has_nuisance<tree_cgm_model>);
static_assert(in_place_draw<nig_regression_prior, regression_parameter>);
static_assert(!in_place_draw<beta_prior, double>);
static_assert(blocked_prior<hyper_dirichlet, Eigen::VectorXd>);
static_assert(!blocked_prior<beta_prior, double>);
static_assert(finite_sum_family<binomial_family>);
static_assert(!finite_sum_family<poisson_family>);
static_assert(!finite_sum_family<multinomial_family<3>>);
// families and priors
static_assert(exponential_family<binomial_family>);
static_assert(exponential_family<normal_family>);
static_assert(exponential_family<family_with_support>);
static_assert(!exponential_family<family_without_support>);
static_assert(!exponential_family<int>);
static_assert(conjugate_prior<beta_prior>);
static_assert(conjugate_prior<poisson_gamma_prior>);
static_assert(!conjugate_prior<sloppy_prior>);
static_assert(record_generating_family<binomial_family>);
static_assert(!record_generating_family<family_with_support>);
static_assert(generic_statistic_family<exponential_rate_family>);
static_assert(!generic_statistic_family<family_with_support>);
static_assert(truncatable_family<poisson_family>);
static_assert(truncatable_family<normal_family>);
static_assert(!truncatable_family<binomial_family>);
static_assert(log_partition_family<complete_family<logistic_without_moments>>);
static_assert(!exponential_family<logistic_without_moments>);  // no moments until complete_family adds them
static_assert(exponential_family<complete_family<logistic_without_moments>>);
static_assert(!log_partition_family<family_with_support>);
static_assert(!exponential_family<minimal_bernoulli> && exponential_family<complete_family<minimal_bernoulli>>);
static_assert(complete_family<minimal_bernoulli>::dimension == 1 && complete_family<minimal_bernoulli>::parameter_dimension == 1);
static_assert(complete_family<minimal_bernoulli>::discrete && !complete_family<logistic_without_moments>::discrete);
static_assert(statistic_model<family_model<complete_family<minimal_bernoulli>>>);
static_assert(!exponential_family<minimal_normal> && log_partition_family<complete_family<minimal_normal>>);
static_assert(complete_family<minimal_normal>::dimension == 2 && complete_family<minimal_normal>::parameter_dimension == 2);
// covariate models
static_assert(covariate_model<fixed_covariates>);
static_assert(covariate_model<hierarchical_normal_covariates>);
static_assert(!covariate_model<no_covariates>);
// samplers and studies
static_assert(sampler<gibbs_ss<family_model<binomial_family>, beta_prior, laplace_mechanism>>);
static_assert(sampler<gibbs_ss<linear_regression_model<fixed_covariates>, nig_regression_prior, gaussian_mechanism>>);
static_assert(sampler<conjugate_sampler<family_model<binomial_family>, beta_prior>>);
static_assert(sampler<conjugate_sampler<linear_regression_statistic, nig_regression_prior>>);
static_assert(sampler<gibbs_ss_truncated<poisson_gamma_prior, laplace_mechanism>>);
static_assert(sampler<gibbs_ss<tree_cgm_model, hyper_dirichlet, laplace_mechanism>>);
static_assert(sampler<conjugate_sampler<tree_cgm_model, hyper_dirichlet>>);
static_assert(sampler<adaptive_chain>);
static_assert(sampler<adaptive_chain, std::minstd_rand>);
static_assert(!sampler<not_a_chain>);
// What with_covariate_law wraps: a chain that samples its covariate law; fixed covariates carry none.
static_assert(covariate_law_chain<
              gibbs_ss<linear_regression_model<hierarchical_normal_covariates>, nig_regression_prior, laplace_mechanism>>);
static_assert(!covariate_law_chain<gibbs_ss<linear_regression_model<fixed_covariates>, nig_regression_prior, laplace_mechanism>>);
static_assert(!covariate_law_chain<gibbs_ss<family_model<binomial_family>, beta_prior, laplace_mechanism>>);
static_assert(sampler<with_covariate_law<
                  gibbs_ss<linear_regression_model<hierarchical_normal_covariates>, nig_regression_prior, laplace_mechanism>>>);
static_assert(warmup_aware<adaptive_chain>);
static_assert(differentiable_model<quadratic_target>);
static_assert(!differentiable_model<value_only_target>);
static_assert(!differentiable_model<adaptive_chain>);
static_assert(sampler<nuts_sampler<quadratic_target>>);
static_assert(warmup_aware<nuts_sampler<quadratic_target>>);
static_assert(warmup_planned<nuts_sampler<quadratic_target>>);
static_assert(!warmup_planned<adaptive_chain>);
static_assert(!warmup_aware<gibbs_ss<family_model<binomial_family>, beta_prior, laplace_mechanism>>);
static_assert(marginal_inference<tree_bp>);
static_assert(marginal_inference<brute_force_inference>);
static_assert(marginal_inference<loopy_bp>);
static_assert(marginal_inference<junction_tree>);
static_assert(junction_tree::is_exact);
static_assert(!loopy_bp::is_exact);
static_assert(!marginal_inference<inference_without_exactness>);
static_assert(!marginal_inference<inference_without_layout>);
static_assert(cgm_noise<cgm_evidence>);
static_assert(!cgm_noise<laplace_mechanism>);
static_assert(!cgm_noise<noise_without_gap>);
static_assert(iterative_estimator<cgm_em<tree_bp, cgm_evidence>>);
static_assert(iterative_estimator<cgm_em<brute_force_inference, cgm_evidence>>);
static_assert(iterative_estimator<cgm_em<loopy_bp, cgm_evidence>>);
static_assert(iterative_estimator<cgm_em<junction_tree, cgm_evidence>>);
static_assert(iterative_estimator<naive_mle<junction_tree>>);
static_assert(iterative_estimator<naive_mle<tree_bp>>);
static_assert(!iterative_estimator<estimator_without_status>);
static_assert(!iterative_estimator<tree_bp>);
static_assert(!marginal_inference<pairwise_graph>);
static_assert(calibration_study<good_study>);
static_assert(!calibration_study<bad_study>);

TEST_CASE("concept checks compile", "[concepts]") { SUCCEED("static_asserts above"); }

TEST_CASE("complete_family derives the moments by autodiff and keeps a family's closed forms", "[concepts]") {
  // Bernoulli: E[x] = t, Var[x] = t (1 - t).
  const auto mean = complete_family<minimal_bernoulli>::mean_statistic(0.3);
  const auto cov = complete_family<minimal_bernoulli>::covariance_statistic(0.3);
  CHECK(mean(0) == Approx(0.3).epsilon(1e-12));
  CHECK(cov(0, 0) == Approx(0.21).epsilon(1e-12));
  // Normal (mu, s2): E = (mu, mu^2 + s2); Var x = s2, Cov(x, x^2) = 2 mu s2, Var x^2 = 4 mu^2 s2 + 2 s2^2.
  Eigen::Vector2d m;
  Eigen::Matrix2d c;
  complete_family<minimal_normal>::moments({1.5, 0.5}, m, c);
  CHECK(m(0) == Approx(1.5).epsilon(1e-12));
  CHECK(m(1) == Approx(2.75).epsilon(1e-12));
  CHECK(c(0, 0) == Approx(0.5).epsilon(1e-12));
  CHECK(c(0, 1) == Approx(1.5).epsilon(1e-12));
  CHECK(c(1, 0) == Approx(1.5).epsilon(1e-12));
  CHECK(c(1, 1) == Approx(5.0).epsilon(1e-12));
  // Declared closed forms win over autodiff (and give the same numbers).
  closed_form_bernoulli::closed_form_calls = 0;
  Eigen::Matrix<double, 1, 1> mb, cb;
  complete_family<closed_form_bernoulli>::moments(0.3, mb, cb);
  CHECK(closed_form_bernoulli::closed_form_calls == 2);
  CHECK(mb(0) == Approx(mean(0)).epsilon(1e-12));
  CHECK(cb(0, 0) == Approx(cov(0, 0)).epsilon(1e-12));
}
