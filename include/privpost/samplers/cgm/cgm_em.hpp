// privpost/samplers/cgm/cgm_em.hpp
// CGM-EM (docs/design-cgm.md Sec. 3.6, decision D2): the parameters of a pairwise MRF learned from noisy edge
// tables with the true tables latent. One iteration is an E-step (the box dual of box_dual.hpp, warm-started from the
// previous dual point) and an M-step:
//  - MAP-EM with pseudo-count alpha_0 (default 10): mu = (n_t + alpha) / (N + alpha_0) with the consistent pseudo-counts
//    alpha_0 / (K_u K_v) per edge cell and alpha_0 / K_v per node cell (a hyper-Dirichlet posterior-mean plug-in), then
//    the pseudo-moment MLE (forests);
//  - the literal Algorithm 2 of the text is pseudo_count = 0. Run to convergence it is the L1 projection of y onto N M
//    and overfits zeros like the naive MLE: a documented negative control, not an estimator to use.
// On a graph with cycles: with loopy_bp (Bethe) the same pseudo-moment formula is the Bethe-approximate MLE (Sec. 3.7)
// and the E-step is not certified; with an exact back end (junction_tree, brute force) the M-step is exact: the
// moment-matching solve of m_step.hpp with pseudo-counts, warm-started from theta_t, and theta_t + g_t (Sec. 3.6's
// equivalent form, no solve) for pseudo_count = 0 with the box dual (NLBP's tilt is not the dual point, so NLBP keeps
// the moment-matching solve, to n_t / N).
// Start: theta_0 = 0 (uniform). Converged when |n_t - n_(t-1)|_1 / N < tol. A cgm_em is an iterative_estimator for
// fit() (inference/fit.hpp).
// Inexact early E-steps (MAP-EM with the box dual; cgm_em_options::estep_relax = kappa): the E-step's gap tolerance is
// gap_tol times min(1000, kappa c_min / tol) while that is >= 1, with c_min the smallest EM change |n_t - n_(t-1)|_1 /
// N so far (monotone, so a tight E-step's larger change cannot loosen the next ones into a cycle): far from convergence
// EM's own step dwarfs the E-step's error, and the warm-started FISTA needs far fewer iterations; once c_min falls
// below tol / kappa the E-steps run at gap_tol (convergence is declared only after such an E-step), so the stopping
// rule and the point it returns are those of exact E-steps. Stall watch: where the noise dominates (epsilon = 0.01 on
// the study's chain) EM's change can settle above tol, at the E-step's own error (gap_tol 1e-8 N left |n_t - n_(t-1)|_1
// / N jittering at about 5e-7 for 40000 iterations); when 50 iterations at gap_tol bring no new smallest change while
// it is below 100 tol, the E-steps tighten tenfold, down to estep_tighten (0.01): that fit then converged after 10849
// iterations, same KL to 5 digits, and in the chain study at epsilon = 0.01 the fits still moving after 50000
// iterations fell from 22 to 0 of 25 (N = 10^4) and from 25 to 3 (N = 10^5); fits that converge linearly never stall
// and are unchanged (benchmarks/cgm_bench.cpp's fits take the same iterations). The first E-step, kappa = 0 and the
// literal Algorithm 2 (pseudo_count = 0, whose monotone residual the tests check) use gap_tol. Measured on the study's
// 10-chain (N = 10^4, Laplace at |E| / epsilon, kappa = 0.01, 5 models): the fitted KL equal to 4-5 digits; E-step
// inference calls 2.6-5.7x fewer at epsilon 0.1 and 1.05-1.9x fewer at epsilon 1; the MAP-EM fit of
// benchmarks/cgm_bench.cpp 3x faster at epsilon 0.1.
// SQUAREM (cgm_em_options::accelerate; MAP-EM with the box dual and an exact back end): where the latent tables carry
// most of the information EM's linear rate is close to 1 (thousands of iterations at epsilon <= 0.1). Every cycle of three
// iterations takes two plain EM steps theta_a -> theta_b -> theta_c, extrapolates them by Varadhan and Roland's SqS3
// (Scand. J. Stat. 35, 2008) to theta', and takes one EM step from theta'; the next E-step evaluates the MAP objective
// (map_objective) there and keeps the point only if it is not below theta_b's, else restarts from theta_c with a
// quarter of the step bound. EM's fixed points are the iteration's; convergence is declared only on a plain step's
// change.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <vector>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/numerical_events.hpp"
#include "privpost/families/graphical/moments.hpp"
#include "privpost/families/graphical/pairwise_graph.hpp"
#include "privpost/samplers/cgm/box_dual.hpp"
#include "privpost/samplers/cgm/m_step.hpp"
#include "privpost/samplers/cgm/nlbp.hpp"

namespace privpost {

/// Which E-step solver cgm_em runs: the exact box dual (default, certified with exact back ends) or the text's NLBP
/// (any graph: with an exact back end its fixed points are those of the exact E-step, with loopy_bp those of the Bethe
/// problem; nothing certifies them; compared in the tests and in AT-7).
enum class estep_method { box_dual, nlbp };

/// Settings of cgm_em.
struct cgm_em_options {
  /// Which E-step: the box dual or NLBP.
  estep_method method = estep_method::box_dual;
  estep_options estep{};             ///< the box-dual E-step's gap tolerance and iteration cap
  nlbp_options nlbp{};               ///< NLBP's damping, stopping rule and cap (method nlbp)
  double pseudo_count = 10.0;        ///< alpha_0 of MAP-EM; 0 is the text's literal Algorithm 2 (negative control)
  moment_matching_options m_step{};  ///< the exact M-step's tolerance and cap (exact back ends on graphs with cycles)
  double tol = 1e-7;                 ///< convergence: |n_t - n_(t-1)|_1 / N < tol
  bool keep_trace = true;            ///< record a trace row per iteration (costs one extra inference call per iteration)
  double estep_relax = 0.01;         ///< kappa of MAP-EM's inexact early E-steps (file comment); 0: every E-step at gap_tol
  double estep_tighten = 0.01;       ///< the stall watch's smallest gap-tolerance factor (file comment), in (0, 1]
  /// SQUAREM extrapolation of MAP-EM (file comment): box-dual E-step, pseudo_count > 0 and an exact back end only.
  bool accelerate = true;
};

/// One EM iteration's record.
struct cgm_em_trace_row {
  /// The iteration, from 1.
  int iteration = 0;
  double residual_l1 = 0.0;  ///< |y - n_t|_1 on the released cells
  double objective = 0.0;    ///< F(theta_t, n_t) = theta_t^T n_t - N A(theta_t) + H(n_t) + log p(y | n_t)
  /// The E-step's own iterations.
  int estep_iterations = 0;
  double gap = 0.0;     ///< the E-step's duality gap
  double change = 0.0;  ///< |n_t - n_(t-1)|_1 / N (infinity at the first iteration)
};

/// CGM-EM for any marginal-inference back end and evidence term.
template <marginal_inference Inference, cgm_noise Noise>
class cgm_em {
 public:
  /// graph: the model (its edge tables were released); y: the released tables (table_layout(graph).released_size()
  /// finite entries); n_records: the public N (finite, > 0); inference: a back end over the same graph.
  /// std::invalid_argument for mismatched sizes or bad values.
  cgm_em(pairwise_graph graph, Eigen::VectorXd y, double n_records, Noise noise, Inference inference, cgm_em_options options = {})
      : graph_(std::move(graph)),
        layout_(graph_),
        y_(std::move(y)),
        n_records_(n_records),
        noise_(std::move(noise)),
        inference_(std::move(inference)),
        options_(options),
        estep_(graph_, options.estep),
        nlbp_(graph_, options.nlbp),
        mstep_(graph_, options.m_step) {
    constexpr const char* f = "cgm_em";
    detail::check_edge_release(f, layout_, inference_.layout().size(), y_, n_records_);
    check_nonnegative_finite(f, "pseudo_count", options_.pseudo_count);
    check_positive_finite(f, "tol", options_.tol);
    check_nonnegative_finite(f, "estep_relax", options_.estep_relax);
    if (!(options_.estep_tighten > 0.0 && options_.estep_tighten <= 1.0))
      throw_invalid(f, "estep_tighten", options_.estep_tighten, "a number in (0, 1]");
    forest_ = graph_.is_forest();
    theta_.setZero(layout_.size());
    n_.setZero(layout_.size());
    // alpha = (N + alpha_0) mu - n at n = 0: the consistent pseudo-counts of pseudo_count_marginals.
    pseudo_count_marginals(graph_, Eigen::VectorXd::Zero(layout_.size()), n_records_, options_.pseudo_count, alpha_);
    alpha_ *= n_records_ + options_.pseudo_count;
  }

  /// One E-step and one M-step; with SQUAREM (options().accelerate, file comment) every third call starts from an
  /// extrapolated point.
  iteration_status iterate() {
    if (!accelerated()) return em_step(true);
    if (phase_ == 0) {
      theta_a_ = theta_;
      em_estep();
      bool kept = false;
      if (extrapolated_) {
        // theta_ = F(theta'): kept only if the MAP objective there is not below the one at the plain EM point theta_b
        // (to the E-steps' gaps; EM from theta_b would only have raised it); else the cycle restarts from the plain
        // point theta_c = F(theta_b) with shorter extrapolations.
        extrapolated_ = false;
        const double merit = map_objective();
        grow_ = true;
        if (!(merit >= merit_b_ - (estep_gap_ + gap_b_) - 1e-12 * std::abs(merit_b_))) {
          const int wasted = last_inner_;
          theta_ = theta_a_ = theta_c_;
          n_ = n_b_;  // the plain change of F(theta_b)'s E-step is against theta_b's
          shorten_steps();
          ++rejections_;
          em_estep();
          last_inner_ += wasted;
        } else {
          kept = true;
        }
      }
      phase_ = 1;
      const iteration_status st = em_finish(true);
      // Near convergence (plain change below 100 tol) the E-steps' own errors make r and v noise, and a growing bound
      // kept EM moving (measured: 157 iterations where plain EM took 28): there a kept extrapolation whose next plain
      // change is not below the one before it shortens the steps.
      if (kept && change_b_ < 100.0 * options_.tol && !(st.change < change_b_)) shorten_steps();
      return st;
    }
    if (phase_ == 1) {
      theta_b_ = theta_;
      em_estep();
      n_b_ = n_;
      merit_b_ = map_objective();
      gap_b_ = estep_gap_;
      const iteration_status st = em_finish(true);
      change_b_ = st.change;
      if (st.converged) return st;
      theta_c_ = theta_;
      extrapolated_ = extrapolate();
      phase_ = 2;
      return st;
    }
    // phase 2: one EM step from the extrapolated point; its change compares E-steps at unrelated points, so it never
    // declares convergence and does not feed the stall watch. Without an extrapolation (alpha = -1) it is plain EM.
    const iteration_status st = em_step(!extrapolated_);
    phase_ = 0;
    return st;
  }

  /// How many SQUAREM extrapolations were rejected (file comment).
  int rejected_extrapolations() const noexcept { return rejections_; }

 private:
  bool accelerated() const noexcept {
    return options_.accelerate && Inference::is_exact && options_.method == estep_method::box_dual && options_.pseudo_count > 0.0;
  }

  // One E-step and one M-step. plain: the change compares consecutive plain EM points (may converge, feeds the stall
  // watch).
  iteration_status em_step(bool plain) {
    em_estep();
    return em_finish(plain);
  }

  // The E-step at theta_ (and the trace's log partition); leaves the change, gap and A(theta + g) for em_finish.
  void em_estep() {
    double a_theta = 0.0;
    if (options_.keep_trace) {
      if (!inference_.marginals(theta_, mu_).converged) ++events_.message_passing_nonconverged;
      a_theta = inference_.log_partition();
    }
    n_prev_ = n_;
    int inner = 0;
    double gap = 0.0, log_partition_tilted = 0.0;
    double scale = 1.0;  // the E-step's gap tolerance factor (file comment)
    if (options_.method == estep_method::box_dual) {
      if (iterations_ > 0 && options_.pseudo_count > 0.0) scale = options_.estep_relax > 0.0 ? estep_scale() : 1.0;
      const estep_result e = estep_.solve(inference_, theta_, y_, n_records_, noise_, g_, n_, scale);
      if (!e.converged) ++events_.inner_solver_nonconverged;
      events_.message_passing_nonconverged += e.inference_nonconverged;
      inner = e.iterations;
      gap = e.gap;
      log_partition_tilted = e.log_partition;
    } else {
      if (iterations_ == 0) n_.resize(0);  // start at N mu(theta_0)
      const nlbp_result e = nlbp_.solve(inference_, theta_, y_, n_records_, noise_, n_);
      if (!e.converged) ++events_.inner_solver_nonconverged;
      events_.message_passing_nonconverged += e.inference_nonconverged;
      inner = e.iterations;
      gap = e.change;
      noise_.supergradient(y_, n_.tail(layout_.released_size()), g_);
    }
    estep_gap_ = gap;
    estep_log_partition_ = log_partition_tilted;
    estep_scale_ = scale;
    last_inner_ = inner;
    a_theta_ = a_theta;
  }

  // The trace row, the M-step, the stall watch and the convergence rule after em_estep; plain as em_step's.
  iteration_status em_finish(bool plain) {
    const int inner = last_inner_;
    const double gap = estep_gap_, log_partition_tilted = estep_log_partition_, scale = estep_scale_, a_theta = a_theta_;
    ++iterations_;
    const double change = iterations_ == 1 ? std::numeric_limits<double>::infinity() : (n_ - n_prev_).lpNorm<1>() / n_records_;
    if (options_.keep_trace) {
      // F(theta_t, n_t) = theta_t^T n_t - N A(theta_t) + H(n_t) + log p(y | n_t).
      const Eigen::Index d = layout_.released_size();
      cgm_em_trace_row row;
      row.iteration = iterations_;
      row.residual_l1 = (y_ - n_.tail(d)).template lpNorm<1>();
      // Box dual: H(n) = N A(theta + g) - <theta + g, n> at n = N mu(theta + g). NLBP: the Bethe entropy (exact on
      // forests; on graphs with cycles the Bethe approximation even with an exact back end).
      const double entropy_part = options_.method == estep_method::box_dual
                                      ? n_records_ * log_partition_tilted - g_.dot(n_.tail(d))
                                      : theta_.dot(n_) + n_records_ * bethe_entropy(graph_, n_ / n_records_);
      row.objective = entropy_part - n_records_ * a_theta + noise_.log_likelihood(y_, n_.tail(d));
      row.estep_iterations = inner;
      row.gap = gap;
      row.change = change;
      trace_.push_back(row);
    }
    m_step();
    if (plain && options_.method == estep_method::box_dual && options_.pseudo_count > 0.0 && options_.estep_relax > 0.0)
      watch_for_stall(change, scale);
    converged_ = plain && change < options_.tol && scale <= 1.0;  // never on an inexact E-step
    last_change_ = change;
    return {converged_, change, inner};
  }

 public:
  /// Whether the convergence rule (options().tol) held.
  bool converged() const noexcept { return converged_; }
  /// EM iterations run.
  int iterations() const noexcept { return iterations_; }
  /// theta-hat, full layout (node then edge log-potentials); a distribution is defined only up to gauge moves.
  const Eigen::VectorXd& parameter_vector() const noexcept { return theta_; }
  /// n_t of the last E-step, full layout (each table sums to N).
  const Eigen::VectorXd& counts() const noexcept { return n_; }
  /// The last E-step's dual point (released cells; with NLBP the evidence supergradient at n_t).
  const Eigen::VectorXd& tilt() const noexcept { return g_; }
  /// The numerical events so far.
  const numerical_events& events() const noexcept { return events_; }
  /// How many times a stall tightened MAP-EM's E-steps (file comment; at most ceil(log10(1 / estep_tighten)) times).
  int estep_tightenings() const noexcept { return tightenings_; }
  /// One row per iteration (when options().keep_trace).
  const std::vector<cgm_em_trace_row>& trace() const noexcept { return trace_; }
  /// The graph.
  const pairwise_graph& graph() const noexcept { return graph_; }
  /// The settings.
  const cgm_em_options& options() const noexcept { return options_; }

 private:
  // The E-step's gap-tolerance factor (file comment): relaxed far from convergence, else the stall factor.
  double estep_scale() const {
    const double relaxed = options_.estep_relax * smallest_change_ / options_.tol;
    return relaxed >= 1.0 ? std::min(1000.0, relaxed) : tighten_;
  }

  // A stall (file comment): 50 iterations at or below the plain tolerance without a new smallest change while that
  // change is within 100 tol tighten the E-steps tenfold, down to estep_tighten.
  void watch_for_stall(double change, double scale) {
    if (change < smallest_change_) {
      smallest_change_ = change;
      stalled_ = 0;
      return;
    }
    if (scale > 1.0 || smallest_change_ >= 100.0 * options_.tol || ++stalled_ < 50) return;
    if (tighten_ > options_.estep_tighten * (1.0 + 1e-9)) {
      tighten_ = std::max(options_.estep_tighten, 0.1 * tighten_);
      ++tightenings_;
    }
    stalled_ = 0;
  }

  // The MAP objective at theta_ and the last E-step's n: theta^T n + H(n) + log p(y | n) + alpha^T theta - (N + alpha_0)
  // A(theta), the function MAP-EM's E- and M-steps each raise; with n = N mu(theta + g) the first two terms are
  // N A(theta + g) - g^T n. One inference call at theta.
  double map_objective() {
    if (!inference_.marginals(theta_, mu_).converged) ++events_.message_passing_nonconverged;
    const double a_theta = inference_.log_partition();
    const Eigen::Index d = layout_.released_size();
    const double e_value = n_records_ * estep_log_partition_ - g_.dot(n_.tail(d)) + noise_.log_likelihood(y_, n_.tail(d));
    return e_value + alpha_.dot(theta_) - (n_records_ + options_.pseudo_count) * a_theta;
  }

  // A quarter of SQUAREM's step bound, not regrown in the next cycle (extrapolate).
  void shorten_steps() {
    step_max_ = std::max(1.0, step_max_ / 4.0);
    grow_ = false;
  }

  // SqS3 of Varadhan and Roland (2008): r = theta_b - theta_a, v = theta_c - 2 theta_b + theta_a, alpha = -|r| / |v|
  // clamped to [-step_max, -1] (-1 gives theta_c, plain EM), theta' = theta_a - 2 alpha r + alpha^2 v; step_max
  // starts at 1 and grows fourfold each time the clamp binds (their defaults), except in the cycle after a rejection,
  // whose quartered bound would otherwise grow straight back (measured: every extrapolation rejected at a bound of 4096).
  // Whether theta_ moved off theta_c.
  bool extrapolate() {
    const Eigen::VectorXd r = theta_b_ - theta_a_;
    const Eigen::VectorXd v = theta_c_ - 2.0 * theta_b_ + theta_a_;
    const double rn = r.norm(), vn = v.norm();
    if (!(rn > 0.0 && vn > 0.0 && std::isfinite(rn) && std::isfinite(vn))) return false;
    double alpha = std::min(-1.0, -rn / vn);
    if (alpha <= -step_max_) {
      alpha = -step_max_;
      if (grow_) step_max_ *= 4.0;
    }
    if (alpha == -1.0) return false;
    theta_ = theta_a_ - 2.0 * alpha * r + alpha * alpha * v;
    if (theta_.allFinite()) return true;
    theta_ = theta_c_;
    return false;
  }

  void m_step() {
    if (!forest_ && Inference::is_exact) {
      // Box dual with pseudo-count 0: theta + g has the distribution of the exact MLE of n_t. Not so for NLBP, whose
      // n_t is an average of inference outputs and whose g is the evidence supergradient at it: moment matching.
      if (options_.pseudo_count == 0.0 && options_.method == estep_method::box_dual) {
        theta_.tail(layout_.released_size()) += g_;
        return;
      }
      pseudo_count_marginals(graph_, n_, n_records_, options_.pseudo_count, mu_);
      const moment_matching_result r = mstep_.solve(inference_, mu_, theta_);
      if (!r.converged) ++events_.inner_solver_nonconverged;
      events_.message_passing_nonconverged += r.inference_nonconverged;
      return;
    }
    // Forests: the exact MLE; graphs with cycles under an approximate back end: the Bethe-approximate MLE.
    pseudo_count_marginals(graph_, n_, n_records_, options_.pseudo_count, mu_);
    events_.log_floors += bethe_moment_parameters(graph_, mu_, theta_);
  }

  pairwise_graph graph_;
  table_layout layout_;
  Eigen::VectorXd y_;
  double n_records_;
  Noise noise_;
  Inference inference_;
  cgm_em_options options_;
  box_dual_estep estep_;
  nlbp_estep nlbp_;
  exact_moment_matching mstep_;
  bool forest_ = true, converged_ = false;
  int iterations_ = 0;
  double last_change_ = 0.0;  // |n_(t-1) - n_(t-2)|_1 / N (infinity after the first iteration)
  double smallest_change_ = std::numeric_limits<double>::infinity(), tighten_ = 1.0;  // the stall watch (file comment)
  int stalled_ = 0, tightenings_ = 0;
  Eigen::VectorXd theta_, n_, n_prev_, g_, mu_;
  // The last E-step's outputs (em_estep to em_finish and map_objective).
  double estep_gap_ = 0.0, estep_log_partition_ = 0.0, estep_scale_ = 1.0, a_theta_ = 0.0;
  int last_inner_ = 0;
  // SQUAREM (file comment): the cycle's phase, its points theta_a, theta_b = F(theta_a), theta_c = F(theta_b), the E-step
  // at theta_b and its objective, the step bound, the hyper-Dirichlet pseudo-counts alpha (full layout).
  int phase_ = 0, rejections_ = 0;
  bool extrapolated_ = false, grow_ = true;
  double merit_b_ = 0.0, gap_b_ = 0.0, change_b_ = 0.0, step_max_ = 1.0;
  Eigen::VectorXd theta_a_, theta_b_, theta_c_, n_b_, alpha_;
  numerical_events events_;
  std::vector<cgm_em_trace_row> trace_;
};

}  // namespace privpost
