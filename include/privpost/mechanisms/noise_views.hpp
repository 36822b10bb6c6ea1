// privpost/mechanisms/noise_views.hpp
// The views of a mechanism's noise that samplers use in place of its whole density (docs/concepts.md, "Noise views"):
//   - the scale-mixture view, z_j | s_j, w_j ~ N(s_j, w_j) (members draw_variance and redraw_variance; the Gibbs-SS
//     noise block and the exact split over shards): laplace_scale_mixture is the Laplace noise's, declared by both
//     Laplace mechanisms;
//   - the coordinate view, coordinate_noise: the log density of one coordinate, -(a |r| + q r^2 / 2) up to a constant
//     (r = z_j - s_j on the line, z_j / gamma - round(s_j / gamma) on a lattice of granularity gamma), which the
//     histogram samplers evaluate on the few coordinates a record's move changes. A mechanism declares it by a member
//     coordinate_kernel(); a mechanism the user does not own, by specialising noise_traits.
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <concepts>
#include <limits>
#include <numbers>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/random/exponential.hpp"
#include "privpost/core/random/inverse_gaussian.hpp"

namespace privpost {

namespace detail {

// The checks of every closed-form release density: z and s of one size, both finite (NaN in, NaN out otherwise, found
// by fuzzing). `who` names the caller in errors.
template <class DerivedZ, class DerivedS>
void check_release_pair(const char* who, const Eigen::MatrixBase<DerivedZ>& z, const Eigen::MatrixBase<DerivedS>& s) {
  check_size_match(who, "z", z.size(), "s", s.size());
  check_finite(who, "z", z);
  check_finite(who, "s", s);
}

// The sizes log_density_change(z, s, s_new) checks: z, s and s_new of one size.
template <class DerivedZ, class DerivedS, class DerivedT>
void check_change_sizes(const char* who, const Eigen::MatrixBase<DerivedZ>& z, const Eigen::MatrixBase<DerivedS>& s,
                        const Eigen::MatrixBase<DerivedT>& s_new) {
  check_size_match(who, "z", z.size(), "s", s.size());
  check_size_match(who, "z", z.size(), "s_new", s_new.size());
}

// log p(z | s) = sum_j [-log(2 b) - |z_j - s_j| / b]: the one Laplace density of the mechanism and of the evidence
// terms that model its releases (CGM's cgm_evidence). `who` names the caller in errors.
template <class DerivedZ, class DerivedS>
double laplace_log_likelihood(const char* who, const Eigen::MatrixBase<DerivedZ>& z, const Eigen::MatrixBase<DerivedS>& s,
                              double scale) {
  check_release_pair(who, z, s);
  return -static_cast<double>(z.size()) * std::log(2.0 * scale) - (z - s).template lpNorm<1>() / scale;
}

// log p(z | s) = sum_j [-log(sigma sqrt(2 pi)) - (z_j - s_j)^2 / (2 sigma^2)]: the one Gaussian density of the
// mechanism and of the evidence terms that model its releases (CGM's cgm_evidence). `who` names the caller.
template <class DerivedZ, class DerivedS>
double gaussian_log_likelihood(const char* who, const Eigen::MatrixBase<DerivedZ>& z, const Eigen::MatrixBase<DerivedS>& s,
                               double sigma) {
  check_release_pair(who, z, s);
  // residuals scaled before squaring: (z - s)^2 overflowed for sigma near 1e154 although (z - s)^2 / sigma^2 is small
  // (found by fuzzing)
  return -static_cast<double>(z.size()) * std::log(sigma * std::sqrt(2.0 * std::numbers::pi)) -
         0.5 * ((z - s) / sigma).squaredNorm();
}

}  // namespace detail

/// Laplace noise of scale b as a Gaussian scale mixture, Lap(0, b) = N(0, w) with w ~ Exp(rate 1/(2 b^2)) (Park &
/// Casella 2008; dissertation App. B.2): the scale-mixture view that laplace_mechanism declares, and that
/// discrete_laplace_mechanism declares for its continuous view (its scale gamma t).
struct laplace_scale_mixture {
  /// The scale b.
  double scale;
  /// w from its prior Exp(rate 1/(2 b^2)).
  template <random_engine G>
  double draw_variance(G& g) const {
    return 2.0 * scale * scale * draw_exponential(g);
  }
  /// w given the residual z_j - s_j: 1/w ~ InverseGaussian(1 / (b |residual|), 1 / b^2). A residual whose product with
  /// the scale overflows has no representable variance: std::domain_error naming the caller `who` and the residual.
  template <random_engine G>
  double redraw_variance(const char* who, double residual, G& g) const {
    const double r = std::abs(residual);
    const double mu = (r > 0.0) ? 1.0 / (scale * r) : std::numeric_limits<double>::infinity();
    if (!(mu > 0.0))
      throw_domain(who, "residual", residual,
                   "|residual| * scale below the largest double (the release is too far from every statistic the model allows)");
    return 1.0 / draw_inverse_gaussian(g, mu, 1.0 / (scale * scale));
  }
};

/// Base of a mechanism M with Gaussian noise: its scale-mixture view is the one variance M::noise_variance(), never
/// redrawn (gibbs_ss keeps it fixed).
template <class M>
struct fixed_variance_mixture {
  /// The noise variance is known: samplers never redraw it.
  static constexpr bool fixed_variance = true;
  /// The (fixed) noise variance; the engine is not used.
  template <random_engine G>
  double draw_variance(G&) const noexcept {
    return static_cast<const M&>(*this).noise_variance();
  }
  /// The (fixed) noise variance, whatever the residual.
  template <random_engine G>
  double redraw_variance(double, G&) const noexcept {
    return static_cast<const M&>(*this).noise_variance();
  }
};

/// The log density of one coordinate of a release with independent noise per coordinate, up to a constant that does
/// not depend on the statistic: -(a |r| + q r^2 / 2) with r = z - s on the real line, or r = z / gamma - round(s /
/// gamma) in lattice units on the lattice of granularity gamma. Laplace noise of scale b has a = 1 / b, q = 0; Gaussian
/// noise of variance v has a = 0, q = 1 / v; the discrete Laplace and discrete Gaussian mechanisms are the same on
/// their lattice. On the line each of the two is exactly a Gaussian scale mixture (exact_split()), which is what lets
/// a release be split over shards.
class coordinate_noise {
 public:
  /// Laplace-type noise exp(-|r| / b). std::invalid_argument unless b and 1 / b are finite and > 0 and the granularity
  /// is 0 (the real line) or finite and > 0 (b is then in lattice units).
  static coordinate_noise laplace(double b, double granularity = 0.0) { return {true, b, granularity}; }
  /// Gaussian-type noise exp(-r^2 / (2 v)) of variance v (in lattice units on a lattice); checks as laplace().
  static coordinate_noise gaussian(double variance, double granularity = 0.0) { return {false, variance, granularity}; }

  /// log p(z | s) of one coordinate, up to a constant that does not depend on s.
  double log_kernel(double z, double s) const noexcept {
    const double r = granularity_ > 0.0 ? z / granularity_ - std::floor(s / granularity_ + 0.5) : z - s;
    return absolute_ ? -std::abs(r) * inverse_ : -0.5 * r * r * inverse_;
  }
  /// Whether the noise lives on a lattice.
  bool lattice() const noexcept { return granularity_ > 0.0; }
  /// The lattice's granularity gamma (0 on the real line).
  double granularity() const noexcept { return granularity_; }
  /// a of the class comment (1 / b for Laplace-type noise, else 0): with squared_weight() the form from which
  /// histogram_gibbs's marginal-table path computes a row's kernel changes in closed form, without a branch.
  double absolute_weight() const noexcept { return absolute_ ? inverse_ : 0.0; }
  /// q of the class comment (1 / v for Gaussian-type noise, else 0).
  double squared_weight() const noexcept { return absolute_ ? 0.0 : inverse_; }
  /// The noise scale in the statistic's units (b or sqrt(v), times gamma on a lattice): the reachability rule's scale
  /// (mechanisms/reachable.hpp).
  double scale() const noexcept {
    const double s = absolute_ ? parameter_ : std::sqrt(parameter_);
    return granularity_ > 0.0 ? s * granularity_ : s;
  }
  /// Whether the noise is exactly a Gaussian scale mixture on the real line (not on a lattice), so that it splits into
  /// independent shares over shards (the sharded samplers).
  bool exact_split() const noexcept { return granularity_ == 0.0; }
  /// The scale-mixture view: w_j given the residual z_j - s_j (laplace_scale_mixture for Laplace-type noise; the fixed
  /// variance v for Gaussian-type noise). Meaningful on the real line (exact_split()).
  template <random_engine G>
  double redraw_variance(double residual, G& g) const {
    if (!absolute_) return parameter_;
    return laplace_scale_mixture{parameter_}.redraw_variance("coordinate_noise::redraw_variance", residual, g);
  }

 private:
  coordinate_noise(bool absolute, double parameter, double granularity)
      : absolute_(absolute), granularity_(granularity), parameter_(parameter), inverse_(1.0 / parameter) {
    constexpr const char* who = "coordinate_noise";
    const char* name = absolute ? "Laplace scale b" : "Gaussian variance v";
    check_positive_finite(who, name, parameter);
    if (!(inverse_ > 0.0 && std::isfinite(inverse_))) throw_invalid(who, name, parameter, "a number whose reciprocal is finite");
    if (!(granularity == 0.0 || (granularity > 0.0 && std::isfinite(granularity))))
      throw_invalid(who, "granularity", granularity, "0 (the real line) or a finite number > 0");
  }

  bool absolute_;
  double granularity_;
  double parameter_;  // b or v
  double inverse_;    // 1 / b or 1 / v
};

/// The customisation point of the coordinate view: coordinate(m) is mechanism m's coordinate_noise. By default the
/// mechanism's own member coordinate_kernel(); for a mechanism you do not own, specialise it:
///   template <> struct privpost::noise_traits<their::mechanism> {
///     static privpost::coordinate_noise coordinate(const their::mechanism& m) {
///       return privpost::coordinate_noise::laplace(1.0 / m.rate());
///     }
///   };
template <class M>
struct noise_traits {
  /// The mechanism's own coordinate_kernel().
  static coordinate_noise coordinate(const M& m) requires requires {
    { m.coordinate_kernel() } -> std::same_as<coordinate_noise>;
  }
  { return m.coordinate_kernel(); }
};

/// A mechanism (or noise kernel) with independent noise per coordinate whose coordinate view noise_traits gives: the
/// four built-in mechanisms, and any a user declares. What histogram_measurement and histogram_study accept.
template <class M>
concept coordinatewise_mechanism = requires(const M& m) {
  { noise_traits<M>::coordinate(m) } -> std::same_as<coordinate_noise>;
};

/// The coordinate view of mechanism m.
template <coordinatewise_mechanism M>
coordinate_noise coordinate_view(const M& m) {
  return noise_traits<M>::coordinate(m);
}

}  // namespace privpost
