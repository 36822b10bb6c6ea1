// privpost/samplers/record_augmented.hpp
// record_gibbs: the record-level data-augmentation sampler (Ju et al. 2022, Algorithm 1; docs/record-level.md),
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
// Linear regression records: samplers/record_regression.hpp; several releases of the same records:
// samplers/record_releases.hpp. A chain starts from theta ~ prior and records ~ f(. | theta); record_init::consistent
// also moves the records towards the release first (shorter burn-in, same target):
//     record_gibbs chain(beta_prior(1, 1), laplace_mechanism(1, 0.01), z, 1000.0, g, record_init::consistent);
#pragma once

#include <Eigen/Core>
#include <utility>

#include "privpost/core/concepts.hpp"
#include "privpost/samplers/record_releases.hpp"

namespace privpost {

/// The record-level sampler over (theta, x_1..x_n) for a conjugate prior whose family can draw records, with any
/// release mechanism and contribution rule: record_gibbs_releases (samplers/record_releases.hpp, which holds the
/// engine and the contribution rules) with one release, under the single-release call shape. Models privpost::sampler
/// (infer() runs it). Sweeps allocate nothing.
///
/// Its members, from the engine: step(g) (theta | records, conjugate on the exact sum T, then every record in turn);
/// update_record(i, g) and log_acceptance(i, x) (log p(z | S - c(x_i) + c(x)) - log p(z | S), 0 when the contributions
/// are equal); parameter(), parameter_vector(), set_parameter(theta), set_records(records), records(), statistic() (T),
/// record_acceptance(), smallest_log_acceptance(), events(); and release_sum() (S, what the mechanism released a noisy
/// copy of).
template <conjugate_prior Prior, release_mechanism Mechanism, class Contribution = statistic_contribution<typename Prior::family>>
requires record_generating_family<typename Prior::family> && record_contribution<Contribution, typename Prior::family>
class record_gibbs : public record_gibbs_releases<Prior, record_release<Mechanism, Contribution>> {
  using base = record_gibbs_releases<Prior, record_release<Mechanism, Contribution>>;

 public:
  /// Type of the statistic.
  using typename base::vector_type;

  /// z: the release (family::dimension entries, finite), n: the public number of records (a whole number in [1, 1e7]),
  /// contribution: what the owner summed per record. theta starts from the prior and the records from f(. | theta).
  /// std::invalid_argument for a wrong size, a non-finite z or n outside that range; std::domain_error if the release
  /// has zero density at the initial records (a mechanism with bounded noise support).
  template <random_engine G>
  record_gibbs(const Prior& prior, const Mechanism& mechanism, const Eigen::VectorXd& z, double n, G& g,
               Contribution contribution = {})
      : base("record_gibbs", prior, n, g, record_init::prior,
             record_release<Mechanism, Contribution>(mechanism, z, std::move(contribution))) {}
  /// The same, starting as init says (record_init::consistent: records moved towards the release first).
  template <random_engine G>
  record_gibbs(const Prior& prior, const Mechanism& mechanism, const Eigen::VectorXd& z, double n, G& g, record_init init,
               Contribution contribution = {})
      : base("record_gibbs", prior, n, g, init, record_release<Mechanism, Contribution>(mechanism, z, std::move(contribution))) {}

  /// S: the sum of the records' contributions (what the mechanism released a noisy copy of).
  const vector_type& release_sum() const { return base::release_sum(0); }
};

template <conjugate_prior Prior, release_mechanism Mechanism, class Z, random_engine G>
record_gibbs(const Prior&, const Mechanism&, const Z&, double, G&) -> record_gibbs<Prior, Mechanism>;
template <conjugate_prior Prior, release_mechanism Mechanism, class Z, random_engine G, class C>
record_gibbs(const Prior&, const Mechanism&, const Z&, double, G&, C) -> record_gibbs<Prior, Mechanism, C>;
template <conjugate_prior Prior, release_mechanism Mechanism, class Z, random_engine G>
record_gibbs(const Prior&, const Mechanism&, const Z&, double, G&, record_init) -> record_gibbs<Prior, Mechanism>;
template <conjugate_prior Prior, release_mechanism Mechanism, class Z, random_engine G, class C>
record_gibbs(const Prior&, const Mechanism&, const Z&, double, G&, record_init, C) -> record_gibbs<Prior, Mechanism, C>;

}  // namespace privpost
