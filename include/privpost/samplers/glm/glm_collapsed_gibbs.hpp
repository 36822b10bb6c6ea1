// privpost/samplers/glm/glm_collapsed_gibbs.hpp
// glm_collapsed_gibbs: the noise-aware DP-GLM posterior under any scale-mixture mechanism (Laplace, Gaussian), by the
// partially collapsed Gibbs sampler of docs/design-glm.md Sec. 5.10. Laplace noise is a Gaussian scale
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

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <type_traits>
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
    allocate_reference(size(), u.size());
  }

  /// One NUTS transition given the current noise variances (s integrated out).
  template <class Prior, noise_variance_source Block, random_engine G>
  void draw_parameter(const Prior&, const Eigen::VectorXd&, double, const Block&, Eigen::VectorXd& u, G& g) {
    nuts_->step(g);
    u = nuts_->position();
  }

  /// After the sweep's w | s, z: the NUTS target conditions on the new variances, and the next transition's step is
  /// scaled to their curvature (step_scale_for).
  template <noise_variance_source Block>
  void condition_on(const Block& block) {
    nuts_->update_model([&](nuts_model_type& m) { m.set_noise_variances(block.variances()); });
    if constexpr (requires { block.mechanism(); }) {
      using mechanism_type = std::remove_cvref_t<decltype(block.mechanism())>;
      if constexpr (requires { mechanism_type::fixed_variance; }) {
        if constexpr (mechanism_type::fixed_variance) return;  // w never changes: nothing to scale to
      }
    }
    if (nuts_->metric_updates() != reference_metric_) set_reference(mean_variance(block));
    nuts_->set_step_scale(step_scale_for(block.variances()));
  }

  /// The step-size factor for noise variances w, in (0, 1]: min(1, sqrt(lambda_ref / lambda(w))), where lambda(w) is
  /// the largest eigenvalue, in the adapted metric's units, of the Gaussian approximation's information about the
  /// parameters, B^T B with B = (N V + W)^{-1/2} J L (J: the Jacobian of N mu at a reference point; N V: the sums'
  /// covariance there; L L^T: NUTS's inverse metric), and lambda_ref that of w_j = 2 b^2, the mechanism's mean
  /// variance. Why: a Laplace draw w_j far below its mean pins sum j almost exactly, and the conditional target is then
  /// narrower along that sum's direction (by up to sqrt((N V_jj + 2 b^2) / N V_jj)) than the metric and step size
  /// adapted over all sweeps: on releases drawn from the tools' prior at d = 6, N = 5000, epsilon 1, nearly all
  /// divergences after warm-up fell in sweeps with some w_j below 1% of 2 b^2. Leapfrog stability needs the step times
  /// sqrt(lambda) bounded, so the step shrinks with sqrt(lambda). The factor depends on w alone (the reference is fixed
  /// once warm-up ends), so the NUTS block still leaves p(theta | w, z) invariant. 1 until warm-up's first metric
  /// window has ended (always, without metric adaptation), and under a fixed-variance mechanism.
  double step_scale_for(const Eigen::VectorXd& w) const {
    if (!(reference_lambda_ > 0.0)) return 1.0;
    const double lambda = information_eigenvalue(w);
    if (!(lambda > reference_lambda_)) return 1.0;
    return std::sqrt(reference_lambda_ / lambda);
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
  // The mechanism's mean noise variance (2 b^2 for Laplace) where it reports one, else the current variances' mean.
  template <noise_variance_source Block>
  static double mean_variance(const Block& block) {
    if constexpr (requires {
                    { block.mechanism().noise_variance() } -> std::convertible_to<double>;
                  })
      return block.mechanism().noise_variance();
    else
      return block.variances().mean();
  }

  // The reference of step_scale_for at the NUTS block's current point and metric: J by central differences of N mu,
  // N V, L, and lambda_ref at the mechanism's mean variance (the mean of w's prior). Where the moments fail at a
  // perturbed point, the scale stays 1 until the next metric.
  void set_reference(double mean_w) {
    reference_metric_ = nuts_->metric_updates();
    reference_lambda_ = 0.0;
    const Eigen::VectorXd& u = nuts_->position();
    const Eigen::Index k = u.size();
    const double n = moments_.records();
    // A copy of this model starts with empty scratch (workspace's copy); size it again.
    if (ws_.b.rows() != size() || ws_.b.cols() != k || ws_.mean_w.size() != size()) allocate_reference(size(), k);
    ws_.at = u;
    if (!moments_.statistic_moments(u, ws_.up, reference_cov_)) return;
    reference_cov_ *= n;
    for (Eigen::Index i = 0; i < k; ++i) {
      const double h = 1e-5 * std::max(1.0, std::abs(u(i)));
      ws_.at(i) = u(i) + h;
      if (!moments_.statistic_moments(ws_.at, ws_.up, ws_.cov)) return;
      ws_.at(i) = u(i) - h;
      if (!moments_.statistic_moments(ws_.at, ws_.down, ws_.cov)) return;
      ws_.at(i) = u(i);
      ws_.b.col(i) = (n / (2.0 * h)) * (ws_.up - ws_.down);
    }
    if (nuts_->options().dense_metric) {
      ws_.metric_llt.compute(nuts_->dense_inverse_metric());
      jacobian_.noalias() = ws_.b * ws_.metric_llt.matrixL();
    } else {
      jacobian_.noalias() = ws_.b * nuts_->inverse_metric().cwiseSqrt().asDiagonal();
    }
    // lambda_ref as step_scale_for will compute it at the mean variance (the same start), so that the factor there is 1.
    ws_.mean_w.setConstant(mean_w);
    reference_vector_.setOnes();
    reference_vector_.normalize();
    information_eigenvalue(ws_.mean_w);
    reference_vector_ = ws_.eigenvector;
    reference_lambda_ = information_eigenvalue(ws_.mean_w);
  }

  // Storage of the reference and of information_eigenvalue, sized once when the NUTS block starts (sweeps then
  // allocate nothing): m sums, k parameters.
  void allocate_reference(Eigen::Index m, Eigen::Index k) {
    jacobian_.resize(m, k);
    reference_cov_.resize(m, m);
    reference_vector_.resize(k);
    ws_.cov.resize(m, m);
    ws_.b.resize(m, k);
    ws_.llt = Eigen::LLT<Eigen::MatrixXd>(m);
    ws_.metric_llt = Eigen::LLT<Eigen::MatrixXd>(k);
    ws_.at.resize(k);
    ws_.up.resize(m);
    ws_.down.resize(m);
    ws_.mean_w.resize(m);
    ws_.eigenvector.resize(k);
    ws_.bv.resize(m);
    ws_.next.resize(k);
  }

  // Largest eigenvalue of B^T B, B = (N V + W)^{-1/2} J L (the reference's J L), by power iteration (B^T B is positive
  // semi-definite) from the reference's eigenvector, never the last sweep's: the factor must be a function of this w
  // alone, not of the chain's history. A relative change below 1% or 30 iterations end it: in the metric's units the
  // eigenvalues cluster near 1 (slow convergence), and the factor, a square root, needs no more.
  double information_eigenvalue(const Eigen::VectorXd& w) const {
    ws_.cov = reference_cov_;
    ws_.cov.diagonal() += w;
    ws_.llt.compute(ws_.cov);
    if (ws_.llt.info() != Eigen::Success) return 0.0;
    ws_.b = jacobian_;
    ws_.llt.matrixL().solveInPlace(ws_.b);
    ws_.eigenvector = reference_vector_;
    double lambda = 0.0;
    for (int it = 0; it < 30; ++it) {
      ws_.bv.noalias() = ws_.b * ws_.eigenvector;
      ws_.next.noalias() = ws_.b.transpose() * ws_.bv;
      const double norm = ws_.next.norm();
      if (!(norm > 0.0)) return 0.0;
      ws_.eigenvector = ws_.next / norm;
      const bool settled = std::abs(norm - lambda) <= 1e-2 * norm;
      lambda = norm;
      if (settled) break;
    }
    return lambda;
  }

  mutable nuts_model_type moments_;  // evaluates the moments at the NUTS block's point (its own workspaces)
  nuts_options nuts_options_;
  std::optional<nuts_sampler<nuts_model_type>> nuts_;
  int reference_metric_ = 0;
  double reference_lambda_ = 0.0;
  Eigen::MatrixXd jacobian_, reference_cov_;
  Eigen::VectorXd reference_vector_;
  // Scratch of set_reference and information_eigenvalue; its contents between calls are unspecified, so a copy starts
  // with fresh storage.
  struct workspace {
    Eigen::MatrixXd cov, b;
    Eigen::LLT<Eigen::MatrixXd> llt, metric_llt;
    Eigen::VectorXd at, up, down, mean_w, eigenvector, bv, next;
    workspace() = default;
    workspace(const workspace&) noexcept {}
    workspace& operator=(const workspace&) noexcept { return *this; }
  };
  mutable workspace ws_;
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
