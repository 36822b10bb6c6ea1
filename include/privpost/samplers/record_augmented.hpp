// privpost/samplers/record_augmented.hpp
// record_gibbs: the record-level data-augmentation sampler (Ju et al. 2022, Algorithm 1; spec exact-small-n.md C.3),
// the exact counterpart of Gibbs-SS. The n records are latent: a sweep draws theta | records (the conjugate update on
// their exact sum) and then updates every record by Metropolis-Hastings with the model as proposal,
//     x* ~ f(. | theta),   alpha = min(1, p(z | S - c(x_i) + c(x*)) / p(z | S)),
// where c(x) is what the data owner summed for the record (its statistic, or the statistic of the clamped record, or
// nothing for a dropped one) and S the running sum of the contributions. The f terms cancel, so only the mechanism's
// density enters. No central limit theorem and no continuous relaxation: integer sums stay integers, and any mechanism
// with a log_likelihood works. For an eps-DP Laplace release whose contributions stay in the declared range every
// alpha is at least e^-eps (the acceptance floor, checked by the tests). A sweep costs O(n) record draws: the tool for
// small and moderate n (at n = 10 it is calibrated where Gibbs-SS is not, see tests/samplers/record_augmented_test.cpp);
// gibbs_ss is O(1) in n.
//
//     record_gibbs chain(beta_prior(1.0, 1.0), laplace_mechanism(1.0, epsilon), z, 10.0, g);
//     infer([&](auto& g) { return record_gibbs(prior, mechanism, z, n, g); }, options);
//     record_gibbs truncated(poisson_gamma_prior(10, 2), mechanism, z, n, g, dropped_contribution<poisson_family>(0, 8));
//
// Linear regression records: samplers/record_regression.hpp. Not yet (issue #12): several releases of the same records,
// an initialisation placing records near the release (the chain starts from records drawn from the prior).
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <limits>
#include <vector>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/numerical_events.hpp"
#include "privpost/core/random/uniform.hpp"
#include "privpost/families/family_model.hpp"

namespace privpost {

/// What the data owner summed for a record: a callable from the family's record to the family's statistic vector type
/// (exactly that type, so that a rule of another family is refused at compile time).
template <class C, class F>
concept record_contribution = exponential_family<F> && requires(const C& c, const typename F::record_type& x) {
  { c(x) } -> std::same_as<typename F::vector_type>;
};

/// The record's statistic t(x), unchanged (a bounded family's release: binomial, multinomial).
template <exponential_family F>
struct statistic_contribution {
  typename F::vector_type operator()(const typename F::record_type& x) const { return F::statistic(x); }
};

/// The statistic of the record clamped into [lo, hi] (a truncated release under the clamp policy; scalar records).
template <exponential_family F>
struct clamped_contribution {
  double lo = 0.0, hi = 0.0;
  clamped_contribution(double lower, double upper) : lo(lower), hi(upper) {
    check_interval("clamped_contribution", "[lo, hi]", lo, hi);
  }
  typename F::vector_type operator()(const typename F::record_type& x) const {
    return F::statistic(std::clamp(static_cast<double>(x), lo, hi));
  }
};

/// The statistic of a record inside [lo, hi], and nothing (zero) for a record outside it (the drop policy).
template <exponential_family F>
struct dropped_contribution {
  double lo = 0.0, hi = 0.0;
  dropped_contribution(double lower, double upper) : lo(lower), hi(upper) {
    check_interval("dropped_contribution", "[lo, hi]", lo, hi);
  }
  typename F::vector_type operator()(const typename F::record_type& x) const {
    const auto v = static_cast<double>(x);
    return (v >= lo && v <= hi) ? typename F::vector_type(F::statistic(x)) : F::vector_type::Zero();
  }
};

/// The record-level sampler over (theta, x_1..x_n) for a conjugate prior whose family can draw records, with any
/// release mechanism and contribution rule. Models privpost::sampler (infer() runs it). Sweeps allocate nothing.
template <conjugate_prior Prior, release_mechanism Mechanism, class Contribution = statistic_contribution<typename Prior::family>>
requires record_generating_family<typename Prior::family> && record_contribution<Contribution, typename Prior::family>
class record_gibbs {
 public:
  using family = typename Prior::family;
  using record_type = typename family::record_type;
  using parameter_type = typename family::parameter_type;
  using vector_type = typename family::vector_type;
  /// The most records a chain holds (a sweep is O(n): beyond this gibbs_ss is the tool).
  static constexpr double max_records = 1e7;

  /// z: the release (family::dimension entries, finite), n: the public number of records (a whole number in [1, 1e7]),
  /// contribution: what the owner summed per record. theta starts from the prior and the records from f(. | theta).
  /// std::invalid_argument for a wrong size, a non-finite z or n outside that range; std::domain_error if the release
  /// has zero density at the initial records (a mechanism with bounded noise support).
  template <random_engine G>
  record_gibbs(const Prior& prior, const Mechanism& mechanism, const Eigen::VectorXd& z, double n, G& g,
               Contribution contribution = {})
      : prior_(prior), mechanism_(mechanism), contribution_(std::move(contribution)), n_(n) {
    constexpr const char* f = "record_gibbs";
    check_size_match(f, "release z", z.size(), "the family's statistic size", family::dimension);
    check_finite(f, "z", z);
    check_record_count(f, n);
    if (!(std::floor(n) == n && n <= max_records)) throw_invalid(f, "n", n, "a whole number in [1, 1e7]");
    z_ = z;
    theta_ = prior_.draw(g);
    const auto count = static_cast<std::size_t>(n);
    records_.resize(count);
    statistics_.resize(count);
    contributions_.resize(count);
    for (std::size_t i = 0; i < count; ++i) records_[i] = family::draw_record(theta_, g);
    resum();
    if (!(log_release_ > -std::numeric_limits<double>::infinity()))
      throw std::domain_error("record_gibbs: the release has zero density at the initial records (log density " +
                              std::to_string(log_release_) + "); accepted: a mechanism with positive density there");
  }

  /// One sweep: theta | records (conjugate, on the exact sum T), then every record in turn (systematic scan). Sums of
  /// whole numbers (binomial, multinomial, Poisson counts) are kept incrementally and are exact in double; once a
  /// real-valued statistic has entered them they are recomputed from the records at the end of the sweep (O(n), as the
  /// sweep itself), so that rounding never accumulates.
  template <random_engine G>
  void step(G& g) {
    theta_ = prior_.update(total_, n_).draw(g);
    for (std::size_t i = 0; i < records_.size(); ++i) update_record(i, g);
    if (!whole_sums_) resum();
  }

  /// log alpha of replacing record i by x (before the min with 0): log p(z | S - c(x_i) + c(x)) - log p(z | S); 0 when
  /// the contributions are equal. The acceptance function of update_record (the kernel tests build the kernel from it).
  double log_acceptance(std::size_t i, const record_type& x) const {
    const vector_type c = contribution_(x);
    if (c == contributions_[i]) return 0.0;
    const vector_type proposed = release_sum_ - contributions_[i] + c;
    return mechanism_.log_likelihood(z_, proposed) - log_release_;
  }

  /// One Metropolis-Hastings update of record i at the current theta: x* ~ f(. | theta), accepted with probability
  /// min(1, exp(log_acceptance(i, x*))) (no uniform is drawn when that is 1). Returns whether it was accepted.
  template <random_engine G>
  bool update_record(std::size_t i, G& g) {
    const record_type x = family::draw_record(theta_, g);
    const vector_type c = contribution_(x);
    ++proposed_;
    double log_alpha = 0.0, log_new = 0.0;
    vector_type proposed;
    const bool same = c == contributions_[i];
    if (!same) {
      proposed = release_sum_ - contributions_[i] + c;
      log_new = mechanism_.log_likelihood(z_, proposed);
      log_alpha = log_new - log_release_;
      smallest_log_alpha_ = std::min(smallest_log_alpha_, log_alpha);
      if (log_alpha < 0.0 && !(std::log(draw_uniform(g)) < log_alpha)) return false;
    }
    ++accepted_;
    const vector_type t_new = family::statistic(x);
    whole_sums_ = whole_sums_ && whole(t_new) && whole(c);
    total_ += t_new - statistics_[i];
    statistics_[i] = t_new;
    if (!same) {
      release_sum_ = proposed;
      log_release_ = log_new;  // the new density itself, not a running sum of differences
      contributions_[i] = c;
    }
    records_[i] = x;
    return true;
  }

  const parameter_type& parameter() const noexcept { return theta_; }
  auto parameter_vector() const { return family_model<family>::parameter_vector(theta_); }
  /// Sets theta (the kernel tests hold it fixed and call update_record).
  void set_parameter(const parameter_type& theta) { theta_ = theta; }
  /// Replaces the records (the kernel tests); the sums are recomputed. std::invalid_argument for a wrong count.
  void set_records(const std::vector<record_type>& records) {
    check_size_match("record_gibbs::set_records", "records", static_cast<Eigen::Index>(records.size()), "n",
                     static_cast<Eigen::Index>(records_.size()));
    records_ = records;
    resum();
  }
  const std::vector<record_type>& records() const noexcept { return records_; }
  /// T: the sum of the records' statistics (what theta | records is conditioned on).
  const vector_type& statistic() const noexcept { return total_; }
  /// S: the sum of the records' contributions (what the mechanism released a noisy copy of).
  const vector_type& release_sum() const noexcept { return release_sum_; }
  /// Accepted / proposed record updates so far (1 before any).
  double record_acceptance() const noexcept {
    return proposed_ == 0 ? 1.0 : static_cast<double>(accepted_) / static_cast<double>(proposed_);
  }
  /// The smallest log alpha computed so far (0 before any change of contribution was proposed).
  double smallest_log_acceptance() const noexcept { return smallest_log_alpha_; }
  /// Nothing is ever repaired or retried: all zero.
  const numerical_events& events() const noexcept { return events_; }

 private:
  // Whole numbers below 2^52 in absolute value: their sums over at most 1e7 records stay exact in double.
  static bool whole(const vector_type& v) {
    for (Eigen::Index j = 0; j < v.size(); ++j)
      if (!(std::floor(v(j)) == v(j) && std::abs(v(j)) < 4.5e15)) return false;
    return true;
  }

  void resum() {
    total_.setZero();
    release_sum_.setZero();
    whole_sums_ = true;
    for (std::size_t i = 0; i < records_.size(); ++i) {
      statistics_[i] = family::statistic(records_[i]);
      contributions_[i] = contribution_(records_[i]);
      total_ += statistics_[i];
      release_sum_ += contributions_[i];
      whole_sums_ = whole_sums_ && whole(statistics_[i]) && whole(contributions_[i]);
    }
    log_release_ = mechanism_.log_likelihood(z_, release_sum_);
  }

  Prior prior_;
  Mechanism mechanism_;
  Contribution contribution_;
  double n_;
  vector_type z_;
  parameter_type theta_{};
  std::vector<record_type> records_;
  std::vector<vector_type> statistics_, contributions_;  // per record: t(x_i) and c(x_i)
  vector_type total_ = vector_type::Zero(), release_sum_ = vector_type::Zero();
  double log_release_ = 0.0;
  std::uint64_t proposed_ = 0, accepted_ = 0;
  double smallest_log_alpha_ = 0.0;
  bool whole_sums_ = true;  // every statistic and contribution so far a whole number: the running sums are exact
  numerical_events events_;
};

template <conjugate_prior Prior, release_mechanism Mechanism, class Z, random_engine G>
record_gibbs(const Prior&, const Mechanism&, const Z&, double, G&) -> record_gibbs<Prior, Mechanism>;
template <conjugate_prior Prior, release_mechanism Mechanism, class Z, random_engine G, class C>
record_gibbs(const Prior&, const Mechanism&, const Z&, double, G&, C) -> record_gibbs<Prior, Mechanism, C>;

}  // namespace privpost
