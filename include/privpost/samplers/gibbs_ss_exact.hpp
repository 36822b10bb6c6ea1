// privpost/samplers/gibbs_ss_exact.hpp
// enumerated_sum and gibbs_ss_exact: exact Gibbs sampling of the posterior given a release of a sum whose law is closed
// form on a finite integer support (docs/exact-sums.md, "Enumeration"): theta | s by conjugacy and s | theta, z by
// enumeration over
// {0, ..., sum_upper(n)}, pi(s) proportional to P(S = s | theta) p(z | s) with the mechanism's exact log-likelihood.
// No CLT, no continuous relaxation of the integer sum and no latent noise variances, so theta's marginal is the exact
// posterior at any n (where Gibbs-SS's 90% intervals covered 0.82-0.85 at binomial n = 10). Any release_mechanism
// works (Laplace, Gaussian, mechanism_variant). O(support) additions and exponentials per sweep: the release's
// log-likelihood and the sum law's base measure at every support point are computed once, at construction.
// enumerated_sum is the block of gibbs_frame (any finite_sum_model, a user's included); gibbs_ss_exact is the frame
// with it for a static family and its conjugate prior.
//
//     gibbs_ss_exact chain(beta_prior(1.0, 1.0), laplace_mechanism(1.0, epsilon), z, 10.0, g);
//     infer([&](auto& g) { return gibbs_ss_exact(prior, mechanism, z, n, g); }, options);
//     gibbs_frame chain(my_model, my_prior, enumerated_sum(mechanism, z), n, g);   // a user's finite_sum_model
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

/// The sum block of exact Gibbs sampling for a finite_sum_model: s | theta, z by inverse CDF over {0, ..., sum_upper(n)}
/// with pi(s) proportional to P(S = s | theta) p(z | s) and the mechanism's exact log-likelihood. Any
/// release_mechanism. Draws allocate nothing.
template <release_mechanism Mechanism>
class enumerated_sum : public detail::enumerating_sum_block<enumerated_sum<Mechanism>> {
 public:
  /// The largest support enumerated (sum_upper(n) + 1 points): beyond it the O(n) sweep is the wrong tool.
  static constexpr double enumeration_cap = 1e5;

  /// The mechanism and its release z (one entry; checked in start()).
  enumerated_sum(const Mechanism& mechanism, const Eigen::VectorXd& z) : mechanism_(mechanism), release_(z) {}

  /// Checks the release (one finite entry, reachable) and n (a whole number >= 1 whose support has at most
  /// enumeration_cap points), computes the release's log-likelihood at every support point, and sets s at the support
  /// point nearest z. std::invalid_argument naming the value otherwise.
  template <finite_sum_model Model, class Prior, random_engine G>
  void start(const Model& model, const Prior&, typename Model::parameter_type& theta, double n, typename Model::vector_type& s,
             numerical_events&, G&) {
    constexpr const char* f = "gibbs_ss_exact";
    detail::check_release(f, release_, 1, n);
    detail::check_whole_record_count(f, n, std::numeric_limits<double>::infinity(), "a whole number >= 1");
    const double upper =
        detail::checked_support_upper(f, model.sum_upper(n), enumeration_cap, "a whole number in [1, 1e5] (use gibbs_ss)");
    check_reachable(f, "z", release_(0), 0.0, upper, n, noise_scale(mechanism_));
    const auto points = static_cast<std::size_t>(upper) + 1;
    log_release_.resize(points);
    weights_.resize(points);
    // Fixed-size 1-vectors (converted where a mechanism takes its dynamic vector_type): GCC 12 inlines Eigen's packet
    // path for a dynamic vector of constant size 1 and warns, wrongly, that its second lane is uninitialised.
    Eigen::Matrix<double, 1, 1> zv, sv;
    zv(0) = release_(0);
    bool any = false;
    for (std::size_t k = 0; k < points; ++k) {
      sv(0) = static_cast<double>(k);
      log_release_[k] = mechanism_.log_likelihood(zv, sv);
      if (std::isnan(log_release_[k])) log_release_[k] = -std::numeric_limits<double>::infinity();
      any = any || std::isfinite(log_release_[k]);
    }
    if (!any) throw_invalid(f, "z", release_(0), "a release of positive likelihood at some support point");
    s(0) = std::clamp(std::round(release_(0)), 0.0, upper);
    // h_n(s) + log p(z | s) at a reference parameter (the first draw, interior almost surely): each sweep then adds
    // eta(theta) s. Kept only if every term is finite where the release's is (else every sweep computes directly).
    fast_ = false;
    if constexpr (natural_sum_model<Model>) {
      const double eta_ref = model.natural_parameter(theta)(0);
      base_.resize(points);
      fast_ = std::isfinite(eta_ref);
      for (std::size_t k = 0; k < points && fast_; ++k) {
        const double kd = static_cast<double>(k);
        base_[k] = model.log_sum_probability(kd, n, theta) - eta_ref * kd + log_release_[k];
        fast_ = std::isfinite(base_[k]) || !std::isfinite(log_release_[k]);
      }
    }
  }

  /// The first sum enumerated: 0 (the whole support).
  static constexpr double window_first() noexcept { return 0.0; }

  /// The normalised conditional law pi(s | theta, z), s = 0, ..., sum_upper(n). A theta under which no support point
  /// has positive probability (every log-weight -infinity) is a std::domain_error naming it.
  template <finite_sum_model Model>
  const std::vector<double>& sum_weights(const Model& model, const typename Model::parameter_type& theta, double n) {
    double top = -std::numeric_limits<double>::infinity();
    double eta = std::numeric_limits<double>::quiet_NaN();
    if constexpr (natural_sum_model<Model>) {
      if (fast_) eta = model.natural_parameter(theta)(0);
    }
    if (fast_ && std::isfinite(eta)) {
      for (std::size_t k = 0; k < weights_.size(); ++k) {
        weights_[k] = base_[k] + eta * static_cast<double>(k);
        top = std::max(top, weights_[k]);
      }
    } else {  // theta on the boundary (eta infinite), or no natural parameter: the model's own log-probabilities
      for (std::size_t k = 0; k < weights_.size(); ++k) {
        double l = model.log_sum_probability(static_cast<double>(k), n, theta) + log_release_[k];
        if (std::isnan(l)) l = -std::numeric_limits<double>::infinity();
        weights_[k] = l;
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

 private:
  Mechanism mechanism_;
  Eigen::VectorXd release_;
  std::vector<double> log_release_, weights_, base_;
  bool fast_ = false;
};

/// Exact Gibbs sampler over (theta, s) for a finite_sum_family with its conjugate prior and any release mechanism:
/// gibbs_frame with enumerated_sum. State: theta and the integer sum s. Sweeps allocate nothing.
template <conjugate_prior Prior, release_mechanism Mechanism>
requires finite_sum_family<typename Prior::family>
class gibbs_ss_exact : public integer_sum_gibbs<Prior, enumerated_sum<Mechanism>> {
  using base = integer_sum_gibbs<Prior, enumerated_sum<Mechanism>>;

 public:
  /// The largest support enumerated (sum_upper(n) + 1 points): beyond it the O(n) sweep is the wrong tool.
  static constexpr double enumeration_cap = enumerated_sum<Mechanism>::enumeration_cap;

  /// z: the release (one entry, finite), n: the public number of records (a whole number >= 1 whose support has at
  /// most enumeration_cap points). theta starts from the prior, s at the support point nearest z.
  /// std::invalid_argument for a wrong size, a non-finite z, or n outside that range.
  template <random_engine G>
  gibbs_ss_exact(const Prior& prior, const Mechanism& mechanism, const Eigen::VectorXd& z, double n, G& g)
      : base(
            prior, [&] { return enumerated_sum<Mechanism>(mechanism, z); }, n, g) {}
};

template <conjugate_prior Prior, release_mechanism Mechanism, class Z, random_engine G>
gibbs_ss_exact(const Prior&, const Mechanism&, const Z&, double, G&) -> gibbs_ss_exact<Prior, Mechanism>;

}  // namespace privpost
