// privpost/samplers/record_sharded_histogram.hpp
// sharded_histogram_gibbs: the record-level sampler of cell records given noisy linear queries of their histogram
// (samplers/record_histogram.hpp) with the records in K shards: sharded_record_frame (samplers/record_sharded.hpp)
// over dirichlet_cell_model and linear_query_releases, for releases whose coordinate view is noise on the real line,
// Laplace or Gaussian (coordinate_noise::exact_split; lattice releases do not split exactly and are refused). A sweep:
// theta | h ~ Dirichlet(alpha + h) and its alias table, then per release r the noise variances and every shard's share
// of z_r - Q_r h (all from the chain's engine, the same on every process); then every shard's records at fixed shares,
// x* from the alias table (the shard's engine) and
//     alpha = min(1, prod_r N(y_rk - Q_r h_k*; w_r / K) / N(y_rk - Q_r h_k; w_r / K)),
// touching only the rows of the two cells' columns; then the shards' histograms added (one combine of D exact sums;
// the counts are whole numbers, so any order gives the same total). The target's marginal in (theta, records) is
// histogram_gibbs's, jointly over several releases of the same records; the chain is the seed's and K's, wherever the
// shards are held.
//
//     std::vector<histogram_measurement> m;
//     m.emplace_back(q, laplace_mechanism(q.l1_sensitivity(), 1.0), z);
//     sharded_histogram_gibbs chain(Eigen::VectorXd::Ones(q.cells()), 1e7, m, g, record_sharding{16});
//     // over MPI: distributed::sharded_histogram_records (distributed/mpi.hpp)
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/math/exact_sum.hpp"
#include "privpost/mechanisms/linear_queries.hpp"
#include "privpost/mechanisms/noise_views.hpp"
#include "privpost/samplers/record_histogram.hpp"
#include "privpost/samplers/record_sharded.hpp"

namespace privpost {

namespace detail {
// A shard's release of linear_query_releases: its share e_r = y_rk - Q_r h_k of every release, with a state of its own
// in the shard's record scan (record_release_state) that, per proposal, touches only the rows of the two cells'
// columns. The measurements are shared by every shard (immutable).
struct query_shares {
  std::shared_ptr<const std::vector<histogram_measurement>> measurements;

  class share_state {
   public:
    static constexpr bool exact_sums = true;
    bool changed = false;

    explicit share_state(query_shares r) : measurements_(std::move(r.measurements)) {
      std::size_t rows = 0, widest = 0;
      for (const auto& m : *measurements_) {
        shares_.push_back(Eigen::VectorXd::Zero(static_cast<Eigen::Index>(m.queries().rows())));
        rows = std::max(rows, m.queries().rows());
      }
      half_precision_ = shares_;
      scratch_.assign(rows, 0.0);
      // A record's move changes at most the two cells' columns' rows of every release: sized once.
      for (std::size_t c = 0; c < measurements_->front().queries().cells(); ++c) {
        std::size_t w = 0;
        for (const auto& m : *measurements_) w += m.queries().column_rows(c).size();
        widest = std::max(widest, w);
      }
      changes_.reserve(2 * widest);
    }

    template <class Model>
    void fill(const Model&, const std::vector<std::uint32_t>&) {}
    // log of the shares' kernel prod_r N(e_r; 0, w_r / K) up to its constant.
    double log_density() const noexcept {
      double l = 0.0;
      for (std::size_t r = 0; r < shares_.size(); ++r) l -= (half_precision_[r].array() * shares_[r].array().square()).sum();
      return l;
    }

    template <class Model>
    double evaluate(const Model&, std::size_t, std::uint32_t from, std::uint32_t to) {
      changed = from != to;
      return changed ? log_alpha(from, to) : 0.0;
    }
    template <class Model>
    double log_change(const Model&, std::size_t, std::uint32_t from, std::uint32_t to) const {
      return from == to ? 0.0 : log_alpha(from, to);
    }
    void accept(std::size_t, std::uint32_t, std::uint32_t) {
      if (!changed) return;
      for (const auto& c : changes_) shares_[c.measurement](c.row) -= c.delta;
    }
    // The shares are redrawn every sweep: nothing to settle.
    template <class Model, class T>
    void settle(const Model&, const std::vector<std::uint32_t>&, const T&) {}
    template <class Model, class T>
    void resum(const Model&, const std::vector<std::uint32_t>&, const T&, bool) {}

    // Release r's share (written by the split) and its weights K / (2 w_rj).
    Eigen::VectorXd& share(std::size_t r) noexcept { return shares_[r]; }
    void set_weights(std::size_t r, const noise_split<coordinate_noise>& split) {
      for (Eigen::Index j = 0; j < half_precision_[r].size(); ++j) half_precision_[r](j) = split.half_precision(j);
    }

   private:
    struct change {
      std::uint32_t measurement, row;
      double delta;
    };

    // Fills changes_ with every (release, row) whose value moves when a record leaves `from` for `to`; returns the
    // kernel's log alpha. Marginal tables (aligned) position by position; any other Q through the zeroed scratch.
    double log_alpha(std::uint32_t from, std::uint32_t to) const {
      changes_.clear();
      double l = 0.0;
      auto add = [&](std::size_t r, std::uint32_t row, double delta) {
        l += half_precision_[r](row) * delta * (2.0 * shares_[r](row) - delta);
        changes_.push_back({static_cast<std::uint32_t>(r), row, delta});
      };
      for (std::size_t r = 0; r < measurements_->size(); ++r) {
        const auto& q = (*measurements_)[r].queries();
        const auto rows_a = q.column_rows(from), rows_b = q.column_rows(to);
        if (q.aligned()) {
          for (std::size_t p = 0; p < rows_a.size(); ++p) {
            if (rows_a[p] == rows_b[p]) continue;
            add(r, rows_a[p], -1.0);
            add(r, rows_b[p], 1.0);
          }
          continue;
        }
        scattered_rows(q, from, to, scratch_.data(), [&](std::uint32_t row, double delta) { add(r, row, delta); });
      }
      return l;
    }

    std::shared_ptr<const std::vector<histogram_measurement>> measurements_;
    std::vector<Eigen::VectorXd> shares_, half_precision_;
    // Scratch of log_alpha, which log_change (const) also uses: all zero, or holding the last evaluation's changes.
    mutable std::vector<change> changes_;
    mutable std::vector<double> scratch_;
  };
  template <class Model>
  using state = share_state;
};

// linear_query_releases split over shards: per release, its noise_split of z_r - Q_r h (h the combined histogram,
// the model's statistic), delivered into every held shard's share state. The combine adds nothing beyond h.
template <class Model>
class release_split<Model, linear_query_releases> {
 public:
  using shard_release = query_shares;
  using vector_type = Eigen::VectorXd;

  release_split(linear_query_releases release, int shards)
      : measurements_(std::make_shared<const std::vector<histogram_measurement>>(std::move(release.measurements))) {
    for (const auto& m : *measurements_) {
      splits_.emplace_back(m.noise(), shards, m.z().size());
      sums_.emplace_back(m.z().size());
    }
  }

  // histogram_gibbs's checks with n up to 1e9, and every release's noise on the real line (exact_split).
  void check(const char* who, const Model& m, const typename Model::parameter_type&, double n) const {
    detail::check_histogram_chain(who, m.alpha, n, 1e9, "a whole number in [1, 1e9]", *measurements_);
    for (std::size_t r = 0; r < measurements_->size(); ++r)
      if (!(*measurements_)[r].noise().exact_split())
        throw_invalid(who, "measurement " + std::to_string(r + 1) + "'s mechanism", static_cast<double>(r + 1),
                      "noise on the real line, Laplace or Gaussian (lattice noise does not split exactly over shards)");
  }

  shard_release release() const { return {measurements_}; }
  void hold(std::size_t) {}
  std::size_t sum_count() const noexcept { return 0; }
  template <class Scan, class Put>
  static void put(const Scan&, Put&) {}
  void take(const exact_sum*) {}

  // Per release: Q_r h, w_r and every shard's share from the chain's engine, into the held shards' states.
  template <class Place, random_engine G>
  void redraw(Place& place, const Eigen::VectorXd& histogram, G& g) {
    for (std::size_t r = 0; r < measurements_->size(); ++r) {
      (*measurements_)[r].queries().apply(histogram, sums_[r]);
      place.redraw_shares(splits_[r], (*measurements_)[r].z(), sums_[r], g, [&](std::size_t h) -> Eigen::VectorXd& {
        return place.shards()[h].scan->template state<0>().share(r);
      });
      for (auto& sh : place.shards()) sh.scan->template state<0>().set_weights(r, splits_[r]);
    }
  }

 private:
  std::shared_ptr<const std::vector<histogram_measurement>> measurements_;
  std::vector<noise_split<coordinate_noise>> splits_;
  std::vector<Eigen::VectorXd> sums_;  // Q_r h
};
}  // namespace detail

/// The record-level sampler over (theta, x_1..x_n) for cell records with a Dirichlet(alpha) prior, given one or more
/// histogram_measurements of the same records with Laplace or Gaussian noise on the real line, with the records in K
/// shards (see the file comment): sharded_record_frame over dirichlet_cell_model and linear_query_releases. Combine
/// totals this process's exact sums over the processes holding shards (local_shards in one process,
/// distributed::shard_sums over MPI). Models privpost::sampler; the parameter vector is theta (D cell probabilities).
/// Sweeps allocate nothing in one process.
template <shard_combine Combine = local_shards>
class sharded_histogram_gibbs : public sharded_record_frame<dirichlet_cell_model, linear_query_releases, Combine> {
  using base = sharded_record_frame<dirichlet_cell_model, linear_query_releases, Combine>;

 public:
  /// As histogram_gibbs (alpha: D finite entries > 0; n: a whole number, here in [1, 1e9]; at least one measurement,
  /// every release within reach), with the sharding (K in [1, min(n, 2^20)], the process in [0, processes)) and every
  /// measurement's noise Laplace or Gaussian on the real line (coordinate_noise::exact_split). theta starts from the
  /// prior and the records from Categorical(theta). std::invalid_argument naming the problem otherwise.
  template <random_engine G>
  sharded_histogram_gibbs(Eigen::VectorXd alpha, double n, std::vector<histogram_measurement> measurements, G& g,
                          record_sharding sharding, Combine combine = {})
      : base("sharded_histogram_gibbs", dirichlet_cell_model(std::move(alpha)), n, g, sharding,
             linear_query_releases(std::move(measurements)), std::move(combine)) {}

  /// The current theta (D cell probabilities).
  const Eigen::VectorXd& parameter_vector() const noexcept { return this->parameter().p; }
  /// The histogram h of every shard's records (after the last combine).
  const Eigen::VectorXd& histogram() const noexcept { return this->statistic(); }
  /// The number of cells D.
  std::size_t cells() const noexcept { return static_cast<std::size_t>(this->model().alpha.size()); }
};

}  // namespace privpost
