// privpost/samplers/gibbs_ss.hpp
// gibbs_ss: the noise-aware Gibbs sampler for bounded sufficient statistics (dissertation Algorithm 3): theta | s by
// conjugacy, s | theta, w, z by NormProduct on the valid set, w | s, z from the mechanism's scale-mixture view.
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <string>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/linalg/norm_product.hpp"
#include "privpost/core/numerical_events.hpp"
#include "privpost/core/random/normal.hpp"
#include "privpost/core/random/truncated_normal.hpp"
#include "privpost/families/family_concepts.hpp"

namespace privpost {

namespace detail {

inline constexpr int valid_set_max_tries = 100;

// Checks shared by every sampler that conditions on a release z of n records.
template <exponential_family F>
void check_release(const char* who, const Eigen::VectorXd& z, double n) {
  check_size_match(who, "release z", z.size(), "family statistic dimension", F::dimension);
  for (Eigen::Index j = 0; j < z.size(); ++j) check_finite(who, "z[" + std::to_string(j) + "]", z(j));
  if (!(std::isfinite(n) && n > 0.0)) throw_invalid(who, "n", n, "a finite number > 0");
}

// One draw of s ~ N(mean, L L^T) restricted to the family's valid set for n records: exact truncated normal in one
// dimension; bounded retries then projection (counted) in more.
template <exponential_family F, random_engine G>
void draw_valid_statistic(G& g, const statistic_t<F>& mean, const covariance_t<F>& chol, double n, statistic_t<F>& s,
                          numerical_events& events) {
  if constexpr (F::dimension == 1) {
    const double sd = chol(0, 0);
    const double lo = F::lower_bound(n)(0), hi = F::upper_bound(n)(0);
    if (sd > 0.0 && std::isfinite(sd)) {
      s(0) = draw_truncated_normal(g, mean(0), sd, lo, hi);
    } else {
      s(0) = std::clamp(mean(0), lo, hi);  // degenerate conditional: its mean, on the valid set
    }
  } else {
    statistic_t<F> e;
    for (int tries = 0; tries < valid_set_max_tries; ++tries) {
      for (int j = 0; j < F::dimension; ++j) e(j) = draw_normal(g);
      s = mean + chol.template triangularView<Eigen::Lower>() * e;
      if (F::is_valid(s, n)) return;
      ++events.rejected_draws;
    }
    s = F::project(s, n);
    ++events.projections;
  }
}

// w_j | z_j - s_j for every coordinate, from the mechanism's scale-mixture view (App. B.2); nothing for fixed variances.
template <scale_mixture_noise Mechanism, class Z, class S, class W, random_engine G>
void redraw_variances(const Mechanism& mechanism, const Z& z, const S& s, W& w, G& g) {
  if constexpr (!Mechanism::fixed_variance) {
    for (Eigen::Index j = 0; j < w.size(); ++j) w(j) = mechanism.redraw_variance(z(j) - s(j), g);
  }
}

}  // namespace detail

/// Gibbs-SS for a family with bounded statistics, released through a Gaussian-scale-mixture mechanism.
/// State: theta, s (latent exact statistic), w (latent noise variances). Allocation-free sweeps.
template <conjugate_prior Prior, scale_mixture_noise Mechanism>
class gibbs_ss {
 public:
  using family = typename Prior::family;
  using parameter_type = typename family::parameter_type;
  static constexpr int dimension = family::dimension;
  using vector_type = statistic_t<family>;
  using matrix_type = covariance_t<family>;

  /// z: the release (dimension of the family's statistic), n: the public number of records. Initialises theta from
  /// the prior, s at z projected onto the valid set, and w from the mechanism's prior on the variances.
  template <random_engine G>
  gibbs_ss(const Prior& prior, const Mechanism& mechanism, const Eigen::VectorXd& z, double n, G& g)
      : prior_(prior), posterior_(prior), mechanism_(mechanism), n_(n), theta_(prior.draw(g)) {
    detail::check_release<family>("gibbs_ss", z, n);
    z_ = z;
    s_ = family::project(z_, n_);
    for (int j = 0; j < dimension; ++j) w_(j) = mechanism_.draw_variance(g);
  }

  /// One sweep: theta | s; s | theta, w, z; w | s, z.
  template <random_engine G>
  void step(G& g) {
    posterior_ = prior_.update(s_, n_);
    theta_ = posterior_.draw(g);
    const vector_type m = n_ * family::mean_statistic(theta_);
    const matrix_type cov = n_ * family::covariance_statistic(theta_);
    vector_type mean;
    matrix_type chol;
    norm_product<dimension>(m, cov, z_, w_, mean, chol, events_);
    detail::draw_valid_statistic<family>(g, mean, chol, n_, s_, events_);
    detail::redraw_variances(mechanism_, z_, s_, w_, g);
  }

  const parameter_type& parameter() const noexcept { return theta_; }
  parameter_vector_t<family> parameter_vector() const { return family::to_vector(theta_); }
  const vector_type& statistic() const noexcept { return s_; }
  const vector_type& variances() const noexcept { return w_; }
  const numerical_events& events() const noexcept { return events_; }

 private:
  Prior prior_;
  Prior posterior_;
  Mechanism mechanism_;
  double n_;
  vector_type z_;
  parameter_type theta_;
  vector_type s_;
  vector_type w_;
  numerical_events events_;
};

}  // namespace privpost
