// privpost/samplers/gibbs_ss_corrected.hpp
// corrected_sum and gibbs_ss_corrected: Gibbs-SS made exact by a Metropolis-Hastings correction of its sum draw
// (docs/exact-sums.md, "The corrected draw"), at O(1) per sweep for any n. The state is Gibbs-SS's: theta, the sum and the latent
// noise variance w of the mechanism's scale-mixture view. The target is pi(theta, s, w | z) proportional to p(theta) P(s | theta)
// N(z; s, w) p(w), with P(s | theta) the family's exact law of the sum (integer_sum_family: binomial, Poisson), so theta's
// marginal is the exact posterior: no CLT and no continuous relaxation of the integer sum. The sum is kept as a point y of
// [-1/2, upper + 1/2] with s = round(y): y's target is pi(round(y) | theta, w), flat on each cell [s - 1/2, s + 1/2], so
// that its cell masses are exactly pi(s | theta, w). upper is sum_upper(n) for a finite support (finite_sum_family) and
// unbounded_cut = 1e12 - 1 otherwise (see there). A sweep:
//   1. theta | s by conjugacy (exact: s is a genuine sum);
//   2. y | theta, w by one Metropolis-Hastings step. With probability 1 - rho, an independence proposal from Gibbs-SS's
//      own draw, y' ~ N(m, v) truncated to [-1/2, upper + 1/2] with (m, v) = NormProduct(n mu(theta), n sigma^2(theta),
//      z, w), accepted with probability min(1, pi(round y') N(y; m, v) / (pi(round y) N(y'; m, v))) (the truncation
//      constant cancels). With probability rho = 0.05, a defensive independence proposal: for a finite support uniform
//      on the interval, accepted with probability min(1, pi(round y') / pi(round y)); for an unbounded one (Poisson)
//      the spec's N(m, 9 v), truncated like the first and accepted by the same ratio with sd 3 sqrt(v). Each kernel
//      leaves the target invariant, so their random mixture does, and the defensive one makes the chain irreducible
//      whatever the normal's centre and width (the wide normal's heavier tails cover a too-narrow v);
//   3. w | z - s from the mechanism (a fixed-variance mechanism, the Gaussian, keeps w).
// Where the CLT is good (large n) the proposal is nearly the exact conditional and most proposals are accepted; at
// n = 10 the correction is what makes the chain exact. Compared with gibbs_ss_exact (enumeration, O(n) per sweep,
// n + 1 <= 1e5 support points) it works at any n, and it needs a scale-mixture mechanism (Laplace, Gaussian).
// Departure from the spec's C.5 (b), which rounds the proposal (s' = round(Y)) and evaluates its probability mass q(s)
// by normal-interval logarithms mixed with the defensive term: keeping y makes the ratio a difference of quadratics
// (no erfc, no log-sum-exp) and is exact all the same.
// corrected_sum is steps 2 and 3 as the sum block of gibbs_frame (any integer_sum_model, a user's included);
// gibbs_ss_corrected is the frame with it for a static family and its conjugate prior.
//
//     gibbs_ss_corrected chain(beta_prior(1.0, 1.0), laplace_mechanism(1.0, epsilon), z, 1e7, g);
//     infer([&](auto& g) { return gibbs_ss_corrected(prior, mechanism, z, n, g); }, options);
//     gibbs_frame chain(my_model, my_prior, corrected_sum<my_model_type, laplace_mechanism>(mechanism, z), n, g);
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/numerical_events.hpp"
#include "privpost/core/random/truncated_normal.hpp"
#include "privpost/core/random/uniform.hpp"
#include "privpost/families/family_model.hpp"
#include "privpost/mechanisms/reachable.hpp"
#include "privpost/samplers/detail/sweep.hpp"
#include "privpost/samplers/gibbs_frame.hpp"

namespace privpost {

/// The Metropolis-Hastings-corrected sum block for an integer_sum_model and a scale-mixture mechanism: the sum's point
/// y (s = round(y)) by one corrected move per sweep, then the noise variance w. Draws allocate nothing.
template <integer_sum_model Model, scale_mixture_noise Mechanism>
class corrected_sum {
 public:
  /// The model's parameter type.
  using parameter_type = typename Model::parameter_type;
  /// The probability of the defensive proposal (uniform on a finite support, N(m, 9 v) on an unbounded one).
  static constexpr double defensive_weight = 0.05;
  /// The defensive normal's sd, in units of the normal proposal's (unbounded supports).
  static constexpr double defensive_scale = 3.0;
  /// The largest support (sum_upper(n) + 1 points). y must resolve positions inside a cell: doubles near 1e12 are
  /// spaced 1.2e-4 apart (near 4.5e15, 0.5: the cells would have no inside).
  static constexpr double max_support = 1e12;
  /// Where an unbounded support is cut: the target puts no mass on sums above it (1e12 - 1, so that y resolves every
  /// cell). A sum that large is beyond any release of n <= 1e12 records whose posterior puts real mass below 1 per
  /// record; proposals past the cut are rejected and counted in events().rejected_draws, so a cut that bites is never
  /// silent.
  static constexpr double unbounded_cut = max_support - 1.0;
  /// Whether the model's support is finite (finite_sum_model: sum_upper(n)).
  static constexpr bool finite_support = finite_sum_model<Model>;

  /// The normal component of the sum proposal at (theta, w): N(mean, sd^2), truncated to [-1/2, upper + 1/2].
  struct proposal {
    /// @{
    /// The proposal's mean and sd.
    double mean = 0.0, sd = 1.0;
    /// @}
  };

  /// The mechanism and its release z (one entry; checked in start()).
  corrected_sum(const Mechanism& mechanism, const Eigen::VectorXd& z) : mechanism_(mechanism), release_(z) {}

  /// Checks the release and n (a whole number >= 1; for a finite support at most 1e12 support points, for an
  /// unbounded one n <= 1e12), sets y at the support point nearest z and draws w from the mechanism's prior.
  template <class Prior, random_engine G>
  void start(const Model& model, const Prior&, parameter_type& theta, double n, typename Model::vector_type& s, numerical_events&,
             G& g) {
    constexpr const char* f = "gibbs_ss_corrected";
    detail::check_release(f, release_, 1, n);
    if constexpr (finite_support) {
      detail::check_whole_record_count(f, n, std::numeric_limits<double>::infinity(), "a whole number >= 1");
      upper_ = detail::checked_support_upper(f, model.sum_upper(n), max_support, "a whole number in [1, 1e12]");
    } else {
      detail::check_whole_record_count(f, n, 1e12, "a whole number in [1, 1e12]");
      upper_ = unbounded_cut;
    }
    // The rule's range is the model's ([0, infinity) when unbounded), not the sampler's cut.
    check_reachable(f, "z", release_(0), 0.0, finite_support ? upper_ : std::numeric_limits<double>::infinity(), n,
                    noise_scale(mechanism_));
    z_ = release_(0);
    n_ = n;
    y_ = std::clamp(std::round(z_), 0.0, upper_);
    w_ = mechanism_.draw_variance(g);
    // The sum law's base measure h(k) = log P(S = k | theta_ref) - eta_ref k at an interior reference parameter (the
    // first draw, almost surely interior), so that log P(S = k | theta) = h(k) + eta(theta) k - n A(theta): a ratio then
    // costs one h and eta, and h of the current cell is kept. Direct log-probabilities where eta or h is infinite, or
    // where the model has no natural parameter.
    theta_ref_ = theta;
    eta_ref_ = eta_of(model, theta_ref_);
    base_ = base(model, cell(y_));
    s(0) = statistic();
  }

  /// y | theta, w by update_sum; s = round(y).
  template <random_engine G>
  void draw_sum(const Model& model, const parameter_type& theta, double, typename Model::vector_type& s, numerical_events& events,
                G& g) {
    update_sum(model, theta, events, g);
    s(0) = statistic();
  }

  /// w | z - s from the mechanism's scale-mixture view (nothing for a fixed-variance mechanism).
  template <random_engine G>
  void draw_variances(const typename Model::vector_type& s, G& g) {
    if constexpr (!Mechanism::fixed_variance) w_ = mechanism_.redraw_variance(z_ - s(0), g);
  }

  /// The normal component of the sum proposal at (theta, w): Gibbs-SS's NormProduct of the CLT law N(n mu, n sigma^2)
  /// and the release N(z, w), its sd floored at 1e-6 (theta on the boundary makes n sigma^2 zero).
  proposal proposal_at(const Model& model, const parameter_type& theta, double w) const {
    typename Model::vector_type mean;
    typename Model::matrix_type cov;
    model.moments(theta, n_, mean, cov);
    const double clt_mean = mean(0), clt_var = cov(0, 0);
    proposal q;
    if (clt_var > 0.0 && std::isfinite(clt_var)) {
      const double precision = 1.0 / clt_var + 1.0 / w;
      q.mean = (clt_mean / clt_var + z_ / w) / precision;
      q.sd = std::max(std::sqrt(1.0 / precision), 1e-6);
    } else {
      q.mean = clt_mean;
      q.sd = 1e-6;
    }
    if (!std::isfinite(q.mean)) q.mean = std::clamp(z_, 0.0, upper_);
    return q;
  }

  /// The defensive proposal's normal at (theta, w) for an unbounded support: proposal_at's mean, its sd times
  /// defensive_scale (the spec's N(m, 9 v)).
  proposal defensive_proposal_at(const Model& model, const parameter_type& theta, double w) const {
    proposal q = proposal_at(model, theta, w);
    q.sd *= defensive_scale;
    return q;
  }

  /// log alpha of moving y to y2 at (theta, w), before the min with 0, under the normal proposal (defensive = false) or
  /// the defensive one (true: uniform, or N(m, 9 v) for an unbounded support): the acceptance function of update_sum,
  /// computed as update_sum computes it. +infinity when y has target density zero and y2 a positive one; -infinity
  /// when y2 has density zero.
  double log_acceptance(const Model& model, const parameter_type& theta, double w, double y, double y2, bool defensive) const {
    const double eta = eta_of(model, theta);
    const proposal q = defensive ? defensive_proposal_at(model, theta, w) : proposal_at(model, theta, w);
    return log_ratio(model, theta, eta, w, y, base(model, cell(y)), y2, base(model, cell(y2)),
                     defensive && finite_support ? nullptr : &q);
  }

  /// One Metropolis-Hastings update of y at theta and the current w (the normal proposal with probability 0.95, the
  /// defensive one otherwise). Returns whether the proposal was accepted.
  template <random_engine G>
  bool update_sum(const Model& model, const parameter_type& theta, numerical_events& events, G& g) {
    const bool defensive = draw_uniform(g) < defensive_weight;
    const bool uniform = defensive && finite_support;
    double candidate = 0.0;
    proposal q;
    if (uniform) {
      candidate = std::min(-0.5 + (upper_ + 1.0) * draw_uniform(g), upper_ + 0.5);
    } else {
      q = defensive ? defensive_proposal_at(model, theta, w_) : proposal_at(model, theta, w_);
      if constexpr (finite_support) {
        candidate = draw_truncated_normal(g, q.mean, q.sd, -0.5, upper_ + 0.5);
      } else {
        // Truncated to [-1/2, infinity), the same for every state, so the truncation constant cancels in the ratio;
        // a draw past the cut has target density zero and is rejected (log_ratio), counted as a rejected draw.
        candidate = draw_truncated_normal(g, q.mean, q.sd, -0.5, std::numeric_limits<double>::infinity());
        if (candidate > upper_ + 0.5) {
          ++proposed_;
          ++events.rejected_draws;
          return false;
        }
      }
    }
    ++proposed_;
    const double k2 = cell(candidate);
    const double base2 = k2 == cell(y_) ? base_ : base(model, k2);
    const double eta = eta_of(model, theta);
    const double log_alpha = log_ratio(model, theta, eta, w_, y_, base_, candidate, base2, uniform ? nullptr : &q);
    if (log_alpha >= 0.0 || log_uniform_below(draw_uniform(g), log_alpha)) {
      y_ = candidate;
      base_ = base2;
      ++accepted_;
      return true;
    }
    return false;
  }

  /// The current sum s = round(y) (an integer in [0, sum_upper(n)], or in [0, unbounded_cut]).
  double statistic() const noexcept { return cell(y_); }
  /// The current point y of the sum's cell.
  double position() const noexcept { return y_; }
  /// The current noise variance w.
  double variance() const noexcept { return w_; }
  /// Sets y and w. std::invalid_argument for y outside [-1/2, upper + 1/2] (upper: sum_upper(n) or unbounded_cut) or a
  /// w that is not positive and finite.
  void set_state(const Model& model, double y, double w) {
    if (!(y >= -0.5 && y <= upper_ + 0.5))
      throw_invalid("gibbs_ss_corrected::set_state", "y", y,
                    "a number in [-1/2, upper + 1/2] (upper: sum_upper(n), or 1e12 - 1 for an unbounded support)");
    check_positive_finite("gibbs_ss_corrected::set_state", "w", w);
    y_ = y;
    w_ = w;
    base_ = base(model, cell(y_));
  }
  /// Accepted / proposed sum updates so far (1 before any).
  double sum_acceptance() const noexcept {
    return proposed_ == 0 ? 1.0 : static_cast<double>(accepted_) / static_cast<double>(proposed_);
  }

 private:
  // The support point of y's cell (the interval's ends belong to the end cells).
  double cell(double y) const noexcept { return std::clamp(std::round(y), 0.0, upper_); }

  // eta(theta), NaN for a model without a natural parameter (every ratio then takes the direct log-probabilities).
  static double eta_of(const Model& model, const parameter_type& theta) {
    if constexpr (natural_sum_model<Model>)
      return model.natural_parameter(theta)(0);
    else
      return std::numeric_limits<double>::quiet_NaN();
  }

  // h(k), NaN where it is not finite (then the ratio falls back to the direct log-probabilities).
  double base(const Model& model, double k) const {
    const double h = std::isfinite(eta_ref_) ? model.log_sum_probability(k, n_, theta_ref_) - eta_ref_ * k
                                             : std::numeric_limits<double>::quiet_NaN();
    return std::isfinite(h) ? h : std::numeric_limits<double>::quiet_NaN();
  }

  // log alpha of y -> y2 given h at both cells and the normal proposal q (nullptr: the uniform one); see log_acceptance.
  double log_ratio(const Model& model, const parameter_type& theta, double eta, double w, double y, double h, double y2,
                   double h2, const proposal* q) const {
    constexpr double ninf = -std::numeric_limits<double>::infinity();
    if (!(y2 >= -0.5 && y2 <= upper_ + 0.5)) return ninf;
    const double k = cell(y), k2 = cell(y2);
    double law = 0.0;  // log P(S = k2 | theta) - log P(S = k | theta)
    if (k2 != k) {
      if (std::isfinite(eta) && std::isfinite(h) && std::isfinite(h2)) {
        law = h2 - h + eta * (k2 - k);
      } else {
        double to = model.log_sum_probability(k2, n_, theta), from = model.log_sum_probability(k, n_, theta);
        if (std::isnan(to)) to = ninf;
        if (std::isnan(from)) from = ninf;
        if (to == ninf) return ninf;
        if (from == ninf) return std::numeric_limits<double>::infinity();
        law = to - from;
      }
    }
    const double r = z_ - k, r2 = z_ - k2;
    double value = law - 0.5 * (r2 * r2 - r * r) / w;
    if (q != nullptr) {
      const double a = (y - q->mean) / q->sd, b = (y2 - q->mean) / q->sd;
      value += 0.5 * (b * b - a * a);
    }
    return value;
  }

  Mechanism mechanism_;
  Eigen::VectorXd release_;
  double n_ = 1.0, upper_ = 0.0, z_ = 0.0;
  double y_ = 0.0, w_ = 1.0;
  parameter_type theta_ref_{};
  double eta_ref_ = 0.0, base_ = 0.0;
  std::uint64_t proposed_ = 0, accepted_ = 0;
};

/// Gibbs-SS with the Metropolis-Hastings-corrected sum draw, for an integer_sum_family (binomial, Poisson) with its
/// conjugate prior and a scale-mixture mechanism: gibbs_frame with corrected_sum. State: theta, the sum's point y
/// (s = round(y)), the noise variance w. Sweeps allocate nothing.
template <conjugate_prior Prior, scale_mixture_noise Mechanism>
requires integer_sum_family<typename Prior::family> && requires(const typename Prior::family::parameter_type& theta) {
  { Prior::family::natural_parameter(theta) } -> std::convertible_to<statistic_t<typename Prior::family>>;
}
class gibbs_ss_corrected : public gibbs_frame<family_model<typename Prior::family>, Prior,
                                              corrected_sum<family_model<typename Prior::family>, Mechanism>> {
  using sum_model = family_model<typename Prior::family>;
  using sum_type = corrected_sum<sum_model, Mechanism>;
  using frame = gibbs_frame<sum_model, Prior, sum_type>;

 public:
  /// The exponential family.
  using family = typename Prior::family;
  /// The family's parameter type.
  using parameter_type = typename Prior::family::parameter_type;
  /// The normal component of the sum proposal (corrected_sum::proposal).
  using proposal = typename sum_type::proposal;
  /// @{
  /// corrected_sum's constants.
  static constexpr double defensive_weight = sum_type::defensive_weight;
  static constexpr double defensive_scale = sum_type::defensive_scale;
  static constexpr double max_support = sum_type::max_support;
  static constexpr double unbounded_cut = sum_type::unbounded_cut;
  static constexpr bool finite_support = sum_type::finite_support;
  /// @}

  /// z: the release (one entry, finite), n: the public number of records (a whole number >= 1; for a finite support at
  /// most 1e12 support points, for an unbounded one n <= 1e12). theta starts from the prior, s at the support point
  /// nearest z, w from the mechanism's prior. std::invalid_argument for a wrong size, a non-finite z, or n outside that
  /// range.
  template <random_engine G>
  gibbs_ss_corrected(const Prior& prior, const Mechanism& mechanism, const Eigen::VectorXd& z, double n, G& g)
      : frame(
            sum_model{}, prior, [&] { return sum_type(mechanism, z); }, n, g) {}

  /// corrected_sum::proposal_at.
  proposal proposal_at(const parameter_type& theta, double w) const { return this->block().proposal_at(sum_model{}, theta, w); }
  /// corrected_sum::defensive_proposal_at.
  proposal defensive_proposal_at(const parameter_type& theta, double w) const {
    return this->block().defensive_proposal_at(sum_model{}, theta, w);
  }
  /// corrected_sum::log_acceptance (the kernel tests check it against the closed form).
  double log_acceptance(const parameter_type& theta, double w, double y, double y2, bool defensive) const {
    return this->block().log_acceptance(sum_model{}, theta, w, y, y2, defensive);
  }
  /// One Metropolis-Hastings update of y at the current theta and w. Returns whether the proposal was accepted.
  template <random_engine G>
  bool update_sum(G& g) {
    const bool accepted = this->mutable_block().update_sum(sum_model{}, this->parameter(), this->mutable_events(), g);
    this->mutable_statistic()(0) = this->block().statistic();
    return accepted;
  }
  /// w | z - s from the mechanism's scale-mixture view (nothing for a fixed-variance mechanism).
  template <random_engine G>
  void update_variance(G& g) {
    this->mutable_block().draw_variances(frame::statistic(), g);
  }

  /// The current sum s = round(y) (an integer in [0, sum_upper(n)], or in [0, unbounded_cut]).
  double statistic() const noexcept { return this->block().statistic(); }
  /// The current point y of the sum's cell.
  double position() const noexcept { return this->block().position(); }
  /// The current noise variance w.
  double variance() const noexcept { return this->block().variance(); }
  /// Sets theta, y and w (the kernel tests hold theta and w fixed). std::invalid_argument for y outside
  /// [-1/2, upper + 1/2] (upper: sum_upper(n) or unbounded_cut) or a w that is not positive and finite.
  void set_state(const parameter_type& theta, double y, double w) {
    this->mutable_block().set_state(sum_model{}, y, w);
    this->mutable_parameter() = theta;
    this->mutable_statistic()(0) = this->block().statistic();
  }
  /// Accepted / proposed sum updates so far (1 before any).
  double sum_acceptance() const noexcept { return this->block().sum_acceptance(); }
};

template <conjugate_prior Prior, scale_mixture_noise Mechanism, class Z, random_engine G>
gibbs_ss_corrected(const Prior&, const Mechanism&, const Z&, double, G&) -> gibbs_ss_corrected<Prior, Mechanism>;

}  // namespace privpost
