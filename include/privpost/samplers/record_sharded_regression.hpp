// privpost/samplers/record_sharded_regression.hpp
// sharded_record_regression: the record-level linear regression sampler (samplers/record_regression.hpp: records
// (x_i, y_i) latent, clamped into the declared box as the data owner summed them) with the records in K shards, by the
// noise split of samplers/record_sharded.hpp. A sweep: (theta, sigma^2) | records by the NIG update on the unclamped
// Gram matrix, (mu_x, Sigma_x) | covariates (hierarchical law), w and the shards' shares y_k of the release (all from
// the chain's engine, the same on every process); then every shard's records at fixed y_k (from the shard's engine),
// alpha = min(1, N(y_k - s_k*; w / K) / N(y_k - s_k; w / K)) over the layout's D entries; then the shards' Gram
// matrices and released sums added exactly (one combine of (p + 1)(p + 2) / 2 + D exact sums). The target's marginal
// in (theta, sigma^2[, mu_x, Sigma_x], records) is record_regression's; the chain is the seed's and K's, wherever the
// shards are held. A sweep costs O(n D / processes).
//
//     sharded_record_regression chain(layout, prior, niw, box_x, box_y, laplace_mechanism(l1, eps), z, n, g,
//                                     record_sharding{8});
//     // over MPI: distributed::sharded_regression_records (distributed/mpi.hpp)
#pragma once

#include <Eigen/Cholesky>
#include <Eigen/Core>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/interval.hpp"
#include "privpost/core/math/exact_sum.hpp"
#include "privpost/core/numerical_events.hpp"
#include "privpost/core/random/normal.hpp"
#include "privpost/core/random/uniform.hpp"
#include "privpost/families/regression/covariate_models.hpp"
#include "privpost/families/regression/normal_inverse_gamma_regression.hpp"
#include "privpost/families/regression/regression_layout.hpp"
#include "privpost/mechanisms/reachable.hpp"
#include "privpost/samplers/record_regression.hpp"
#include "privpost/samplers/record_sharded.hpp"

namespace privpost {

/// The record-level regression sampler over (theta, sigma^2[, mu_x, Sigma_x], records) with the records in K shards
/// (see the file comment). Combine totals this process's exact sums over the processes holding shards (local_shards in
/// one process, distributed::shard_sums over MPI). Models privpost::sampler; parameter_vector() is (theta, sigma^2).
template <exact_scale_mixture_noise Mechanism, shard_combine Combine = local_shards>
requires std::same_as<typename Mechanism::vector_type, Eigen::VectorXd>
class sharded_record_regression {
 public:
  /// The most records a chain holds over all its shards.
  static constexpr double max_records = 1e9;

  /// Hierarchical covariates: (mu_x, Sigma_x) ~ covariate_prior (NIW), updated each sweep (the layout needs its
  /// intercept column). Arguments and errors as record_regression's, with n a whole number in [1, 1e9] and the
  /// sharding's (K in [1, min(n, 2^20)], the process in [0, processes)).
  template <random_engine G>
  sharded_record_regression(const regression_layout& layout, const nig_regression_prior& prior,
                            const niw_hyperprior& covariate_prior, const std::vector<interval>& covariate_bounds,
                            interval response_bounds, const Mechanism& mechanism, const Eigen::VectorXd& z, double n, G& g,
                            record_sharding sharding, Combine combine = {})
      : sharded_record_regression(layout, prior, covariate_bounds, response_bounds, mechanism, z, n, sharding,
                                  std::move(combine)) {
    hierarchical_.emplace(layout_, covariate_prior, g);
    factor_covariate_law();
    start(g);
  }

  /// Fixed covariates: x ~ N(law.mean, law.covariance) in every sweep.
  template <random_engine G>
  sharded_record_regression(const regression_layout& layout, const nig_regression_prior& prior, const normal_covariate_law& law,
                            const std::vector<interval>& covariate_bounds, interval response_bounds, const Mechanism& mechanism,
                            const Eigen::VectorXd& z, double n, G& g, record_sharding sharding, Combine combine = {})
      : sharded_record_regression(layout, prior, covariate_bounds, response_bounds, mechanism, z, n, sharding,
                                  std::move(combine)) {
    constexpr const char* f = "sharded_record_regression";
    check_size_match(f, "covariate law mean", law.mean.size(), "covariates d", layout_.covariates());
    check_finite(f, "covariate law mean", law.mean);
    check_symmetric_positive_definite(f, "covariate law covariance", law.covariance);
    mu_x_ = law.mean;
    sigma_x_ = law.covariance;
    factor_covariate_law();
    start(g);
  }

  /// One sweep (see the file comment).
  template <random_engine G>
  void step(G& g) {
    update_parameters(g);
    split_.redraw(
        z_, release_sum_, g, [&](int k) { return k % sharding_.processes == sharding_.process; },
        [&](int k, Eigen::Index j, double share) {
          shards_[static_cast<std::size_t>(k / sharding_.processes)].share(j) = share;
        });
    for (auto& sh : shards_) sweep(sh);
    combine_sums();
  }

  /// (theta, sigma^2).
  Eigen::VectorXd parameter_vector() const {
    Eigen::VectorXd v(theta_.theta.size() + 1);
    v << theta_.theta, theta_.variance;
    return v;
  }
  /// The current (theta, sigma^2).
  const regression_parameter& parameter() const noexcept { return theta_; }
  /// The Gram matrix [X~ y]^T [X~ y] of every shard's unclamped records (after the last combine).
  const Eigen::MatrixXd& gram() const noexcept { return gram_; }
  /// S: the sum of every clamped record's statistics (what the mechanism released a noisy copy of).
  const Eigen::VectorXd& release_sum() const noexcept { return release_sum_; }
  /// The noise variances w of the last sweep (0 before any).
  const Eigen::VectorXd& noise_variances() const noexcept { return split_.variances(); }
  /// @{
  /// The covariate law's current mean and covariance.
  const Eigen::VectorXd& covariate_mean() const noexcept { return hierarchical_ ? hierarchical_->mean() : mu_x_; }
  const Eigen::MatrixXd& covariate_covariance() const noexcept { return hierarchical_ ? hierarchical_->covariance() : sigma_x_; }
  /// @}
  /// How the records are split.
  const record_sharding& sharding() const noexcept { return sharding_; }
  /// The number of shards this process holds.
  std::size_t held_shards() const noexcept { return shards_.size(); }
  /// @{
  /// The latent covariates (d x n_k) and responses of held shard h.
  const Eigen::MatrixXd& shard_covariates(std::size_t h) const { return shards_.at(h).x; }
  const Eigen::VectorXd& shard_responses(std::size_t h) const { return shards_.at(h).y; }
  /// @}
  /// Accepted / proposed record updates of this process's shards so far (1 before any).
  double record_acceptance() const noexcept { return detail::shard_acceptance(shards_); }
  /// Nothing is ever repaired or retried: all zero.
  const numerical_events& events() const noexcept { return events_; }

 private:
  struct shard {
    int index = 0;
    std::mt19937_64 engine;
    Eigen::MatrixXd x, contributions, gram;  // d x n_k, D x n_k, (p + 1) x (p + 1) unclamped
    Eigen::VectorXd y, s, share;
    std::uint64_t proposed = 0, accepted = 0;
  };

  // The checks (record_regression's, and the sharding's) and the storage shared by both constructors.
  sharded_record_regression(const regression_layout& layout, const nig_regression_prior& prior,
                            const std::vector<interval>& covariate_bounds, interval response_bounds, const Mechanism& mechanism,
                            const Eigen::VectorXd& z, double n, record_sharding sharding, Combine combine)
      : layout_(layout),
        prior_(prior),
        posterior_(prior),
        covariate_bounds_(covariate_bounds),
        response_bounds_(response_bounds),
        combine_(std::move(combine)),
        n_(n),
        sharding_(detail::checked_sharding("sharded_record_regression", sharding, n, max_records, "a whole number in [1, 1e9]")),
        split_(mechanism, sharding_.shards, layout.size()) {
    constexpr const char* f = "sharded_record_regression";
    detail::check_regression_release(f, layout_, prior_, covariate_bounds, response_bounds, z);
    detail::check_regression_reachable(f, layout_, covariate_bounds, response_bounds, z, n, noise_scale(mechanism));
    // Each held record keeps its D contributions, as record_regression's records do: at most 1e8 stored a process.
    double held = 0.0;
    for (int k = sharding_.process; k < sharding_.shards; k += sharding_.processes)
      held += static_cast<double>(detail::shard_size(k, n, sharding_.shards));
    if (!(held * static_cast<double>(layout_.size()) <= record_regression<Mechanism>::max_stored_contributions))
      throw_invalid(f, "records held by this process", held,
                    "at most 1e8 / " + std::to_string(layout_.size()) +
                        " (n D <= 1e8 stored contributions a process; spread the shards over more processes)");
    z_ = z;
    const int p = layout_.columns();
    gram_.setZero(p + 1, p + 1);
    release_sum_.setZero(layout_.size());
    sums_.resize(static_cast<std::size_t>((p + 1) * (p + 2) / 2 + layout_.size()));
    x_new_.resize(layout_.covariates());
    e_.resize(layout_.covariates());
    u_.resize(p + 1);
    c_new_.resize(layout_.size());
    delta_.resize(layout_.size());
  }

  void factor_covariate_law() {
    llt_x_.compute(covariate_covariance());
    if (llt_x_.info() != Eigen::Success)
      throw std::domain_error("sharded_record_regression: the covariate covariance is not positive definite");
  }

  // A record (x_new_, returned y) from the model at the current parameters and covariate law, drawn from the shard's
  // engine; its contribution into c_new_.
  double draw_proposal(std::mt19937_64& engine) {
    const double y_new =
        detail::draw_regression_record(layout_, llt_x_, covariate_mean(), theta_.theta, theta_.variance, e_, x_new_, engine);
    detail::clamped_regression_contribution(layout_, covariate_bounds_, response_bounds_, x_new_, y_new, u_, c_new_);
    return y_new;
  }

  // theta from the prior, then each held shard's records from the model (its own engine), then the sums.
  template <random_engine G>
  void start(G& g) {
    prior_.draw(g, theta_);
    const detail::shard_seeds seeds(g);
    const int d = layout_.covariates(), p = layout_.columns();
    for (int k = sharding_.process; k < sharding_.shards; k += sharding_.processes) {
      shard sh;
      sh.index = k;
      seeds.seed(sh.engine, k);
      const auto size = static_cast<Eigen::Index>(detail::shard_size(k, n_, sharding_.shards));
      sh.x.resize(d, size);
      sh.y.resize(size);
      sh.contributions.resize(layout_.size(), size);
      sh.gram.setZero(p + 1, p + 1);
      sh.s.setZero(layout_.size());
      sh.share.setZero(layout_.size());
      for (Eigen::Index i = 0; i < size; ++i) {
        sh.y(i) = draw_proposal(sh.engine);
        sh.x.col(i) = x_new_;
      }
      resum(sh);
      shards_.push_back(std::move(sh));
    }
    combine_sums();
  }

  template <random_engine G>
  void update_parameters(G& g) {
    const int p = layout_.columns();
    prior_.update(gram_.topLeftCorner(p, p), gram_.col(p).head(p), gram_(p, p), n_, posterior_);
    posterior_.draw(g, theta_);
    if (hierarchical_) {
      hierarchical_->update(layout_, gram_, n_, g);
      factor_covariate_law();
    }
  }

  // Every record of the shard at fixed y_k, then its sums recomputed from its records (rounding never accumulates, and a
  // shard's sums depend on its records alone).
  void sweep(shard& sh) {
    for (Eigen::Index i = 0; i < sh.y.size(); ++i) {
      const double y_new = draw_proposal(sh.engine);
      ++sh.proposed;
      if (!(c_new_ == sh.contributions.col(i))) {
        delta_ = c_new_ - sh.contributions.col(i);
        const double l = split_.log_alpha(sh.share, delta_);
        if (l < 0.0 && !log_uniform_below(draw_uniform(sh.engine), l)) continue;
        sh.s += delta_;
        sh.share -= delta_;
        sh.contributions.col(i) = c_new_;
      }
      ++sh.accepted;
      sh.x.col(i) = x_new_;
      sh.y(i) = y_new;
    }
    resum(sh);
  }

  void resum(shard& sh) {
    sh.gram.setZero();
    sh.s.setZero();
    for (Eigen::Index i = 0; i < sh.y.size(); ++i) {
      detail::add_regression_row(layout_, sh.x.col(i), sh.y(i), u_, sh.gram);
      detail::clamped_regression_contribution(layout_, covariate_bounds_, response_bounds_, sh.x.col(i), sh.y(i), u_, c_new_);
      sh.contributions.col(i) = c_new_;
      sh.s += c_new_;
    }
  }

  // The Gram matrix's lower triangle and S over every shard: this process's shards added exactly, then the total over
  // processes.
  void combine_sums() {
    for (auto& x : sums_) x = exact_sum();
    const Eigen::Index p1 = layout_.columns() + 1;
    for (const auto& sh : shards_) {
      std::size_t at = 0;
      for (Eigen::Index j = 0; j < p1; ++j)
        for (Eigen::Index i = j; i < p1; ++i) sums_[at++].add(sh.gram(i, j));
      for (Eigen::Index k = 0; k < sh.s.size(); ++k) sums_[at++].add(sh.s(k));
    }
    combine_(std::span<exact_sum>(sums_));
    std::size_t at = 0;
    for (Eigen::Index j = 0; j < p1; ++j)
      for (Eigen::Index i = j; i < p1; ++i) gram_(i, j) = gram_(j, i) = sums_[at++].value();
    for (Eigen::Index k = 0; k < release_sum_.size(); ++k) release_sum_(k) = sums_[at++].value();
  }

  regression_layout layout_;
  nig_regression_prior prior_, posterior_;
  std::vector<interval> covariate_bounds_;
  interval response_bounds_;
  Combine combine_;
  double n_;
  record_sharding sharding_;
  detail::noise_split<Mechanism> split_;
  Eigen::VectorXd z_;
  std::optional<hierarchical_normal_covariates> hierarchical_;
  Eigen::VectorXd mu_x_;               // the fixed law's mean (unused with a hierarchical law)
  Eigen::MatrixXd sigma_x_;            // the fixed law's covariance (unused with a hierarchical law)
  Eigen::LLT<Eigen::MatrixXd> llt_x_;  // the current covariance's Cholesky factor
  regression_parameter theta_;
  std::vector<shard> shards_;
  std::vector<exact_sum> sums_;
  Eigen::MatrixXd gram_;
  Eigen::VectorXd release_sum_, x_new_, e_, u_, c_new_, delta_;
  numerical_events events_;
};

}  // namespace privpost
