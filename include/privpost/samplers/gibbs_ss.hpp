// privpost/samplers/gibbs_ss.hpp
// gibbs_ss: the noise-aware Gibbs sampler for every statistic_model (dissertation Algorithm 3; 001 Algorithm 1):
// gibbs_frame with the clt_sum block. theta | s by conjugacy, the model's nuisance block if it has one, s | theta, w, z
// by NormProduct on the valid set, and w | s, z from the mechanism's scale-mixture view. Exponential families and
// linear regression run through this one class; a model with a singular statistic covariance
// (semidefinite_statistic_model: the tree CGM) has s drawn by Matheron's rule instead of through NormProduct's Cholesky
// factor, from the model's own draw of the statistic's normal law where it has one (normal_drawing_model). Opt-in collapsed moves
// (set_collapsed_moves) add Metropolis-Hastings steps on theta with s integrated out, for the strong-noise corner where theta and
// s move together.
#pragma once

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <type_traits>
#include <utility>

#include "privpost/core/concepts.hpp"
#include "privpost/core/linalg/norm_product.hpp"
#include "privpost/core/numerical_events.hpp"
#include "privpost/families/family_model.hpp"
#include "privpost/samplers/detail/sweep.hpp"
#include "privpost/samplers/gibbs_frame.hpp"

namespace privpost {

/// The sum block of Gibbs-SS: s | theta, w, z ~ N(n m(theta), n Sigma(theta)) times N(z; s, W) on the model's valid set
/// (NormProduct, an exact truncated normal for one bounded number, bounded retries then a counted projection
/// otherwise; Matheron's rule for a semidefinite_statistic_model), and w | s, z from the mechanism's scale-mixture view
/// (App. B.2). It integrates s out for the frame's collapsed moves: N(z; n m(theta), n Sigma(theta) + W). A
/// dynamic-size model allocates on its first sweep only (and in rare counted repairs, events().psd_repairs).
template <statistic_model Model, scale_mixture_noise Mechanism>
class clt_sum {
 public:
  /// Type of the statistic.
  using vector_type = typename Model::vector_type;
  /// Type of its covariance.
  using matrix_type = typename Model::matrix_type;
  /// Compile-time length of the statistic.
  static constexpr int dimension = Model::static_size;
  /// Whether the noise variances never move (a Gaussian mechanism): then w | s, z is no draw at all.
  static constexpr bool fixed_variances = Mechanism::fixed_variance;

  /// The mechanism and its release z (checked against the model in start()).
  clt_sum(const Mechanism& mechanism, const Eigen::VectorXd& z) : mechanism_(mechanism), release_(z) {
    if constexpr (dimension != Eigen::Dynamic) {  // set in start(); zero until then, so that a copy reads no garbage
      z_.setZero();
      w_.setZero();
    }
  }

  /// Checks the release (size, finite entries, n, reachability of an interval support), sets s at z projected onto the
  /// valid set and draws w from the mechanism's prior on the variances.
  template <class Prior, random_engine G>
  void start(const Model& model, const Prior&, typename Model::parameter_type&, double n, vector_type& s,
             numerical_events& events, G& g) {
    detail::check_release("gibbs_ss", release_, model.size(), n);
    detail::check_reachable_release("gibbs_ss", model.support(), mechanism_, release_, n);
    z_ = release_;  // a fixed-size statistic's copy only once its size is checked
    s = z_;
    model.support().project(s, n, events);
    w_.resize(z_.size());
    for (Eigen::Index j = 0; j < w_.size(); ++j) w_(j) = mechanism_.draw_variance(g);
  }

  /// s | theta, w, z.
  template <random_engine G>
  void draw_sum(const Model& model, const typename Model::parameter_type& theta, double n, vector_type& s,
                numerical_events& events, G& g) {
    model.moments(theta, n, ws_.mean_t, ws_.cov_t);
    if constexpr (normal_drawing_model<Model, G>) {
      // Singular n Sigma(theta) that the model draws from itself: Matheron's update of its draw, each retry a fresh
      // O(d^2) draw, and no factorisation of the singular covariance.
      matheron_prepare_update(ws_.cov_t, w_, events, ws_.matheron, "gibbs_ss");
      detail::draw_with_retries(model.support(), n, s, events, [&] {
        model.draw_normal_statistic(theta, n, g, s);
        matheron_update(g, ws_.cov_t, z_, w_, ws_.matheron, s);
      });
    } else if constexpr (semidefinite_statistic_model<Model>) {
      // Singular n Sigma(theta): exact draws by Matheron's rule, each retry a fresh O(d^2) draw.
      matheron_prepare(ws_.cov_t, w_, events, ws_.matheron);
      detail::draw_with_retries(model.support(), n, s, events,
                                [&] { matheron_draw(g, ws_.mean_t, ws_.cov_t, z_, w_, ws_.matheron, s); });
    } else {
      norm_product<dimension>(ws_.mean_t, ws_.cov_t, z_, w_, ws_.mean_s, ws_.chol_s, events, ws_.norm_product);
      detail::draw_on_support(model.support(), g, ws_.mean_s, ws_.chol_s, n, s, ws_.e, events);
    }
  }

  /// w | s, z (nothing for a fixed-variance mechanism).
  template <random_engine G>
  void draw_variances(const vector_type& s, G& g) {
    detail::redraw_variances(mechanism_, z_, s, w_, g);
  }

  /// log N(z; n m(theta), n Sigma(theta) + W) up to a constant; -infinity when that covariance is not positive
  /// definite. Its own workspace, so the sweep's is untouched.
  double collapsed_log_likelihood(const Model& model, const typename Model::parameter_type& theta, double n) {
    model.moments(theta, n, ws_.mean_c, ws_.cov_c);
    ws_.cov_c.diagonal() += w_;
    return detail::collapsed_log_likelihood(z_, ws_.mean_c, ws_.cov_c, ws_.llt, ws_.r);
  }

  /// The release z (set by start()).
  const vector_type& release() const noexcept { return z_; }
  /// The current noise variances w.
  const vector_type& variances() const noexcept { return w_; }
  /// The release mechanism.
  const Mechanism& mechanism() const noexcept { return mechanism_; }

 private:
  struct no_workspace {};
  // Scratch storage of the sweep and of the collapsed likelihood (fixed-size for families; sized on first use for
  // dynamic models). Its contents between calls are unspecified, so a copy starts with its own fresh storage instead
  // of reading the source's (uninitialised until the first sweep).
  struct workspace {
    vector_type mean_t, mean_s, e, mean_c, r;
    matrix_type cov_t, chol_s, cov_c;
    norm_product_workspace<dimension> norm_product;
    std::conditional_t<semidefinite_statistic_model<Model>, matheron_workspace, no_workspace> matheron;
    Eigen::LLT<matrix_type> llt;
    workspace() = default;
    workspace(const workspace&) noexcept {}
    workspace& operator=(const workspace&) noexcept { return *this; }
  };

  Mechanism mechanism_;
  Eigen::VectorXd release_;
  vector_type z_, w_;
  workspace ws_;
};

/// Gibbs-SS over (model, prior, mechanism): gibbs_frame with clt_sum. State: theta, s (latent exact statistic), w
/// (latent noise variances), and the model's nuisance parameters. Sweeps of fixed-size models allocate nothing; a
/// dynamic-size model (regression) allocates nothing after its first sweep when it offers the in-place update and draw
/// (in_place_update, in_place_draw) and keeps its own workspace (linear_regression_model does, its nuisance block
/// included), except in rare counted repairs (events().psd_repairs).
///
///     gibbs_ss chain(prior, mechanism, z, n, g);                     // a static family: model family_model<F>
///     gibbs_ss chain(linear_regression_model(layout, covariates), prior, mechanism, z, n, g);
template <statistic_model Model, class Prior, scale_mixture_noise Mechanism>
requires conjugate_prior_for<Prior, Model>
class gibbs_ss : public gibbs_frame<Model, Prior, clt_sum<Model, Mechanism>> {
  using frame = gibbs_frame<Model, Prior, clt_sum<Model, Mechanism>>;

 public:
  /// z: the release (model.size() entries), n: the public number of records. Initialises theta from the prior, s at z
  /// projected onto the valid set, and w from the mechanism's prior on the variances.
  template <random_engine G>
  gibbs_ss(Model model, const Prior& prior, const Mechanism& mechanism, const Eigen::VectorXd& z, double n, G& g)
      : frame(
            std::move(model), prior, [&] { return clt_sum<Model, Mechanism>(mechanism, z); }, n, g) {}

  /// A static family's chain: the model is family_model<family>.
  // clang-format off
  template <random_engine G>
    requires std::is_default_constructible_v<Model>
  gibbs_ss(const Prior& prior, const Mechanism& mechanism, const Eigen::VectorXd& z, double n, G& g)
      : gibbs_ss(Model{}, prior, mechanism, z, n, g) {}
  // clang-format on

  /// The current noise variances w (the mechanism's scale-mixture view).
  const typename frame::vector_type& variances() const noexcept { return this->block().variances(); }
};

template <conjugate_prior Prior, scale_mixture_noise Mechanism, class Z, random_engine G>
gibbs_ss(const Prior&, const Mechanism&, const Z&, double, G&)
    -> gibbs_ss<family_model<typename Prior::family>, Prior, Mechanism>;
template <statistic_model Model, class Prior, scale_mixture_noise Mechanism, class Z, random_engine G>
gibbs_ss(Model, const Prior&, const Mechanism&, const Z&, double, G&) -> gibbs_ss<Model, Prior, Mechanism>;

}  // namespace privpost
