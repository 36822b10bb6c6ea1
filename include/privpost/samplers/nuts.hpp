// privpost/samplers/nuts.hpp
// nuts_sampler: the No-U-Turn sampler as Stan runs it (Hoffman & Gelman 2014; Betancourt 2017): multinomial sampling
// over the trajectory, the generalised U-turn criterion with its checks across merged subtrees, dual-averaging step size
// and a windowed diagonal (or dense) metric in warm-up. For any differentiable_model; the GLM samplers (Kulkarni et al. 2021) use
// it.
#pragma once

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <concepts>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/numerical_events.hpp"
#include "privpost/core/random/normal.hpp"
#include "privpost/core/random/uniform.hpp"
#include "privpost/samplers/detail/nuts_adaptation.hpp"

namespace privpost {

/// Settings of nuts_sampler; the defaults are Stan's (the paper's sampler).
struct nuts_options {
  int warmup = 1000;               ///< adapting transitions, >= 0; under infer the driver's burn-in replaces it
  double target_accept = 0.8;      ///< dual averaging target of the mean acceptance statistic, in (0, 1)
  int max_depth = 10;              ///< a trajectory has at most 2^max_depth leapfrog steps; 1..30
  double max_energy_error = 1000;  ///< a leapfrog step with H - H0 above this is a divergence; > 0
  double initial_step_size = 1.0;  ///< > 0; refined by Stan's doubling heuristic before the first transition
  double init_radius = 2.0;        ///< the random initial point is uniform on [-init_radius, init_radius]^dimension
  int init_tries = 100;            ///< initial points tried for a finite log density and gradient, >= 1
  bool adapt_metric = true;        ///< diagonal inverse metric from windowed variances (false: the identity)
  /// With adapt_metric: a dense inverse metric from the windows' covariances (Stan's dense_e) instead of their variances.
  /// For posteriors whose coordinates are correlated (a GLM's intercept, slopes and covariate mean): a diagonal metric
  /// there needs trajectories as long as the ratio of the posterior's largest to smallest principal scale. Costs d^2
  /// per leapfrog step (against the gradient's cost); a window of fewer than 2d draws estimates the variances only.
  bool dense_metric = false;
  /// With adapt_metric: after init_buffer / 5 warm-up transitions, and again after every further init_buffer / 5 inside
  /// the initial buffer (transitions 15, 30, 45 and 60 of Stan's 75), set the inverse metric to the inverse of the log
  /// density's diagonal curvature at the current point (central differences of the gradient, each entry in [1e-8, 1];
  /// entries whose curvature is not finite or not above 1 are 1, the identity's; taken only when some entry moves by more
  /// than a factor of 2, since each change restarts the step size's adaptation), until the first window replaces it.
  /// For models that start near the posterior's bulk (the GLMs' moment start): there the identity metric makes the
  /// first init_buffer + base_window transitions run at the largest tree depth (1023 leapfrog steps each) when some
  /// posterior scales are 100 times below others. Repeated because a start that is not yet in the bulk has curvatures
  /// of other scales than the bulk's: with one pass, the GLM chains that start far out ran at the largest tree depth
  /// from there until the first window (about half of their warm-up's leapfrog steps). Only shrinking: a version that
  /// also loosened the metric stopped the Poisson DP-GLM's calibration suite under Laplace noise (a covariance that
  /// was not positive definite).
  bool curvature_start = false;
  double gamma = 0.05;   ///< dual averaging regularisation, > 0
  double kappa = 0.75;   ///< dual averaging decay of the averaged iterate, in (0, 1]
  double t0 = 10.0;      ///< dual averaging early-iteration damping, > 0
  int init_buffer = 75;  ///< warm-up transitions before the first metric window, >= 0
  int base_window = 25;  ///< length of the first metric window, >= 2
  int term_buffer = 50;  ///< step-size-only transitions after the last metric window, >= 0
};

/// What one transition did (Stan's sampler diagnostics: stepsize__, treedepth__, n_leapfrog__, divergent__, energy__,
/// accept_stat__, lp__).
struct nuts_transition {
  /// The step size used.
  double step_size = 0.0;
  /// Tree depth: accepted doublings.
  int tree_depth = 0;
  /// Leapfrog steps taken.
  int n_leapfrog = 0;
  /// Whether the trajectory diverged.
  bool divergent = false;
  double energy = 0.0;       ///< H at the new point with its trajectory momentum
  double accept_stat = 0.0;  ///< mean Metropolis acceptance over every leapfrog step of the trajectory
  double log_density = 0.0;  ///< of the new point
};

namespace detail {
inline void check_nuts_options(const nuts_options& o) {
  constexpr const char* f = "nuts_sampler";
  if (o.warmup < 0) throw_invalid(f, "warmup", o.warmup, "an integer >= 0");
  if (!(o.target_accept > 0.0 && o.target_accept < 1.0)) throw_invalid(f, "target_accept", o.target_accept, "a number in (0, 1)");
  if (o.max_depth < 1 || o.max_depth > 30) throw_invalid(f, "max_depth", o.max_depth, "an integer in [1, 30]");
  check_positive_finite(f, "max_energy_error", o.max_energy_error);
  check_positive_finite(f, "initial_step_size", o.initial_step_size);
  check_nonnegative_finite(f, "init_radius", o.init_radius);
  if (o.init_tries < 1) throw_invalid(f, "init_tries", o.init_tries, "an integer >= 1");
  check_positive_finite(f, "gamma", o.gamma);
  if (!(o.kappa > 0.0 && o.kappa <= 1.0)) throw_invalid(f, "kappa", o.kappa, "a number in (0, 1]");
  check_positive_finite(f, "t0", o.t0);
  if (o.init_buffer < 0) throw_invalid(f, "init_buffer", o.init_buffer, "an integer >= 0");
  if (o.base_window < 2) throw_invalid(f, "base_window", o.base_window, "an integer >= 2");
  if (o.term_buffer < 0) throw_invalid(f, "term_buffer", o.term_buffer, "an integer >= 0");
}

// Stan's generalised U-turn criterion for a trajectory whose momenta sum to r1 + r2, with sharp momenta a and b at its
// two ends (symmetric in a and b, so direction does not matter).
inline bool no_u_turn(const Eigen::VectorXd& a, const Eigen::VectorXd& b, const Eigen::VectorXd& r1,
                      const Eigen::VectorXd& r2) noexcept {
  return a.dot(r1) + a.dot(r2) > 0.0 && b.dot(r1) + b.dot(r2) > 0.0;
}

inline double log_sum_exp(double a, double b) noexcept {
  if (a == -std::numeric_limits<double>::infinity()) return b;
  if (b == -std::numeric_limits<double>::infinity()) return a;
  return a > b ? a + std::log1p(std::exp(b - a)) : b + std::log1p(std::exp(a - b));
}
}  // namespace detail

/// The No-U-Turn sampler on a differentiable_model, one transition per step(g). Stan's algorithm (multinomial NUTS,
/// diagonal or dense metric, windowed adaptation with Stan's defaults); every loop bounded. Warm-up adapts for options.warmup
/// transitions and then freezes the step size at exp of its dual-averaging mean; under infer the burn-in's length
/// replaces options.warmup (begin_warmup), and end_warmup() checks that burn-in had exactly that length. No heap allocation in
/// step(): every workspace, one per tree depth, is sized at construction. events() counts divergences, tree-depth saturations and
/// non-finite log densities after warm-up. Not thread-safe (one sampler per chain, as infer builds them).
template <differentiable_model Model>
class nuts_sampler {
 public:
  /// Starts at a random point: uniform on [-init_radius, init_radius]^dimension (or the model's initial_point(g,
  /// init_radius, u) when it has one: initial_point_model), up to init_tries draws until the log density and gradient
  /// are finite (std::domain_error otherwise); then Stan's step-size heuristic.
  template <random_engine G>
  nuts_sampler(Model model, const nuts_options& options, G& g) : model_(std::move(model)), options_(options) {
    detail::check_nuts_options(options_);
    allocate();
    bool found = false;
    for (int t = 0; t < options_.init_tries && !found; ++t) {
      if constexpr (initial_point_model<Model, G>) {
        model_.initial_point(g, options_.init_radius, q_);
      } else {
        for (Eigen::Index i = 0; i < dim_; ++i) q_(i) = options_.init_radius * (2.0 * draw_uniform(g) - 1.0);
      }
      lp_ = model_.log_density_gradient(q_, grad_);
      found = std::isfinite(lp_) && grad_.allFinite();
    }
    if (!found) {
      throw std::domain_error("nuts_sampler: no initial point with a finite log density and gradient in " +
                              std::to_string(options_.init_tries) + " random draws (radius " +
                              detail::format_value(options_.init_radius) + ", dimension " + std::to_string(dim_) + ")");
    }
    start(g);
  }

  /// Starts at the given unconstrained point (its log density and gradient must be finite: std::domain_error).
  template <random_engine G>
  nuts_sampler(Model model, const nuts_options& options, const Eigen::VectorXd& initial_point, G& g)
      : model_(std::move(model)), options_(options) {
    detail::check_nuts_options(options_);
    allocate();
    check_size_match("nuts_sampler", "initial point", initial_point.size(), "model dimension", dim_);
    check_all_finite("nuts_sampler", "initial point", initial_point);
    q_ = initial_point;
    lp_ = model_.log_density_gradient(q_, grad_);
    if (!(std::isfinite(lp_) && grad_.allFinite()))
      throw_domain("nuts_sampler", "log density at the initial point", lp_, "finite, with a finite gradient");
    start(g);
  }

  /// One NUTS transition (during warm-up followed by one adaptation update).
  template <random_engine G>
  void step(G& g) {
    transition(g);
    if (transitions_ < options_.warmup) {
      adapt(g);
    } else {
      if (last_.divergent) ++events_.divergences;
      if (last_.tree_depth >= options_.max_depth) ++events_.treedepth_saturations;
    }
    ++transitions_;
    if (transitions_ == options_.warmup) step_size_ = step_size_adaptation_.final_step_size();
  }

  /// Told by infer before the first transition: warm-up lasts `transitions` transitions (the driver's burn-in), which
  /// replaces options.warmup and lays Stan's metric windows out over it. std::invalid_argument for a negative count;
  /// std::logic_error after the first transition (the windows would no longer match what was run).
  void begin_warmup(int transitions) {
    if (transitions < 0) throw_invalid("nuts_sampler::begin_warmup", "transitions", transitions, "an integer >= 0");
    if (transitions_ != 0)
      throw std::logic_error("nuts_sampler::begin_warmup: called after " + std::to_string(transitions_) +
                             " transitions; accepted: before the first");
    options_.warmup = transitions;
    windows_.configure(options_.warmup, options_.init_buffer, options_.term_buffer, options_.base_window, options_.adapt_metric);
  }

  /// Told by infer after burn-in: throws std::invalid_argument unless exactly options.warmup transitions were run.
  void end_warmup() const {
    if (transitions_ != options_.warmup) {
      throw std::invalid_argument("nuts_sampler: burn-in ended after " + std::to_string(transitions_) +
                                  " transitions but nuts_options::warmup is " + std::to_string(options_.warmup) +
                                  "; accepted: inference_options::burnin equal to nuts_options::warmup");
    }
  }

  /// Changes the target between transitions (a Gibbs block of a larger sampler: glm_collapsed_gibbs conditions the
  /// model on new noise variances): calls f(model) and re-evaluates the log density and gradient at the current point.
  /// Throws std::domain_error when they are not finite there (the new target must contain the current point). Step
  /// size, metric and adaptation carry on unchanged; allocates nothing unless f does.
  template <class F>
  requires std::invocable<F&, Model&>
  void update_model(F&& f) {
    std::forward<F>(f)(model_);
    lp_ = model_.log_density_gradient(q_, grad_);
    if (!(std::isfinite(lp_) && grad_.allFinite()))
      throw_domain("nuts_sampler::update_model", "log density at the current point", lp_, "finite, with a finite gradient");
  }

  /// The recorded parameter of the current point: the model's parameter_vector(u) when it has one, else u.
  Eigen::VectorXd parameter_vector() const {
    if constexpr (requires {
                    { model_.parameter_vector(q_) } -> std::convertible_to<Eigen::VectorXd>;
                  }) {
      return model_.parameter_vector(q_);
    } else {
      return q_;
    }
  }

  /// The numerical events so far.
  const numerical_events& events() const noexcept { return events_; }
  /// The last transition's diagnostics.
  const nuts_transition& last_transition() const noexcept { return last_; }
  /// Stan's sampler columns, in Stan's order (reports_draw_diagnostics): lp__ (the log density of the new point, on
  /// the unconstrained scale with the Jacobians), accept_stat__, stepsize__, treedepth__, n_leapfrog__, divergent__
  /// (0 or 1), energy__.
  static std::vector<std::string> draw_diagnostic_names() {
    return {"lp__", "accept_stat__", "stepsize__", "treedepth__", "n_leapfrog__", "divergent__", "energy__"};
  }
  /// The values of draw_diagnostic_names() for the last transition.
  Eigen::VectorXd draw_diagnostics() const {
    Eigen::VectorXd d(7);
    d << last_.log_density, last_.accept_stat, last_.step_size, static_cast<double>(last_.tree_depth),
        static_cast<double>(last_.n_leapfrog), last_.divergent ? 1.0 : 0.0, last_.energy;
    return d;
  }
  /// The current (adapted) step size, before step_scale().
  double step_size() const noexcept { return step_size_; }
  /// Sets the factor the next transitions multiply the step size by, until set again (1 at construction). For a Gibbs
  /// block whose target changes between transitions (update_model): a factor that depends only on what the block
  /// conditions on leaves each conditional target invariant, so a sweep whose conditional is narrower than the
  /// adapted metric expects can take smaller steps instead of diverging (glm_collapsed_model). During warm-up the
  /// dual averaging adapts the step size before this factor. std::invalid_argument unless factor is finite and in
  /// (0, 1].
  void set_step_scale(double factor) {
    if (!(std::isfinite(factor) && factor > 0.0 && factor <= 1.0))
      throw_invalid("nuts_sampler::set_step_scale", "factor", factor, "a number in (0, 1]");
    step_scale_ = factor;
  }
  /// The factor set by set_step_scale.
  double step_scale() const noexcept { return step_scale_; }
  /// How many times warm-up has replaced the metric so far (each end of one of Stan's metric windows).
  int metric_updates() const noexcept { return metric_updates_; }
  /// The current inverse metric's diagonal (the whole metric unless nuts_options::dense_metric).
  const Eigen::VectorXd& inverse_metric() const noexcept { return inverse_metric_; }
  /// The current dense inverse metric (with nuts_options::dense_metric; an empty matrix otherwise).
  const Eigen::MatrixXd& dense_inverse_metric() const noexcept { return dense_inverse_metric_; }
  /// The current position q.
  const Eigen::VectorXd& position() const noexcept { return q_; }
  /// The log density at the current position.
  double log_density() const noexcept { return lp_; }
  /// Whether warm-up adaptation is still running.
  bool adapting() const noexcept { return transitions_ < options_.warmup; }
  /// The model.
  const Model& model() const noexcept { return model_; }
  /// The settings.
  const nuts_options& options() const noexcept { return options_; }

 private:
  // A leapfrog state: position, momentum, gradient and log density.
  struct phase_point {
    Eigen::VectorXd q, p, grad;
    double lp = 0.0;
  };
  // What a subtree of one depth returns: its multinomial proposal, momentum sum, end momenta (plain and sharp) and
  // log weight; left_end keeps the left child's last momenta while the right child reuses the level below.
  struct subtree {
    phase_point proposal;
    Eigen::VectorXd rho, p_begin, ps_begin, p_end, ps_end, p_left_end, ps_left_end;
    double log_w = 0.0;
  };

  static void check_all_finite(const char* f, const char* name, const Eigen::VectorXd& v) {
    for (Eigen::Index i = 0; i < v.size(); ++i)
      if (!std::isfinite(v(i))) throw_invalid(f, name, v(i), "finite coordinates");
  }

  void allocate() {
    const auto d = static_cast<Eigen::Index>(std::as_const(model_).dimension());
    if (d < 1) throw_invalid("nuts_sampler", "model dimension", static_cast<double>(d), "an integer >= 1");
    dim_ = d;
    q_.setZero(d);
    grad_.setZero(d);
    inverse_metric_.setOnes(d);
    for (phase_point* z : {&z_, &fwd_, &bck_}) {
      z->q.setZero(d);
      z->p.setZero(d);
      z->grad.setZero(d);
    }
    for (Eigen::VectorXd* v : {&p_sample_, &rho_, &p_fwd_, &ps_fwd_, &p_bck_, &ps_bck_, &sharp_work_}) v->setZero(d);
    levels_.resize(static_cast<std::size_t>(options_.max_depth));
    for (subtree& t : levels_) {
      for (Eigen::VectorXd* v : {&t.proposal.q, &t.proposal.p, &t.proposal.grad, &t.rho, &t.p_begin, &t.ps_begin, &t.p_end,
                                 &t.ps_end, &t.p_left_end, &t.ps_left_end})
        v->setZero(d);
    }
    variance_.resize(d);
    if (options_.dense_metric) {
      dense_inverse_metric_.setIdentity(d, d);
      metric_llt_.compute(dense_inverse_metric_);
      covariance_.resize(d);
    }
  }

  template <random_engine G>
  void start(G& g) {
    step_size_ = options_.initial_step_size;
    init_step_size(g);
    step_size_adaptation_.gamma = options_.gamma;
    step_size_adaptation_.kappa = options_.kappa;
    step_size_adaptation_.t0 = options_.t0;
    step_size_adaptation_.delta = options_.target_accept;
    step_size_adaptation_.mu = std::log(10.0 * options_.initial_step_size);
    step_size_adaptation_.restart();
    windows_.configure(options_.warmup, options_.init_buffer, options_.term_buffer, options_.base_window, options_.adapt_metric);
    last_ = nuts_transition{};
    last_.step_size = step_size_;
    last_.log_density = lp_;
  }

  // The sharp momentum M^{-1} p (the velocity of q).
  void sharp(const Eigen::VectorXd& p, Eigen::VectorXd& out) const noexcept {
    if (options_.dense_metric)
      out.noalias() = dense_inverse_metric_ * p;
    else
      out = inverse_metric_.cwiseProduct(p);
  }
  double kinetic(const Eigen::VectorXd& p) const noexcept {
    if (!options_.dense_metric) return 0.5 * (p.array().square() * inverse_metric_.array()).sum();
    sharp(p, sharp_work_);
    return 0.5 * p.dot(sharp_work_);
  }
  // H of the working point; NaN (and any non-finite log density) counts as +infinity.
  double hamiltonian(const phase_point& z) const noexcept {
    const double h = -z.lp + kinetic(z.p);
    return std::isnan(h) || !std::isfinite(z.lp) ? std::numeric_limits<double>::infinity() : h;
  }

  template <random_engine G>
  void draw_momentum(Eigen::VectorXd& p, G& g) const {
    if (options_.dense_metric) {
      // p ~ N(0, M) with M = (L L')^{-1}: p = L'^{-1} z.
      for (Eigen::Index i = 0; i < dim_; ++i) p(i) = draw_normal(g);
      metric_llt_.matrixU().solveInPlace(p);
      return;
    }
    for (Eigen::Index i = 0; i < dim_; ++i) p(i) = draw_normal(g) / std::sqrt(inverse_metric_(i));
  }

  void leapfrog(phase_point& z, double e) {
    z.p += (0.5 * e) * z.grad;
    if (options_.dense_metric) {
      sharp(z.p, sharp_work_);
      z.q += e * sharp_work_;
    } else {
      z.q.array() += e * inverse_metric_.array() * z.p.array();
    }
    z.lp = model_.log_density_gradient(z.q, z.grad);
    if (std::isnan(z.lp)) z.lp = -std::numeric_limits<double>::infinity();
    if (!std::isfinite(z.lp)) {
      if (!adapting()) ++events_.nonfinite_density;
      return;  // the gradient is meaningless there; H = +infinity ends the trajectory as a divergence
    }
    z.p += (0.5 * e) * z.grad;
  }

  // Stan's init_stepsize: double or halve the step size until the acceptance of one leapfrog step from the current
  // point crosses 0.8. Bounded: 200 changes, a step size above 1e7 (improper target) or of 0 throw std::domain_error.
  template <random_engine G>
  void init_step_size(G& g) {
    const double log_target = std::log(0.8);
    auto trial = [&] {
      z_.q = q_;
      z_.grad = grad_;
      z_.lp = lp_;
      draw_momentum(z_.p, g);
      const double h0 = hamiltonian(z_);
      leapfrog(z_, step_size_ * step_scale_);
      return h0 - hamiltonian(z_);
    };
    const double first = trial();
    const int direction = first > log_target ? 1 : -1;
    for (int changes = 0; changes < 200; ++changes) {
      const double delta_h = trial();
      if (direction == 1 && !(delta_h > log_target)) return;
      if (direction == -1 && !(delta_h < log_target)) return;
      step_size_ = direction == 1 ? 2.0 * step_size_ : 0.5 * step_size_;
      if (step_size_ > 1e7) throw_domain("nuts_sampler", "step size", step_size_, "at most 1e7 (is the target density proper?)");
      if (step_size_ == 0.0) throw_domain("nuts_sampler", "step size", step_size_, "> 0 (no acceptable step size)");
    }
    throw_domain("nuts_sampler", "step size after 200 changes", step_size_, "a step size found within 200 doublings or halvings");
  }

  template <random_engine G>
  void transition(G& g) {
    draw_momentum(z_.p, g);
    z_.q = q_;
    z_.grad = grad_;
    z_.lp = lp_;
    const double h0 = hamiltonian(z_);
    fwd_ = z_;
    bck_ = z_;
    rho_ = z_.p;
    p_fwd_ = z_.p;
    p_bck_ = z_.p;
    sharp(z_.p, ps_fwd_);
    ps_bck_ = ps_fwd_;
    p_sample_ = z_.p;

    double log_w = 0.0;  // the start point's weight, exp(H0 - H0)
    int depth = 0;
    n_leapfrog_ = 0;
    sum_metro_ = 0.0;
    divergent_ = false;
    while (depth < options_.max_depth) {
      const bool forward = draw_uniform(g) > 0.5;
      phase_point& end = forward ? fwd_ : bck_;
      z_ = end;
      const double e = step_size_ * step_scale_;
      const bool valid = build(depth, forward ? e : -e, h0, g);
      end = z_;
      if (!valid) break;
      const subtree& t = levels_[static_cast<std::size_t>(depth)];
      ++depth;
      // Biased progressive sampling: move to the new subtree's proposal with probability min(1, w_new / w_old).
      if (t.log_w > log_w || draw_uniform(g) < std::exp(t.log_w - log_w)) {
        q_ = t.proposal.q;
        grad_ = t.proposal.grad;
        lp_ = t.proposal.lp;
        p_sample_ = t.proposal.p;
      }
      log_w = detail::log_sum_exp(log_w, t.log_w);
      // The old tree's far end and inner end, seen from the new subtree.
      const Eigen::VectorXd& p_inner = forward ? p_fwd_ : p_bck_;
      const Eigen::VectorXd& ps_inner = forward ? ps_fwd_ : ps_bck_;
      const Eigen::VectorXd& ps_far = forward ? ps_bck_ : ps_fwd_;
      const bool persist = detail::no_u_turn(ps_far, t.ps_end, rho_, t.rho) &&
                           detail::no_u_turn(ps_far, t.ps_begin, rho_, t.p_begin) &&
                           detail::no_u_turn(ps_inner, t.ps_end, t.rho, p_inner);
      rho_ += t.rho;
      (forward ? p_fwd_ : p_bck_) = t.p_end;
      (forward ? ps_fwd_ : ps_bck_) = t.ps_end;
      if (!persist) break;
    }
    last_.step_size = step_size_ * step_scale_;
    last_.tree_depth = depth;
    last_.n_leapfrog = n_leapfrog_;
    last_.divergent = divergent_;
    last_.accept_stat = n_leapfrog_ > 0 ? sum_metro_ / n_leapfrog_ : 0.0;
    last_.log_density = lp_;
    last_.energy = -lp_ + kinetic(p_sample_);
  }

  // Builds a subtree of 2^k leapfrog steps from the working point z_ with signed step e into levels_[k]; false when it
  // diverged or turned back on itself (the caller then discards it).
  template <random_engine G>
  bool build(int k, double e, double h0, G& g) {
    subtree& t = levels_[static_cast<std::size_t>(k)];
    if (k == 0) {
      leapfrog(z_, e);
      ++n_leapfrog_;
      const double h = hamiltonian(z_);
      if (h - h0 > options_.max_energy_error) divergent_ = true;
      t.log_w = h0 - h;
      sum_metro_ += h0 - h > 0.0 ? 1.0 : std::exp(h0 - h);
      t.proposal = z_;
      t.rho = z_.p;
      t.p_begin = z_.p;
      t.p_end = z_.p;
      sharp(z_.p, t.ps_begin);
      t.ps_end = t.ps_begin;
      return !divergent_;
    }
    if (!build(k - 1, e, h0, g)) return false;
    const subtree& c = levels_[static_cast<std::size_t>(k - 1)];
    t.proposal = c.proposal;
    t.rho = c.rho;
    t.p_begin = c.p_begin;
    t.ps_begin = c.ps_begin;
    t.p_left_end = c.p_end;
    t.ps_left_end = c.ps_end;
    const double w_left = c.log_w;
    if (!build(k - 1, e, h0, g)) return false;  // c now holds the right child
    const double w_sub = detail::log_sum_exp(w_left, c.log_w);
    // Uniform progressive sampling within the subtree: the right child's proposal with probability w_right / w_sub.
    if (c.log_w > w_sub || draw_uniform(g) < std::exp(c.log_w - w_sub)) t.proposal = c.proposal;
    t.log_w = w_sub;
    const bool valid = detail::no_u_turn(t.ps_begin, c.ps_end, t.rho, c.rho) &&
                       detail::no_u_turn(t.ps_begin, c.ps_begin, t.rho, c.p_begin) &&
                       detail::no_u_turn(t.ps_left_end, c.ps_end, c.rho, t.p_left_end);
    t.rho += c.rho;
    t.p_end = c.p_end;
    t.ps_end = c.ps_end;
    return valid;
  }

  // nuts_options::curvature_start. Uses the trajectory workspaces (free between transitions); allocates nothing.
  template <random_engine G>
  void curvature_metric(G& g) {
    // The new metric is built in sharp_work_ (sized dim_ at construction) and adopted only when some entry moves by
    // more than a factor of 2: in the bulk the curvature barely moves, and every adoption restarts the step size's
    // adaptation.
    Eigen::VectorXd& next = sharp_work_;
    bool changed = false;
    z_.q = q_;
    for (Eigen::Index i = 0; i < dim_; ++i) {
      const double h = 1e-4 * std::max(1.0, std::abs(q_(i)));
      z_.q(i) = q_(i) + h;
      const double up = model_.log_density_gradient(z_.q, fwd_.grad);
      z_.q(i) = q_(i) - h;
      const double down = model_.log_density_gradient(z_.q, bck_.grad);
      z_.q(i) = q_(i);
      const double curvature = (bck_.grad(i) - fwd_.grad(i)) / (2.0 * h);  // -d^2 log p / dq_i^2
      const double entry = std::isfinite(up) && std::isfinite(down) && std::isfinite(curvature) && curvature > 1.0
                               ? std::max(1.0 / curvature, 1e-8)
                               : 1.0;
      next(i) = entry;
      if (entry > 2.0 * inverse_metric_(i) || 2.0 * entry < inverse_metric_(i)) changed = true;
    }
    if (!changed) return;
    inverse_metric_ = next;
    if (options_.dense_metric) {
      dense_inverse_metric_.setZero();
      dense_inverse_metric_.diagonal() = inverse_metric_;
      metric_llt_.compute(dense_inverse_metric_);
    }
    restart_step_size(g);
  }

  // After the metric changed: Stan's step-size search from the current point, and dual averaging restarted towards 10
  // times that step.
  template <random_engine G>
  void restart_step_size(G& g) {
    init_step_size(g);
    step_size_adaptation_.mu = std::log(10.0 * step_size_);
    step_size_adaptation_.restart();
  }

  template <random_engine G>
  void adapt(G& g) {
    step_size_ = step_size_adaptation_.learn(last_.accept_stat);
    const int c = transitions_;
    if (options_.curvature_start && windows_.enabled && c > 0 && c < windows_.init_buffer && windows_.init_buffer >= 5 &&
        c % (windows_.init_buffer / 5) == 0)
      curvature_metric(g);
    const bool dense = options_.dense_metric;
    if (windows_.collects(c)) {
      if (dense)
        covariance_.add(q_);
      else
        variance_.add(q_);
    }
    if (windows_.ends_window(c)) {
      windows_.advance(c);
      // Stan's regularisation towards 1e-3 I with 5 pseudo-observations; the sample (co)variance has denominator n - 1.
      if (dense) {
        const double n = covariance_.n;
        dense_inverse_metric_ = (n / ((n + 5.0) * (n - 1.0))) * covariance_.m2;
        // A window of fewer than 2d draws estimates the variances only: its sample covariance is singular or nearly so
        // (rank below d), and the regularisation alone then leaves directions at 1e-3 whatever their scale. Measured on
        // the d = 6 logistic GLM with intercept and covariate mean (34 parameters): Stan's dense windows from the first
        // 25-draw window on spent 3-8 times the warm-up leapfrog steps of the diagonal metric.
        if (n < 2.0 * static_cast<double>(dim_)) {
          sharp_work_ = dense_inverse_metric_.diagonal();
          dense_inverse_metric_.setZero();
          dense_inverse_metric_.diagonal() = sharp_work_;
        }
        dense_inverse_metric_.diagonal().array() += 1e-3 * 5.0 / (n + 5.0);
        inverse_metric_ = dense_inverse_metric_.diagonal();
        metric_llt_.compute(dense_inverse_metric_);
        if (!dense_inverse_metric_.allFinite() || metric_llt_.info() != Eigen::Success)
          throw_domain("nuts_sampler", "adapted dense inverse metric's smallest diagonal entry", inverse_metric_.minCoeff(),
                       "a finite, positive definite matrix");
        covariance_.restart();
      } else {
        const double n = variance_.n;
        inverse_metric_ = (n / (n + 5.0)) * (variance_.m2 / (n - 1.0)) + Eigen::VectorXd::Constant(dim_, 1e-3 * 5.0 / (n + 5.0));
        variance_.restart();
      }
      for (Eigen::Index i = 0; i < dim_; ++i) {
        if (!(std::isfinite(inverse_metric_(i)) && inverse_metric_(i) > 0.0))
          throw_domain("nuts_sampler", "adapted inverse metric", inverse_metric_(i), "finite and > 0");
      }
      ++metric_updates_;
      restart_step_size(g);
    }
  }

  Model model_;
  nuts_options options_;
  Eigen::Index dim_ = 0;
  Eigen::VectorXd q_, grad_;  // the current point
  double lp_ = 0.0;
  Eigen::VectorXd inverse_metric_;          // the diagonal metric, or the dense metric's diagonal
  Eigen::MatrixXd dense_inverse_metric_;    // with options_.dense_metric
  Eigen::LLT<Eigen::MatrixXd> metric_llt_;  // its Cholesky factor, for the momentum draws
  double step_size_ = 1.0;
  double step_scale_ = 1.0;  // set_step_scale
  int metric_updates_ = 0;
  int transitions_ = 0;
  numerical_events events_;
  nuts_transition last_;

  // Transition workspace.
  phase_point z_, fwd_, bck_;
  Eigen::VectorXd p_sample_, rho_, p_fwd_, ps_fwd_, p_bck_, ps_bck_;
  mutable Eigen::VectorXd sharp_work_;  // M^{-1} p of the dense metric's kinetic energy and leapfrog
  std::vector<subtree> levels_;
  int n_leapfrog_ = 0;
  double sum_metro_ = 0.0;
  bool divergent_ = false;

  detail::dual_averaging step_size_adaptation_;
  detail::welford_variance variance_;
  detail::welford_covariance covariance_;
  detail::metric_windows windows_;
};

}  // namespace privpost
