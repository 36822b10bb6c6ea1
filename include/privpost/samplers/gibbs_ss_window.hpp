// privpost/samplers/gibbs_ss_window.hpp
// gibbs_ss_window: exact Gibbs sampling of the posterior given a release of an integer sum whose law is closed form
// and whose support need not be finite (spec exact-small-n.md C.5 (a), "for Poisson over the window where
// log pi >= max - 50, found by scanning out from the mode"): theta | s by conjugacy, and s | theta, z by inverse CDF over
// the window of sums around the mode of
//     pi(s) proportional to P(S = s | theta) p(z | s),
// from the mode outward on both sides until log pi falls 50 below its maximum (or the support ends). For a release
// density that is log-concave in s (Laplace, Gaussian, and mechanism_variant of them) and a log-concave sum law
// (Poisson(n lambda), Binomial(n, theta)), pi is log-concave: the mode is found by bisection on the sign of
// pi(s + 1) / pi(s), the window is one interval, and the mass left outside it is below e^-50 times the window's
// geometric tail factor, far below rounding. No CLT, no continuous relaxation of the integer sum, no latent noise
// variances. O(window) log-probabilities per sweep (the window grows like sqrt(n theta) + 50 b for Laplace noise of
// scale b); a window wider than window_cap points is a std::domain_error naming it (gibbs_ss_corrected or gibbs_ss then
// serve). Untruncated Poisson releases have no finite sensitivity, so real Poisson releases are truncated (record_gibbs
// is exact for those); this sampler serves studies of a Poisson sum released with a declared noise scale, and any
// integer_sum_family whose support is too large to enumerate whole (gibbs_ss_exact).
//
//     gibbs_ss_window chain(poisson_gamma_prior(2.0, 0.4), laplace_mechanism(1.0, epsilon), z, 10.0, g);
//     infer([&](auto& g) { return gibbs_ss_window(prior, mechanism, z, n, g); }, options);
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/numerical_events.hpp"
#include "privpost/core/random/uniform.hpp"
#include "privpost/families/family_model.hpp"
#include "privpost/mechanisms/reachable.hpp"
#include "privpost/samplers/detail/sweep.hpp"

namespace privpost {

/// Exact Gibbs sampler over (theta, s) for an integer_sum_family with its conjugate prior and a release mechanism whose
/// log-density is concave in s. State: theta and the integer sum s. Sweeps allocate only when a window is wider than
/// every earlier one.
template <conjugate_prior Prior, release_mechanism Mechanism>
requires integer_sum_family<typename Prior::family>
class gibbs_ss_window {
 public:
  /// The exponential family.
  using family = typename Prior::family;
  /// The family's parameter type.
  using parameter_type = typename family::parameter_type;
  /// The widest window enumerated: beyond it a sweep costs more than the approximate samplers' thousands of sweeps.
  static constexpr double window_cap = 1e6;
  /// The window keeps every sum whose log pi is within this of the maximum.
  static constexpr double window_depth = 50.0;

  /// z: the release (one entry, finite), n: the public number of records (a whole number in [1, 1e12]). theta starts
  /// from the prior, s at the support point nearest z. std::invalid_argument for a wrong size, a non-finite z or a bad n.
  template <random_engine G>
  gibbs_ss_window(const Prior& prior, const Mechanism& mechanism, const Eigen::VectorXd& z, double n, G& g)
      : prior_(prior), mechanism_(mechanism), n_(n) {
    constexpr const char* f = "gibbs_ss_window";
    detail::check_release(f, z, 1, n);
    detail::check_whole_record_count(f, n, 1e12, "a whole number in [1, 1e12]");
    z_(0) = z(0);
    upper_ = upper_sum(n);
    check_reachable(f, "z", z(0), 0.0, upper_, n, noise_scale(mechanism));
    theta_ = prior_.draw(g);
    s_ = std::clamp(std::round(z(0)), 0.0, upper_);
  }

  /// One sweep: theta | s (conjugate, exact: s is a genuine sum), then s | theta, z (draw_sum).
  template <random_engine G>
  void step(G& g) {
    typename family::vector_type s;
    s(0) = s_;
    theta_ = prior_.update(s, n_).draw(g);
    s_ = draw_sum(theta_, g);
  }

  /// s | theta, z by inverse CDF over the window: the exact conditional of the sum (to e^-50). Also the kernel the tests
  /// check.
  template <random_engine G>
  double draw_sum(const parameter_type& theta, G& g) {
    sum_weights(theta);
    const double u = draw_uniform(g);
    std::size_t k = 0;
    double cumulative = weights_[0];
    while (cumulative < u && k + 1 < weights_.size()) cumulative += weights_[++k];
    return first_ + static_cast<double>(k);
  }

  /// The normalised conditional law pi(s | theta, z) over the window s = window_first(), ..., window_first() + size - 1.
  /// std::domain_error when theta gives no sum positive probability or the window would exceed window_cap points.
  const std::vector<double>& sum_weights(const parameter_type& theta) {
    constexpr const char* f = "gibbs_ss_window";
    // The mode: the first s in [0, hi] with log pi(s + 1) <= log pi(s), by bisection (log pi is concave). hi is past
    // both factors' modes (the sum law's mean and the release), so the mode is at most hi.
    const double mean_sum = n_ * family::mean_statistic(theta)(0);
    if (!std::isfinite(mean_sum)) throw_domain(f, "the sum's mean n E[t(x)]", mean_sum, "a finite number");
    double lo = 0.0, hi = std::min(upper_, std::ceil(std::max({mean_sum, z_(0), 0.0})) + 1.0);
    // Beyond 2^52 doubles no longer hold every whole number (and near 1.8e308 log s! overflows): no window there.
    if (!(hi <= 0x1p52))
      throw_domain(f, "the largest sum searched, max(n E[t(x)], z) + 1", hi,
                   "at most 2^52 = 4.5e15 (use gibbs_ss_corrected or gibbs_ss)");
    while (lo < hi) {
      const double mid = std::floor(0.5 * (lo + hi));
      if (log_pi(mid + 1.0, theta) <= log_pi(mid, theta))
        hi = mid;
      else
        lo = mid + 1.0;
    }
    const double mode = lo, top = log_pi(mode, theta);
    if (!std::isfinite(top))
      throw std::domain_error(std::string(f) + ": no sum has positive probability given the release (log-weight " +
                              std::to_string(top) + " at the mode " + std::to_string(mode) + ")");
    // Outward from the mode; the left side is collected in reverse.
    left_.clear();
    weights_.clear();
    for (double s = mode - 1.0; s >= 0.0; s -= 1.0) {
      const double l = log_pi(s, theta);
      if (!(l > top - window_depth)) break;
      left_.push_back(l);
      check_width(static_cast<double>(left_.size()));
    }
    weights_.assign(left_.rbegin(), left_.rend());
    weights_.push_back(top);
    for (double s = mode + 1.0; s <= upper_; s += 1.0) {
      const double l = log_pi(s, theta);
      if (!(l > top - window_depth)) break;
      weights_.push_back(l);
      check_width(static_cast<double>(weights_.size()));
    }
    first_ = mode - static_cast<double>(left_.size());
    double total = 0.0;
    for (double& w : weights_) total += (w = std::exp(w - top));
    for (double& w : weights_) w /= total;
    return weights_;
  }

  /// The first sum of the last window (sum_weights()[k] is the probability of window_first() + k).
  double window_first() const noexcept { return first_; }
  /// The number of sums in the last window (0 before the first).
  std::size_t window_size() const noexcept { return weights_.size(); }
  /// The current draw of theta.
  const parameter_type& parameter() const noexcept { return theta_; }
  /// The current draw as a vector.
  auto parameter_vector() const { return family_model<family>::parameter_vector(theta_); }
  /// The current sum (a whole number >= 0).
  double statistic() const noexcept { return s_; }
  /// Nothing is ever repaired or retried: all zero.
  const numerical_events& events() const noexcept { return events_; }

 private:
  static double upper_sum(double n) {
    if constexpr (finite_sum_family<family>)
      return family::sum_upper(n);
    else
      return std::numeric_limits<double>::infinity();
  }

  // log P(S = s | theta) + log p(z | s) up to a constant: the release's term is log p(z | s) - log p(z | 0) through
  // privpost::log_density_change (no normalising constant, no argument checks per point: the window's hot path). NaN
  // (an impossible sum) as -infinity.
  double log_pi(double s, const parameter_type& theta) const {
    if (s > upper_) return -std::numeric_limits<double>::infinity();
    Eigen::Matrix<double, 1, 1> sv;
    sv(0) = s;
    const double l = family::log_sum_probability(s, n_, theta) + log_density_change(mechanism_, z_, zero_, sv);
    return std::isnan(l) ? -std::numeric_limits<double>::infinity() : l;
  }

  void check_width(double points) const {
    if (points >= window_cap)
      throw_domain("gibbs_ss_window", "window size", points, "at most 1e6 sums (use gibbs_ss_corrected or gibbs_ss)");
  }

  Prior prior_;
  Mechanism mechanism_;
  double n_;
  Eigen::Matrix<double, 1, 1> z_;
  Eigen::Matrix<double, 1, 1> zero_ = Eigen::Matrix<double, 1, 1>::Zero();  // the reference sum of log_pi
  double upper_ = 0.0;
  parameter_type theta_{};
  double s_ = 0.0, first_ = 0.0;
  std::vector<double> left_, weights_;
  numerical_events events_;
};

template <conjugate_prior Prior, release_mechanism Mechanism, class Z, random_engine G>
gibbs_ss_window(const Prior&, const Mechanism&, const Z&, double, G&) -> gibbs_ss_window<Prior, Mechanism>;

}  // namespace privpost
