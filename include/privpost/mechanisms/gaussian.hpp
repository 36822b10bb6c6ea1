// privpost/mechanisms/gaussian.hpp
// gaussian_mechanism: z = s + N(0, sigma^2) per coordinate, (epsilon, delta)-DP for L2 sensitivity D with sigma
// from the classic or the analytic calibration (Balle & Wang 2018). Its scale-mixture view has the fixed variance sigma^2.
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <limits>
#include <numbers>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/random/normal.hpp"
#include "privpost/mechanisms/analytic_gaussian.hpp"
#include "privpost/mechanisms/csprng_release.hpp"
#include "privpost/mechanisms/noise_views.hpp"

namespace privpost {

/// How the Gaussian mechanism's sigma was chosen.
enum class gaussian_calibration {
  classic,
  analytic,
  /// Known by its published sd alone: for inference only (gaussian_mechanism::published).
  published
};

/// The Gaussian mechanism. Built through classic() or analytic(), so its sigma carries its budget, or through
/// published(sigma) for inference on someone else's release (no budget; release() refuses).
class gaussian_mechanism : public detail::csprng_release<gaussian_mechanism>, public fixed_variance_mixture<gaussian_mechanism> {
 public:
  /// release(s): z = s + noise from the operating system's CSPRNG (the default for real releases).
  using detail::csprng_release<gaussian_mechanism>::release;
  /// The noise is exactly Gaussian (a mixture with one variance).
  static constexpr bool exact_scale_mixture = true;

  /// sigma = D sqrt(2 ln(1.25/delta)) / epsilon; throws std::domain_error for epsilon >= 1.
  static gaussian_mechanism classic(double l2_sensitivity, double epsilon, double delta) {
    return {
        classic_gaussian_sigma(epsilon, delta, l2_sensitivity), l2_sensitivity, {epsilon, delta}, gaussian_calibration::classic};
  }

  /// The smallest sigma that is (epsilon, delta)-DP (analytic calibration, any epsilon).
  static gaussian_mechanism analytic(double l2_sensitivity, double epsilon, double delta) {
    return {analytic_gaussian_sigma(epsilon, delta, l2_sensitivity),
            l2_sensitivity,
            {epsilon, delta},
            gaussian_calibration::analytic};
  }

  /// The Gaussian noise of someone else's release, known by its published sd alone (the analyst knows the noise, not
  /// the owner's sensitivity and budget): for inference only. release() throws std::logic_error; the sensitivity,
  /// budget() and zcdp_rho() report no known guarantee (+infinity). std::invalid_argument unless sigma is finite, > 0
  /// and its square a positive normal double.
  static gaussian_mechanism published(double sigma) {
    check_sensitivity("gaussian_mechanism::published", "sigma", sigma);
    constexpr double inf = std::numeric_limits<double>::infinity();
    return {sigma, inf, {inf, 0.0}, gaussian_calibration::published};
  }

  /// The noise sd sigma of each coordinate.
  double sigma() const noexcept { return sigma_; }
  /// The variance of one coordinate's noise, sigma^2.
  double noise_variance() const noexcept { return sigma_ * sigma_; }
  /// The declared L2 sensitivity (+infinity: unknown, for a published mechanism).
  double l2_sensitivity() const noexcept { return sensitivity_; }
  /// How sigma was calibrated (classic, analytic, or published: inference only).
  gaussian_calibration calibration() const noexcept { return calibration_; }
  /// The privacy cost of one release.
  privacy_budget budget() const noexcept { return budget_; }
  /// rho = D^2 / (2 sigma^2): the mechanism is rho-zCDP whatever calibration chose sigma (Bun & Steinke 2016,
  /// Prop. 1.6); privacy_accountant composes Gaussian releases through it.
  double zcdp_rho() const noexcept { return sensitivity_ * sensitivity_ / (2.0 * sigma_ * sigma_); }

  /// z = s + N(0, sigma^2 I), from the given engine (tests and simulation studies).
  template <class Derived, random_engine G>
  typename Derived::PlainObject release(const Eigen::MatrixBase<Derived>& s, G& g) const {
    if (calibration_ == gaussian_calibration::published) detail::refuse_published_release("gaussian_mechanism");
    check_statistics("gaussian_mechanism::release", "s", s);
    typename Derived::PlainObject z(s.size());
    for (Eigen::Index j = 0; j < s.size(); ++j) z(j) = s(j) + sigma_ * draw_normal(g);
    return z;
  }

  /// log p(z | s) = sum_j [-log(sigma sqrt(2 pi)) - (z_j - s_j)^2 / (2 sigma^2)].
  template <class DerivedZ, class DerivedS>
  double log_likelihood(const Eigen::MatrixBase<DerivedZ>& z, const Eigen::MatrixBase<DerivedS>& s) const {
    return detail::gaussian_log_likelihood("gaussian_mechanism::log_likelihood", z, s, sigma_);
  }

  /// log p(z | s_new) - log p(z | s) = sum_j ((z_j - s_j)^2 - (z_j - s_new_j)^2) / (2 sigma^2) (core/concepts.hpp
  /// density_change_mechanism).
  template <class DerivedZ, class DerivedS, class DerivedT>
  double log_density_change(const Eigen::MatrixBase<DerivedZ>& z, const Eigen::MatrixBase<DerivedS>& s,
                            const Eigen::MatrixBase<DerivedT>& s_new) const {
    detail::check_change_sizes("gaussian_mechanism::log_density_change", z, s, s_new);
    // (a - b)(a + b) rather than a^2 - b^2: no cancellation, and exactly 0 for a coordinate that did not change.
    return 0.5 * ((z - s) - (z - s_new)).cwiseProduct((z - s) + (z - s_new)).sum() / (sigma_ * sigma_);
  }

  /// The coordinate view (noise_views.hpp): Gaussian noise of variance sigma^2 on the real line.
  coordinate_noise coordinate_kernel() const { return coordinate_noise::gaussian(sigma_ * sigma_); }

 private:
  gaussian_mechanism(double sigma, double l2_sensitivity, privacy_budget budget, gaussian_calibration calibration)
      : sigma_(sigma), sensitivity_(l2_sensitivity), budget_(budget), calibration_(calibration) {
    // sigma^2 must be a normal double: a denormal sensitivity gave sigma^2 = 0 and a NaN log-likelihood (fuzzing).
    if (!(sigma * sigma >= std::numeric_limits<double>::min() && std::isfinite(sigma * sigma)))
      throw_invalid("gaussian_mechanism", "sigma", sigma, "a noise sd whose square is a positive normal double");
  }

  double sigma_;
  double sensitivity_;
  privacy_budget budget_;
  gaussian_calibration calibration_;
};

}  // namespace privpost
