// privpost/samplers/gibbs_ss.hpp
// gibbs_ss: the noise-aware Gibbs sampler for every statistic_model (dissertation Algorithm 3; 001 Algorithm 1):
// theta | s by conjugacy, the model's nuisance block if it has one, s | theta, w, z by NormProduct on the valid set, and
// w | s, z from the mechanism's scale-mixture view. Exponential families and linear regression run through this one class;
// a model with a singular statistic covariance (semidefinite_statistic_model: the tree CGM) has s drawn by Matheron's
// rule instead of through NormProduct's Cholesky factor.
#pragma once

#include <Eigen/Core>
#include <type_traits>
#include <utility>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/linalg/norm_product.hpp"
#include "privpost/core/numerical_events.hpp"
#include "privpost/families/family_model.hpp"
#include "privpost/samplers/detail/sweep.hpp"

namespace privpost {

/// Gibbs-SS over (model, prior, mechanism). State: theta, s (latent exact statistic), w (latent noise variances), and
/// the model's nuisance parameters. Sweeps of fixed-size models allocate nothing; a dynamic-size model (regression)
/// allocates nothing after its first sweep when it offers the in-place update and draw (in_place_update,
/// in_place_draw) and keeps its own workspace (linear_regression_model does, its nuisance block included), except in
/// rare counted repairs (events().psd_repairs).
///
///     gibbs_ss chain(prior, mechanism, z, n, g);                     // a static family: model family_model<F>
///     gibbs_ss chain(linear_regression_model(layout, covariates), prior, mechanism, z, n, g);
template <statistic_model Model, class Prior, scale_mixture_noise Mechanism>
requires conjugate_prior_for<Prior, Model>
class gibbs_ss {
 public:
  using model_type = Model;
  using parameter_type = typename Model::parameter_type;
  using vector_type = typename Model::vector_type;
  using matrix_type = typename Model::matrix_type;
  static constexpr int dimension = Model::static_size;

  /// z: the release (model.size() entries), n: the public number of records. Initialises theta from the prior, s at z
  /// projected onto the valid set, and w from the mechanism's prior on the variances.
  template <random_engine G>
  gibbs_ss(Model model, const Prior& prior, const Mechanism& mechanism, const Eigen::VectorXd& z, double n, G& g)
      : model_(std::move(model)), prior_(prior), posterior_(prior), mechanism_(mechanism), n_(n) {
    detail::check_release("gibbs_ss", z, model_.size(), n);
    theta_ = prior_.draw(g);
    z_ = z;
    s_ = z_;
    model_.support().project(s_, n_, events_);
    w_.resize(z_.size());
    for (Eigen::Index j = 0; j < w_.size(); ++j) w_(j) = mechanism_.draw_variance(g);
  }

  /// A static family's chain: the model is family_model<family>.
  // clang-format off
  template <random_engine G>
    requires std::is_default_constructible_v<Model>
  gibbs_ss(const Prior& prior, const Mechanism& mechanism, const Eigen::VectorXd& z, double n, G& g)
      : gibbs_ss(Model{}, prior, mechanism, z, n, g) {}
  // clang-format on

  /// One sweep: theta | s; nuisance | s; s | theta, w, z; w | s, z.
  template <random_engine G>
  void step(G& g) {
    if constexpr (in_place_update<Model, Prior>) {
      model_.update(prior_, s_, n_, posterior_);
    } else {
      posterior_ = model_.update(prior_, s_, n_);
    }
    if constexpr (in_place_draw<Prior, parameter_type>) {
      posterior_.draw(g, theta_);
    } else {
      theta_ = posterior_.draw(g);
    }
    if constexpr (has_nuisance<Model>) model_.update_nuisance(s_, n_, g);
    model_.moments(theta_, n_, mean_t_, cov_t_);
    if constexpr (semidefinite_statistic_model<Model>) {
      // Singular n Sigma(theta): exact draws by Matheron's rule, each retry a fresh O(d^2) draw.
      matheron_prepare(cov_t_, w_, events_, matheron_);
      detail::draw_with_retries(model_.support(), n_, s_, events_,
                                [&] { matheron_draw(g, mean_t_, cov_t_, z_, w_, matheron_, s_); });
    } else {
      norm_product<dimension>(mean_t_, cov_t_, z_, w_, mean_s_, chol_s_, events_, norm_product_);
      detail::draw_on_support(model_.support(), g, mean_s_, chol_s_, n_, s_, e_, events_);
    }
    detail::redraw_variances(mechanism_, z_, s_, w_, g);
  }

  const parameter_type& parameter() const noexcept { return theta_; }
  auto parameter_vector() const { return model_.parameter_vector(theta_); }
  const vector_type& statistic() const noexcept { return s_; }
  const vector_type& variances() const noexcept { return w_; }
  const Model& model() const noexcept { return model_; }
  const numerical_events& events() const noexcept { return events_; }

 private:
  Model model_;
  Prior prior_;
  Prior posterior_;
  Mechanism mechanism_;
  double n_;
  parameter_type theta_{};
  vector_type z_, s_, w_;
  // Workspace of the sweep (fixed-size for families; sized once for dynamic models).
  vector_type mean_t_, mean_s_, e_;
  matrix_type cov_t_, chol_s_;
  norm_product_workspace<dimension> norm_product_;
  struct no_workspace {};
  std::conditional_t<semidefinite_statistic_model<Model>, matheron_workspace, no_workspace> matheron_;
  numerical_events events_;
};

template <conjugate_prior Prior, scale_mixture_noise Mechanism, class Z, random_engine G>
gibbs_ss(const Prior&, const Mechanism&, const Z&, double, G&)
    -> gibbs_ss<family_model<typename Prior::family>, Prior, Mechanism>;
template <statistic_model Model, class Prior, scale_mixture_noise Mechanism, class Z, random_engine G>
gibbs_ss(Model, const Prior&, const Mechanism&, const Z&, double, G&) -> gibbs_ss<Model, Prior, Mechanism>;

}  // namespace privpost
