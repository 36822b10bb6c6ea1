// privpost/samplers/glm/glm_collapsed_gibbs.hpp
// glm_collapsed_gibbs: the noise-aware DP-GLM posterior under any scale-mixture mechanism (Laplace, Gaussian), by the
// partially collapsed Gibbs sampler of spec glm.md Sec. 5.10. Laplace noise is a Gaussian scale
// mixture, e_j | w_j ~ N(0, w_j), so given the latent variances w the release is z ~ N(N mu, N V + diag(w)) and the
// Gaussian moment model applies unchanged. One sweep:
//   1. NUTS on the model's parameters given w, with the exact sums s integrated out (glm_moment_model with
//      set_noise_variances(w));
//   2. s | theta, Sigma, w, z from the product of N(s; N mu, N V) and N(z; s, diag(w)) (norm_product);
//   3. w_j | s_j, z_j from the mechanism's scale-mixture view (redraw_variance).
// Valid because s is redrawn straight after the block that marginalised it (van Dyk & Park 2008): step 1 leaves the
// marginal p(theta | w, z) invariant, step 2 completes it to p(theta, s | w, z), step 3 is an ordinary Gibbs step.
#pragma once

#include <Eigen/Core>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/linalg/norm_product.hpp"
#include "privpost/core/numerical_events.hpp"
#include "privpost/core/random/normal.hpp"
#include "privpost/samplers/detail/sweep.hpp"
#include "privpost/samplers/glm/glm_moment_model.hpp"
#include "privpost/samplers/nuts.hpp"

namespace privpost {

/// Partially collapsed Gibbs over (theta~, Sigma, mu_x; s; w) for a DP-GLM release z of n records under a
/// scale_mixture_noise mechanism (the release's own: its scale is public). A sampler (step, parameter_vector, events,
/// begin_warmup, end_warmup) for infer, whose burn-in sets the NUTS block's warm-up, as for nuts_sampler. The NUTS block
/// adapts its step size and metric during warm-up while w moves. With a fixed-variance mechanism (Gaussian) only the
/// NUTS block runs: the chain is then nuts_sampler on glm_moment_model with sigma^2 = the mechanism's variance.
/// Sweeps allocate nothing after the first (the moment map's own allocations aside: the logistic maps none), apart
/// from rare counted repairs (events().psd_repairs). Not thread-safe: one sampler per chain.
///
///     glm_collapsed_gibbs<logistic_moment_map<exact_logistic_link>, laplace_mechanism> chain(z, n, laplace, d, prior,
///                                                                                          options, nuts_opts, g);
template <glm_moment_map Map, scale_mixture_noise Mechanism>
class glm_collapsed_gibbs {
 public:
  /// The NUTS block's model.
  using model_type = glm_moment_model<Map>;

  /// z: the release in the map's glm_statistic layout; n: the public record count. w starts at draws from the
  /// mechanism's prior on the variances, the parameters at the model's initial point (nuts_sampler's constructor).
  /// Throws what glm_moment_model and nuts_sampler throw for bad arguments.
  template <random_engine G>
  glm_collapsed_gibbs(const Eigen::VectorXd& z, double n, const Mechanism& mechanism, int d, const glm_prior& prior,
                      const glm_model_options& options, const nuts_options& nuts, G& g)
      : mechanism_(mechanism),
        z_(z),
        n_(n),
        nuts_(initial_model(z, n, mechanism, d, prior, options, g), nuts, g),
        moments_(nuts_.model()) {
    w_ = nuts_.model().noise_variances();
    s_ = z_;
    const Eigen::Index dd = z_.size();
    mean_.setZero(dd);
    cov_.setZero(dd, dd);
    mean_s_.setZero(dd);
    chol_s_.setZero(dd, dd);
    e_.setZero(dd);
  }

  /// One sweep: NUTS on the parameters given w (s integrated out); s | parameters, w, z; w | s, z.
  template <random_engine G>
  void step(G& g) {
    nuts_.step(g);
    if constexpr (!Mechanism::fixed_variance) {
      if (!moments_.statistic_moments(nuts_.position(), mean_, cov_))
        throw_domain("glm_collapsed_gibbs", "statistic moments at the current point", nuts_.log_density(),
                     "finite moments (the NUTS block accepted the point)");
      mean_ *= n_;
      cov_ *= n_;
      norm_product<Eigen::Dynamic>(mean_, cov_, z_, w_, mean_s_, chol_s_, events_, norm_product_);
      for (Eigen::Index j = 0; j < e_.size(); ++j) e_(j) = draw_normal(g);
      s_.noalias() = chol_s_.template triangularView<Eigen::Lower>() * e_;
      s_ += mean_s_;
      detail::redraw_variances(mechanism_, z_, s_, w_, g);
      nuts_.update_model([this](model_type& m) { m.set_noise_variances(w_); });
    }
  }

  /// Told by infer before the first sweep: the NUTS block adapts over the driver's burn-in (nuts_sampler::begin_warmup).
  void begin_warmup(int transitions) { nuts_.begin_warmup(transitions); }

  /// Told by infer after burn-in (nuts_sampler::end_warmup).
  void end_warmup() const { nuts_.end_warmup(); }

  /// The model's parameter_vector: (theta~, tau, Omega_ij for i > j, mu_x).
  Eigen::VectorXd parameter_vector() const { return nuts_.parameter_vector(); }

  /// The NUTS block's sampler columns (nuts_sampler::draw_diagnostic_names): its lp__ is the log density of the
  /// parameters given the latent sums of that sweep, before they were redrawn.
  static std::vector<std::string> draw_diagnostic_names() { return nuts_sampler<model_type>::draw_diagnostic_names(); }
  /// The NUTS block's diagnostics of the sweep's transition (draw_diagnostic_names()).
  Eigen::VectorXd draw_diagnostics() const { return nuts_.draw_diagnostics(); }

  /// The NUTS block's events (divergences, tree-depth saturations, non-finite densities after warm-up) plus the
  /// repairs of the s draw's covariance.
  numerical_events events() const {
    numerical_events e = nuts_.events();
    e += events_;
    return e;
  }

  /// @{
  /// The latent exact sums s and noise variances w of the current state (for fixed-variance mechanisms s stays z).
  const Eigen::VectorXd& statistic() const noexcept { return s_; }
  const Eigen::VectorXd& variances() const noexcept { return w_; }
  /// @}
  /// The NUTS block (its adaptation and last transition).
  const nuts_sampler<model_type>& nuts() const noexcept { return nuts_; }
  /// The release mechanism.
  const Mechanism& mechanism() const noexcept { return mechanism_; }

 private:
  template <random_engine G>
  static model_type initial_model(const Eigen::VectorXd& z, double n, const Mechanism& mechanism, int d, const glm_prior& prior,
                                  const glm_model_options& options, G& g) {
    model_type model(z, n, 0.0, d, prior, options);
    Eigen::VectorXd w(z.size());
    for (Eigen::Index j = 0; j < w.size(); ++j) w(j) = mechanism.draw_variance(g);
    model.set_noise_variances(w);
    return model;
  }

  Mechanism mechanism_;
  Eigen::VectorXd z_;
  double n_;
  nuts_sampler<model_type> nuts_;
  model_type moments_;  // a copy of the model whose workspaces evaluate the moments at the NUTS block's point
  Eigen::VectorXd s_, w_;
  // Workspace of the sweep.
  Eigen::VectorXd mean_, mean_s_, e_;
  Eigen::MatrixXd cov_, chol_s_;
  norm_product_workspace<Eigen::Dynamic> norm_product_;
  numerical_events events_;
};

}  // namespace privpost
