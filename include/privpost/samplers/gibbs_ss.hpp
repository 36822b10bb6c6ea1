// privpost/samplers/gibbs_ss.hpp
// gibbs_ss: the noise-aware Gibbs sampler for every statistic_model (dissertation Algorithm 3; 001 Algorithm 1):
// theta | s by conjugacy, the model's nuisance block if it has one, s | theta, w, z by NormProduct on the valid set, and
// w | s, z from the mechanism's scale-mixture view. Exponential families and linear regression run through this one class;
// a model with a singular statistic covariance (semidefinite_statistic_model: the tree CGM) has s drawn by Matheron's
// rule instead of through NormProduct's Cholesky factor. Opt-in collapsed moves (set_collapsed_moves) add Metropolis-
// Hastings steps on theta with s integrated out, for the strong-noise corner where theta and s move together.
#pragma once

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <cmath>
#include <cstdint>
#include <limits>
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
  /// The statistic model.
  using model_type = Model;
  /// The model's parameter type.
  using parameter_type = typename Model::parameter_type;
  /// Type of the statistic.
  using vector_type = typename Model::vector_type;
  /// Type of its covariance.
  using matrix_type = typename Model::matrix_type;
  /// Compile-time length of the statistic (Eigen::Dynamic when known at run time only).
  static constexpr int dimension = Model::static_size;

  /// z: the release (model.size() entries), n: the public number of records. Initialises theta from the prior, s at z
  /// projected onto the valid set, and w from the mechanism's prior on the variances.
  template <random_engine G>
  gibbs_ss(Model model, const Prior& prior, const Mechanism& mechanism, const Eigen::VectorXd& z, double n, G& g)
      : model_(std::move(model)), prior_(prior), posterior_(prior), mechanism_(mechanism), n_(n) {
    detail::check_release("gibbs_ss", z, model_.size(), n);
    detail::check_reachable_release("gibbs_ss", model_.support(), mechanism_, z, n);
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

  /// Collapsed moves per sweep (0, the default, is Algorithm 3 as published; at most 1000). After theta | s and the
  /// nuisance block, each move proposes theta' from the prior (for a blocked_prior such as hyper_dirichlet: one block
  /// after the other from its prior, each accepted or not, a sweep over the blocks per move) and accepts it with
  /// probability
  /// min(1, N(z; n m(theta'), n Sigma(theta') + W) / N(z; n m(theta), n Sigma(theta) + W)): the statistic's CLT law with
  /// s integrated out, given the current noise variances W = diag(w) (and nuisance). s | theta, w, z is drawn right
  /// after, so (theta, s) is one block update. Where the noise dominates (for example n = 1000, epsilon = 0.01), theta | s
  /// is far narrower than theta's posterior and Gibbs-SS moves theta by small steps; these moves jump at once. Where the
  /// data dominate the prior proposals are mostly rejected and the move only costs time (one moments() call and one
  /// Cholesky factorisation of a d x d matrix per move). The integrated law ignores the valid set of s (s's law is the
  /// untruncated CLT normal there), which matters only where that normal puts visible mass outside it (small n, theta
  /// near the boundary): use it where the noise dominates. A dynamic-size model allocates on the first move only.
  /// Checked by simulation-based calibration for the binomial and the multinomial (n = 1000, epsilon = 0.01) and the
  /// tree CGM (epsilon 0.1 and 0.01); the tools offer it for those models (--collapsed-moves), not yet for regression.
  void set_collapsed_moves(int moves) {
    if (moves < 0 || moves > 1000) throw_invalid("gibbs_ss::set_collapsed_moves", "moves", moves, "an integer in [0, 1000]");
    collapsed_moves_ = moves;
  }
  /// Collapsed moves per sweep (0: none).
  int collapsed_moves() const noexcept { return collapsed_moves_; }
  /// @{
  /// Collapsed proposals made and accepted so far (their ratio is the move's acceptance rate).
  std::uint64_t collapsed_proposals() const noexcept { return collapsed_proposals_; }
  std::uint64_t collapsed_accepted() const noexcept { return collapsed_accepted_; }
  /// @}

  /// One sweep: theta | s; nuisance | s; [collapsed moves on theta]; s | theta, w, z; w | s, z.
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
    if (collapsed_moves_ > 0) collapsed_theta_moves(g);
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

  /// The current draw of theta.
  const parameter_type& parameter() const noexcept { return theta_; }
  /// The current draw as a vector.
  auto parameter_vector() const { return model_.parameter_vector(theta_); }
  /// The current latent exact statistic s.
  const vector_type& statistic() const noexcept { return s_; }
  /// The current noise variances w (the mechanism's scale-mixture view).
  const vector_type& variances() const noexcept { return w_; }
  /// The statistic model.
  const Model& model() const noexcept { return model_; }
  /// The numerical events so far.
  const numerical_events& events() const noexcept { return events_; }

 private:
  // log N(z; n m(theta), n Sigma(theta) + W) up to a constant; -infinity when that covariance is not positive definite.
  double collapsed_log_likelihood(const parameter_type& theta) {
    model_.moments(theta, n_, mean_c_, cov_c_);
    cov_c_.diagonal() += w_;
    return detail::collapsed_log_likelihood(z_, mean_c_, cov_c_, llt_, r_);
  }

  // Metropolis-Hastings on theta | z, w (s integrated out) with prior-reversible proposals: the whole parameter from the
  // prior, or, for a blocked_prior, one block at a time from its prior (a sweep over the blocks per move). The prior
  // cancels, so the acceptance ratio is the integrated likelihoods' ratio. A current point of likelihood zero accepts
  // any proposal of positive likelihood; two zeros keep the current point.
  template <random_engine G>
  void collapsed_theta_moves(G& g) {
    double current = collapsed_log_likelihood(theta_);
    auto metropolis = [&] {
      const double candidate = collapsed_log_likelihood(proposal_);
      ++collapsed_proposals_;
      if (detail::accept_collapsed_move(current, candidate, g)) {
        std::swap(theta_, proposal_);
        current = candidate;
        ++collapsed_accepted_;
      }
    };
    for (int k = 0; k < collapsed_moves_; ++k) {
      if constexpr (blocked_prior<Prior, parameter_type>) {
        for (int b = 0; b < prior_.blocks(); ++b) {
          proposal_ = theta_;
          prior_.draw_block(g, b, proposal_);
          metropolis();
        }
      } else {
        if constexpr (in_place_draw<Prior, parameter_type>) {
          prior_.draw(g, proposal_);
        } else {
          proposal_ = prior_.draw(g);
        }
        metropolis();
      }
    }
  }

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
  // Collapsed moves (set_collapsed_moves): their own workspace, so the sweep's is untouched.
  int collapsed_moves_ = 0;
  std::uint64_t collapsed_proposals_ = 0, collapsed_accepted_ = 0;
  parameter_type proposal_{};
  vector_type mean_c_, r_;
  matrix_type cov_c_;
  Eigen::LLT<matrix_type> llt_;
};

template <conjugate_prior Prior, scale_mixture_noise Mechanism, class Z, random_engine G>
gibbs_ss(const Prior&, const Mechanism&, const Z&, double, G&)
    -> gibbs_ss<family_model<typename Prior::family>, Prior, Mechanism>;
template <statistic_model Model, class Prior, scale_mixture_noise Mechanism, class Z, random_engine G>
gibbs_ss(Model, const Prior&, const Mechanism&, const Z&, double, G&) -> gibbs_ss<Model, Prior, Mechanism>;

}  // namespace privpost
