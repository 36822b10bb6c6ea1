// privpost/mechanisms/laplace.hpp
// laplace_mechanism: z = s + Lap(0, b) per coordinate with b = L1 sensitivity / epsilon (dissertation Ch. 2),
// and its Gaussian scale-mixture view: w ~ Exp(1/(2 b^2)), 1/w | z - s ~ InverseGaussian(1/(b |z - s|), 1/b^2) (App. B.2).
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <limits>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/random/exponential.hpp"
#include "privpost/mechanisms/csprng_release.hpp"
#include "privpost/mechanisms/noise_views.hpp"

namespace privpost {

/// The Laplace mechanism: epsilon-DP for statistics whose L1 sensitivity is at most `l1_sensitivity`.
class laplace_mechanism : public detail::csprng_release<laplace_mechanism> {
 public:
  /// release(s): z = s + noise drawn from the operating system's CSPRNG (the default for real releases).
  using detail::csprng_release<laplace_mechanism>::release;
  /// The scale-mixture variances are latent and redrawn every sweep.
  static constexpr bool fixed_variance = false;
  /// The noise is exactly the Gaussian scale mixture (Lap(b) = N(0, w), w ~ Exp(rate 1 / (2 b^2))).
  static constexpr bool exact_scale_mixture = true;

  /// Throws std::invalid_argument unless l1_sensitivity is finite and > 0 and epsilon is finite and >= 2^-50.
  laplace_mechanism(double l1_sensitivity, double epsilon) : sensitivity_(l1_sensitivity), epsilon_(epsilon) {
    check_sensitivity("laplace_mechanism", "l1_sensitivity", l1_sensitivity);
    check_epsilon("laplace_mechanism", epsilon);
    scale_ = sensitivity_ / epsilon_;
    if (!std::isfinite(scale_)) throw_invalid("laplace_mechanism", "l1_sensitivity / epsilon", scale_, "a finite noise scale");
    // The scale-mixture variances are of order b^2: b^2 must be a normal double (a denormal sensitivity underflows it).
    if (!(scale_ * scale_ >= std::numeric_limits<double>::min() && std::isfinite(2.0 * scale_ * scale_)))
      throw_invalid("laplace_mechanism", "l1_sensitivity / epsilon", scale_,
                    "a noise scale whose square is a positive normal double");
  }

  /// The Laplace noise of someone else's release, known by its published scale b alone (the analyst knows the noise,
  /// not the owner's sensitivity and budget): for inference only. release() throws std::logic_error; the sensitivity,
  /// epsilon and budget() report no known guarantee (+infinity). std::invalid_argument unless b is finite and its square a
  /// positive normal double.
  static laplace_mechanism published(double scale) {
    check_sensitivity("laplace_mechanism::published", "scale", scale);
    laplace_mechanism m(scale, 1.0);
    m.sensitivity_ = m.epsilon_ = std::numeric_limits<double>::infinity();
    m.published_ = true;
    return m;
  }
  /// Whether the mechanism was built from a published noise scale (inference only).
  bool is_published() const noexcept { return published_; }

  /// The declared L1 sensitivity (+infinity: unknown, for a published mechanism).
  double l1_sensitivity() const noexcept { return sensitivity_; }
  /// The privacy loss epsilon of one release (+infinity: no known guarantee, for a published mechanism).
  double epsilon() const noexcept { return epsilon_; }
  /// The noise scale b = sensitivity / epsilon.
  double scale() const noexcept { return scale_; }
  /// The privacy cost of one release: (epsilon, 0).
  privacy_budget budget() const noexcept { return {epsilon_, 0.0}; }
  /// The variance of one coordinate's noise, 2 b^2 (the mean of the scale-mixture variance).
  double noise_variance() const noexcept { return 2.0 * scale_ * scale_; }

  /// z = s + independent Lap(0, b) noise; draws from the given engine (tests and simulation studies).
  template <class Derived, random_engine G>
  typename Derived::PlainObject release(const Eigen::MatrixBase<Derived>& s, G& g) const {
    if (published_) detail::refuse_published_release("laplace_mechanism");
    check_statistics("laplace_mechanism::release", "s", s);
    typename Derived::PlainObject z(s.size());
    for (Eigen::Index j = 0; j < s.size(); ++j) z(j) = draw_laplace(g, s(j), scale_);
    return z;
  }

  /// log p(z | s) = sum_j [-log(2 b) - |z_j - s_j| / b].
  template <class DerivedZ, class DerivedS>
  double log_likelihood(const Eigen::MatrixBase<DerivedZ>& z, const Eigen::MatrixBase<DerivedS>& s) const {
    return detail::laplace_log_likelihood("laplace_mechanism::log_likelihood", z, s, scale_);
  }

  /// log p(z | s_new) - log p(z | s) = sum_j (|z_j - s_j| - |z_j - s_new_j|) / b (no logarithm; the record-level
  /// samplers' per-record ratio, core/concepts.hpp density_change_mechanism).
  template <class DerivedZ, class DerivedS, class DerivedT>
  double log_density_change(const Eigen::MatrixBase<DerivedZ>& z, const Eigen::MatrixBase<DerivedS>& s,
                            const Eigen::MatrixBase<DerivedT>& s_new) const {
    detail::check_change_sizes("laplace_mechanism::log_density_change", z, s, s_new);
    // A coordinate that did not change contributes |a| - |a| = 0 exactly.
    return ((z - s).cwiseAbs() - (z - s_new).cwiseAbs()).sum() / scale_;
  }

  /// The coordinate view (noise_views.hpp): Laplace noise of scale b on the real line.
  coordinate_noise coordinate_kernel() const { return coordinate_noise::laplace(scale_); }

  /// A draw of one coordinate's latent variance from its prior Exp(rate 1/(2 b^2)) (laplace_scale_mixture).
  template <random_engine G>
  double draw_variance(G& g) const {
    return laplace_scale_mixture{scale_}.draw_variance(g);
  }

  /// A draw of one coordinate's latent variance given the residual z_j - s_j (laplace_scale_mixture).
  template <random_engine G>
  double redraw_variance(double residual, G& g) const {
    return laplace_scale_mixture{scale_}.redraw_variance("laplace_mechanism::redraw_variance", residual, g);
  }

 private:
  double sensitivity_;
  double epsilon_;
  double scale_ = 0.0;
  bool published_ = false;
};

}  // namespace privpost
