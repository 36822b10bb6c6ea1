// privpost/samplers/record_sharded_regression.hpp
// sharded_record_regression: the record-level linear regression sampler (samplers/record_regression.hpp: records
// (x_i, y_i) latent, clamped into the declared box as the data owner summed them) with the records in K shards, by the
// noise split of samplers/record_sharded.hpp: sharded_record_frame over record_regression's model. A sweep: (theta, sigma^2) |
// records by the NIG update on the unclamped Gram matrix, (mu_x, Sigma_x) | covariates (hierarchical law), w and the shards'
// shares y_k of the release (all from the chain's engine, the same on every process); then every shard's records at fixed y_k
// (from the shard's engine), alpha = min(1, N(y_k - s_k*; w / K) / N(y_k - s_k; w / K)) over the layout's D entries; then the
// shards' Gram matrices and released sums added exactly (one combine of (p + 1)^2 + D exact sums). The target's marginal in
// (theta, sigma^2[, mu_x, Sigma_x], records) is record_regression's; the chain is the seed's and K's, wherever the shards are
// held. A sweep costs O(n D / processes).
//
//     sharded_record_regression chain(layout, prior, niw, box_x, box_y, laplace_mechanism(l1, eps), z, n, g,
//                                     record_sharding{8});
//     // over MPI: distributed::sharded_regression_records (distributed/mpi.hpp)
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/interval.hpp"
#include "privpost/families/regression/covariate_models.hpp"
#include "privpost/families/regression/normal_inverse_gamma_regression.hpp"
#include "privpost/families/regression/regression_layout.hpp"
#include "privpost/mechanisms/reachable.hpp"
#include "privpost/samplers/record_regression.hpp"
#include "privpost/samplers/record_sharded.hpp"

namespace privpost {

/// The record-level regression sampler over (theta, sigma^2[, mu_x, Sigma_x], records) with the records in K shards
/// (see the file comment): sharded_record_frame over regression_record_model. Combine totals this process's exact sums
/// over the processes holding shards (local_shards in one process, distributed::shard_sums over MPI). Models
/// privpost::sampler; parameter_vector() is (theta, sigma^2).
template <exact_scale_mixture_noise Mechanism, shard_combine Combine = local_shards>
requires std::same_as<typename Mechanism::vector_type, Eigen::VectorXd>
class sharded_record_regression : public sharded_record_frame<regression_record_model, record_release<Mechanism>, Combine> {
  using base = sharded_record_frame<regression_record_model, record_release<Mechanism>, Combine>;

 public:
  /// Hierarchical covariates: (mu_x, Sigma_x) ~ covariate_prior (NIW), updated each sweep (the layout needs its
  /// intercept column). Arguments and errors as record_regression's, with n a whole number in [1, 1e9] and the
  /// sharding's (K in [1, min(n, 2^20)], the process in [0, processes)).
  template <random_engine G>
  sharded_record_regression(const regression_layout& layout, const nig_regression_prior& prior,
                            const niw_hyperprior& covariate_prior, const std::vector<interval>& covariate_bounds,
                            interval response_bounds, const Mechanism& mechanism, const Eigen::VectorXd& z, double n, G& g,
                            record_sharding sharding, Combine combine = {})
      : base("sharded_record_regression",
             checked_model(layout, prior, covariate_bounds, response_bounds, mechanism, z, n, sharding)
                 .set_hierarchical(covariate_prior, g),
             n, g, sharding, record_release<Mechanism>(mechanism, z), std::move(combine)) {}

  /// Fixed covariates: x ~ N(law.mean, law.covariance) in every sweep.
  template <random_engine G>
  sharded_record_regression(const regression_layout& layout, const nig_regression_prior& prior, const normal_covariate_law& law,
                            const std::vector<interval>& covariate_bounds, interval response_bounds, const Mechanism& mechanism,
                            const Eigen::VectorXd& z, double n, G& g, record_sharding sharding, Combine combine = {})
      : base("sharded_record_regression",
             checked_model(layout, prior, covariate_bounds, response_bounds, mechanism, z, n, sharding)
                 .set_fixed(law, "sharded_record_regression"),
             n, g, sharding, record_release<Mechanism>(mechanism, z), std::move(combine)) {}

  /// The Gram matrix [X~ y]^T [X~ y] of every shard's unclamped records (after the last combine).
  const Eigen::MatrixXd& gram() const noexcept { return base::summary(); }
  /// @{
  /// The covariate law's current mean and covariance.
  const Eigen::VectorXd& covariate_mean() const noexcept { return this->model().covariate_mean(); }
  const Eigen::MatrixXd& covariate_covariance() const noexcept { return this->model().covariate_covariance(); }
  /// @}
  /// @{
  /// The latent covariates (d x n_k) and responses of held shard h.
  Eigen::MatrixXd shard_covariates(std::size_t h) const {
    const auto& records = this->shard_records(h);
    Eigen::MatrixXd x(this->model().layout().covariates(), static_cast<Eigen::Index>(records.size()));
    for (std::size_t i = 0; i < records.size(); ++i) x.col(static_cast<Eigen::Index>(i)) = records[i].x;
    return x;
  }
  Eigen::VectorXd shard_responses(std::size_t h) const {
    const auto& records = this->shard_records(h);
    Eigen::VectorXd y(static_cast<Eigen::Index>(records.size()));
    for (std::size_t i = 0; i < records.size(); ++i) y(static_cast<Eigen::Index>(i)) = records[i].y;
    return y;
  }
  /// @}

 private:
  // record_regression's checks, the sharding's, and at most 1e8 contributions stored by this process.
  static regression_record_model checked_model(const regression_layout& layout, const nig_regression_prior& prior,
                                               const std::vector<interval>& covariate_bounds, interval response_bounds,
                                               const Mechanism& mechanism, const Eigen::VectorXd& z, double n,
                                               const record_sharding& sharding) {
    constexpr const char* f = "sharded_record_regression";
    detail::check_sharding(f, sharding, n);
    detail::check_regression_release(f, layout, prior, covariate_bounds, response_bounds, z);
    detail::check_regression_reachable(f, layout, covariate_bounds, response_bounds, z, n, noise_scale(mechanism));
    // Each held record keeps its D contributions, as record_regression's records do: at most 1e8 stored a process.
    double held = 0.0;
    for (int k = sharding.process; k < sharding.shards; k += sharding.processes)
      held += static_cast<double>(detail::shard_size(k, n, sharding.shards));
    if (!(held * static_cast<double>(layout.size()) <= record_regression<Mechanism>::max_stored_contributions))
      throw_invalid(f, "records held by this process", held,
                    "at most 1e8 / " + std::to_string(layout.size()) +
                        " (n D <= 1e8 stored contributions a process; spread the shards over more processes)");
    return regression_record_model(layout, prior, covariate_bounds, response_bounds);
  }
};

}  // namespace privpost
