// privpost/samplers/record_sharded_histogram.hpp
// sharded_histogram_gibbs: the record-level sampler of cell records given noisy linear queries of their histogram
// (samplers/record_histogram.hpp) with the records in K shards, by the noise split of samplers/record_sharded.hpp,
// for releases whose coordinate view is noise on the real line, Laplace or Gaussian (coordinate_noise::exact_split;
// lattice releases do not split exactly and are refused). A sweep: theta | h ~ Dirichlet(alpha + h) and its alias table, then
// per release r the noise variances and every shard's share of z_r - Q_r h (all from the chain's engine, the same on
// every process); then every shard's records at fixed shares, x* from the alias table (the shard's engine) and
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
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/math/exact_sum.hpp"
#include "privpost/core/numerical_events.hpp"
#include "privpost/core/random/categorical.hpp"
#include "privpost/core/random/dirichlet.hpp"
#include "privpost/core/random/uniform.hpp"
#include "privpost/mechanisms/linear_queries.hpp"
#include "privpost/mechanisms/noise_views.hpp"
#include "privpost/samplers/record_histogram.hpp"
#include "privpost/samplers/record_sharded.hpp"

namespace privpost {

/// The record-level sampler over (theta, x_1..x_n) for cell records with a Dirichlet(alpha) prior, given one or more
/// histogram_measurements of the same records with Laplace or Gaussian noise on the real line, with the records in K shards (see
/// the file comment). Combine totals this process's exact sums over the processes holding shards (local_shards in one process,
/// distributed::shard_sums over MPI). Models privpost::sampler; the parameter vector is theta (D cell probabilities).
/// Sweeps allocate nothing in one process.
template <shard_combine Combine = local_shards>
class sharded_histogram_gibbs {
 public:
  /// The most records a chain holds over all its shards.
  static constexpr double max_records = 1e9;

  /// As histogram_gibbs (alpha: D finite entries > 0; n: a whole number, here in [1, 1e9]; at least one measurement,
  /// every release within reach), with the sharding (K in [1, min(n, 2^20)], the process in [0, processes)) and every
  /// measurement's noise Laplace or Gaussian on the real line (coordinate_noise::exact_split). theta starts from the prior and
  /// the records from Categorical(theta). std::invalid_argument naming the problem otherwise.
  template <random_engine G>
  sharded_histogram_gibbs(Eigen::VectorXd alpha, double n, std::vector<histogram_measurement> measurements, G& g,
                          record_sharding sharding, Combine combine = {})
      : alpha_(std::move(alpha)),
        measurements_(std::move(measurements)),
        place_("sharded_histogram_gibbs", sharding, n, std::move(combine)) {
    constexpr const char* who = "sharded_histogram_gibbs";
    detail::check_histogram_chain(who, alpha_, n, max_records, "a whole number in [1, 1e9]", measurements_);
    for (std::size_t r = 0; r < measurements_.size(); ++r) {
      const auto& noise = measurements_[r].noise();
      if (!noise.exact_split())
        throw_invalid(who, "measurement " + std::to_string(r + 1) + "'s mechanism", static_cast<double>(r + 1),
                      "noise on the real line, Laplace or Gaussian (lattice noise does not split exactly over shards)");
      splits_.emplace_back(noise, place_.sharding().shards, measurements_[r].z().size());
      sums_.emplace_back(measurements_[r].z().size());
    }
    const auto d = alpha_.size();
    theta_.resize(d);
    posterior_alpha_.resize(d);
    histogram_ = Eigen::VectorXd::Zero(d);
    cell_sums_.resize(static_cast<std::size_t>(d));
    std::size_t rows = 0;
    for (const auto& m : measurements_) rows = std::max(rows, m.queries().rows());
    scratch_.assign(rows, 0.0);
    // A record's move changes at most the two cells' columns' rows of every release: sized once, sweeps allocate nothing.
    std::size_t widest = 0;
    for (std::size_t c = 0; c < static_cast<std::size_t>(d); ++c) {
      std::size_t w = 0;
      for (const auto& m : measurements_) w += m.queries().column_rows(c).size();
      widest = std::max(widest, w);
    }
    changes_.reserve(2 * widest);
    draw_dirichlet(g, alpha_, theta_);
    alias_.build(std::span<const double>(theta_.data(), static_cast<std::size_t>(d)));
    place_.place(g, [&](shard& sh, std::size_t size) {
      sh.records.resize(size);
      sh.histogram = Eigen::VectorXd::Zero(d);
      for (auto& x : sh.records) {
        x = static_cast<std::uint32_t>(alias_.draw(sh.engine));
        sh.histogram(x) += 1.0;
      }
      for (const auto& m : measurements_) sh.shares.push_back(Eigen::VectorXd::Zero(m.z().size()));
    });
    combine_histograms();
  }

  /// One sweep (see the file comment).
  template <random_engine G>
  void step(G& g) {
    posterior_alpha_ = alpha_ + histogram_;
    draw_dirichlet(g, posterior_alpha_, theta_);
    alias_.build(std::span<const double>(theta_.data(), static_cast<std::size_t>(theta_.size())));
    for (std::size_t r = 0; r < measurements_.size(); ++r) {
      measurements_[r].queries().apply(histogram_, sums_[r]);
      place_.redraw_shares(splits_[r], measurements_[r].z(), sums_[r], g,
                           [r](shard& sh) -> Eigen::VectorXd& { return sh.shares[r]; });
    }
    for (auto& sh : place_.shards()) sweep(sh);
    combine_histograms();
  }

  /// The current theta (D cell probabilities).
  const Eigen::VectorXd& parameter_vector() const noexcept { return theta_; }
  /// The histogram h of every shard's records (after the last combine).
  const Eigen::VectorXd& histogram() const noexcept { return histogram_; }
  /// The number of cells D.
  std::size_t cells() const noexcept { return static_cast<std::size_t>(theta_.size()); }
  /// How the records are split.
  const record_sharding& sharding() const noexcept { return place_.sharding(); }
  /// The number of shards this process holds.
  std::size_t held_shards() const noexcept { return place_.shards().size(); }
  /// The records' cells of held shard h.
  const std::vector<std::uint32_t>& shard_records(std::size_t h) const { return place_.held(h).records; }
  /// Accepted / proposed record updates of this process's shards so far (1 before any).
  double record_acceptance() const noexcept { return place_.acceptance(); }
  /// Nothing is ever repaired or retried: all zero.
  const numerical_events& events() const noexcept { return events_; }

 private:
  struct shard : detail::shard_base {
    std::vector<std::uint32_t> records;
    Eigen::VectorXd histogram;            // h_k
    std::vector<Eigen::VectorXd> shares;  // per release: y_rk - Q_r h_k
  };
  struct change {
    std::uint32_t measurement, row;
    double delta;
  };

  // Fills changes_ with every (release, row) whose value moves when a record leaves `from` for `to`; returns the
  // kernel's log alpha. Marginal tables (aligned) position by position; any other Q through the zeroed scratch, as
  // histogram_gibbs::evaluate.
  double evaluate(const shard& sh, std::uint32_t from, std::uint32_t to) {
    changes_.clear();
    double log_alpha = 0.0;
    auto add = [&](std::size_t r, std::uint32_t row, double delta) {
      log_alpha += splits_[r].half_precision(row) * delta * (2.0 * sh.shares[r](row) - delta);
      changes_.push_back({static_cast<std::uint32_t>(r), row, delta});
    };
    for (std::size_t r = 0; r < measurements_.size(); ++r) {
      const auto& q = measurements_[r].queries();
      const auto rows_a = q.column_rows(from), rows_b = q.column_rows(to);
      if (q.aligned()) {
        for (std::size_t p = 0; p < rows_a.size(); ++p) {
          if (rows_a[p] == rows_b[p]) continue;
          add(r, rows_a[p], -1.0);
          add(r, rows_b[p], 1.0);
        }
        continue;
      }
      const auto vals_a = q.column_values(from), vals_b = q.column_values(to);
      for (std::size_t k = 0; k < rows_a.size(); ++k) scratch_[rows_a[k]] -= vals_a[k];
      for (std::size_t k = 0; k < rows_b.size(); ++k) scratch_[rows_b[k]] += vals_b[k];
      auto visit = [&](std::uint32_t row) {
        const double delta = scratch_[row];
        if (delta == 0.0) return;
        scratch_[row] = 0.0;
        add(r, row, delta);
      };
      for (std::uint32_t row : rows_a) visit(row);
      for (std::uint32_t row : rows_b) visit(row);
    }
    return log_alpha;
  }

  void sweep(shard& sh) {
    for (auto& x : sh.records) {
      const auto proposal = static_cast<std::uint32_t>(alias_.draw(sh.engine));
      ++sh.proposed;
      if (proposal != x) {
        const double log_alpha = evaluate(sh, x, proposal);
        if (log_alpha < 0.0 && !log_uniform_below(draw_uniform(sh.engine), log_alpha)) continue;
        for (const auto& c : changes_) sh.shares[c.measurement](c.row) -= c.delta;
        sh.histogram(x) -= 1.0;
        sh.histogram(proposal) += 1.0;
        x = proposal;
      }
      ++sh.accepted;
    }
  }

  void combine_histograms() {
    place_.combine(std::span<exact_sum>(cell_sums_), [](const shard& sh, auto put) {
      for (Eigen::Index c = 0; c < sh.histogram.size(); ++c) put(sh.histogram(c));
    });
    for (Eigen::Index c = 0; c < histogram_.size(); ++c) histogram_(c) = cell_sums_[static_cast<std::size_t>(c)].value();
  }

  Eigen::VectorXd alpha_;
  std::vector<histogram_measurement> measurements_;
  detail::shard_placement<shard, Combine> place_;
  std::vector<detail::noise_split<coordinate_noise>> splits_;
  std::vector<Eigen::VectorXd> sums_;  // Q_r h
  std::vector<exact_sum> cell_sums_;
  std::vector<change> changes_;
  std::vector<double> scratch_;
  Eigen::VectorXd theta_, posterior_alpha_, histogram_;
  alias_table alias_;
  numerical_events events_;
};

}  // namespace privpost
