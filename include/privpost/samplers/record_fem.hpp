// privpost/samplers/record_fem.hpp
// fem_record_gibbs: the exact posterior given a release of the factored exponential mechanism
// (mechanisms/factored_exponential.hpp; docs/histogram-measurements.md), by the record-level frame
// (samplers/record_frame.hpp, docs/record-level.md). The released index z depends on the records only through the
// record-additive score vector u = sum_i l(., x_i), so a record's contribution is its score vector l(., x) and the
// release's kernel is the softmax: with latent records the target is
//     p(theta) prod_i f(x_i | theta) softmax_z(kappa u),
// and a record update proposes x* ~ f(. | theta) (the f terms cancel) and accepts with
//     alpha = min(1, exp(kappa (u*_z - u_z) - [logsumexp(kappa u*) - logsumexp(kappa u)])),   u* = u - l(., x_i) + l(., x*).
// Every coordinate of u moves by at most Delta_u, so alpha >= e^{-2 kappa Delta_u} = e^{-epsilon} (the acceptance
// floor). A record update costs O(|Z|) (the contribution touches every candidate and the normaliser is recomputed).
//
//     fem_record_gibbs chain(beta_prior(1, 1), mechanism, z, 100.0, g);
//     infer([&](auto& g) { return fem_record_gibbs(prior, mechanism, z, n, g); }, options);
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <cstddef>
#include <utility>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/math/log_sum_exp.hpp"
#include "privpost/mechanisms/factored_exponential.hpp"
#include "privpost/samplers/record_frame.hpp"
#include "privpost/samplers/record_releases.hpp"

namespace privpost {

namespace detail {
// A record's contribution to a factored exponential release: its score vector l(., x), written in place.
template <class Record, class Score>
struct fem_contribution {
  factored_exponential_mechanism<Record, Score> mechanism;
  Eigen::VectorXd operator()(const Record& x) const { return mechanism.contribution(x); }
  void operator()(const Record& x, Eigen::VectorXd& out) const { mechanism.contribution(x, out); }
};

// The release's kernel: log softmax_z(kappa u) for the released index z (the record_release's z is its one-hot
// vector). scaled is scratch, so an evaluation allocates nothing.
template <class Record, class Score>
struct fem_kernel {
  factored_exponential_mechanism<Record, Score> mechanism;
  Eigen::Index z;
  mutable Eigen::VectorXd scaled;
  template <class Z, class U>
  double log_likelihood(const Z&, const U& u) const {
    scaled = mechanism.exponent() * u;
    return mechanism.exponent() * u(z) - log_sum_exp(scaled);
  }
};
}  // namespace detail

/// The record-level sampler over (theta, x_1..x_n) given one release z of a factored exponential mechanism whose
/// records are the family's: record_frame over conjugate_record_model<Prior> with the softmax kernel. Models
/// privpost::sampler. Sweeps allocate nothing.
template <conjugate_prior Prior, class Score>
requires record_generating_family<typename Prior::family>
class fem_record_gibbs
    : public record_frame<conjugate_record_model<Prior>,
                          record_release<detail::fem_kernel<typename Prior::family::record_type, Score>,
                                         detail::fem_contribution<typename Prior::family::record_type, Score>>> {
  using record = typename Prior::family::record_type;
  using release = record_release<detail::fem_kernel<record, Score>, detail::fem_contribution<record, Score>>;
  using base = record_frame<conjugate_record_model<Prior>, release>;

 public:
  /// The exponential family.
  using family = typename Prior::family;
  /// The mechanism.
  using mechanism_type = factored_exponential_mechanism<record, Score>;
  /// The most stored contributions, n |Z| (8 bytes each).
  static constexpr double max_contributions = 1e8;

  /// n: the public number of records (a whole number >= 1 with n |Z| <= 1e8); z: the released candidate index. theta
  /// starts from the prior and the records from f(. | theta). std::invalid_argument otherwise.
  template <random_engine G>
  fem_record_gibbs(const Prior& prior, const mechanism_type& mechanism, std::size_t z, double n, G& g)
      : base("fem_record_gibbs", {prior}, checked_count(mechanism, z, n), g, record_init::prior, make_release(mechanism, z)) {}

  /// u: the score vector of the latent records.
  const Eigen::VectorXd& scores() const noexcept { return this->template release_sum<0>(); }

 private:
  static double checked_count(const mechanism_type& mechanism, std::size_t z, double n) {
    constexpr const char* who = "fem_record_gibbs";
    mechanism.check_release(who, z);
    check_record_count(who, n);
    if (!(std::floor(n) == n && n * static_cast<double>(mechanism.candidates()) <= max_contributions))
      throw_invalid(who, "n", n, "a whole number with n x candidates <= 1e8");
    return n;
  }
  static release make_release(const mechanism_type& mechanism, std::size_t z) {
    const auto k = static_cast<Eigen::Index>(mechanism.candidates());
    return release({mechanism, static_cast<Eigen::Index>(z), Eigen::VectorXd::Zero(k)},
                   Eigen::VectorXd::Unit(k, static_cast<Eigen::Index>(z)), {mechanism});
  }
};

}  // namespace privpost
