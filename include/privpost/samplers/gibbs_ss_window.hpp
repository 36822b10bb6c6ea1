// privpost/samplers/gibbs_ss_window.hpp
// window_sum and gibbs_ss_window: exact Gibbs sampling of the posterior given a release of an integer sum whose law is closed
// form and whose support need not be finite (docs/exact-sums.md, "Enumeration": for the Poisson over the
// window where log pi is within 50 of its maximum, found from the mode outward): theta | s by conjugacy, and s | theta, z by
// inverse CDF over the window of sums around the mode of
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
// integer_sum_family whose support is too large to enumerate whole (gibbs_ss_exact). window_sum is the block of
// gibbs_frame (any integer_sum_model whose sum law is log-concave, a user's included); gibbs_ss_window is the frame
// with it for a static family and its conjugate prior.
//
//     gibbs_ss_window chain(poisson_gamma_prior(2.0, 0.4), laplace_mechanism(1.0, epsilon), z, 10.0, g);
//     infer([&](auto& g) { return gibbs_ss_window(prior, mechanism, z, n, g); }, options);
//     gibbs_frame chain(my_model, my_prior, window_sum(mechanism, z), n, g);   // a user's integer_sum_model
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
#include "privpost/samplers/gibbs_frame.hpp"

namespace privpost {

/// The sum block of windowed exact Gibbs sampling for an integer_sum_model whose sum law is log-concave in s, with a
/// release mechanism whose log-density is concave in s: s | theta, z by inverse CDF over the window of sums where
/// log pi >= max - window_depth. Draws allocate only when a window is wider than every earlier one.
template <release_mechanism Mechanism>
class window_sum : public detail::enumerating_sum_block<window_sum<Mechanism>> {
 public:
  /// The widest window enumerated: beyond it a sweep costs more than the approximate samplers' thousands of sweeps.
  static constexpr double window_cap = 1e6;
  /// The window keeps every sum whose log pi is within this of the maximum.
  static constexpr double window_depth = 50.0;

  /// The mechanism and its release z (one entry; checked in start()).
  window_sum(const Mechanism& mechanism, const Eigen::VectorXd& z) : mechanism_(mechanism), release_(z) {}

  /// Checks the release (one finite entry, reachable) and n (a whole number in [1, 1e12]) and sets s at the support
  /// point nearest z. std::invalid_argument naming the value otherwise.
  template <integer_sum_model Model, class Prior, random_engine G>
  void start(const Model& model, const Prior&, typename Model::parameter_type&, double n, typename Model::vector_type& s,
             numerical_events&, G&) {
    constexpr const char* f = "gibbs_ss_window";
    detail::check_release(f, release_, 1, n);
    detail::check_whole_record_count(f, n, 1e12, "a whole number in [1, 1e12]");
    z_(0) = release_(0);
    if constexpr (finite_sum_model<Model>)
      upper_ = model.sum_upper(n);
    else
      upper_ = std::numeric_limits<double>::infinity();
    check_reachable(f, "z", z_(0), 0.0, upper_, n, noise_scale(mechanism_));
    s(0) = std::clamp(std::round(z_(0)), 0.0, upper_);
  }

  /// The normalised conditional law pi(s | theta, z) over the window s = window_first(), ..., window_first() + size - 1.
  /// std::domain_error when theta gives no sum positive probability or the window would exceed window_cap points.
  template <integer_sum_model Model>
  const std::vector<double>& sum_weights(const Model& model, const typename Model::parameter_type& theta, double n) {
    constexpr const char* f = "gibbs_ss_window";
    // The mode: the first s in [0, hi] with log pi(s + 1) <= log pi(s), by bisection (log pi is concave). hi is past
    // both factors' modes (the sum law's mean and the release), so the mode is at most hi.
    model.moments(theta, n, mean_, cov_);
    const double mean_sum = mean_(0);
    if (!std::isfinite(mean_sum)) throw_domain(f, "the sum's mean n E[t(x)]", mean_sum, "a finite number");
    double lo = 0.0, hi = std::min(upper_, std::ceil(std::max({mean_sum, z_(0), 0.0})) + 1.0);
    // Beyond 2^52 doubles no longer hold every whole number (and near 1.8e308 log s! overflows): no window there.
    if (!(hi <= 0x1p52))
      throw_domain(f, "the largest sum searched, max(n E[t(x)], z) + 1", hi,
                   "at most 2^52 = 4.5e15 (use gibbs_ss_corrected or gibbs_ss)");
    while (lo < hi) {
      const double mid = std::floor(0.5 * (lo + hi));
      if (log_pi(model, mid + 1.0, n, theta) <= log_pi(model, mid, n, theta))
        hi = mid;
      else
        lo = mid + 1.0;
    }
    const double mode = lo, top = log_pi(model, mode, n, theta);
    if (!std::isfinite(top))
      throw std::domain_error(std::string(f) + ": no sum has positive probability given the release (log-weight " +
                              std::to_string(top) + " at the mode " + std::to_string(mode) + ")");
    // Outward from the mode; the left side is collected in reverse.
    left_.clear();
    weights_.clear();
    for (double s = mode - 1.0; s >= 0.0; s -= 1.0) {
      const double l = log_pi(model, s, n, theta);
      if (!(l > top - window_depth)) break;
      left_.push_back(l);
      check_width(static_cast<double>(left_.size()));
    }
    weights_.assign(left_.rbegin(), left_.rend());
    weights_.push_back(top);
    for (double s = mode + 1.0; s <= upper_; s += 1.0) {
      const double l = log_pi(model, s, n, theta);
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

 private:
  // log P(S = s | theta) + log p(z | s) up to a constant: the release's term is log p(z | s) - log p(z | 0) through
  // privpost::log_density_change (no normalising constant, no argument checks per point: the window's hot path). NaN
  // (an impossible sum) as -infinity.
  template <class Model>
  double log_pi(const Model& model, double s, double n, const typename Model::parameter_type& theta) const {
    if (s > upper_) return -std::numeric_limits<double>::infinity();
    Eigen::Matrix<double, 1, 1> sv;
    sv(0) = s;
    const double l = model.log_sum_probability(s, n, theta) + log_density_change(mechanism_, z_, zero_, sv);
    return std::isnan(l) ? -std::numeric_limits<double>::infinity() : l;
  }

  void check_width(double points) const {
    if (points >= window_cap)
      throw_domain("gibbs_ss_window", "window size", points, "at most 1e6 sums (use gibbs_ss_corrected or gibbs_ss)");
  }

  Mechanism mechanism_;
  Eigen::VectorXd release_;
  Eigen::Matrix<double, 1, 1> z_ = Eigen::Matrix<double, 1, 1>::Zero();
  Eigen::Matrix<double, 1, 1> zero_ = Eigen::Matrix<double, 1, 1>::Zero();  // the reference sum of log_pi
  Eigen::Matrix<double, 1, 1> mean_ = Eigen::Matrix<double, 1, 1>::Zero(), cov_ = Eigen::Matrix<double, 1, 1>::Zero();
  double upper_ = 0.0, first_ = 0.0;
  std::vector<double> left_, weights_;
};

/// Exact Gibbs sampler over (theta, s) for an integer_sum_family with its conjugate prior and a release mechanism whose
/// log-density is concave in s: gibbs_frame with window_sum. State: theta and the integer sum s. Sweeps allocate only
/// when a window is wider than every earlier one.
template <conjugate_prior Prior, release_mechanism Mechanism>
requires integer_sum_family<typename Prior::family>
class gibbs_ss_window : public integer_sum_gibbs<Prior, window_sum<Mechanism>> {
  using base = integer_sum_gibbs<Prior, window_sum<Mechanism>>;

 public:
  /// The widest window enumerated.
  static constexpr double window_cap = window_sum<Mechanism>::window_cap;
  /// The window keeps every sum whose log pi is within this of the maximum.
  static constexpr double window_depth = window_sum<Mechanism>::window_depth;

  /// z: the release (one entry, finite), n: the public number of records (a whole number in [1, 1e12]). theta starts
  /// from the prior, s at the support point nearest z. std::invalid_argument for a wrong size, a non-finite z or a bad n.
  template <random_engine G>
  gibbs_ss_window(const Prior& prior, const Mechanism& mechanism, const Eigen::VectorXd& z, double n, G& g)
      : base(
            prior, [&] { return window_sum<Mechanism>(mechanism, z); }, n, g) {}

  /// The first sum of the last window (sum_weights()[k] is the probability of window_first() + k).
  double window_first() const noexcept { return this->block().window_first(); }
  /// The number of sums in the last window (0 before the first).
  std::size_t window_size() const noexcept { return this->block().window_size(); }
};

template <conjugate_prior Prior, release_mechanism Mechanism, class Z, random_engine G>
gibbs_ss_window(const Prior&, const Mechanism&, const Z&, double, G&) -> gibbs_ss_window<Prior, Mechanism>;

}  // namespace privpost
