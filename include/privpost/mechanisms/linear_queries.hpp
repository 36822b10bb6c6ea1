// privpost/mechanisms/linear_queries.hpp
// Linear queries of a histogram (Williams & McSherry 2010; docs/histogram-measurements.md): records are cells
// x in {0..D-1} of a table, the statistic is s = Q h = sum_i Q[:, x_i] for an R x D query matrix Q with entries in
// [0, 1], and a release is z = s + noise. The marginals of a contingency table are the common case: K tables over
// subsets of the attributes, each record adding 1 to one cell of every table. Q is stored by column (a cell touches
// few queries), which is what the histogram sampler's per-record update reads.
//
//     const auto q = linear_queries::marginals({2, 3, 2}, {{0}, {1}, {0, 2}});  // A, B and A:C of a 2 x 3 x 2 table
//     const laplace_mechanism m(q.l1_sensitivity(), 1.0);                       // L1 = 2 K = 6
//     const Eigen::VectorXd z = release_linear_queries(q, cells, m);            // OS CSPRNG
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <ranges>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/random/os_random_engine.hpp"

namespace privpost {

/// A range of histogram cell indices (any integer type): std::vector<int>, std::span<const std::uint32_t>, ...
template <class R>
concept cell_range = std::ranges::input_range<R> && std::integral<std::ranges::range_value_t<R>>;

/// One nonzero entry of a query matrix: Q(row, cell) = value, value in (0, 1].
struct query_entry {
  /// The query (row of Q).
  std::size_t row = 0;
  /// The histogram cell (column of Q).
  std::size_t cell = 0;
  /// The entry, in (0, 1].
  double value = 1.0;
};

/// An R x D matrix of linear queries of a histogram with entries in [0, 1], stored by column, with its sensitivities
/// under substitution of one record (a record leaves cell a and enters cell b: s changes by Q[:, b] - Q[:, a]).
class linear_queries {
 public:
  /// The most cells and the most queries (indices are stored in 32 bits).
  static constexpr std::size_t max_size = std::size_t{1} << 31;
  /// Up to this many cells the sensitivities are the exact maxima over all pairs of cells; above it, the bounds
  /// 2 max_a ||Q[:, a]||_1 and sqrt(2 max_a ||Q[:, a]||_2^2), valid because the entries are non-negative.
  static constexpr std::size_t exact_sensitivity_cells = 1024;

  /// Q from its nonzero entries (any order): `rows` x `cells`, each entry's value in (0, 1] (a zero entry is
  /// dropped), no (row, cell) twice. std::invalid_argument otherwise, naming the entry.
  linear_queries(std::size_t rows, std::size_t cells, std::vector<query_entry> entries) {
    constexpr const char* who = "linear_queries";
    if (rows < 1 || rows > max_size) throw_invalid(who, "rows", static_cast<double>(rows), "an integer in [1, 2^31]");
    if (cells < 2 || cells > max_size) throw_invalid(who, "cells", static_cast<double>(cells), "an integer in [2, 2^31]");
    for (const auto& e : entries) {
      if (e.row >= rows)
        throw_invalid(who, "entry row", static_cast<double>(e.row), "a row in [0, " + std::to_string(rows - 1) + "]");
      if (e.cell >= cells)
        throw_invalid(who, "entry cell", static_cast<double>(e.cell), "a cell in [0, " + std::to_string(cells - 1) + "]");
      if (!(e.value >= 0.0 && e.value <= 1.0))
        throw_invalid(who, "entry (" + std::to_string(e.row) + ", " + std::to_string(e.cell) + ")", e.value,
                      "a number in [0, 1]");
    }
    std::erase_if(entries, [](const query_entry& e) { return e.value == 0.0; });
    std::sort(entries.begin(), entries.end(),
              [](const query_entry& a, const query_entry& b) { return a.cell != b.cell ? a.cell < b.cell : a.row < b.row; });
    for (std::size_t k = 1; k < entries.size(); ++k)
      if (entries[k].cell == entries[k - 1].cell && entries[k].row == entries[k - 1].row)
        throw_invalid(who, "entry (" + std::to_string(entries[k].row) + ", " + std::to_string(entries[k].cell) + ")",
                      entries[k].value, "one entry per (row, cell)");
    rows_ = rows;
    start_.assign(cells + 1, 0);
    for (const auto& e : entries) ++start_[e.cell + 1];
    for (std::size_t c = 0; c < cells; ++c) start_[c + 1] += start_[c];
    row_.reserve(entries.size());
    value_.reserve(entries.size());
    integer_ = true;
    for (const auto& e : entries) {
      row_.push_back(static_cast<std::uint32_t>(e.row));
      value_.push_back(e.value);
      integer_ = integer_ && e.value == 1.0;
    }
    compute_aligned();
    compute_sensitivities();
  }

  /// The identity queries of D cells: the histogram itself (the multinomial release). L1 = 2, L2 = sqrt(2).
  static linear_queries identity(std::size_t cells) {
    if (cells < 2 || cells > max_size)
      throw_invalid("linear_queries::identity", "cells", static_cast<double>(cells), "an integer in [2, 2^31]");
    std::vector<query_entry> e(cells);
    for (std::size_t c = 0; c < cells; ++c) e[c] = {c, c, 1.0};
    return linear_queries(cells, cells, std::move(e));
  }

  /// The marginal tables of a contingency table with levels[a] >= 2 levels of attribute a (cells in row-major order:
  /// the last attribute varies fastest). tables[t] lists the attributes of table t (distinct, increasing); its rows
  /// are its cells, row-major over those attributes, and the tables' rows follow one another. Every record adds 1 to
  /// one row of every table: L1 = 2 K, L2 = sqrt(2 K) for K tables. std::invalid_argument for fewer than 1 attribute
  /// or table, a level count below 2, an attribute out of range or repeated, or more than 2^31 cells.
  static linear_queries marginals(const std::vector<std::size_t>& levels, const std::vector<std::vector<std::size_t>>& tables) {
    constexpr const char* who = "linear_queries::marginals";
    if (levels.empty()) throw_invalid(who, "attributes", 0.0, "at least 1");
    if (tables.empty()) throw_invalid(who, "tables", 0.0, "at least 1");
    std::size_t cells = 1;
    for (std::size_t a = 0; a < levels.size(); ++a) {
      if (levels[a] < 2 || levels[a] > max_size)
        throw_invalid(who, "levels of attribute " + std::to_string(a), static_cast<double>(levels[a]), "an integer in [2, 2^31]");
      if (cells > max_size / levels[a])
        throw_invalid(who, "cells (product of the levels)", static_cast<double>(cells) * static_cast<double>(levels[a]),
                      "at most 2^31");
      cells *= levels[a];
    }
    std::vector<std::size_t> offset(tables.size() + 1, 0);
    for (std::size_t t = 0; t < tables.size(); ++t) {
      const auto& attrs = tables[t];
      if (attrs.empty()) throw_invalid(who, "attributes of table " + std::to_string(t), 0.0, "at least 1");
      std::size_t size = 1;
      for (std::size_t k = 0; k < attrs.size(); ++k) {
        if (attrs[k] >= levels.size())
          throw_invalid(who, "attribute of table " + std::to_string(t), static_cast<double>(attrs[k]),
                        "an attribute in [0, " + std::to_string(levels.size() - 1) + "]");
        if (k > 0 && attrs[k] <= attrs[k - 1])
          throw_invalid(who, "attribute of table " + std::to_string(t), static_cast<double>(attrs[k]),
                        "attributes listed once, in increasing order");
        size *= levels[attrs[k]];
      }
      if (offset[t] > max_size - size) throw_invalid(who, "rows", static_cast<double>(offset[t] + size), "at most 2^31");
      offset[t + 1] = offset[t] + size;
    }
    std::vector<query_entry> e;
    e.reserve(cells * tables.size());
    std::vector<std::size_t> value(levels.size(), 0);  // the cell's level of each attribute
    for (std::size_t c = 0; c < cells; ++c) {
      for (std::size_t t = 0; t < tables.size(); ++t) {
        std::size_t row = 0;
        for (std::size_t a : tables[t]) row = row * levels[a] + value[a];
        e.push_back({offset[t] + row, c, 1.0});
      }
      for (std::size_t a = levels.size(); a-- > 0;) {  // row-major increment
        if (++value[a] < levels[a]) break;
        value[a] = 0;
      }
    }
    return linear_queries(offset.back(), cells, std::move(e));
  }

  /// R, the number of queries.
  std::size_t rows() const noexcept { return rows_; }
  /// D, the number of histogram cells.
  std::size_t cells() const noexcept { return start_.size() - 1; }
  /// The rows of cell c's nonzero entries, increasing (unchecked c < cells()).
  std::span<const std::uint32_t> column_rows(std::size_t c) const noexcept {
    return {row_.data() + start_[c], start_[c + 1] - start_[c]};
  }
  /// The values of cell c's nonzero entries, in the order of column_rows(c).
  std::span<const double> column_values(std::size_t c) const noexcept {
    return {value_.data() + start_[c], start_[c + 1] - start_[c]};
  }
  /// Whether every nonzero entry is 1 (then Q h is a vector of whole numbers: the discrete mechanisms apply).
  bool integer() const noexcept { return integer_; }
  /// Whether Q has the layout of marginal tables: every entry 1, every column the same number k of entries, and each
  /// row always at the same position of its columns (the p-th entry of every column lies in table p's rows). Then a
  /// record moving between cells changes, per position, either nothing or one row by -1 and another by +1.
  bool aligned() const noexcept { return aligned_; }
  /// max over cells a, b of ||Q[:, b] - Q[:, a]||_1 (exact up to exact_sensitivity_cells cells, else the bound).
  double l1_sensitivity() const noexcept { return l1_; }
  /// max over cells a, b of ||Q[:, b] - Q[:, a]||_2 (exact up to exact_sensitivity_cells cells, else the bound).
  double l2_sensitivity() const noexcept { return l2_; }

  /// The histogram of cell indices: h_c = #{i : x_i = c}. std::invalid_argument for a cell outside [0, D).
  template <cell_range R>
  Eigen::VectorXd histogram(const R& records) const {
    Eigen::VectorXd h = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(cells()));
    for (const auto x : records) {
      if (std::cmp_less(x, 0) || std::cmp_greater_equal(x, cells()))
        throw_invalid("linear_queries::histogram", "record cell", static_cast<double>(x),
                      "a cell in [0, " + std::to_string(cells() - 1) + "]");
      h(static_cast<Eigen::Index>(x)) += 1.0;
    }
    return h;
  }

  /// s = Q h for a histogram of D finite entries. std::invalid_argument for a wrong length or a non-finite entry.
  Eigen::VectorXd apply(const Eigen::VectorXd& h) const {
    Eigen::VectorXd s;
    apply(h, s);
    return s;
  }
  /// s = Q h into s (resized to R only if it has another size: a sampler's sweep reuses it without allocating).
  void apply(const Eigen::VectorXd& h, Eigen::VectorXd& s) const {
    check_size_match("linear_queries::apply", "histogram", h.size(), "cells", static_cast<std::int64_t>(cells()));
    check_finite("linear_queries::apply", "histogram", h);
    if (s.size() != static_cast<Eigen::Index>(rows_)) s.resize(static_cast<Eigen::Index>(rows_));
    s.setZero();
    for (std::size_t c = 0; c < cells(); ++c) {
      const double hc = h(static_cast<Eigen::Index>(c));
      if (hc == 0.0) continue;
      for (std::size_t k = start_[c]; k < start_[c + 1]; ++k) s(row_[k]) += value_[k] * hc;
    }
  }

 private:
  void compute_aligned() {
    aligned_ = integer_;
    const std::size_t k = start_[1] - start_[0];
    std::vector<std::size_t> position(rows_, std::numeric_limits<std::size_t>::max());
    for (std::size_t c = 0; aligned_ && c < cells(); ++c) {
      aligned_ = start_[c + 1] - start_[c] == k;
      for (std::size_t p = 0; aligned_ && p < k; ++p) {
        std::size_t& at = position[row_[start_[c] + p]];
        if (at == std::numeric_limits<std::size_t>::max()) at = p;
        aligned_ = at == p;
      }
    }
  }

  void compute_sensitivities() {
    const std::size_t d = cells();
    if (d <= exact_sensitivity_cells) {
      std::vector<double> a(rows_, 0.0);
      double l1 = 0.0, l2sq = 0.0;
      for (std::size_t x = 0; x < d; ++x) {
        for (std::size_t y = x + 1; y < d; ++y) {
          // ||Q[:, y] - Q[:, x]|| by scattering column x, then walking column y.
          for (std::size_t k = start_[x]; k < start_[x + 1]; ++k) a[row_[k]] = value_[k];
          double s1 = 0.0, s2 = 0.0;
          for (std::size_t k = start_[y]; k < start_[y + 1]; ++k) {
            const double diff = value_[k] - a[row_[k]];
            s1 += std::abs(diff);
            s2 += diff * diff;
            a[row_[k]] = 0.0;
          }
          for (std::size_t k = start_[x]; k < start_[x + 1]; ++k) {  // the rows of x that y does not have
            s1 += a[row_[k]];
            s2 += a[row_[k]] * a[row_[k]];
            a[row_[k]] = 0.0;
          }
          l1 = std::max(l1, s1);
          l2sq = std::max(l2sq, s2);
        }
      }
      l1_ = l1;
      l2_ = std::sqrt(l2sq);
    } else {
      double n1 = 0.0, n2 = 0.0;
      for (std::size_t c = 0; c < d; ++c) {
        double s1 = 0.0, s2 = 0.0;
        for (std::size_t k = start_[c]; k < start_[c + 1]; ++k) {
          s1 += value_[k];
          s2 += value_[k] * value_[k];
        }
        n1 = std::max(n1, s1);
        n2 = std::max(n2, s2);
      }
      l1_ = 2.0 * n1;
      l2_ = std::sqrt(2.0 * n2);
    }
    if (!(l1_ > 0.0))
      throw_invalid("linear_queries", "L1 sensitivity", l1_,
                    "a number > 0 (every cell has the same queries: nothing to release)");
  }

  std::size_t rows_ = 0;
  std::vector<std::size_t> start_;
  std::vector<std::uint32_t> row_;
  std::vector<double> value_;
  bool integer_ = true;
  bool aligned_ = false;
  double l1_ = 0.0, l2_ = 0.0;
};

/// Throws std::invalid_argument unless the mechanism's declared sensitivity covers Q's: L1 for a mechanism that
/// reports l1_sensitivity() (Laplace, discrete Laplace), L2 for one that reports l2_sensitivity() (Gaussian, discrete
/// Gaussian). A mechanism built for a smaller sensitivity would silently leak.
template <release_mechanism M>
void check_queries_covered(const char* who, const linear_queries& q, const M& mechanism) {
  if constexpr (requires { mechanism.l1_sensitivity(); }) {
    if (!(mechanism.l1_sensitivity() >= q.l1_sensitivity()))
      throw_invalid(who, "mechanism L1 sensitivity", mechanism.l1_sensitivity(),
                    "a number >= the queries' L1 sensitivity " + detail::format_value(q.l1_sensitivity()));
  } else if constexpr (requires { mechanism.l2_sensitivity(); }) {
    if (!(mechanism.l2_sensitivity() >= q.l2_sensitivity()))
      throw_invalid(who, "mechanism L2 sensitivity", mechanism.l2_sensitivity(),
                    "a number >= the queries' L2 sensitivity " + detail::format_value(q.l2_sensitivity()));
  } else {
    static_assert(
        requires { mechanism.l1_sensitivity(); }, "the mechanism must report l1_sensitivity() or l2_sensitivity()");
  }
}

/// Releases Q h for the records' cells through the mechanism, noise from g (tests and simulation studies). The
/// sensitivity comes from Q (the declared table), never from the records. std::invalid_argument for a mechanism whose
/// sensitivity is below Q's or a cell outside [0, D).
template <cell_range R, release_mechanism M, random_engine G>
Eigen::VectorXd release_linear_queries(const linear_queries& q, const R& records, const M& mechanism, G& g) {
  check_queries_covered("release_linear_queries", q, mechanism);
  const Eigen::VectorXd s = q.apply(q.histogram(records));
  return mechanism.release(s, g);
}

/// As above, with noise from the operating system's CSPRNG: the default for a real release.
template <cell_range R, release_mechanism M>
Eigen::VectorXd release_linear_queries(const linear_queries& q, const R& records, const M& mechanism) {
  os_random_engine g;
  return release_linear_queries(q, records, mechanism, g);
}

}  // namespace privpost
