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

#include <Eigen/Core>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <span>
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
    model_.set_hierarchical(covariate_prior, g);
    start(g);
  }

  /// Fixed covariates: x ~ N(law.mean, law.covariance) in every sweep.
  template <random_engine G>
  sharded_record_regression(const regression_layout& layout, const nig_regression_prior& prior, const normal_covariate_law& law,
                            const std::vector<interval>& covariate_bounds, interval response_bounds, const Mechanism& mechanism,
                            const Eigen::VectorXd& z, double n, G& g, record_sharding sharding, Combine combine = {})
      : sharded_record_regression(layout, prior, covariate_bounds, response_bounds, mechanism, z, n, sharding,
                                  std::move(combine)) {
    model_.set_fixed(law, "sharded_record_regression");
    start(g);
  }

  /// One sweep (see the file comment).
  template <random_engine G>
  void step(G& g) {
    model_.update_from_gram(theta_, gram_, n_, g);
    place_.redraw_shares(split_, z_, release_sum_, g, [](shard& sh) -> Eigen::VectorXd& { return sh.share; });
    for (auto& sh : place_.shards()) sweep(sh);
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
  const Eigen::VectorXd& covariate_mean() const noexcept { return model_.covariate_mean(); }
  const Eigen::MatrixXd& covariate_covariance() const noexcept { return model_.covariate_covariance(); }
  /// @}
  /// How the records are split.
  const record_sharding& sharding() const noexcept { return place_.sharding(); }
  /// The number of shards this process holds.
  std::size_t held_shards() const noexcept { return place_.shards().size(); }
  /// @{
  /// The latent covariates (d x n_k) and responses of held shard h.
  const Eigen::MatrixXd& shard_covariates(std::size_t h) const { return place_.held(h).x; }
  const Eigen::VectorXd& shard_responses(std::size_t h) const { return place_.held(h).y; }
  /// @}
  /// Accepted / proposed record updates of this process's shards so far (1 before any).
  double record_acceptance() const noexcept { return place_.acceptance(); }
  /// Nothing is ever repaired or retried: all zero.
  const numerical_events& events() const noexcept { return events_; }

 private:
  struct shard : detail::shard_base {
    Eigen::MatrixXd x, contributions, gram;  // d x n_k, D x n_k, (p + 1) x (p + 1) unclamped
    Eigen::VectorXd y, s, share;
  };

  // The checks (record_regression's, and the sharding's) and the storage shared by both constructors.
  sharded_record_regression(const regression_layout& layout, const nig_regression_prior& prior,
                            const std::vector<interval>& covariate_bounds, interval response_bounds, const Mechanism& mechanism,
                            const Eigen::VectorXd& z, double n, record_sharding sharding, Combine combine)
      : layout_(layout),
        model_(layout, prior, covariate_bounds, response_bounds),
        n_(n),
        place_("sharded_record_regression", sharding, n, std::move(combine)),
        split_(mechanism, place_.sharding().shards, layout.size()) {
    constexpr const char* f = "sharded_record_regression";
    detail::check_regression_release(f, layout_, prior, covariate_bounds, response_bounds, z);
    detail::check_regression_reachable(f, layout_, covariate_bounds, response_bounds, z, n, noise_scale(mechanism));
    // Each held record keeps its D contributions, as record_regression's records do: at most 1e8 stored a process.
    double held = 0.0;
    const record_sharding& sh = place_.sharding();
    for (int k = sh.process; k < sh.shards; k += sh.processes) held += static_cast<double>(detail::shard_size(k, n, sh.shards));
    if (!(held * static_cast<double>(layout_.size()) <= record_regression<Mechanism>::max_stored_contributions))
      throw_invalid(f, "records held by this process", held,
                    "at most 1e8 / " + std::to_string(layout_.size()) +
                        " (n D <= 1e8 stored contributions a process; spread the shards over more processes)");
    z_ = z;
    const int p = layout_.columns();
    gram_.setZero(p + 1, p + 1);
    release_sum_.setZero(layout_.size());
    sums_.resize(static_cast<std::size_t>((p + 1) * (p + 2) / 2 + layout_.size()));
    proposal_.x.resize(layout_.covariates());
    u_.resize(p + 1);
    c_new_.resize(layout_.size());
    delta_.resize(layout_.size());
  }

  // A record (proposal_) from the model at the current parameters and covariate law, drawn from the shard's engine;
  // its contribution into c_new_.
  void draw_proposal(std::mt19937_64& engine) {
    model_.draw_record(theta_, 0, engine, proposal_);
    model_.contribution(proposal_, 0, c_new_);
  }

  // theta from the prior, then each held shard's records from the model (its own engine), then the sums.
  template <random_engine G>
  void start(G& g) {
    theta_ = model_.draw_prior(g);
    const int d = layout_.covariates(), p = layout_.columns();
    place_.place(g, [&](shard& sh, std::size_t n_k) {
      const auto size = static_cast<Eigen::Index>(n_k);
      sh.x.resize(d, size);
      sh.y.resize(size);
      sh.contributions.resize(layout_.size(), size);
      sh.gram.setZero(p + 1, p + 1);
      sh.s.setZero(layout_.size());
      sh.share.setZero(layout_.size());
      for (Eigen::Index i = 0; i < size; ++i) {
        draw_proposal(sh.engine);
        sh.x.col(i) = proposal_.x;
        sh.y(i) = proposal_.y;
      }
      resum(sh);
    });
    combine_sums();
  }

  // Every record of the shard at fixed y_k, then its sums recomputed from its records (rounding never accumulates, and a
  // shard's sums depend on its records alone).
  void sweep(shard& sh) {
    for (Eigen::Index i = 0; i < sh.y.size(); ++i) {
      draw_proposal(sh.engine);
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
      sh.x.col(i) = proposal_.x;
      sh.y(i) = proposal_.y;
    }
    resum(sh);
  }

  void resum(shard& sh) {
    sh.gram.setZero();
    sh.s.setZero();
    for (Eigen::Index i = 0; i < sh.y.size(); ++i) {
      proposal_.x = sh.x.col(i);  // (into its storage: no allocation)
      proposal_.y = sh.y(i);
      detail::add_regression_row(layout_, proposal_.x, proposal_.y, u_, sh.gram);
      model_.contribution(proposal_, 0, c_new_);
      sh.contributions.col(i) = c_new_;
      sh.s += c_new_;
    }
  }

  // The Gram matrix's lower triangle and S over every shard: this process's shards added exactly, then the total over
  // processes.
  void combine_sums() {
    const Eigen::Index p1 = layout_.columns() + 1;
    place_.combine(std::span<exact_sum>(sums_), [p1](const shard& sh, auto put) {
      for (Eigen::Index j = 0; j < p1; ++j)
        for (Eigen::Index i = j; i < p1; ++i) put(sh.gram(i, j));
      for (Eigen::Index k = 0; k < sh.s.size(); ++k) put(sh.s(k));
    });
    std::size_t at = 0;
    for (Eigen::Index j = 0; j < p1; ++j)
      for (Eigen::Index i = j; i < p1; ++i) gram_(i, j) = gram_(j, i) = sums_[at++].value();
    for (Eigen::Index k = 0; k < release_sum_.size(); ++k) release_sum_(k) = sums_[at++].value();
  }

  regression_layout layout_;
  regression_record_model model_;  // the prior, the covariate law and the record law: record_regression's
  double n_;
  detail::shard_placement<shard, Combine> place_;
  detail::noise_split<Mechanism> split_;
  Eigen::VectorXd z_;
  regression_parameter theta_;
  regression_record proposal_;
  std::vector<exact_sum> sums_;
  Eigen::MatrixXd gram_;
  Eigen::VectorXd release_sum_, u_, c_new_, delta_;
  numerical_events events_;
};

}  // namespace privpost
