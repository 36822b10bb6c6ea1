// privpost/samplers/record_histogram.hpp
// histogram_gibbs: the record-level sampler (as record_gibbs, docs/record-level.md) for records that are cells
// of a table, theta ~ Dirichlet(alpha) over the D cells, given one or several releases of linear queries of the same
// records (noisy marginals; docs/histogram-measurements.md B.8.1). The target is
//     p(theta) prod_i theta_{x_i} prod_r p_r(z_r | Q_r h),   h the histogram of the latent records,
// and a sweep draws theta | h ~ Dirichlet(alpha + h), builds an alias table for Categorical(theta) and then updates
// every record by Metropolis-Hastings with x* ~ Categorical(theta) as the proposal: the theta_{x} terms cancel, so
//     alpha = min(1, prod_r p_r(z_r | s_r - Q_r[:, x_i] + Q_r[:, x*]) / p_r(z_r | s_r)),
// and only the queries of the two cells' columns change (a marginal table has one of each: 2 K coordinates for K
// tables). Releases of the same records are conditioned on jointly, exactly: the product of the releases'
// densities given the one latent histogram, not a product of per-release marginal likelihoods (which counts the
// records once per release and is over-confident, spec B.3 and B.9-6).
//
//     const auto q1 = linear_queries::marginals({2, 2}, {{0}, {1}});
//     std::vector<histogram_measurement> m;
//     m.emplace_back(q1, laplace_mechanism(q1.l1_sensitivity(), 1.0), z1);
//     m.emplace_back(q2, laplace_mechanism(q2.l1_sensitivity(), 0.5), z2);  // a later release of the same records
//     infer([&](auto& g) { return histogram_gibbs(Eigen::VectorXd::Ones(4), 8.0, m, g); }, options);
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/numerical_events.hpp"
#include "privpost/core/random/categorical.hpp"
#include "privpost/core/random/dirichlet.hpp"
#include "privpost/core/random/uniform.hpp"
#include "privpost/mechanisms/linear_queries.hpp"
#include "privpost/mechanisms/noise_views.hpp"
#include "privpost/mechanisms/reachable.hpp"
#include "privpost/samplers/record_releases.hpp"

namespace privpost {

/// One release of linear queries of the records: the queries Q, the released z = Q h + noise, the mechanism's
/// per-coordinate noise and its privacy cost.
class histogram_measurement {
 public:
  /// The release z of queries q through mechanism m (any coordinatewise_mechanism: a built-in one, one built from its
  /// published noise scale, or a user's). std::invalid_argument if z's length is not Q's rows, an entry of z is not
  /// finite (or, for a lattice mechanism, not on its lattice), or the mechanism reports a sensitivity below Q's (such a
  /// release was not private as declared). A mechanism that reports no budget() counts as one of unknown cost
  /// (epsilon +infinity), as a published one.
  template <coordinatewise_mechanism M>
  histogram_measurement(linear_queries q, const M& m, Eigen::VectorXd z)
      : queries_(std::move(q)), z_(std::move(z)), noise_(coordinate_view(m)) {
    constexpr const char* who = "histogram_measurement";
    if constexpr (
        requires { m.l1_sensitivity(); } || requires { m.l2_sensitivity(); })
      check_queries_covered(who, queries_, m);
    if constexpr (requires { m.budget(); }) budget_ = m.budget();
    check_size_match(who, "z", z_.size(), "the queries' rows", static_cast<std::int64_t>(queries_.rows()));
    check_finite(who, "z", z_);
    // A lattice mechanism's log_likelihood refuses a z off its lattice; the statistic's value does not matter here.
    if (noise_.lattice()) (void)m.log_likelihood(z_, Eigen::VectorXd::Zero(z_.size()));
  }

  /// The queries Q.
  const linear_queries& queries() const noexcept { return queries_; }
  /// The released values.
  const Eigen::VectorXd& z() const noexcept { return z_; }
  /// The per-coordinate noise.
  const coordinate_noise& noise() const noexcept { return noise_; }
  /// The privacy cost of this release.
  const privacy_budget& budget() const noexcept { return budget_; }
  /// The noise scale in the statistic's units (for the reachability check).
  double scale() const noexcept { return noise_.scale(); }

 private:
  linear_queries queries_;
  Eigen::VectorXd z_;
  coordinate_noise noise_;
  privacy_budget budget_{std::numeric_limits<double>::infinity(), 0.0};
};

namespace detail {
// The checks of a histogram chain: at least one measurement, alpha of D finite entries > 0 (D every measurement's cell
// count), n a whole number in [1, max_records] (named by `accepted`), every release value within
// max_noise_scales_outside noise scales of [0, n max_c Q(j, c)].
inline void check_histogram_chain(const char* who, const Eigen::VectorXd& alpha, double n, double max_records,
                                  const char* accepted, const std::vector<histogram_measurement>& measurements) {
  if (measurements.empty()) throw_invalid(who, "measurements", 0.0, "at least 1");
  const auto d = static_cast<Eigen::Index>(measurements.front().queries().cells());
  check_size_match(who, "alpha", alpha.size(), "the queries' cells", d);
  for (Eigen::Index c = 0; c < d; ++c) check_positive_finite(who, "alpha[" + std::to_string(c) + "]", alpha(c));
  for (std::size_t r = 1; r < measurements.size(); ++r)
    check_size_match(who, "cells of measurement " + std::to_string(r + 1),
                     static_cast<std::int64_t>(measurements[r].queries().cells()), "cells of measurement 1", d);
  check_record_count(who, n);
  if (!(std::floor(n) == n && n <= max_records)) throw_invalid(who, "n", n, accepted);
  for (std::size_t r = 0; r < measurements.size(); ++r) {
    const auto& m = measurements[r];
    std::vector<double> row_max(m.queries().rows(), 0.0);
    for (std::size_t c = 0; c < m.queries().cells(); ++c) {
      const auto rows = m.queries().column_rows(c);
      const auto values = m.queries().column_values(c);
      for (std::size_t k = 0; k < rows.size(); ++k) row_max[rows[k]] = std::max(row_max[rows[k]], values[k]);
    }
    for (Eigen::Index j = 0; j < m.z().size(); ++j)
      check_reachable(who, "measurement " + std::to_string(r + 1) + " z(" + std::to_string(j) + ")", m.z()(j), 0.0,
                      n * row_max[static_cast<std::size_t>(j)], n, m.scale());
  }
}
}  // namespace detail

/// The record-level sampler over (theta, x_1..x_n) for cell records with a Dirichlet(alpha) prior over the D cells,
/// given one or more histogram_measurements of the same records. Models privpost::sampler; the parameter vector is
/// theta (D cell probabilities). A sweep costs O(D) for theta and the alias table plus O(n) record updates, each
/// touching only the queries of the two cells involved. Sweeps allocate nothing.
class histogram_gibbs {
 public:
  /// The most records a chain holds.
  static constexpr double max_records = record_frame_max_records;

  /// alpha: D finite entries > 0 (D = every measurement's cell count, >= 2); n: the public number of records (a whole
  /// number in [1, 1e7]); at least one measurement. theta starts from the prior and the records from
  /// Categorical(theta) (record_init::prior), or also moved towards the releases (record_init::consistent, as
  /// record_gibbs). std::invalid_argument for a bad alpha, n or measurement list, or a release value more than
  /// max_noise_scales_outside noise scales outside [0, n max_c Q(j, c)].
  template <random_engine G>
  histogram_gibbs(Eigen::VectorXd alpha, double n, std::vector<histogram_measurement> measurements, G& g,
                  record_init init = record_init::prior)
      : alpha_(std::move(alpha)), measurements_(std::move(measurements)) {
    constexpr const char* who = "histogram_gibbs";
    detail::check_histogram_chain(who, alpha_, n, max_records, "a whole number in [1, 1e7]", measurements_);
    if (init != record_init::prior && init != record_init::consistent)
      throw_invalid(who, "init", static_cast<double>(static_cast<int>(init)), "record_init::prior or record_init::consistent");
    const auto d = alpha_.size();
    states_.resize(measurements_.size());
    std::size_t rows = 0;
    for (std::size_t r = 0; r < measurements_.size(); ++r) {
      states_[r].offset = rows;
      states_[r].scratch.assign(measurements_[r].queries().rows(), 0.0);
      rows += measurements_[r].queries().rows();
    }
    sum_.assign(rows, 0.0);
    kernel_.assign(rows, 0.0);
    build_table_path();
    std::size_t widest = 0;
    for (std::size_t c = 0; c < static_cast<std::size_t>(d); ++c) {
      std::size_t w = 0;
      for (const auto& m : measurements_) w += m.queries().column_rows(c).size();
      widest = std::max(widest, w);
    }
    changes_.reserve(2 * widest);
    posterior_alpha_.resize(d);
    theta_.resize(d);
    draw_dirichlet(g, alpha_, theta_);
    alias_.build(std::span<const double>(theta_.data(), static_cast<std::size_t>(d)));
    records_.resize(static_cast<std::size_t>(n));
    for (auto& x : records_) x = static_cast<std::uint32_t>(alias_.draw(g));
    resum();
    if (init == record_init::consistent) start_consistent(g);
  }

  /// One sweep: theta | h ~ Dirichlet(alpha + h), then every record in turn (systematic scan); the query sums are then
  /// recomputed from h, so rounding never accumulates across sweeps.
  template <random_engine G>
  void step(G& g) {
    draw_theta(g);
    if (table_path_) {
      sweep_table(g);
    } else {
      for (std::size_t i = 0; i < records_.size(); ++i) update_record(i, g);
    }
    resum_queries();
  }

  /// One Metropolis-Hastings update of record i at the current theta (after a step, or set_parameter): x* from the
  /// alias table of theta, accepted with min(1, exp(log alpha)). Returns whether it was accepted (a proposal of the
  /// record's own cell is accepted without a density evaluation).
  template <random_engine G>
  bool update_record(std::size_t i, G& g) {
    const auto proposal = static_cast<std::uint32_t>(alias_.draw(g));
    ++proposed_;
    if (proposal == records_[i]) {
      ++accepted_;
      return true;
    }
    const double log_alpha = evaluate(records_[i], proposal);
    smallest_log_alpha_ = std::min(smallest_log_alpha_, log_alpha);
    if (log_alpha < 0.0 && !log_uniform_below(draw_uniform(g), log_alpha)) return false;
    ++accepted_;
    apply(i, proposal);
    return true;
  }

  /// log alpha of moving a record from cell `from` to cell `to` (before the min with 0).
  double log_acceptance(std::size_t from, std::size_t to) {
    check_cell("histogram_gibbs::log_acceptance", from);
    check_cell("histogram_gibbs::log_acceptance", to);
    return from == to ? 0.0 : evaluate(static_cast<std::uint32_t>(from), static_cast<std::uint32_t>(to));
  }

  /// The current theta (D cell probabilities).
  const Eigen::VectorXd& parameter_vector() const noexcept { return theta_; }
  /// Sets theta and rebuilds the alias table (the kernel tests hold it fixed and call update_record).
  /// std::invalid_argument unless theta has D finite entries >= 0 with a positive sum.
  void set_parameter(const Eigen::VectorXd& theta) {
    check_size_match("histogram_gibbs::set_parameter", "theta", theta.size(), "cells", theta_.size());
    alias_.build(std::span<const double>(theta.data(), static_cast<std::size_t>(theta.size())));
    theta_ = theta;
  }
  /// Replaces the records (cells in [0, D)); the histogram and the query sums are recomputed.
  void set_records(const std::vector<std::uint32_t>& records) {
    check_size_match("histogram_gibbs::set_records", "records", static_cast<std::int64_t>(records.size()), "n",
                     static_cast<std::int64_t>(records_.size()));
    for (auto x : records) check_cell("histogram_gibbs::set_records", x);
    records_ = records;
    resum();
  }
  /// The latent records' cells.
  const std::vector<std::uint32_t>& records() const noexcept { return records_; }
  /// The latent histogram h.
  const Eigen::VectorXd& histogram() const noexcept { return histogram_; }
  /// Q_r h: the exact value of release r's queries at the latent records (0-based r), a view valid until the next
  /// update.
  Eigen::Map<const Eigen::VectorXd> query_sum(std::size_t r) const {
    if (r >= states_.size())
      throw_invalid("histogram_gibbs::query_sum", "r", static_cast<double>(r),
                    "a measurement index in [0, " + std::to_string(states_.size() - 1) + "]");
    return {sum_.data() + states_[r].offset, static_cast<Eigen::Index>(measurements_[r].queries().rows())};
  }
  /// The number of cells D.
  std::size_t cells() const noexcept { return static_cast<std::size_t>(theta_.size()); }
  /// Accepted / proposed record updates so far (1 before any).
  double record_acceptance() const noexcept {
    return proposed_ == 0 ? 1.0 : static_cast<double>(accepted_) / static_cast<double>(proposed_);
  }
  /// The smallest log alpha computed so far (0 before any): at least -sum_r eps_r for Laplace releases.
  double smallest_log_acceptance() const noexcept { return smallest_log_alpha_; }
  /// Nothing is ever repaired or retried: all zero.
  const numerical_events& events() const noexcept { return events_; }

 private:
  struct measurement_state {
    std::size_t offset = 0;       // where this release's rows start in sum_ and kernel_
    Eigen::VectorXd resummed;     // Q h, recomputed at the end of a sweep
    std::vector<double> scratch;  // all zero between record updates (evaluate)
  };
  struct change {
    std::uint32_t row;  // in sum_ and kernel_
    double delta, kernel;
  };

  void check_cell(const char* who, std::size_t x) const {
    if (x >= cells()) throw_invalid(who, "cell", static_cast<double>(x), "a cell in [0, " + std::to_string(cells() - 1) + "]");
  }

  template <random_engine G>
  void draw_theta(G& g) {
    posterior_alpha_ = alpha_ + histogram_;
    draw_dirichlet(g, posterior_alpha_, theta_);
    alias_.build(std::span<const double>(theta_.data(), static_cast<std::size_t>(theta_.size())));
  }

  // The marginal-table path, taken when every release is of marginal tables (linear_queries::aligned) with
  // continuous noise: cell c's rows of all releases side by side in table_rows_[c w, (c + 1) w) (w = table_width_,
  // the p-th entry of every cell belonging to the same table). A record's move changes nothing or one row down and
  // one up per table, and distinct rows, so log alpha is a sum of per-row changes; each row keeps its two possible
  // changes, of its sum by -1 and by +1, ready (table_row), so that evaluating a move is a few loads and adds and only
  // an accepted move computes anything, for the rows it moved.
  void build_table_path() {
    table_path_ = true;
    for (const auto& m : measurements_) table_path_ = table_path_ && m.queries().aligned() && !m.noise().lattice();
    if (!table_path_) return;
    const std::size_t d = measurements_.front().queries().cells();
    table_width_ = 0;
    for (const auto& m : measurements_) table_width_ += m.queries().column_rows(0).size();
    table_rows_.resize(d * table_width_);
    for (std::size_t c = 0; c < d; ++c) {
      std::size_t p = c * table_width_;
      for (std::size_t r = 0; r < measurements_.size(); ++r)
        for (std::uint32_t row : measurements_[r].queries().column_rows(c))
          table_rows_[p++] = static_cast<std::uint32_t>(states_[r].offset + row);
    }
    table_row_.resize(sum_.size());
    for (std::size_t r = 0; r < measurements_.size(); ++r) {
      const auto& m = measurements_[r];
      for (std::size_t j = 0; j < m.queries().rows(); ++j) {
        auto& row = table_row_[states_[r].offset + j];
        row.z = m.z()(static_cast<Eigen::Index>(j));
        row.absolute = m.noise().absolute_weight();
        row.squared = m.noise().squared_weight();
      }
    }
  }

  // The changes of global row j's log kernel -(a |t| + q t^2 / 2), t = z - s, when s moves by -1 and +1, in closed
  // form: down = a (|t| - |t + 1|) - q (t + 1/2), up = a (|t| - |t - 1|) + q (t - 1/2). (Exact differences, rather
  // than two kernels subtracted.)
  void refresh_table_row(std::size_t j) noexcept {
    auto& row = table_row_[j];
    const double t = row.z - sum_[j], magnitude = std::abs(t);
    row.down = row.absolute * (magnitude - std::abs(t + 1.0)) - row.squared * (t + 0.5);
    row.up = row.absolute * (magnitude - std::abs(t - 1.0)) + row.squared * (t - 0.5);
  }

  double evaluate_table(std::uint32_t from, std::uint32_t to) const noexcept {
    const std::uint32_t* a = table_rows_.data() + static_cast<std::size_t>(from) * table_width_;
    const std::uint32_t* b = table_rows_.data() + static_cast<std::size_t>(to) * table_width_;
    double log_alpha = 0.0;
    for (std::size_t p = 0; p < table_width_; ++p) {
      const std::uint32_t ra = a[p], rb = b[p];
      if (ra != rb) log_alpha += table_row_[ra].down + table_row_[rb].up;
    }
    return log_alpha;
  }

  void apply_table(std::uint32_t from, std::uint32_t to) noexcept {
    const std::uint32_t* a = table_rows_.data() + static_cast<std::size_t>(from) * table_width_;
    const std::uint32_t* b = table_rows_.data() + static_cast<std::size_t>(to) * table_width_;
    for (std::size_t p = 0; p < table_width_; ++p) {
      const std::uint32_t ra = a[p], rb = b[p];
      if (ra == rb) continue;
      sum_[ra] -= 1.0;
      sum_[rb] += 1.0;
      refresh_table_row(ra);
      refresh_table_row(rb);
    }
  }

  // update_record over every record on the table path, with the uniform drawn for every move so that the decision
  // u - 1 < log alpha (which includes log alpha >= 0) needs no branch on the sign of log alpha.
  template <random_engine G>
  void sweep_table(G& g) {
    // The counters live in locals: the kernels' stores through double pointers could alias a double member, and
    // reloading it every record was measurable.
    std::uint64_t accepted = 0;
    double smallest = smallest_log_alpha_;
    const std::size_t n = records_.size();
    for (std::size_t i = 0; i < n; ++i) {
      const std::uint32_t from = records_[i], to = static_cast<std::uint32_t>(alias_.draw(g));
      if (to == from) {
        ++accepted;
        continue;
      }
      const double log_alpha = evaluate_table(from, to);
      smallest = std::min(smallest, log_alpha);
      const double u = draw_uniform(g);
      if (log_uniform_below(u, log_alpha)) {
        ++accepted;
        apply_table(from, to);
        histogram_(from) -= 1.0;
        histogram_(to) += 1.0;
        records_[i] = to;
      }
    }
    proposed_ += n;
    accepted_ += accepted;
    smallest_log_alpha_ = smallest;
  }

  // log alpha of a record's move from `from` to `to`, ready for apply. Marginal tables of continuous noise take the
  // table path above. Otherwise changes_ receives every (global row) whose sum moves, with its new kernel value:
  // aligned tables are read position by position; any other Q by scattering the two columns' entries into the
  // measurement's zeroed scratch (equal entries cancel), then reading them back and clearing them.
  double evaluate(std::uint32_t from, std::uint32_t to) {
    if (table_path_) return evaluate_table(from, to);
    changes_.clear();
    double log_alpha = 0.0;
    for (std::size_t r = 0; r < measurements_.size(); ++r) {
      const auto& q = measurements_[r].queries();
      const auto& noise = measurements_[r].noise();
      const double* z = measurements_[r].z().data();
      auto& st = states_[r];
      double* sum = sum_.data() + st.offset;
      const double* kernel = kernel_.data() + st.offset;
      double* scratch = st.scratch.data();
      const auto rows_a = q.column_rows(from), rows_b = q.column_rows(to);
      const auto global = [&](std::uint32_t row) { return static_cast<std::uint32_t>(st.offset + row); };
      if (q.aligned()) {  // marginal tables: per table, nothing or one row -1 and another +1 (no scratch needed)
        for (std::size_t p = 0; p < rows_a.size(); ++p) {
          const std::uint32_t ra = rows_a[p], rb = rows_b[p];
          if (ra == rb) continue;
          const double ka = noise.log_kernel(z[ra], sum[ra] - 1.0), kb = noise.log_kernel(z[rb], sum[rb] + 1.0);
          log_alpha += (ka - kernel[ra]) + (kb - kernel[rb]);
          changes_.push_back({global(ra), -1.0, ka});
          changes_.push_back({global(rb), 1.0, kb});
        }
        continue;
      }
      const auto vals_a = q.column_values(from), vals_b = q.column_values(to);
      for (std::size_t k = 0; k < rows_a.size(); ++k) scratch[rows_a[k]] -= vals_a[k];
      for (std::size_t k = 0; k < rows_b.size(); ++k) scratch[rows_b[k]] += vals_b[k];
      auto visit = [&](std::uint32_t row) {
        const double delta = scratch[row];
        if (delta == 0.0) return;
        scratch[row] = 0.0;
        const double k = noise.log_kernel(z[row], sum[row] + delta);
        log_alpha += k - kernel[row];
        changes_.push_back({global(row), delta, k});
      };
      for (std::uint32_t row : rows_a) visit(row);
      for (std::uint32_t row : rows_b) visit(row);
    }
    return log_alpha;
  }

  // Moves record i to `to` after evaluate(records_[i], to).
  void apply(std::size_t i, std::uint32_t to) {
    if (table_path_) {
      apply_table(records_[i], to);
    } else {
      for (const auto& c : changes_) {
        sum_[c.row] += c.delta;
        kernel_[c.row] = c.kernel;
      }
    }
    histogram_(records_[i]) -= 1.0;
    histogram_(to) += 1.0;
    records_[i] = to;
  }

  void resum_queries() {
    for (std::size_t r = 0; r < measurements_.size(); ++r) {
      auto& st = states_[r];
      const auto& m = measurements_[r];
      m.queries().apply(histogram_, st.resummed);
      for (Eigen::Index j = 0; j < st.resummed.size(); ++j) {
        const auto at = st.offset + static_cast<std::size_t>(j);
        sum_[at] = st.resummed(j);
        kernel_[at] = m.noise().log_kernel(m.z()(j), sum_[at]);
        if (table_path_) refresh_table_row(at);
      }
    }
  }

  void resum() {
    histogram_ = Eigen::VectorXd::Zero(theta_.size());
    for (auto x : records_) histogram_(x) += 1.0;
    resum_queries();
  }

  // record_init::consistent, as record_gibbs: greedy passes with proposals from a fresh prior draw of theta each pass,
  // accepting moves that do not lower the summed log density; stops after five passes in a row without a rise. Then
  // theta | h. Not counted in record_acceptance().
  template <random_engine G>
  void start_consistent(G& g) {
    int idle = 0;
    for (int pass = 0; pass < record_init_passes && idle < 5; ++pass) {
      draw_dirichlet(g, alpha_, theta_);
      alias_.build(std::span<const double>(theta_.data(), static_cast<std::size_t>(theta_.size())));
      bool moved = false;
      for (std::size_t i = 0; i < records_.size(); ++i) {
        const auto proposal = static_cast<std::uint32_t>(alias_.draw(g));
        if (proposal == records_[i]) continue;
        const double log_alpha = evaluate(records_[i], proposal);
        if (log_alpha >= 0.0) {
          apply(i, proposal);
          moved = moved || log_alpha > 0.0;
        }
      }
      resum_queries();
      idle = moved ? 0 : idle + 1;
    }
    draw_theta(g);
  }

  Eigen::VectorXd alpha_;
  std::vector<histogram_measurement> measurements_;
  std::vector<measurement_state> states_;
  std::vector<change> changes_;
  std::vector<double> sum_, kernel_;  // Q_r h and log_kernel(z_rj, (Q_r h)_j) of every release, one after another
  bool table_path_ = false;
  std::size_t table_width_ = 0;
  std::vector<std::uint32_t> table_rows_;
  struct table_row {
    double z = 0.0, absolute = 0.0, squared = 0.0;  // the release value and coordinate_noise's weights
    double down = 0.0, up = 0.0;                    // refresh_table_row
  };
  std::vector<table_row> table_row_;
  Eigen::VectorXd theta_, posterior_alpha_, histogram_;
  alias_table alias_;
  std::vector<std::uint32_t> records_;
  std::uint64_t proposed_ = 0, accepted_ = 0;
  double smallest_log_alpha_ = 0.0;
  numerical_events events_;
};

}  // namespace privpost
