// privpost/testing/histogram_study.hpp
// The simulation-based calibration study of noisy marginals (docs/histogram-measurements.md B.9-4): per trial the cell
// probabilities theta ~ Dirichlet(alpha) of a table with the given levels, n records ~ Categorical(theta), and one
// release of the table's declared queries (its marginals, or the histogram itself); methods: records (histogram_gibbs,
// exact), sharded (sharded_histogram_gibbs, the records in `shards` shards; Laplace and Gaussian releases) and, for
// identity queries only, naive (Dirichlet(alpha + max(z, 0)), the noisy counts as if exact: marginals
// give no histogram to plug in). Parameters: the D cell probabilities. privpost-calibrate --model marginals runs it.
#pragma once

#include <Eigen/Core>
#include <cstddef>
#include <span>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "privpost/core/random/categorical.hpp"
#include "privpost/core/random/dirichlet.hpp"
#include "privpost/inference/calibration_study.hpp"
#include "privpost/mechanisms/linear_queries.hpp"
#include "privpost/samplers/record_histogram.hpp"
#include "privpost/samplers/record_sharded_histogram.hpp"

namespace privpost {

/// One trial of the histogram study: the true cell probabilities and the release.
struct histogram_trial {
  /// theta, the D cell probabilities.
  Eigen::VectorXd truth;
  /// The released values of the queries.
  Eigen::VectorXd z;
};

/// The settings of the histogram study.
struct histogram_study_settings {
  /// Records per trial (a whole number >= 1).
  double n = 20;
  /// Burn-in sweeps of each record-level chain.
  int burnin = 500;
  /// Kept sweeps of each chain (and naive draws).
  int draws = 2000;
  /// Keep every thin-th sweep.
  int thin = 1;
  /// Methods among records, sharded and naive (naive with identity queries only).
  std::vector<std::string> methods = {"records"};
  /// The shards of the sharded method.
  int shards = 4;
};

/// The study of queries q (of a table with q.cells() cells) released by mechanism m (a coordinatewise_mechanism
/// covering q's sensitivity), under a Dirichlet(alpha) prior. std::invalid_argument for an alpha of another length, an
/// unknown method, naive with queries other than the identity, or bad settings.
template <coordinatewise_mechanism M>
requires release_mechanism<M>
auto histogram_study(const linear_queries& q, const M& m, const Eigen::VectorXd& alpha, const histogram_study_settings& s) {
  constexpr const char* who = "histogram_study";
  check_size_match(who, "alpha", alpha.size(), "cells", static_cast<std::int64_t>(q.cells()));
  check_queries_covered(who, q, m);
  if (!(s.n >= 1.0 && s.n <= histogram_gibbs::max_records && std::floor(s.n) == s.n))
    throw_invalid(who, "n", s.n, "a whole number in [1, 1e7]");
  if (s.burnin < 0 || s.draws < 2 || s.thin < 1) throw_invalid(who, "draws", s.draws, "burnin >= 0, draws >= 2 and thin >= 1");
  bool identity = q.rows() == q.cells();
  for (std::size_t c = 0; identity && c < q.cells(); ++c) {
    const auto rows = q.column_rows(c);
    identity = rows.size() == 1 && rows[0] == c && q.column_values(c)[0] == 1.0;
  }
  auto simulate = [q, m, alpha, n = s.n](std::mt19937_64& g) {
    histogram_trial t;
    t.truth = draw_dirichlet(g, alpha);
    const alias_table cells(std::span<const double>(t.truth.data(), static_cast<std::size_t>(t.truth.size())));
    Eigen::VectorXd h = Eigen::VectorXd::Zero(alpha.size());
    for (double i = 0; i < n; ++i) h(static_cast<Eigen::Index>(cells.draw(g))) += 1.0;
    t.z = m.release(q.apply(h), g);
    return t;
  };
  std::vector<named_method<histogram_trial>> methods;
  for (const auto& name : s.methods) {
    if (name == "records") {
      methods.push_back({name, [q, m, alpha, s](const histogram_trial& t, std::mt19937_64& g) {
                           return single_chain(
                               [&](auto& cg) {
                                 std::vector<histogram_measurement> ms;
                                 ms.emplace_back(q, m, t.z);
                                 return histogram_gibbs(alpha, s.n, std::move(ms), cg, record_init::consistent);
                               },
                               s.burnin, s.draws, g, s.thin);
                         }});
    } else if (name == "sharded") {
      methods.push_back({name, [q, m, alpha, s](const histogram_trial& t, std::mt19937_64& g) {
                           return single_chain(
                               [&](auto& cg) {
                                 std::vector<histogram_measurement> ms;
                                 ms.emplace_back(q, m, t.z);
                                 return sharded_histogram_gibbs(alpha, s.n, std::move(ms), cg, record_sharding{s.shards});
                               },
                               s.burnin, s.draws, g, s.thin);
                         }});
    } else if (name == "naive") {
      if (!identity)
        throw std::invalid_argument(std::string(who) +
                                    ": naive needs identity queries (released marginals give no histogram to plug in)");
      methods.push_back({name, [alpha, s](const histogram_trial& t, std::mt19937_64& g) {
                           const Eigen::VectorXd a = alpha + t.z.cwiseMax(0.0);
                           Eigen::MatrixXd d(s.draws, a.size());
                           for (Eigen::Index i = 0; i < d.rows(); ++i) d.row(i) = draw_dirichlet(g, a).transpose();
                           return d;
                         }});
    } else {
      throw std::invalid_argument(std::string(who) + ": method '" + name + "'; accepted: records, sharded, naive");
    }
  }
  return simulation_study(simulate, std::move(methods));
}

}  // namespace privpost
