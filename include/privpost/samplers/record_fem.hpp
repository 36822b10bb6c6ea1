// privpost/samplers/record_fem.hpp
// fem_record_gibbs: the exact posterior given a release of the factored exponential mechanism
// (mechanisms/factored_exponential.hpp; spec histogram-measurements.md B.8.2), by the record-level data augmentation of
// record_gibbs (spec exact-small-n.md C.3). The released index z depends on the records only through the
// record-additive score vector u = sum_i l(., x_i), so with latent records the target is
//     p(theta) prod_i f(x_i | theta) softmax_z(kappa u),
// a sweep draws theta | records by the conjugate update, and a record update proposes x* ~ f(. | theta) (the f terms
// cancel) and accepts with
//     alpha = min(1, exp(kappa (u*_z - u_z) - [logsumexp(kappa u*) - logsumexp(kappa u)])),   u* = u - l(., x_i) + l(., x*).
// Every coordinate of u moves by at most Delta_u, so alpha >= e^{-2 kappa Delta_u} = e^{-epsilon} (the acceptance
// floor). A record update costs O(|Z|) (the contribution touches every candidate and the normaliser is recomputed).
//
//     fem_record_gibbs chain(beta_prior(1, 1), mechanism, z, 100.0, g);
//     infer([&](auto& g) { return fem_record_gibbs(prior, mechanism, z, n, g); }, options);
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/math/log_sum_exp.hpp"
#include "privpost/core/numerical_events.hpp"
#include "privpost/core/random/uniform.hpp"
#include "privpost/families/family_model.hpp"
#include "privpost/mechanisms/factored_exponential.hpp"

namespace privpost {

/// The record-level sampler over (theta, x_1..x_n) given one release z of a factored exponential mechanism whose
/// records are the family's. Models privpost::sampler. Sweeps allocate nothing.
template <conjugate_prior Prior, class Score>
requires record_generating_family<typename Prior::family>
class fem_record_gibbs {
 public:
  /// The exponential family.
  using family = typename Prior::family;
  /// A record.
  using record_type = typename family::record_type;
  /// The mechanism.
  using mechanism_type = factored_exponential_mechanism<record_type, Score>;
  /// The most stored contributions, n |Z| (8 bytes each).
  static constexpr double max_contributions = 1e8;

  /// n: the public number of records (a whole number >= 1 with n |Z| <= 1e8); z: the released candidate index. theta
  /// starts from the prior and the records from f(. | theta). std::invalid_argument otherwise.
  template <random_engine G>
  fem_record_gibbs(const Prior& prior, mechanism_type mechanism, std::size_t z, double n, G& g)
      : prior_(prior), mechanism_(std::move(mechanism)), z_(z), n_(n) {
    constexpr const char* who = "fem_record_gibbs";
    mechanism_.check_release(who, z);
    check_record_count(who, n);
    const auto k = static_cast<double>(mechanism_.candidates());
    if (!(std::floor(n) == n && n * k <= max_contributions))
      throw_invalid(who, "n", n, "a whole number with n x candidates <= 1e8");
    const auto kz = static_cast<Eigen::Index>(mechanism_.candidates());
    const auto count = static_cast<std::size_t>(n);
    contributions_.resize(kz, static_cast<Eigen::Index>(count));
    u_.resize(kz);
    proposed_u_.resize(kz);
    proposal_.resize(kz);
    scaled_.resize(kz);
    theta_ = prior_.draw(g);
    records_.resize(count);
    for (std::size_t i = 0; i < count; ++i) {
      records_[i] = family::draw_record(theta_, g);
      mechanism_.contribution(records_[i], proposal_);
      contributions_.col(static_cast<Eigen::Index>(i)) = proposal_;
    }
    resum();
  }

  /// One sweep: theta | records (conjugate on the exact statistic T), then every record in turn; u and T are then
  /// recomputed from the records, so rounding never accumulates across sweeps.
  template <random_engine G>
  void step(G& g) {
    theta_ = prior_.update(total_, n_).draw(g);
    for (std::size_t i = 0; i < records_.size(); ++i) update_record(i, g);
    resum();
  }

  /// One Metropolis-Hastings update of record i at the current theta. Returns whether it was accepted.
  template <random_engine G>
  bool update_record(std::size_t i, G& g) {
    const record_type x = family::draw_record(theta_, g);
    ++proposed_;
    mechanism_.contribution(x, proposal_);
    const auto col = static_cast<Eigen::Index>(i);
    proposed_u_ = u_ - contributions_.col(col) + proposal_;
    scaled_ = mechanism_.exponent() * proposed_u_;
    const double log_norm = detail::log_sum_exp(scaled_);
    const double log_alpha = mechanism_.exponent() * (proposed_u_(z()) - u_(z())) - (log_norm - log_norm_);
    smallest_log_alpha_ = std::min(smallest_log_alpha_, log_alpha);
    if (log_alpha < 0.0 && !log_uniform_below(draw_uniform(g), log_alpha)) return false;
    ++accepted_;
    total_ += family::statistic(x) - family::statistic(records_[i]);
    records_[i] = x;
    contributions_.col(col) = proposal_;
    u_ = proposed_u_;
    log_norm_ = log_norm;
    return true;
  }

  /// The current theta.
  const typename family::parameter_type& parameter() const noexcept { return theta_; }
  /// The current draw as a vector.
  auto parameter_vector() const { return family_model<family>::parameter_vector(theta_); }
  /// The current latent records.
  const std::vector<record_type>& records() const noexcept { return records_; }
  /// u: the score vector of the latent records.
  const Eigen::VectorXd& scores() const noexcept { return u_; }
  /// Accepted / proposed record updates so far (1 before any).
  double record_acceptance() const noexcept {
    return proposed_ == 0 ? 1.0 : static_cast<double>(accepted_) / static_cast<double>(proposed_);
  }
  /// The smallest log alpha so far (0 before any): at least -epsilon.
  double smallest_log_acceptance() const noexcept { return smallest_log_alpha_; }
  /// Nothing is ever repaired or retried: all zero.
  const numerical_events& events() const noexcept { return events_; }

 private:
  Eigen::Index z() const noexcept { return static_cast<Eigen::Index>(z_); }

  void resum() {
    u_ = contributions_.rowwise().sum();
    scaled_ = mechanism_.exponent() * u_;
    log_norm_ = detail::log_sum_exp(scaled_);
    total_.setZero();
    for (const auto& x : records_) total_ += family::statistic(x);
  }

  Prior prior_;
  mechanism_type mechanism_;
  std::size_t z_;
  double n_;
  typename family::parameter_type theta_{};
  std::vector<record_type> records_;
  Eigen::MatrixXd contributions_;  // column i: l(., x_i)
  Eigen::VectorXd u_, proposed_u_, proposal_, scaled_;
  typename family::vector_type total_ = family::vector_type::Zero();
  double log_norm_ = 0.0;
  std::uint64_t proposed_ = 0, accepted_ = 0;
  double smallest_log_alpha_ = 0.0;
  numerical_events events_;
};

}  // namespace privpost
