// privpost/families/regression/linear_regression_model.hpp
// linear_regression_model: Bayesian linear regression as a statistic_model, so that the one gibbs_ss runs it (001
// Algorithm 1): the statistic is the unique entries of [X y]^T [X y] (regression_layout), its CLT moments come from
// Eqs. 2-3 given the covariates' moments, its valid set is the Gram/PSD set, and the conjugate update is the NIG one.
#pragma once

#include <Eigen/Core>
#include <utility>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/families/regression/covariate_models.hpp"
#include "privpost/families/regression/gram_support.hpp"
#include "privpost/families/regression/normal_inverse_gamma_regression.hpp"
#include "privpost/families/regression/regression_layout.hpp"
#include "privpost/families/regression/regression_moments.hpp"

namespace privpost {

namespace detail {
template <class C>
concept updatable_covariates = requires(C& c, const regression_layout& layout, const Eigen::MatrixXd& b, double n,
                                        std::mt19937_64& g) {
  c.update(layout, b, n, g);
};
}  // namespace detail

/// The regression statistic alone: what the conjugate NIG update needs (the naive and non-private baselines), without
/// a model of the covariates.
class linear_regression_statistic {
 public:
  /// The parameter (theta, sigma^2).
  using parameter_type = regression_parameter;
  /// Type of the statistic.
  using vector_type = Eigen::VectorXd;
  /// Its support: the Gram/PSD set.
  using support_type = gram_support;

  /// The statistic of layout's design.
  explicit linear_regression_statistic(regression_layout layout) : layout_(std::move(layout)) {}

  /// Length of the statistic.
  Eigen::Index size() const noexcept { return layout_.size(); }
  /// Its support.
  gram_support support() const noexcept { return gram_support(layout_); }
  /// The design layout.
  const regression_layout& layout() const noexcept { return layout_; }

  /// (theta_0, ..., theta_{p-1}, sigma^2).
  Eigen::VectorXd parameter_vector(const parameter_type& theta) const {
    Eigen::VectorXd v(theta.theta.size() + 1);
    v << theta.theta, theta.variance;
    return v;
  }

  /// The NIG update (001 Eq. 1) on the Gram matrix of s; s must be in the Gram set (samplers project first).
  nig_regression_prior update(const nig_regression_prior& prior, const vector_type& s, double n) const {
    nig_regression_prior out = prior;
    gram_workspace ws;
    update(prior, s, n, out, ws);
    return out;
  }

  /// The same update into `out` with the Gram matrix in `ws` (both reused: no allocation once sized).
  void update(const nig_regression_prior& prior, const vector_type& s, double n, nig_regression_prior& out,
              gram_workspace& ws) const {
    check_size_match("linear_regression_statistic::update", "prior dimension", prior.dimension(), "design columns",
                     layout_.columns());
    const int p = layout_.columns();
    layout_.gram(s, n, ws.b);
    prior.update(ws.b.topLeftCorner(p, p), ws.b.col(p).head(p), ws.b(p, p), n, out);
  }

 private:
  regression_layout layout_;
};

/// Covariates: fixed_covariates (Gibbs-SS-Prior, Gibbs-SS-Noisy) or hierarchical_normal_covariates (Gibbs-SS-Update,
/// whose normal-inverse-Wishart block becomes the model's nuisance update).
template <covariate_model Covariates>
class linear_regression_model {
 public:
  /// The parameter (theta, sigma^2).
  using parameter_type = regression_parameter;
  /// Type of the statistic.
  using vector_type = Eigen::VectorXd;
  /// Type of its covariance.
  using matrix_type = Eigen::MatrixXd;
  /// Its support: the Gram/PSD set.
  using support_type = gram_support;
  /// The covariate model.
  using covariates_type = Covariates;
  /// The statistic's length is known at run time only.
  static constexpr int static_size = Eigen::Dynamic;

  /// The model of layout's design with this covariate model; std::invalid_argument when their column counts differ.
  linear_regression_model(regression_layout layout, Covariates covariates)
      : statistic_(std::move(layout)), covariates_(std::move(covariates)) {
    check_size_match("linear_regression_model", "covariate moment columns", covariates_.moments().p, "design columns",
                     statistic_.layout().columns());
  }

  /// Length of the statistic.
  Eigen::Index size() const noexcept { return statistic_.size(); }
  /// The Gram/PSD set, projecting with the model's workspace.
  gram_support support() const noexcept { return gram_support(statistic_.layout(), &workspace_.gram); }
  /// The design layout.
  const regression_layout& layout() const noexcept { return statistic_.layout(); }
  /// The covariate model.
  const Covariates& covariates() const noexcept { return covariates_; }

  /// n E[t] and n Cov[t] of one record's statistic (001 Eqs. 2-3).
  void moments(const parameter_type& theta, double n, vector_type& mean, matrix_type& cov) const {
    regression_statistic_moments(layout(), theta.theta, theta.variance, covariates_.moments(), mean, cov,
                                 workspace_.contractions);
    mean *= n;
    cov *= n;
  }

  /// (theta_0, ..., theta_{p-1}, sigma^2).
  Eigen::VectorXd parameter_vector(const parameter_type& theta) const { return statistic_.parameter_vector(theta); }
  /// The conjugate NIG update of prior by the statistic s of n records.
  nig_regression_prior update(const nig_regression_prior& prior, const vector_type& s, double n) const {
    return statistic_.update(prior, s, n);
  }
  /// In place (detected by gibbs_ss): the posterior written into `out`, reusing its storage and the model's workspace.
  void update(const nig_regression_prior& prior, const vector_type& s, double n, nig_regression_prior& out) const {
    statistic_.update(prior, s, n, out, workspace_.gram);
  }

  /// The covariates' nuisance update from the covariate block of the latent Gram matrix (Gibbs-SS-Update); only when
  /// the covariate model has one.
  template <random_engine G>
  requires detail::updatable_covariates<Covariates>
  void update_nuisance(const vector_type& s, double n, G& g) {
    layout().gram(s, n, workspace_.gram.b);
    covariates_.update(layout(), workspace_.gram.b, n, g);
  }

 private:
  // Storage the sweep reuses (moments, the Gram matrix and its projection). It makes a model object single-threaded:
  // every chain owns its copy (gibbs_ss takes the model by value), so parallel chains never share one.
  struct workspace {
    detail::regression_contractions contractions;
    gram_workspace gram;
  };

  linear_regression_statistic statistic_;
  Covariates covariates_;
  mutable workspace workspace_;
};

}  // namespace privpost
