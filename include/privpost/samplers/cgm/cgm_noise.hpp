// privpost/samplers/cgm/cgm_noise.hpp
// The evidence term log p(y | n) of released contingency tables for CGM-EM (spec cgm.md Sec. 3.3, 3.5):
// Laplace noise of scale b (the default release, b = 2|E| / epsilon) and Gaussian noise of standard deviation sigma.
// Each models the cgm_noise concept: value, supergradient, and the dual pieces of the box-dual E-step.
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <limits>

#include "privpost/core/errors.hpp"
#include "privpost/mechanisms/gaussian.hpp"
#include "privpost/mechanisms/laplace.hpp"

namespace privpost {

/// Laplace evidence: log p(y | n) = -d log(2b) - |y - n|_1 / b, the Laplace mechanism's own density. The dual box is |g_j| <=
/// 1/b, and the duality gap at residual r and dual point g is sum_j |r_j| / b - g_j r_j (>= 0 inside the box).
class laplace_cgm_noise {
 public:
  /// std::invalid_argument unless scale is finite and > 0.
  explicit laplace_cgm_noise(double scale) : scale_(scale) { check_positive_finite("laplace_cgm_noise", "scale b", scale); }
  /// The Laplace scale b.
  double scale() const noexcept { return scale_; }
  /// log p(y | n); std::invalid_argument when the sizes differ or a value is not finite.
  double log_likelihood(const Eigen::VectorXd& y, const Eigen::VectorXd& n) const {
    return detail::laplace_log_likelihood("laplace_cgm_noise::log_likelihood", y, n, scale_);
  }
  /// sign(y_j - n_j) / b, 0 at ties (a member of the subdifferential).
  void supergradient(const Eigen::VectorXd& y, const Eigen::VectorXd& n, Eigen::VectorXd& g) const {
    check_size_match("laplace_cgm_noise::supergradient", "y", y.size(), "n", n.size());
    g.resize(y.size());
    for (Eigen::Index j = 0; j < y.size(); ++j) {
      const double r = y(j) - n(j);
      g(j) = r > 0.0 ? 1.0 / scale_ : (r < 0.0 ? -1.0 / scale_ : 0.0);
    }
  }
  /// The dual box's half-width, 1 / b.
  double dual_box() const noexcept { return 1.0 / scale_; }
  /// The dual's quadratic coefficient: 0 (none).
  double dual_quadratic() const noexcept { return 0.0; }
  /// The duality gap at residual r and dual point g (class comment).
  template <class R, class G>
  double duality_gap(const R& r, const G& g) const {
    double gap = 0.0;
    for (Eigen::Index j = 0; j < r.size(); ++j) gap += std::abs(r(j)) / scale_ - g(j) * r(j);
    return gap;
  }

 private:
  double scale_;
};

/// Gaussian evidence: log p(y | n) = -d log(sigma sqrt(2 pi)) - |y - n|^2 / (2 sigma^2), the Gaussian mechanism's own
/// density. No box; the dual has the
/// quadratic term sigma^2 |g|^2 / 2 and the gap sum_j (r_j - sigma^2 g_j)^2 / (2 sigma^2).
class gaussian_cgm_noise {
 public:
  /// std::invalid_argument unless sigma is finite and > 0.
  explicit gaussian_cgm_noise(double sigma) : sigma_(sigma) { check_positive_finite("gaussian_cgm_noise", "sigma", sigma); }
  /// The Gaussian noise sd sigma.
  double sigma() const noexcept { return sigma_; }
  /// log p(y | n); std::invalid_argument when the sizes differ or a value is not finite.
  double log_likelihood(const Eigen::VectorXd& y, const Eigen::VectorXd& n) const {
    return detail::gaussian_log_likelihood("gaussian_cgm_noise::log_likelihood", y, n, sigma_);
  }
  /// The gradient (y - n) / sigma^2; std::invalid_argument when the sizes differ.
  void supergradient(const Eigen::VectorXd& y, const Eigen::VectorXd& n, Eigen::VectorXd& g) const {
    check_size_match("gaussian_cgm_noise::supergradient", "y", y.size(), "n", n.size());
    g = (y - n) / (sigma_ * sigma_);
  }
  /// No dual box: +infinity.
  double dual_box() const noexcept { return std::numeric_limits<double>::infinity(); }
  /// The dual's quadratic coefficient, sigma^2.
  double dual_quadratic() const noexcept { return sigma_ * sigma_; }
  /// The duality gap at residual r and dual point g (class comment).
  template <class R, class G>
  double duality_gap(const R& r, const G& g) const {
    const double s2 = sigma_ * sigma_;
    double gap = 0.0;
    for (Eigen::Index j = 0; j < r.size(); ++j) gap += (r(j) - s2 * g(j)) * (r(j) - s2 * g(j)) / (2.0 * s2);
    return gap;
  }

 private:
  double sigma_;
};

/// The evidence term of a release made by a Laplace mechanism (b = its scale).
inline laplace_cgm_noise make_cgm_noise(const laplace_mechanism& m) { return laplace_cgm_noise(m.scale()); }
/// The evidence term of a release made by a Gaussian mechanism (its sigma).
inline gaussian_cgm_noise make_cgm_noise(const gaussian_mechanism& m) { return gaussian_cgm_noise(m.sigma()); }

}  // namespace privpost
