// privpost/samplers/regression/gibbs_ss_regression.hpp
// gibbs_ss_regression: noise-aware Bayesian linear regression from a release of [X^T X, X^T y, y^T y] (001 Algorithm 1):
// (theta, sigma^2) | s by the NIG update, covariate moments (fixed or hierarchical), s | rest by NormProduct with the CLT
// moments of Eqs. 2-3, projected so that [X y]^T [X y] is PSD (counted), and the noise variances from the mechanism.
#pragma once

#include <Eigen/Core>
#include <Eigen/Eigenvalues>
#include <algorithm>
#include <string>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/linalg/norm_product.hpp"
#include "privpost/core/linalg/robust_cholesky.hpp"
#include "privpost/core/numerical_events.hpp"
#include "privpost/core/random/normal.hpp"
#include "privpost/families/regression/normal_inverse_gamma_regression.hpp"
#include "privpost/families/regression/regression_layout.hpp"
#include "privpost/families/regression/regression_moments.hpp"
#include "privpost/samplers/gibbs_ss.hpp"

namespace privpost {

/// Projects the Gram matrix B = [X y]^T [X y] onto the PSD matrices, keeping the public entry n c^2 and the sums in the
/// intercept row: the Schur complement B_rest - b b^T / B_00 is clipped at eigenvalue 0 (PSD iff that is PSD). Without an
/// intercept, B itself is clipped. Returns true (and counts events.psd_repairs) if B changed.
inline bool project_gram(const regression_layout& layout, Eigen::MatrixXd& b, numerical_events& events) {
  if (!layout.intercept()) return project_psd(b, events);
  const Eigen::Index q = b.rows();
  const Eigen::VectorXd r = b.block(1, 0, q - 1, 1);
  Eigen::MatrixXd schur = b.bottomRightCorner(q - 1, q - 1) - r * r.transpose() / b(0, 0);
  schur = 0.5 * (schur + schur.transpose()).eval();
  if (!project_psd(schur, events)) return false;
  b.bottomRightCorner(q - 1, q - 1) = schur + r * r.transpose() / b(0, 0);
  return true;
}

/// Gibbs-SS for linear regression. CovariateModel: fixed_covariates or hierarchical_normal_covariates.
template <class CovariateModel, scale_mixture_noise Mechanism>
class gibbs_ss_regression {
 public:
  /// z: the release (layout.size() entries); n: the public number of records.
  template <random_engine G>
  gibbs_ss_regression(const regression_layout& layout, const nig_regression_prior& prior, CovariateModel covariates,
                      const Mechanism& mechanism, const Eigen::VectorXd& z, double n, G& g)
      : layout_(layout), prior_(prior), covariates_(std::move(covariates)), mechanism_(mechanism), z_(z), n_(n) {
    check_size_match("gibbs_ss_regression", "release z", z.size(), "regression statistic size", layout.size());
    check_size_match("gibbs_ss_regression", "prior dimension", prior.dimension(), "design columns", layout.columns());
    for (Eigen::Index j = 0; j < z.size(); ++j) check_finite("gibbs_ss_regression", "z[" + std::to_string(j) + "]", z(j));
    if (!(std::isfinite(n) && n > 0.0)) throw_invalid("gibbs_ss_regression", "n", n, "a finite number > 0");
    Eigen::MatrixXd b = layout_.gram(z_, n_);
    project_gram(layout_, b, events_);
    s_ = layout_.statistic_of(b);
    w_.resize(z.size());
    for (Eigen::Index j = 0; j < w_.size(); ++j) w_(j) = mechanism_.draw_variance(g);
    parameter_ = prior_.draw(g);
  }

  template <random_engine G>
  void step(G& g) {
    const int p = layout_.columns();
    const Eigen::MatrixXd b = layout_.gram(s_, n_);
    parameter_ = prior_.update(b.topLeftCorner(p, p), b.col(p).head(p), b(p, p), n_).draw(g);
    covariates_.update(layout_, b, n_, g);
    regression_statistic_moments(layout_, parameter_.theta, parameter_.variance, covariates_.moments(), mean_t_, cov_t_);
    mean_t_ *= n_;
    cov_t_ *= n_;
    norm_product<Eigen::Dynamic>(mean_t_, cov_t_, z_, w_, mean_s_, chol_s_, events_);
    e_.resize(s_.size());
    for (Eigen::Index j = 0; j < e_.size(); ++j) e_(j) = draw_normal(g);
    s_ = mean_s_ + chol_s_.triangularView<Eigen::Lower>() * e_;
    Eigen::MatrixXd nb = layout_.gram(s_, n_);
    if (project_gram(layout_, nb, events_)) {
      s_ = layout_.statistic_of(nb);
      ++events_.projections;
    }
    detail::redraw_variances(mechanism_, z_, s_, w_, g);
  }

  const regression_parameter& parameter() const noexcept { return parameter_; }
  /// (theta_0, ..., theta_{p-1}, sigma^2).
  Eigen::VectorXd parameter_vector() const {
    Eigen::VectorXd v(parameter_.theta.size() + 1);
    v << parameter_.theta, parameter_.variance;
    return v;
  }
  const Eigen::VectorXd& statistic() const noexcept { return s_; }
  const CovariateModel& covariates() const noexcept { return covariates_; }
  const numerical_events& events() const noexcept { return events_; }

 private:
  regression_layout layout_;
  nig_regression_prior prior_;
  CovariateModel covariates_;
  Mechanism mechanism_;
  Eigen::VectorXd z_;
  double n_;
  Eigen::VectorXd s_, w_, mean_t_, mean_s_, e_;
  Eigen::MatrixXd cov_t_, chol_s_;
  regression_parameter parameter_;
  numerical_events events_;
};

/// Independent draws of the NIG posterior given a statistic: the naive method (pass the release; it is projected onto
/// the PSD set first) or the non-private reference (pass the exact statistic).
class regression_conjugate_sampler {
 public:
  template <random_engine G>
  regression_conjugate_sampler(const regression_layout& layout, const nig_regression_prior& prior, const Eigen::VectorXd& s,
                               double n, G& g)
      : posterior_(make(layout, prior, s, n)), parameter_(posterior_.draw(g)) {}

  template <random_engine G>
  void step(G& g) {
    parameter_ = posterior_.draw(g);
  }
  Eigen::VectorXd parameter_vector() const {
    Eigen::VectorXd v(parameter_.theta.size() + 1);
    v << parameter_.theta, parameter_.variance;
    return v;
  }
  const numerical_events& events() const noexcept { return events_; }

 private:
  nig_regression_prior make(const regression_layout& layout, const nig_regression_prior& prior, const Eigen::VectorXd& s, double n) {
    check_size_match("regression_conjugate_sampler", "statistic", s.size(), "regression statistic size", layout.size());
    for (Eigen::Index j = 0; j < s.size(); ++j) check_finite("regression_conjugate_sampler", "statistic", s(j));
    if (!(std::isfinite(n) && n > 0.0)) throw_invalid("regression_conjugate_sampler", "n", n, "a finite number > 0");
    Eigen::MatrixXd b = layout.gram(s, n);
    project_gram(layout, b, events_);
    const int p = layout.columns();
    return prior.update(b.topLeftCorner(p, p), b.col(p).head(p), b(p, p), n);
  }

  numerical_events events_;
  nig_regression_prior posterior_;
  regression_parameter parameter_;
};

}  // namespace privpost
