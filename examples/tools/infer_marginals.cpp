// privpost-infer for marginal-table releases (model marginals) and, with --method records, for a pairwise-tables
// release read as the marginals it is (its edge tables): the joint posterior of the table's cell probabilities given
// one or several releases of the same records, by the record-level histogram sampler (samplers/record_histogram.hpp;
// docs/histogram-measurements.md B.8.1): exact, no CLT; a sweep moves every record once.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "infer.hpp"

namespace privpost::tools::infer_tool {

namespace {

// The released tables of a record as lists of column indices: a marginals record's own, or a pairwise-tables record's
// edges (each {u, v}, u < v: the edge table is the 2-way marginal, laid out alike).
std::vector<std::vector<std::size_t>> tables_of(const release_record& rec) {
  if (kind_of(rec.model) == model_kind::marginals) return rec.marginals().marginal_tables;
  std::vector<std::vector<std::size_t>> t;
  for (const auto& e : rec.tables().edges) t.push_back({static_cast<std::size_t>(e.first), static_cast<std::size_t>(e.second)});
  return t;
}

// One reported quantity group: the margin over `columns` (cell index of each full-table cell in it) and, for a 2 x 2
// margin of a declared table, its log odds ratio.
struct margin {
  std::vector<std::size_t> columns;
  std::vector<std::size_t> index;  // full-table cell -> margin cell
  std::size_t size = 0;
  bool log_odds = false;
};

// The sampler the tool runs: histogram_gibbs, reporting the cells (small tables only), every column's 1-way margin, the
// declared multi-column tables and the 2 x 2 tables' log odds ratios instead of the D cells (what is kept per draw);
// for privpost-synthesize (all_cells) every cell as well, after them: the synthetic records' law.
class reported_histogram {
 public:
  reported_histogram(histogram_gibbs chain, const std::vector<margin>& margins, bool cells, std::size_t size, bool all_cells)
      : chain_(std::move(chain)),
        margins_(&margins),
        cells_(cells),
        all_cells_(all_cells),
        reported_(static_cast<Eigen::Index>(size)),
        out_(reported_ + (all_cells ? chain_.parameter_vector().size() : 0)) {
    refresh();
  }
  template <class G>
  void step(G& g) {
    chain_.step(g);
    refresh();
  }
  const Eigen::VectorXd& parameter_vector() const noexcept { return out_; }
  const privpost::numerical_events& events() const noexcept { return chain_.events(); }

 private:
  void refresh() {
    const Eigen::VectorXd& theta = chain_.parameter_vector();
    Eigen::Index at = 0;
    if (cells_) {
      out_.head(theta.size()) = theta;
      at = theta.size();
    }
    for (const auto& m : *margins_) {
      auto block = out_.segment(at, static_cast<Eigen::Index>(m.size));
      block.setZero();
      for (Eigen::Index c = 0; c < theta.size(); ++c)
        block(static_cast<Eigen::Index>(m.index[static_cast<std::size_t>(c)])) += theta(c);
      at += static_cast<Eigen::Index>(m.size);
      // A margin cell can underflow to 0 only under a prior far below one pseudo-count: log of the smallest normal then.
      auto log = [](double p) { return std::log(std::max(p, std::numeric_limits<double>::min())); };
      if (m.log_odds) out_(at++) = log(block(0)) + log(block(3)) - log(block(1)) - log(block(2));
    }
    if (all_cells_) out_.tail(theta.size()) = theta;
  }

  histogram_gibbs chain_;
  const std::vector<margin>* margins_;
  bool cells_, all_cells_;
  Eigen::Index reported_;
  Eigen::VectorXd out_;
};

// The cells are reported one by one up to this many (a larger table is reported by its margins).
constexpr std::size_t max_reported_cells = 64;

}  // namespace

int run_marginals(const std::vector<release_record>& recs, const options& o) {
  using namespace privpost;
  const release_record& first = recs.front();
  const auto& shape = first.table_part();  // the table every release describes
  if (kind_of(first.model) == model_kind::tables) {
    if (o.method != "records")
      throw std::invalid_argument("internal: pairwise-tables reaches the histogram sampler with --method records only");
    if (first.tables().neighbours != "replace_one")
      throw std::invalid_argument(
          "--method records: this pairwise-tables release was calibrated to add-remove neighbours (sensitivity |E|); the "
          "histogram sampler takes releases whose sensitivity covers replace-one neighbours (2|E|)");
  }
  if (o.compare_naive)
    throw std::invalid_argument("--compare-naive: released marginals give no histogram to plug in; there is no naive baseline");
  if (o.collapsed_moves != 0) throw std::invalid_argument("--collapsed-moves applies to --method gibbs of pairwise-tables");
  // The same table and the same records in every release.
  for (std::size_t k = 1; k < recs.size(); ++k) {
    const auto& r = recs[k];
    const std::string which = "release " + std::to_string(k + 1);
    if (r.table_part().nodes != shape.nodes || r.table_part().levels != shape.levels)
      throw std::invalid_argument(which + " declares other columns or levels than release 1; accepted: releases of one table");
    if (r.n != first.n)
      throw std::invalid_argument(which + " has n = " + std::to_string(static_cast<long long>(r.n)) +
                                  " records, release 1 n = " + std::to_string(static_cast<long long>(first.n)) +
                                  "; accepted: releases of the same records (one n)");
  }
  std::size_t cells = 1;
  for (const auto& l : shape.levels) cells *= l.size();  // <= max_histogram_cells: marginal_queries checks below
  std::vector<histogram_measurement> measurements;
  std::vector<std::vector<std::size_t>> declared;  // every released table, once
  for (const auto& r : recs) {
    const auto tables = tables_of(r);
    const linear_queries q = marginal_queries(r.table_part().levels, tables);
    const Eigen::VectorXd z =
        Eigen::Map<const Eigen::VectorXd>(r.noisy_statistics.data(), static_cast<Eigen::Index>(r.noisy_statistics.size()));
    mechanism_of(r).visit([&](const auto& m) { measurements.emplace_back(q, m, z); });
    for (const auto& t : tables)
      if (std::find(declared.begin(), declared.end(), t) == declared.end()) declared.push_back(t);
  }
  // The prior: Dirichlet(alpha_0 / D) per cell (alpha_0 = 10 by default, the pairwise-tables default pseudo-count), or
  // one value per cell. Not Dirichlet(1): over D cells it is a prior of D pseudo-records whose margins are sharply
  // uniform (a 3-level column's margin ~ Beta(D / 3, 2D / 3)), which at D = 162 pulled a House votes margin from 0.58
  // to 0.44 (examples/housevotes_marginals.cpp).
  const double d = static_cast<double>(cells);
  Eigen::VectorXd alpha = Eigen::VectorXd::Constant(static_cast<Eigen::Index>(cells), 10.0 / d);
  if (!o.prior.empty()) {
    const auto v = split_list(o.prior, "--prior");
    const auto values =
        prior_values(o.prior, v.size() == 1 ? 1 : cells,
                     "alpha_0, the total pseudo-count spread evenly over the cells, or one pseudo-count per cell");
    for (Eigen::Index c = 0; c < alpha.size(); ++c)
      alpha(c) = values.size() == 1 ? values[0] / d : values[static_cast<std::size_t>(c)];
    for (Eigen::Index c = 0; c < alpha.size(); ++c)
      if (!(std::isfinite(alpha(c)) && alpha(c) > 0.0 && alpha(c) < 1e9))
        throw std::invalid_argument("--prior: a cell's Dirichlet pseudo-count is " + std::to_string(alpha(c)) +
                                    "; accepted: a finite number in (0, 1e9)");
  }
  // What is reported: the cells (small tables), every 1-way margin, every declared multi-column table (with the log
  // odds ratio of a 2 x 2 one).
  auto cell_name = [&](const std::vector<std::size_t>& columns, const std::vector<std::size_t>& states) {
    std::string s = "P(";
    for (std::size_t k = 0; k < columns.size(); ++k)
      s += (k ? "," : "") + shape.nodes[columns[k]] + "=" + shape.levels[columns[k]][states[k]];
    return s + ")";
  };
  std::vector<std::string> names;
  std::vector<std::size_t> all(shape.nodes.size());
  for (std::size_t v = 0; v < all.size(); ++v) all[v] = v;
  auto for_each_cell = [&](const std::vector<std::size_t>& columns, auto&& fn) {  // row-major over the columns' levels
    std::vector<std::size_t> states(columns.size(), 0);
    for (;;) {
      fn(states);
      std::size_t k = columns.size();
      while (k > 0 && ++states[k - 1] == shape.levels[columns[k - 1]].size()) states[--k] = 0;
      if (k == 0) return;
    }
  };
  const bool report_cells = cells <= max_reported_cells;
  if (report_cells) for_each_cell(all, [&](const std::vector<std::size_t>& st) { names.push_back(cell_name(all, st)); });
  std::vector<margin> margins;
  auto add_margin = [&](const std::vector<std::size_t>& columns) {
    margin m;
    m.columns = columns;
    m.size = 1;
    for (std::size_t v : columns) m.size *= shape.levels[v].size();
    m.log_odds = columns.size() == 2 && m.size == 4;
    m.index.resize(cells);
    std::size_t c = 0;
    for_each_cell(all, [&](const std::vector<std::size_t>& st) {
      std::size_t k = 0;
      for (std::size_t v : columns) k = k * shape.levels[v].size() + st[v];
      m.index[c++] = k;
    });
    for_each_cell(columns, [&](const std::vector<std::size_t>& st) { names.push_back(cell_name(columns, st)); });
    if (m.log_odds) names.push_back("logOR(" + shape.nodes[columns[0]] + "," + shape.nodes[columns[1]] + ")");
    margins.push_back(std::move(m));
  };
  for (std::size_t v = 0; v < shape.nodes.size(); ++v) add_margin({v});
  for (const auto& t : declared)
    if (t.size() >= 2 && !(t == all && report_cells)) add_margin(t);

  // privpost-synthesize keeps every draw's D cell probabilities (the synthetic records' law) beside what is reported.
  const bool synthesize = o.synthetic_sets > 0;
  constexpr double max_kept_bytes = 1024.0 * 1024.0 * 1024.0;
  const privpost::inference_options io = driver_options(o);
  // Unless a chain length is asked for, run until the tools' warning thresholds are met (marginals_until_rounds);
  // privpost-synthesize allows the rounds whose kept cell probabilities fit in max_kept_bytes (a large table gets fewer
  // doublings rather than a refusal).
  auto kept_bytes = [&](std::int64_t draws) { return 8.0 * static_cast<double>(cells) * o.chains * static_cast<double>(draws); };
  std::optional<privpost::convergence_target> until = until_warning_thresholds(o, io, marginals_until_rounds);
  for (int rounds = marginals_until_rounds - 1;
       synthesize && until && rounds >= 1 && kept_bytes(longest_kept_draws(io, until)) > max_kept_bytes; --rounds)
    until = until_warning_thresholds(o, io, rounds);
  const std::int64_t longest_draws = longest_kept_draws(io, until);
  if (synthesize && kept_bytes(longest_draws) > max_kept_bytes)
    throw std::invalid_argument("privpost-synthesize: " + std::to_string(cells) + " cells x " + std::to_string(o.chains) +
                                " chains x " + std::to_string(longest_draws) +
                                " draws would keep more than 1 GiB of cell probabilities; accepted: fewer --draws or --chains");
  tools::progress_line progress(std::string(tool_name(o)) + ": sweeps");
  auto tick = [&](const privpost::inference_progress& p) { progress(static_cast<long>(p.done), static_cast<long>(p.total)); };
  // --output-dir's files get the reported columns as they are made (privpost-synthesize's cells follow them).
  stream_as stream{"records", names};
  if (synthesize) {
    stream.transform = [&names](std::span<const double> sampled, std::span<double> out) {
      std::copy_n(sampled.begin(), names.size(), out.begin());
    };
    stream.judged = static_cast<Eigen::Index>(names.size());  // what is reported, as privpost-infer judges it
  }
  std::vector<std::pair<std::string, privpost::inference_result>> results;
  results.emplace_back("records", run_chains(
                                      [&](auto& g) {
                                        return reported_histogram(
                                            histogram_gibbs(alpha, first.n, measurements, g, record_init::consistent), margins,
                                            report_cells, names.size(), synthesize);
                                      },
                                      o, io, tick, until, stream));
  for (std::size_t k = 0; k < recs.size(); ++k) {
    const auto& r = recs[k];
    std::string tables;
    for (const auto& t : tables_of(r)) {
      tables += tables.empty() ? "" : ", ";
      for (std::size_t i = 0; i < t.size(); ++i) tables += (i ? ":" : "") + r.table_part().nodes[t[i]];
    }
    std::printf("release %zu: model %s, n %.0f, tables %s, %s mechanism (epsilon %g%s), privpost %s\n", k + 1, r.model.c_str(),
                r.n, tables.c_str(), r.mechanism.c_str(), r.epsilon,
                r.delta > 0.0 ? (", delta " + std::to_string(r.delta)).c_str() : "", r.version.c_str());
  }
  std::printf(
      "%zu cells (%s); Dirichlet prior, total pseudo-count %g; %d chains x %lld draws (burn-in %d, thin %d, seed %llu)\n\n",
      cells, report_cells ? "each reported" : "reported by their margins", alpha.sum(), o.chains,
      static_cast<long long>(results.front().second.draws.draws_per_chain()), o.burnin, o.thin,
      static_cast<unsigned long long>(o.seed));
  const std::vector<std::string> titles = {recs.size() == 1
                                               ? "noise-aware record-level (the records latent; exact, no CLT)"
                                               : "noise-aware record-level, all releases jointly (the records latent; exact)"};
  std::optional<privpost::inference_result> joint;  // privpost-synthesize: the cells, split off the reported columns
  if (synthesize) {
    auto& r = results.front().second;
    std::vector<Eigen::MatrixXd> reported, all;
    for (const auto& m : r.draws.chains()) {
      reported.emplace_back(m.leftCols(static_cast<Eigen::Index>(names.size())));
      all.emplace_back(m.rightCols(static_cast<Eigen::Index>(cells)));
    }
    joint = r;
    joint->draws = privpost::posterior(std::move(all));
    r.draws = privpost::posterior(std::move(reported));
  }
  privpost::summary_layout layout;  // the margins' names are long: the column fits the longest
  for (const auto& name : names) layout.name_width = std::max(layout.name_width, static_cast<int>(name.size()));
  std::fflush(stdout);
  privpost::summary_writer(std::cout, layout).write(table_header(titles.front(), names), results.front().second);
  std::cout.flush();
  const std::size_t warnings = warn("noise-aware", results.front().second, names);
  if (!o.draws_csv.empty()) write_draws(o.draws_csv, results, names);
  write_outputs(o, first, o.thin, results, titles, names);
  if (joint && !interrupt_requested()) write_synthetic_table_sets(o, first, *joint);
  if (o.report && recs.size() > 1) {
    nlohmann::json all_releases = nlohmann::json::array();
    for (const auto& r : recs) all_releases.push_back(to_json(r));
    (*o.report)["releases"] = all_releases;
  }
  return (o.strict && warnings > 0) ? strict_exit_status : 0;
}

}  // namespace privpost::tools::infer_tool
