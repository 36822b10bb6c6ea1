// privpost/samplers/glm/pass_glm.hpp
// The PASS-GLM closed form (Huggins, Adams & Broderick 2017; docs/design-glm.md Sec. 1.1 and 4.2, "pass_naive"): the logistic
// log-likelihood with its mapping function replaced by the order-2 Chebyshev projection b0 + b1 s + b2 s^2 on
// [-R_s, R_s] is quadratic in theta, so with a N(0, I) prior the posterior given the released sums is Gaussian. Fed the
// noisy release as if it were exact, it is a second naive reference beside the moment model with sigma = 0.
#pragma once

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <Eigen/Eigenvalues>
#include <array>
#include <cmath>
#include <numbers>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/random/normal.hpp"

namespace privpost {

/// Coefficients (b0, b1, b2) of the order-2 Chebyshev projection of phi(s) = -log(1 + e^-s) on [-radius, radius]:
/// c_k = (2 / pi) int_0^pi phi(radius cos t) cos(k t) dt (c_0 halved), phi ~ c0 T0 + c1 T1 + c2 T2 in u = s / radius,
/// expanded to monomials in s. The integrals by Gauss-Chebyshev quadrature on 256 nodes (the integrand is analytic:
/// the error is far below double precision for radius <= 50). b1 is 1/2 exactly (phi(s) - s/2 is even).
inline std::array<double, 3> pass_glm_chebyshev(double radius) {
  check_bounded("pass_glm_chebyshev", "radius R_s", radius, 1e-6, 50.0);
  constexpr int nodes = 256;
  double c[3] = {0.0, 0.0, 0.0};
  for (int i = 0; i < nodes; ++i) {
    const double t = std::numbers::pi * (i + 0.5) / nodes;
    const double s = radius * std::cos(t);
    const double phi = s > 0.0 ? -std::log1p(std::exp(-s)) : s - std::log1p(std::exp(s));
    for (int k = 0; k < 3; ++k) c[k] += phi * std::cos(k * t);
  }
  for (double& ck : c) ck *= 2.0 / nodes;
  c[0] *= 0.5;
  // T0 = 1, T1 = u, T2 = 2 u^2 - 1 with u = s / radius.
  return {c[0] - c[2], c[1] / radius, 2.0 * c[2] / (radius * radius)};
}

/// The PASS-GLM Gaussian posterior of theta from a logistic release (glm_statistic::logistic(d, R) layout, no
/// intercept): prior N(0, I_d); precision Lambda = I - 2 b2 S_xx with S_xx rebuilt from the t2 block (off-diagonal
/// entries / sqrt(2)) and projected onto the positive semidefinite cone (a noisy release need not be PSD); mean
/// Lambda^-1 b1 s_yx. The release is taken as exact: noise is ignored, as in the paper's non-private PASS-GLM.
/// chebyshev_radius R_s: the interval of y theta^T x the approximation should cover (||theta|| R for plausible theta).
class pass_glm_posterior {
 public:
  /// The posterior from the release z of d covariates; std::invalid_argument unless d is in [1, 1000] and z is finite with d +
  /// d(d+1)/2 entries.
  /// (A template, its parameter never deduced, only so that a program that never builds one does not compile Eigen's
  /// eigensolver, the slowest part of Eigen to compile.)
  template <class Unused = void>
  pass_glm_posterior(const Eigen::VectorXd& z, int d, double chebyshev_radius) : d_(d) {
    constexpr const char* f = "pass_glm_posterior";
    if (d < 1 || d > 1000) throw_invalid(f, "number of covariates d", d, "an integer in [1, 1000]");
    check_size_match(f, "released z", z.size(), "statistic size d + d(d+1)/2", d + d * (d + 1) / 2);
    check_finite(f, "released z", z);
    const std::array<double, 3> b = pass_glm_chebyshev(chebyshev_radius);
    Eigen::MatrixXd sxx(d, d);
    for (int j = 0; j < d; ++j) sxx(j, j) = z(d + j);
    Eigen::Index i = 2 * d;
    for (int j = 0; j < d; ++j)
      for (int k = j + 1; k < d; ++k) sxx(j, k) = sxx(k, j) = z(i++) / std::sqrt(2.0);
    const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(sxx);
    const Eigen::VectorXd lambda = eig.eigenvalues().cwiseMax(0.0);
    sxx_psd_ = eig.eigenvectors() * lambda.asDiagonal() * eig.eigenvectors().transpose();
    const Eigen::MatrixXd precision = Eigen::MatrixXd::Identity(d, d) - 2.0 * b[2] * sxx_psd_;
    const Eigen::LLT<Eigen::MatrixXd> llt(precision);  // I + PSD (b2 < 0): always positive definite
    if (llt.info() != Eigen::Success) throw_domain(f, "posterior precision", 0.0, "positive definite");
    mean_ = llt.solve(b[1] * z.head(d));
    covariance_ = llt.solve(Eigen::MatrixXd::Identity(d, d));
    covariance_ = 0.5 * (covariance_ + covariance_.transpose());
    factor_ = covariance_.llt().matrixL();
    // A release near the largest double overflows the eigendecomposition (an adversarial test: z = 1.8e308).
    if (!(mean_.allFinite() && covariance_.allFinite() && factor_.allFinite()))
      throw_domain(f, "released z, largest magnitude", z.cwiseAbs().maxCoeff(),
                   "small enough that the posterior mean and covariance are finite");
  }

  /// The posterior mean.
  const Eigen::VectorXd& mean() const noexcept { return mean_; }
  /// The posterior covariance.
  const Eigen::MatrixXd& covariance() const noexcept { return covariance_; }
  /// S_xx after the projection onto the PSD cone.
  const Eigen::MatrixXd& gram() const noexcept { return sxx_psd_; }

  /// count independent draws of theta, one per row.
  template <random_engine G>
  Eigen::MatrixXd draws(G& g, Eigen::Index count) const {
    if (count < 1) throw_invalid("pass_glm_posterior::draws", "count", static_cast<double>(count), "at least 1");
    Eigen::MatrixXd out(count, d_);
    Eigen::VectorXd e(d_);
    for (Eigen::Index r = 0; r < count; ++r) {
      for (int j = 0; j < d_; ++j) e(j) = draw_normal(g);
      out.row(r) = (mean_ + factor_ * e).transpose();
    }
    return out;
  }

 private:
  int d_;
  Eigen::VectorXd mean_;
  Eigen::MatrixXd covariance_, factor_, sxx_psd_;
};

}  // namespace privpost
