// privpost/samplers/glm/glm_collapsed_gibbs.hpp
// glm_collapsed_gibbs: the noise-aware DP-GLM posterior under any scale-mixture mechanism (Laplace, Gaussian), by the
// partially collapsed Gibbs sampler of spec glm.md Sec. 5.10. Laplace noise is a Gaussian scale
// mixture, e_j | w_j ~ N(0, w_j), so given the latent variances w the release is z ~ N(N mu, N V + diag(w)) and the
// Gaussian moment model applies unchanged. One sweep of gibbs_frame:
//   1. the parameter block: NUTS on the model's parameters given w, with the exact sums s integrated out
//      (glm_collapsed_model, a parameter_drawing_model whose NUTS target is glm_moment_model with
//      set_noise_variances(w));
//   2. the sum block clt_sum: s | theta, Sigma, w, z from the product of N(s; N mu, N V) and N(z; s, diag(w));
//   3. w_j | s_j, z_j from the mechanism's scale-mixture view (clt_sum's draw_variances).
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
#include "privpost/core/numerical_events.hpp"
#include "privpost/families/support.hpp"
#include "privpost/samplers/gibbs_frame.hpp"
#include "privpost/samplers/gibbs_ss.hpp"
#include "privpost/samplers/glm/glm_moment_model.hpp"
#include "privpost/samplers/nuts.hpp"

namespace privpost {

/// A sum block that keeps per-entry noise variances (clt_sum): what the GLM's NUTS block conditions on.
template <class B>
concept noise_variance_source = requires(const B& b) {
  { b.variances() } -> std::convertible_to<const Eigen::VectorXd&>;
};

/// The DP-GLM's sums as a statistic_model whose parameter block is NUTS (a parameter_drawing_model of gibbs_frame): the
/// parameter is the NUTS block's unconstrained point u, the statistic the released sums (P + P(P+1)/2 entries, any
/// real vector), their CLT moments N mu(u) and N V(u) from the moment map, and the parameter block one NUTS transition
/// on glm_moment_model given the sum block's noise variances w, with s integrated out (so draw_parameter never reads
/// s: integrates_sum). Not thread-safe: one per chain.
template <glm_moment_map Map>
class glm_collapsed_model {
 public:
  /// The NUTS block's model.
  using nuts_model_type = glm_moment_model<Map>;
  /// The unconstrained point of the NUTS block.
  using parameter_type = Eigen::VectorXd;
  /// The released sums.
  using vector_type = Eigen::VectorXd;
  /// Their covariance.
  using matrix_type = Eigen::MatrixXd;
  /// Known at run time only.
  static constexpr int static_size = Eigen::Dynamic;
  /// NUTS integrates s out: the frame draws no s under a fixed-variance mechanism.
  static constexpr bool integrates_sum = true;

  /// The model of the release z of n records with d covariates; the NUTS block is built by start_parameter, once the
  /// sum block has drawn its first noise variances. Throws what glm_moment_model throws for bad arguments.
  glm_collapsed_model(const Eigen::VectorXd& z, double n, int d, const glm_prior& prior, const glm_model_options& options,
                      const nuts_options& nuts)
      : moments_(z, n, 0.0, d, prior, options), nuts_options_(nuts) {}

  /// Size of the released statistic.
  Eigen::Index size() const noexcept { return moments_.moment_map().size(); }
  /// Every finite vector: the sums of a GLM release have no constraint the sampler keeps.
  static real_space<Eigen::Dynamic> support() noexcept { return {}; }
  /// The recorded parameters at u: (theta~, tau, Omega_ij for i > j, mu_x) (glm_moment_model::parameter_vector).
  Eigen::VectorXd parameter_vector(const Eigen::VectorXd& u) const { return moments_.parameter_vector(u); }

  /// N mu(u) and N V(u). std::domain_error where the map fails at u, which the NUTS block never accepts.
  void moments(const Eigen::VectorXd& u, double n, Eigen::VectorXd& mean, Eigen::MatrixXd& cov) const {
    if (!moments_.statistic_moments(u, mean, cov))
      throw_domain("glm_collapsed_gibbs", "statistic moments at the current point", nuts_->log_density(),
                   "finite moments (the NUTS block accepted the point)");
    mean *= n;
    cov *= n;
  }

  /// Builds the NUTS block on glm_moment_model given the block's first noise variances; u starts at its initial point.
  template <class Prior, noise_variance_source Block, random_engine G>
  void start_parameter(const Prior&, const Block& block, Eigen::VectorXd& u, G& g) {
    nuts_model_type model = moments_;
    model.set_noise_variances(block.variances());
    nuts_.emplace(std::move(model), nuts_options_, g);
    u = nuts_->position();
  }

  /// One NUTS transition given the current noise variances (s integrated out).
  template <class Prior, noise_variance_source Block, random_engine G>
  void draw_parameter(const Prior&, const Eigen::VectorXd&, double, const Block&, Eigen::VectorXd& u, G& g) {
    nuts_->step(g);
    u = nuts_->position();
  }

  /// After the sweep's w | s, z: the NUTS target conditions on the new variances.
  template <noise_variance_source Block>
  void condition_on(const Block& block) {
    nuts_->update_model([&](nuts_model_type& m) { m.set_noise_variances(block.variances()); });
  }

  /// The NUTS block adapts over the driver's burn-in (nuts_sampler::begin_warmup).
  void begin_warmup(int transitions) { nuts_->begin_warmup(transitions); }
  /// After burn-in (nuts_sampler::end_warmup).
  void end_warmup() const { nuts_->end_warmup(); }
  /// The NUTS block's sampler columns (nuts_sampler::draw_diagnostic_names): its lp__ is the log density of the
  /// parameters given the latent variances of that sweep, before they were redrawn.
  static std::vector<std::string> draw_diagnostic_names() { return nuts_sampler<nuts_model_type>::draw_diagnostic_names(); }
  /// The NUTS block's diagnostics of the sweep's transition.
  Eigen::VectorXd draw_diagnostics() const { return nuts_->draw_diagnostics(); }
  /// The NUTS block (its adaptation and last transition).
  const nuts_sampler<nuts_model_type>& nuts() const { return *nuts_; }

 private:
  mutable nuts_model_type moments_;  // evaluates the moments at the NUTS block's point (its own workspaces)
  nuts_options nuts_options_;
  std::optional<nuts_sampler<nuts_model_type>> nuts_;
};

/// Partially collapsed Gibbs over (theta~, Sigma, mu_x; s; w) for a DP-GLM release z of n records under a
/// scale_mixture_noise mechanism (the release's own: its scale is public): gibbs_frame over glm_collapsed_model with
/// clt_sum. A sampler (step, parameter_vector, events, begin_warmup, end_warmup) for infer, whose burn-in sets the NUTS
/// block's warm-up, as for nuts_sampler. The NUTS block adapts its step size and metric during warm-up while w moves.
/// With a fixed-variance mechanism (Gaussian) only the NUTS block runs: the chain is then nuts_sampler on
/// glm_moment_model with sigma^2 = the mechanism's variance. Sweeps allocate nothing after the first (the moment map's
/// own allocations aside: the logistic maps none), apart from rare counted repairs (events().psd_repairs). Not
/// thread-safe: one sampler per chain.
///
///     glm_collapsed_gibbs<logistic_moment_map<exact_logistic_link>, laplace_mechanism> chain(z, n, laplace, d, prior,
///                                                                                          options, nuts_opts, g);
template <glm_moment_map Map, scale_mixture_noise Mechanism>
class glm_collapsed_gibbs
    : public gibbs_frame<glm_collapsed_model<Map>, glm_prior, clt_sum<glm_collapsed_model<Map>, Mechanism>> {
  using frame = gibbs_frame<glm_collapsed_model<Map>, glm_prior, clt_sum<glm_collapsed_model<Map>, Mechanism>>;

 public:
  /// The NUTS block's model.
  using model_type = glm_moment_model<Map>;

  /// z: the release in the map's glm_statistic layout; n: the public record count. w starts at draws from the
  /// mechanism's prior on the variances, the parameters at the model's initial point (nuts_sampler's constructor).
  /// Throws what glm_moment_model and nuts_sampler throw for bad arguments.
  template <random_engine G>
  glm_collapsed_gibbs(const Eigen::VectorXd& z, double n, const Mechanism& mechanism, int d, const glm_prior& prior,
                      const glm_model_options& options, const nuts_options& nuts, G& g)
      : frame(
            glm_collapsed_model<Map>(z, n, d, prior, options, nuts), prior,
            [&] { return clt_sum<glm_collapsed_model<Map>, Mechanism>(mechanism, z); }, n, g) {}

  /// The NUTS block's events (divergences, tree-depth saturations, non-finite densities after warm-up) plus the
  /// repairs of the s draw's covariance.
  numerical_events events() const {
    numerical_events e = this->model().nuts().events();
    e += frame::events();
    return e;
  }

  /// The latent noise variances w of the current state.
  const Eigen::VectorXd& variances() const noexcept { return this->block().variances(); }
  /// The NUTS block (its adaptation and last transition).
  const nuts_sampler<model_type>& nuts() const noexcept { return this->model().nuts(); }
  /// The release mechanism.
  const Mechanism& mechanism() const noexcept { return this->block().mechanism(); }
};

}  // namespace privpost
