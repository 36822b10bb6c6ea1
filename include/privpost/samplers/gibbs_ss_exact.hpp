// privpost/samplers/gibbs_ss_exact.hpp
// gibbs_ss_exact: exact Gibbs sampling of the posterior given a release of a sum whose law is closed form on a finite
// integer support (spec exact-small-n.md C.5 (a)): theta | s by conjugacy and s | theta, z by enumeration over
// {0, ..., sum_upper(n)}, pi(s) proportional to P(S = s | theta) p(z | s) with the mechanism's exact log-likelihood.
// No CLT, no continuous relaxation of the integer sum and no latent noise variances, so theta's marginal is the exact
// posterior at any n (where Gibbs-SS's 90% intervals covered 0.82-0.85 at binomial n = 10). Any release_mechanism
// works (Laplace, Gaussian, mechanism_variant). O(support) additions and exponentials per sweep: the release's
// log-likelihood and the sum law's base measure at every support point are computed once, at construction.
//
//     gibbs_ss_exact chain(beta_prior(1.0, 1.0), laplace_mechanism(1.0, epsilon), z, 10.0, g);
//     infer([&](auto& g) { return gibbs_ss_exact(prior, mechanism, z, n, g); }, options);
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

/// Exact Gibbs sampler over (theta, s) for a finite_sum_family with its conjugate prior and any release mechanism.
/// State: theta and the integer sum s. Sweeps allocate nothing.
template <conjugate_prior Prior, release_mechanism Mechanism>
requires finite_sum_family<typename Prior::family>
class gibbs_ss_exact {
 public:
  /// The exponential family.
  using family = typename Prior::family;
  /// The family's parameter type.
  using parameter_type = typename family::parameter_type;
  /// The largest support enumerated (sum_upper(n) + 1 points): beyond it the O(n) sweep is the wrong tool.
  static constexpr double enumeration_cap = 1e5;

  /// z: the release (one entry, finite), n: the public number of records (a whole number >= 1 whose support has at
  /// most enumeration_cap points). theta starts from the prior, s at the support point nearest z.
  /// std::invalid_argument for a wrong size, a non-finite z, or n outside that range.
  template <random_engine G>
  gibbs_ss_exact(const Prior& prior, const Mechanism& mechanism, const Eigen::VectorXd& z, double n, G& g)
      : prior_(prior), n_(n) {
    constexpr const char* f = "gibbs_ss_exact";
    detail::check_release(f, z, 1, n);
    detail::check_whole_record_count(f, n, std::numeric_limits<double>::infinity(), "a whole number >= 1");
    const double upper =
        detail::checked_support_upper(f, family::sum_upper(n), enumeration_cap, "a whole number in [1, 1e5] (use gibbs_ss)");
    check_reachable(f, "z", z(0), 0.0, upper, n, noise_scale(mechanism));
    const auto points = static_cast<std::size_t>(upper) + 1;
    log_release_.resize(points);
    weights_.resize(points);
    // Fixed-size 1-vectors (converted where a mechanism takes its dynamic vector_type): GCC 12 inlines Eigen's packet
    // path for a dynamic vector of constant size 1 and warns, wrongly, that its second lane is uninitialised.
    Eigen::Matrix<double, 1, 1> zv, sv;
    zv(0) = z(0);
    bool any = false;
    for (std::size_t k = 0; k < points; ++k) {
      sv(0) = static_cast<double>(k);
      log_release_[k] = mechanism.log_likelihood(zv, sv);
      if (std::isnan(log_release_[k])) log_release_[k] = -std::numeric_limits<double>::infinity();
      any = any || std::isfinite(log_release_[k]);
    }
    if (!any) throw_invalid(f, "z", z(0), "a release of positive likelihood at some support point");
    theta_ = prior_.draw(g);
    s_ = std::clamp(std::round(z(0)), 0.0, upper);
    // h_n(s) + log p(z | s) at a reference parameter (the first draw, interior almost surely): each sweep then adds
    // eta(theta) s. Kept only if every term is finite where the release's is (else every sweep computes directly).
    const double eta_ref = family::natural_parameter(theta_)(0);
    base_.resize(points);
    fast_ = std::isfinite(eta_ref);
    for (std::size_t k = 0; k < points && fast_; ++k) {
      const double kd = static_cast<double>(k);
      base_[k] = family::log_sum_probability(kd, n_, theta_) - eta_ref * kd + log_release_[k];
      fast_ = std::isfinite(base_[k]) || !std::isfinite(log_release_[k]);
    }
  }

  /// One sweep: theta | s (conjugate, exact: s is a genuine sum), then s | theta, z (draw_sum).
  template <random_engine G>
  void step(G& g) {
    typename family::vector_type s;
    s(0) = s_;
    theta_ = prior_.update(s, n_).draw(g);
    s_ = draw_sum(theta_, g);
  }

  /// s | theta, z by inverse CDF over the support: the exact conditional of the sum. Also the kernel the tests check.
  template <random_engine G>
  double draw_sum(const parameter_type& theta, G& g) {
    sum_weights(theta);
    const double u = draw_uniform(g);
    std::size_t k = 0;
    double cumulative = weights_[0];
    while (cumulative < u && k + 1 < weights_.size()) cumulative += weights_[++k];
    return static_cast<double>(k);
  }

  /// The normalised conditional law pi(s | theta, z), s = 0, ..., sum_upper(n). A theta under which no support point
  /// has positive probability (every log-weight -infinity) is a std::domain_error naming it.
  const std::vector<double>& sum_weights(const parameter_type& theta) {
    double top = -std::numeric_limits<double>::infinity();
    const double eta = family::natural_parameter(theta)(0);
    if (fast_ && std::isfinite(eta)) {
      for (std::size_t k = 0; k < weights_.size(); ++k) {
        weights_[k] = base_[k] + eta * static_cast<double>(k);
        top = std::max(top, weights_[k]);
      }
    } else {  // theta on the boundary (eta infinite): the family's own log-probabilities
      for (std::size_t k = 0; k < weights_.size(); ++k) {
        weights_[k] = family::log_sum_probability(static_cast<double>(k), n_, theta) + log_release_[k];
        top = std::max(top, weights_[k]);
      }
    }
    if (!std::isfinite(top))
      throw std::domain_error("gibbs_ss_exact: no support point has positive probability given the release (log-weight " +
                              std::to_string(top) + ")");
    double total = 0.0;
    for (double& w : weights_) total += (w = std::exp(w - top));
    for (double& w : weights_) w /= total;
    return weights_;
  }

  /// The current draw of theta.
  const parameter_type& parameter() const noexcept { return theta_; }
  /// The current draw as a vector.
  auto parameter_vector() const { return family_model<family>::parameter_vector(theta_); }
  /// The current sum (an integer in [0, sum_upper(n)]).
  double statistic() const noexcept { return s_; }
  /// Nothing is ever repaired or retried: all zero.
  const numerical_events& events() const noexcept { return events_; }

 private:
  Prior prior_;
  double n_;
  parameter_type theta_{};
  double s_ = 0.0;
  std::vector<double> log_release_, weights_, base_;
  bool fast_ = false;
  numerical_events events_;
};

template <conjugate_prior Prior, release_mechanism Mechanism, class Z, random_engine G>
gibbs_ss_exact(const Prior&, const Mechanism&, const Z&, double, G&) -> gibbs_ss_exact<Prior, Mechanism>;

}  // namespace privpost
