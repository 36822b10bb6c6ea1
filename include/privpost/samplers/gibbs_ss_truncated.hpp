// privpost/samplers/gibbs_ss_truncated.hpp
// gibbs_ss_truncated: Gibbs-SS for unbounded statistics released after dropping records outside [a, b] (dissertation
// Sec. 4.3). The regions' sums are modelled jointly (multinomial counts, Prop. 5 with cross-covariances); the sampler
// draws the total s and the centre sum s_c together given z, then theta | s by conjugacy, then w | z - s_c.
#pragma once

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <cmath>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/linalg/robust_cholesky.hpp"
#include "privpost/core/numerical_events.hpp"
#include "privpost/core/random/normal.hpp"
#include "privpost/families/family_concepts.hpp"
#include "privpost/families/truncation.hpp"
#include "privpost/samplers/gibbs_ss.hpp"

namespace privpost {

/// Joint prior of (s, s_c): s = the sum over all n records, s_c = the sum over records in [a, b]. With per-record
/// t and t_c = 1[x in [a, b]] t: E = (n mu, n q mu_c); Var s = n Sigma (the untruncated family: the three regions'
/// blocks with their multinomial cross-covariances add up to it), Var s_c = n (q Sigma_c + q (1 - q) mu_c mu_c^T),
/// Cov(s, s_c) = n q (Sigma_c + (mu_c - mu) mu_c^T).
template <truncatable_family F>
void total_and_centre_moments(const typename F::parameter_type& theta, double n, double a, double b,
                              Eigen::Matrix<double, 2 * F::dimension, 1>& mean,
                              Eigen::Matrix<double, 2 * F::dimension, 2 * F::dimension>& cov) {
  constexpr int d = F::dimension;
  const statistic_t<F> mu = F::mean_statistic(theta);
  const covariance_t<F> sigma = F::covariance_statistic(theta);
  const region_moments<F> c = truncated_moments<F>(theta, a, b);
  const double q = c.probability;
  mean.template head<d>() = n * mu;
  mean.template tail<d>() = n * q * c.mean;
  cov.template topLeftCorner<d, d>() = n * sigma;
  cov.template bottomRightCorner<d, d>() = n * (q * c.cov + q * (1.0 - q) * c.mean * c.mean.transpose());
  const covariance_t<F> cross = n * q * (c.cov + (c.mean - mu) * c.mean.transpose());
  cov.template topRightCorner<d, d>() = cross;
  cov.template bottomLeftCorner<d, d>() = cross.transpose();
}

/// Gibbs-SS for a truncated release z of the centre statistic (records outside [a, b] dropped before release).
template <conjugate_prior Prior, scale_mixture_noise Mechanism>
  requires truncatable_family<typename Prior::family>
class gibbs_ss_truncated {
 public:
  using family = typename Prior::family;
  using parameter_type = typename family::parameter_type;
  static constexpr int dimension = family::dimension;
  using vector_type = statistic_t<family>;
  using matrix_type = covariance_t<family>;
  using joint_vector = Eigen::Matrix<double, 2 * dimension, 1>;
  using joint_matrix = Eigen::Matrix<double, 2 * dimension, 2 * dimension>;

  /// z: the release of the centre statistic; n: public number of records (dropped ones included); [a, b]: the declared
  /// bounds (a < b). Initialises theta from the prior, s_c at z projected, s at n E[t], w from the mechanism's prior.
  template <random_engine G>
  gibbs_ss_truncated(const Prior& prior, const Mechanism& mechanism, const Eigen::VectorXd& z, double n, double a, double b, G& g)
      : prior_(prior), mechanism_(mechanism), n_(n), a_(a), b_(b), theta_(prior.draw(g)) {
    detail::check_release<family>("gibbs_ss_truncated", z, n);
    check_finite("gibbs_ss_truncated", "a", a);
    check_finite("gibbs_ss_truncated", "b", b);
    if (!(a < b)) throw_invalid("gibbs_ss_truncated", "b", b, "a number > a = " + detail::format_value(a));
    z_ = z;
    centre_ = family::project(z_, n_);
    total_ = family::project(n_ * family::mean_statistic(theta_), n_);
    for (int j = 0; j < dimension; ++j) w_(j) = mechanism_.draw_variance(g);
  }

  /// One sweep: theta | s; (s, s_c) | theta, w, z; w | z - s_c.
  template <random_engine G>
  void step(G& g) {
    theta_ = prior_.update(total_, n_).draw(g);
    joint_vector m;
    joint_matrix p;
    total_and_centre_moments<family>(theta_, n_, a_, b_, m, p);
    // Condition the joint normal on z = s_c + e, e ~ N(0, diag(w)): S = Var s_c + W = L L^T.
    matrix_type s = p.template bottomRightCorner<dimension, dimension>();
    s.diagonal() += w_;
    matrix_type l;
    robust_cholesky(s, l, events_);
    const auto tri = l.template triangularView<Eigen::Lower>();
    const Eigen::Matrix<double, dimension, 2 * dimension> bmat = tri.solve(p.template bottomRows<dimension>());
    const joint_vector mean = m + bmat.transpose() * tri.solve(z_ - m.template tail<dimension>());
    joint_matrix cov = p - bmat.transpose() * bmat;
    cov = 0.5 * (cov + cov.transpose()).eval();
    joint_matrix chol;
    robust_cholesky(cov, chol, events_);
    joint_vector x, e;
    bool valid = false;
    for (int tries = 0; tries < detail::valid_set_max_tries && !valid; ++tries) {
      for (int j = 0; j < 2 * dimension; ++j) e(j) = draw_normal(g);
      x = mean + chol.template triangularView<Eigen::Lower>() * e;
      valid = family::is_valid(x.template head<dimension>(), n_) && family::is_valid(x.template tail<dimension>(), n_);
      if (!valid) ++events_.rejected_draws;
    }
    total_ = x.template head<dimension>();
    centre_ = x.template tail<dimension>();
    if (!valid) {
      total_ = family::project(total_, n_);
      centre_ = family::project(centre_, n_);
      ++events_.projections;
    }
    detail::redraw_variances(mechanism_, z_, centre_, w_, g);
  }

  const parameter_type& parameter() const noexcept { return theta_; }
  parameter_vector_t<family> parameter_vector() const { return family::to_vector(theta_); }
  const vector_type& total() const noexcept { return total_; }
  const vector_type& centre() const noexcept { return centre_; }
  const numerical_events& events() const noexcept { return events_; }

 private:
  Prior prior_;
  Mechanism mechanism_;
  double n_, a_, b_;
  vector_type z_;
  parameter_type theta_;
  vector_type total_, centre_, w_;
  numerical_events events_;
};

}  // namespace privpost
