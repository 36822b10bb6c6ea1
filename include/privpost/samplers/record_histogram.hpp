// privpost/samplers/record_histogram.hpp
// The record-level frame (samplers/record_frame.hpp) for records that are cells of a table, theta ~ Dirichlet(alpha)
// over the D cells, given one or several releases of linear queries of the same records (noisy marginals;
// docs/histogram-measurements.md B.8.1): dirichlet_cell_model (the record model), linear_query_releases (the releases,
// with a state of their own in the frame's record scan) and histogram_gibbs, the frame over the two. The target is
//     p(theta) prod_i theta_{x_i} prod_r p_r(z_r | Q_r h),   h the histogram of the latent records,
// and a sweep draws theta | h ~ Dirichlet(alpha + h), builds an alias table for Categorical(theta) and then updates
// every record by Metropolis-Hastings with x* ~ Categorical(theta) as the proposal: the theta_{x} terms cancel, so
//     alpha = min(1, prod_r p_r(z_r | s_r - Q_r[:, x_i] + Q_r[:, x*]) / p_r(z_r | s_r)),
// and only the queries of the two cells' columns change (a marginal table has one of each: 2 K coordinates for K
// tables), which is why the releases keep a state of their own: the frame's summed state would keep every record's
// contribution, n vectors as long as all the queries. Releases of the same records are conditioned on jointly,
// exactly: the product of the releases' densities given the one latent histogram, not a product of per-release
// marginal likelihoods (which counts the records once per release and is over-confident, spec B.3 and B.9-6).
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
#include "privpost/samplers/record_frame.hpp"

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

namespace detail {
// visit(row, delta) for every row of a general Q (not marginal tables) whose value moves, by delta, when a record
// leaves cell `from` for `to`: the two columns' entries scattered into the zeroed scratch (equal entries cancel), then
// read back and cleared.
template <class Visit>
void scattered_rows(const linear_queries& q, std::uint32_t from, std::uint32_t to, double* scratch, Visit&& visit) {
  const auto rows_a = q.column_rows(from), rows_b = q.column_rows(to);
  const auto vals_a = q.column_values(from), vals_b = q.column_values(to);
  for (std::size_t k = 0; k < rows_a.size(); ++k) scratch[rows_a[k]] -= vals_a[k];
  for (std::size_t k = 0; k < rows_b.size(); ++k) scratch[rows_b[k]] += vals_b[k];
  auto read = [&](std::uint32_t row) {
    const double delta = scratch[row];
    if (delta == 0.0) return;
    scratch[row] = 0.0;
    visit(row, delta);
  };
  for (std::uint32_t row : rows_a) read(row);
  for (std::uint32_t row : rows_b) read(row);
}
}  // namespace detail

/// Cell probabilities theta with the alias table that draws Categorical(theta) in O(1) (dirichlet_cell_model's
/// parameter).
struct cell_probabilities {
  /// theta: D finite entries >= 0 with a positive sum.
  Eigen::VectorXd p;
  /// The alias table of p.
  alias_table alias;
  /// Empty (a chain's parameter before its first draw).
  cell_probabilities() = default;
  /// theta and its alias table; std::invalid_argument unless theta's entries are finite and >= 0 with a positive sum.
  explicit cell_probabilities(Eigen::VectorXd theta) : p(std::move(theta)) { rebuild(); }
  /// Rebuilds the alias table from p.
  void rebuild() { alias.build(std::span<const double>(p.data(), static_cast<std::size_t>(p.size()))); }
};

/// Records that are cells of a table, x_i ~ Categorical(theta), theta ~ Dirichlet(alpha), as a record_model
/// (samplers/record_frame.hpp): the conjugate update on the histogram h, theta | h ~ Dirichlet(alpha + h), kept in place
/// (add_statistic: a record's move is two counts) and drawn in place. A record's own contribution is its unit vector,
/// so a record_release of the whole histogram through any mechanism reads it too; linear_query_releases reads its
/// linear queries without storing per-record vectors.
struct dirichlet_cell_model {
  /// @{
  /// The model's types (record_model).
  using parameter_type = cell_probabilities;
  using record_type = std::uint32_t;
  using vector_type = Eigen::VectorXd;
  using statistic_type = Eigen::VectorXd;
  /// @}
  /// Counts: the frame's running sums are exact.
  static constexpr bool whole_contributions = true;
  /// The Dirichlet prior's concentrations.
  Eigen::VectorXd alpha;

  /// std::invalid_argument unless alpha has at least 2 entries, each finite and > 0.
  explicit dirichlet_cell_model(Eigen::VectorXd concentrations) : alpha(std::move(concentrations)) {
    if (alpha.size() < 2) throw_invalid("dirichlet_cell_model", "cells", static_cast<double>(alpha.size()), "at least 2");
    for (Eigen::Index c = 0; c < alpha.size(); ++c)
      check_positive_finite("dirichlet_cell_model", "alpha[" + std::to_string(c) + "]", alpha(c));
  }

  /// theta ~ Dirichlet(alpha).
  template <random_engine G>
  cell_probabilities draw_prior(G& g) const {
    return cell_probabilities(draw_dirichlet(g, alpha));
  }
  /// x ~ Categorical(theta) by the alias table.
  template <random_engine G>
  record_type draw_record(const cell_probabilities& theta, std::size_t, G& g) const {
    return static_cast<record_type>(theta.alias.draw(g));
  }
  /// The record's unit vector.
  vector_type contribution(const record_type& x, std::size_t) const { return vector_type::Unit(alpha.size(), x); }
  /// The record's unit vector (what h sums).
  statistic_type statistic(const record_type& x, std::size_t) const { return statistic_type::Unit(alpha.size(), x); }
  /// h += w e_x.
  void add_statistic(statistic_type& h, const record_type& x, std::size_t, double w) const { h(x) += w; }
  /// std::invalid_argument for a record outside the cells [0, D) (the frame's set_records).
  void check_record(const record_type& x) const {
    if (static_cast<Eigen::Index>(x) >= alpha.size())
      throw_invalid("set_records", "cell", static_cast<double>(x), "a cell in [0, " + std::to_string(alpha.size() - 1) + "]");
  }
  /// theta ~ Dirichlet(alpha + h).
  template <random_engine G>
  cell_probabilities draw_given_statistic(const statistic_type& h, double, G& g) const {
    return cell_probabilities(draw_dirichlet(g, Eigen::VectorXd(alpha + h)));
  }
  /// The same, in place: theta.p holds alpha + h while it is drawn (draw_dirichlet reads each entry before writing it).
  template <random_engine G>
  void draw_given_statistic(const statistic_type& h, double, G& g, cell_probabilities& theta) const {
    theta.p = alpha + h;
    draw_dirichlet(g, theta.p, theta.p);
    theta.rebuild();
  }
  /// theta.
  Eigen::VectorXd parameter_vector(const cell_probabilities& theta) const { return theta.p; }
  /// The histogram's counts lie in [0, n].
  std::pair<double, double> contribution_sum_range(family_statistic, double n, int) const { return {0.0, n}; }
};

/// One or more histogram_measurements of the same cell records, read jointly by the record frame: a release with a state
/// of its own in the frame's record scan (record_release_state), which keeps Q_r h and the noise kernels and, per
/// proposal, touches only the queries of the two cells' columns.
struct linear_query_releases {
  /// The measurements.
  std::vector<histogram_measurement> measurements;
  /// std::invalid_argument unless there is at least one measurement and all have the same cell count.
  explicit linear_query_releases(std::vector<histogram_measurement> m) : measurements(std::move(m)) {
    constexpr const char* who = "linear_query_releases";
    if (measurements.empty()) throw_invalid(who, "measurements", 0.0, "at least 1");
    const auto d = static_cast<std::int64_t>(measurements.front().queries().cells());
    for (std::size_t r = 1; r < measurements.size(); ++r)
      check_size_match(who, "cells of measurement " + std::to_string(r + 1),
                       static_cast<std::int64_t>(measurements[r].queries().cells()), "cells of measurement 1", d);
  }

  class query_state;
  /// The state in the record scan of a model whose records are cells and whose summed statistic is their histogram
  /// (dirichlet_cell_model): the state reads h from the scan rather than keeping a copy.
  template <class Model>
  requires conjugate_record_update<Model>
  using state = query_state;
};

/// The state of linear_query_releases in the record scan (the members record_scan calls: see summed_release in
/// samplers/record_frame.hpp).
class linear_query_releases::query_state {
 public:
  /// The histogram's counts are whole: settle recomputes Q h from h without summing the records afresh.
  static constexpr bool exact_sums = true;
  /// Whether the last evaluate changed a cell.
  bool changed = false;

  /// The state of releases r: the query rows laid out, the marginal-table path chosen (every release of marginal
  /// tables with continuous noise), the scratch sized so that sweeps allocate nothing.
  explicit query_state(linear_query_releases r) : measurements_(std::move(r.measurements)) {
    states_.resize(measurements_.size());
    std::size_t rows = 0;
    for (std::size_t k = 0; k < measurements_.size(); ++k) {
      states_[k].offset = rows;
      states_[k].scratch.assign(measurements_[k].queries().rows(), 0.0);
      rows += measurements_[k].queries().rows();
    }
    sum_.assign(rows, 0.0);
    kernel_.assign(rows, 0.0);
    const std::size_t d = cells();
    build_table_path();
    std::size_t widest = 0;
    for (std::size_t c = 0; c < d; ++c) {
      std::size_t w = 0;
      for (const auto& m : measurements_) w += m.queries().column_rows(c).size();
      widest = std::max(widest, w);
    }
    changes_.reserve(2 * widest);  // sweeps allocate nothing
  }

  /// Nothing to size: the state is sized by its releases (the record scan's fill).
  template <class Model>
  void fill(const Model&, const std::vector<std::uint32_t>&) {}

  /// The checks of a histogram chain of n records with the model's alpha (detail::check_histogram_chain).
  template <class Model>
  void check(const char* f, const Model& m, double n, const std::string&) const {
    detail::check_histogram_chain(f, m.alpha, n, record_frame_max_records, "a whole number in [1, 1e7]", measurements_);
  }

  /// sum_r log p_r(z_r | Q_r h) up to the kernels' constants, at the last settle or resum.
  double log_density() const noexcept {
    double total = 0.0;
    for (double k : kernel_) total += k;
    return total;
  }
  /// The marginal-table path decides u - 1 < log alpha without a branch on its sign (record_scan's decide).
  bool uniform_every_move() const noexcept { return table_path_; }

  /// log alpha of moving a record from `from` to `to`, kept for accept.
  template <class Model>
  double evaluate(const Model&, std::size_t, std::uint32_t from, std::uint32_t to) {
    changed = from != to;
    if (!changed) return 0.0;
    return table_path_ ? evaluate_table(from, to) : evaluate_queries(from, to);
  }
  /// The same without keeping anything (changes_ is scratch, empty between a sweep's records).
  template <class Model>
  double log_change(const Model&, std::size_t, std::uint32_t from, std::uint32_t to) const {
    if (from == to) return 0.0;
    return table_path_ ? evaluate_table(from, to) : evaluate_queries(from, to);
  }
  /// Moves a record from `from` to `to` after evaluate (the cell model moves h).
  void accept(std::size_t, std::uint32_t from, std::uint32_t to) {
    if (!changed) return;
    if (table_path_) {
      apply_table(from, to);
    } else {
      for (const auto& c : changes_) {
        sum_[c.row] += c.delta;
        kernel_[c.row] = c.kernel;
      }
    }
  }

  /// The query sums recomputed from the histogram h (the cell model's statistic), so rounding never accumulates
  /// across sweeps.
  template <class Model>
  void settle(const Model&, const std::vector<std::uint32_t>&, const Eigen::VectorXd& histogram) {
    resum_queries(histogram);
  }
  /// The same after the records were replaced (the scan summed h afresh).
  template <class Model>
  void resum(const Model&, const std::vector<std::uint32_t>&, const Eigen::VectorXd& histogram, bool) {
    resum_queries(histogram);
  }

  /// The number of cells D.
  std::size_t cells() const noexcept { return measurements_.front().queries().cells(); }
  /// Q_r h of measurement r (0-based), a view valid until the next update.
  Eigen::Map<const Eigen::VectorXd> query_sum(const char* f, std::size_t r) const {
    if (r >= states_.size())
      throw_invalid(f, "r", static_cast<double>(r), "a measurement index in [0, " + std::to_string(states_.size() - 1) + "]");
    return {sum_.data() + states_[r].offset, static_cast<Eigen::Index>(measurements_[r].queries().rows())};
  }

 private:
  struct measurement_state {
    std::size_t offset = 0;       // where this release's rows start in sum_ and kernel_
    Eigen::VectorXd resummed;     // Q h, recomputed at the end of a sweep
    std::vector<double> scratch;  // all zero between record updates (evaluate_queries)
  };
  struct change {
    std::uint32_t row;  // in sum_ and kernel_
    double delta, kernel;
  };

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
    const std::size_t d = cells();
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

  // log alpha of a record's move from `from` to `to` off the table path; changes_ receives every (global row) whose
  // sum moves, with its new kernel value: aligned tables are read position by position; any other Q by scattering
  // the two columns' entries into the measurement's zeroed scratch (equal entries cancel), then reading them back and
  // clearing them.
  double evaluate_queries(std::uint32_t from, std::uint32_t to) const {
    changes_.clear();
    double log_alpha = 0.0;
    for (std::size_t r = 0; r < measurements_.size(); ++r) {
      const auto& q = measurements_[r].queries();
      const auto& noise = measurements_[r].noise();
      const double* z = measurements_[r].z().data();
      auto& st = states_[r];
      const double* sum = sum_.data() + st.offset;
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
      detail::scattered_rows(q, from, to, scratch, [&](std::uint32_t row, double delta) {
        const double k = noise.log_kernel(z[row], sum[row] + delta);
        log_alpha += k - kernel[row];
        changes_.push_back({global(row), delta, k});
      });
    }
    return log_alpha;
  }

  void resum_queries(const Eigen::VectorXd& histogram) {
    for (std::size_t r = 0; r < measurements_.size(); ++r) {
      auto& st = states_[r];
      const auto& m = measurements_[r];
      m.queries().apply(histogram, st.resummed);
      for (Eigen::Index j = 0; j < st.resummed.size(); ++j) {
        const auto at = st.offset + static_cast<std::size_t>(j);
        sum_[at] = st.resummed(j);
        kernel_[at] = m.noise().log_kernel(m.z()(j), sum_[at]);
        if (table_path_) refresh_table_row(at);
      }
    }
  }

  std::vector<histogram_measurement> measurements_;
  // Scratch of evaluate_queries, which log_change (const) also uses: all zero, or holding the last evaluation's changes.
  mutable std::vector<measurement_state> states_;
  mutable std::vector<change> changes_;
  std::vector<double> sum_, kernel_;  // Q_r h and log_kernel(z_rj, (Q_r h)_j) of every release, one after another
  bool table_path_ = false;
  std::size_t table_width_ = 0;
  std::vector<std::uint32_t> table_rows_;
  struct table_row {
    double z = 0.0, absolute = 0.0, squared = 0.0;  // the release value and coordinate_noise's weights
    double down = 0.0, up = 0.0;                    // refresh_table_row
  };
  std::vector<table_row> table_row_;
};

/// The record-level sampler over (theta, x_1..x_n) for cell records with a Dirichlet(alpha) prior over the D cells,
/// given one or more histogram_measurements of the same records: the record frame over dirichlet_cell_model and
/// linear_query_releases. Models privpost::sampler; the parameter vector is theta (D cell probabilities). A sweep costs
/// O(D) for theta and the alias table plus O(n) record updates, each touching only the queries of the two cells
/// involved. Sweeps allocate nothing.
class histogram_gibbs : public record_frame<dirichlet_cell_model, linear_query_releases> {
  using frame = record_frame<dirichlet_cell_model, linear_query_releases>;

 public:
  /// alpha: D finite entries > 0 (D = every measurement's cell count, >= 2); n: the public number of records (a whole
  /// number in [1, 1e7]); at least one measurement. theta starts from the prior and the records from
  /// Categorical(theta) (record_init::prior), or also moved towards the releases (record_init::consistent, as
  /// record_gibbs). std::invalid_argument for a bad alpha, n or measurement list, or a release value more than
  /// max_noise_scales_outside noise scales outside [0, n max_c Q(j, c)].
  template <random_engine G>
  histogram_gibbs(Eigen::VectorXd alpha, double n, std::vector<histogram_measurement> measurements, G& g,
                  record_init init = record_init::prior)
      : frame("histogram_gibbs", dirichlet_cell_model(std::move(alpha)), n, g, init,
              linear_query_releases(std::move(measurements))) {}

  /// log alpha of moving a record from cell `from` to cell `to` (before the min with 0).
  double log_acceptance(std::size_t from, std::size_t to) const {
    check_cell("histogram_gibbs::log_acceptance", from);
    check_cell("histogram_gibbs::log_acceptance", to);
    return state().log_change(model(), 0, static_cast<std::uint32_t>(from), static_cast<std::uint32_t>(to));
  }

  /// The current theta (D cell probabilities).
  const Eigen::VectorXd& parameter_vector() const noexcept { return parameter().p; }
  /// Sets theta and rebuilds the alias table (the kernel tests hold it fixed and call update_record).
  /// std::invalid_argument unless theta has D finite entries >= 0 with a positive sum.
  void set_parameter(const Eigen::VectorXd& theta) {
    check_size_match("histogram_gibbs::set_parameter", "theta", theta.size(), "cells", static_cast<Eigen::Index>(cells()));
    frame::set_parameter(cell_probabilities(theta));
  }
  /// The latent histogram h.
  const Eigen::VectorXd& histogram() const noexcept { return scan().statistic(); }
  /// Q_r h: the exact value of release r's queries at the latent records (0-based r), a view valid until the next
  /// update.
  Eigen::Map<const Eigen::VectorXd> query_sum(std::size_t r) const { return state().query_sum("histogram_gibbs::query_sum", r); }
  /// The number of cells D.
  std::size_t cells() const noexcept { return state().cells(); }

 private:
  const linear_query_releases::query_state& state() const noexcept { return scan().state<0>(); }
  void check_cell(const char* who, std::size_t x) const {
    if (x >= cells()) throw_invalid(who, "cell", static_cast<double>(x), "a cell in [0, " + std::to_string(cells() - 1) + "]");
  }
};

}  // namespace privpost
