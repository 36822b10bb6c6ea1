// privpost-release's options and the pieces every model's release shares: the ledger charge before any noise is
// drawn, the record's privacy fields, the parsers of declared bounds. Each model kind's release is its own file
// (release_family.cpp, release_regression.cpp, release_glm.cpp, release_tables.cpp); release_main.cpp holds the
// command line and picks the file by the model's row in models.hpp.
#pragma once

#include <array>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <Eigen/Dense>
#include <privpost/core/errors.hpp>
#include <privpost/core/math/exact_sum.hpp>
#include <privpost/mechanisms/lattice.hpp>
#include <privpost/mechanisms/privacy_accountant.hpp>
#if defined(PRIVPOST_TOOLS_MPI)
#include <privpost/distributed/mpi.hpp>
#endif

#include "ledger_file.hpp"
#include "models.hpp"
#include "mpi_job.hpp"
#include "option_table.hpp"
#include "release_record.hpp"
#include "tool_support.hpp"

namespace privpost::tools::release_tool {

struct options {
  std::string input, column, model, mechanism = "laplace", output;
  double epsilon = 0, delta = 1e-6;
  std::optional<double> granularity;  // discrete mechanisms: the lattice's gamma
  std::optional<double> lower, upper;
  int categories = 0;
  // linreg
  std::string covariates, response, x_bounds, y_bounds;
  bool no_intercept = false, noisy_moments = false;
  bool mechanism_given = false;
  // logistic, poisson-glm
  std::optional<double> radius, y_bound;
  std::string positive;
  // pairwise-tables (and marginals: columns, levels, levels_of, missing_level)
  std::string columns, levels, edges, missing_level, neighbours = "replace";
  // marginals: the released tables, e.g. A,B,A:B
  std::string marginals;
  std::vector<std::string> levels_of;
  // the privacy budget ledger
  std::string ledger, budget;
  // linreg --partitions: sample and aggregate (release_partition.cpp)
  std::size_t partitions = 0;  ///< 0: an SSP release
  std::string coefficient, cutoffs, quantile_levels, combiner = "normality-corrected", epsilon_split;
  std::string partition_prior = "fractional";
  double bound_center = 0, bound_base = 1, bound_fraction = 0.9, bound_max = 0;
  double prior_precision = regression_prior_precision, prior_a = 1, prior_b = 1;
  int threads = 2;
};

// ---- which options a release uses (option_table.hpp) ----------------------------------------------------------------
// An option the chosen model and release kind do not use is refused before anything is read or charged: ignored, it
// would spend the budget on a release nobody asked for (--cutoffs without --partitions made an ordinary release).

/// What a release is, from its command line alone (public): the model and the release kind.
struct release_kind {
  const model_row* model = nullptr;
  bool partitions = false;  ///< --partitions: a partition release (linreg)
  bool cutoffs = false;     ///< --partitions --cutoffs
  bool quantiles = false;   ///< --partitions --quantiles
  bool gaussian = false;    ///< a Gaussian mechanism (--mechanism gaussian|discrete-gaussian, or the GLMs' default)
  bool discrete = false;    ///< a lattice mechanism

  bool family() const { return model->kind == model_kind::bounded_family || model->kind == model_kind::unbounded_family; }
  bool is(model_kind k) const { return model->kind == k; }
  bool statistics() const { return !partitions; }  ///< an ordinary release of sufficient statistics
};

using release_option = option_use<release_kind>;

// The rules of the table, named where several options share one.
namespace option_rules {
inline bool every(const release_kind&) { return true; }
inline bool unbounded(const release_kind& k) { return k.is(model_kind::unbounded_family); }
inline bool partition(const release_kind& k) { return k.partitions; }
inline bool cutoffs(const release_kind& k) { return k.cutoffs; }
inline bool quantiles(const release_kind& k) { return k.quantiles; }
inline const std::string partition_text = "partition releases (" + models_where(model_rules::regression) + " --partitions M)";
inline const std::string cutoffs_text = "partition releases of probabilities (--partitions M --cutoffs)";
inline const std::string quantiles_text = "partition releases of quantiles (--partitions M --quantiles)";
}  // namespace option_rules

inline const std::array release_option_uses{
    release_option{"--input", "records.csv", "every release", option_rules::every},
    release_option{"--model", "binomial", "every release", option_rules::every},
    release_option{"--epsilon", "1", "every release", option_rules::every},
    release_option{"--output", "r.json", "every release", option_rules::every},
    release_option{"--ledger", "ledger.json", "every release", option_rules::every},
    release_option{"--budget", "1", "every release with --ledger", option_rules::every},
    release_option{"--mechanism", "laplace", "every release", option_rules::every},
    release_option{"--column", "x", "the family models (one CSV column)", [](const release_kind& k) { return k.family(); }},
    for_models<release_kind, model_rules::covariates>("--covariates", "x"),
    for_models<release_kind, model_rules::covariates>("--response", "y"),
    for_models<release_kind, model_rules::covariates>("--x-bounds", "0,1"),
    for_models<release_kind, model_rules::covariates>("--no-intercept", ""),
    for_models<release_kind, model_rules::glm>("--radius", "1"),
    for_models<release_kind, model_rules::glm_counts>("--y-bound", "10"),
    for_models<release_kind, model_rules::glm_labels>("--positive", "yes"),
    for_models<release_kind, model_rules::regression>("--y-bounds", "0,1"),
    release_option{"--noisy-moments", "", models_where(model_rules::regression) + " statistics releases (not --partitions)",
                   [](const release_kind& k) { return model_rules::regression(*k.model) && k.statistics(); }},
    release_option{"--granularity", "1", "the lattice mechanisms (--mechanism discrete-laplace|discrete-gaussian)",
                   [](const release_kind& k) { return k.discrete; }},
    release_option{"--delta", "1e-6", "the Gaussian mechanisms (gaussian, discrete-gaussian; the GLMs' default)",
                   [](const release_kind& k) { return k.gaussian; }},
    release_option{"--lower", "0", "the unbounded family models (declared record bounds)", option_rules::unbounded},
    release_option{"--upper", "1", "the unbounded family models (declared record bounds)", option_rules::unbounded},
    for_models<release_kind, model_rules::categories>("--categories", "3"),
    for_models<release_kind, model_rules::table_columns>("--columns", "a,b"),
    for_models<release_kind, model_rules::table_columns>("--levels", "0,1"),
    for_models<release_kind, model_rules::table_columns>("--levels-of", "a=0/1"),
    for_models<release_kind, model_rules::table_columns>("--missing-level", "0"),
    for_models<release_kind, model_rules::marginals>("--marginals", "a,b"),
    for_models<release_kind, model_rules::tables>("--edges", "a:b"),
    for_models<release_kind, model_rules::tables>("--neighbours", "replace"),
    for_models<release_kind, model_rules::regression>("--partitions", "10", "", " (a partition release)"),
    release_option{"--coefficient", "x", option_rules::partition_text, option_rules::partition},
    release_option{"--cutoffs", "0", option_rules::partition_text, option_rules::partition},
    release_option{"--quantiles", "0.5", option_rules::partition_text, option_rules::partition},
    release_option{"--epsilon-split", "1", option_rules::partition_text, option_rules::partition},
    release_option{"--prior-precision", "1", option_rules::partition_text, option_rules::partition},
    release_option{"--prior-a", "1", option_rules::partition_text, option_rules::partition},
    release_option{"--prior-b", "1", option_rules::partition_text, option_rules::partition},
    release_option{"--threads", "2", option_rules::partition_text, option_rules::partition},
    release_option{"--combiner", "fisher", option_rules::cutoffs_text, option_rules::cutoffs},
    release_option{"--partition-prior", "full", option_rules::cutoffs_text, option_rules::cutoffs},
    release_option{"--bound-center", "0", option_rules::quantiles_text, option_rules::quantiles},
    release_option{"--bound-base", "1", option_rules::quantiles_text, option_rules::quantiles},
    release_option{"--bound-fraction", "0.9", option_rules::quantiles_text, option_rules::quantiles},
    release_option{"--bound-max", "10", option_rules::quantiles_text, option_rules::quantiles},
};

/// The release kind of the command line o (public).
inline release_kind kind_of_release(const options& o) {
  release_kind k;
  k.model = &find_model(o.model);
  k.partitions = o.partitions > 0;
  k.cutoffs = k.partitions && !o.cutoffs.empty();
  k.quantiles = k.partitions && !o.quantile_levels.empty();
  k.discrete = is_discrete(o.mechanism);
  k.gaussian =
      o.mechanism == "gaussian" || o.mechanism == "discrete-gaussian" || (k.model->kind == model_kind::glm && !o.mechanism_given);
  return k;
}

// ---- sharded releases (mpirun -np K privpost-release --input 'shard-{rank}.csv') ------------------------------------
// Every model sums its records' contributions exactly (exact_sum), so that the statistic does not depend on the
// records' order and, under mpirun, the ranks' shards combine into the statistic one process computes from all of
// them, bit for bit. The ranks read their shards together (a shard that fails to read ends every rank); the statistic
// is then combined, and rank 0 alone charges the ledger, draws the noise and writes the record: the other ranks stop
// there (shard_done).

// Thrown on the ranks other than 0 once their shard's part of the statistic is combined: their work is done.
struct shard_done {};

// --input with {rank} replaced by this process's rank in the MPI job. A {rank} without a job of several processes is
// refused (one process would read one shard and release it as the whole data set).
inline std::string shard_path(const std::string& input) {
  const auto at = input.find("{rank}");
  const mpi_job* job = spread_job();
  if (at == std::string::npos) {
    if (job != nullptr)
      throw std::invalid_argument("--input '" + input +
                                  "' under mpirun: every rank would read the same records; name each rank's shard with "
                                  "{rank}, e.g. --input 'shard-{rank}.csv'");
    return input;
  }
  if (job == nullptr)
    throw std::invalid_argument("--input '" + input + "' names shards by {rank}: start the release with mpirun -np K");
  std::string path = input;
  path.replace(at, 6, std::to_string(job->rank()));
  if (path.find("{rank}") != std::string::npos) throw std::invalid_argument("--input: {rank} may appear once");
  return path;
}

// Reads this process's records and sums its part of the statistic (read_and_sum), with every rank of an MPI job
// together: a failure on any rank (a missing shard, a bad record) ends every rank with that rank's message.
template <class F>
auto read_shard(F&& read_and_sum) {
#if defined(PRIVPOST_TOOLS_MPI)
  if (spread_job() != nullptr) return privpost::distributed::collectively(MPI_COMM_WORLD, std::forward<F>(read_and_sum));
#endif
  return read_and_sum();
}

// What a shard may hold: no records is fine for one rank's shard (combine refuses when all are empty), not for a data
// set read by one process.
inline csv_rows shard_rows() { return spread_job() != nullptr ? csv_rows::any : csv_rows::at_least_one; }

// A statistic's exact partial sums and the part's record counts.
struct shard_sums {
  std::vector<privpost::exact_sum> sums;
  double records = 0;         ///< records read (the release's n once combined)
  double outside = 0;         ///< records outside the declared bounds: private, the owner's audit only
  std::vector<double> audit;  ///< other counts of the owner's audit (clamped values), summed like outside

  explicit shard_sums(std::size_t dimension) : sums(dimension) {}
  // Adds one record's contribution c (its length is the statistic's).
  void add(const Eigen::VectorXd& c) {
    for (Eigen::Index j = 0; j < c.size(); ++j) sums[static_cast<std::size_t>(j)].add(c(j));
  }
};

// The statistic of all shards: each exact sum (combined over the ranks under mpirun) rounded once; the counts become
// the global ones. On the ranks other than 0 it throws shard_done after the combination.
inline Eigen::VectorXd combine(shard_sums& part) {
#if defined(PRIVPOST_TOOLS_MPI)
  if (spread_job() != nullptr) {
    privpost::distributed::allreduce(MPI_COMM_WORLD, std::span<privpost::exact_sum>(part.sums));
    part.records =
        static_cast<double>(privpost::distributed::allreduce(MPI_COMM_WORLD, static_cast<std::uint64_t>(part.records)));
    part.outside =
        static_cast<double>(privpost::distributed::allreduce(MPI_COMM_WORLD, static_cast<std::uint64_t>(part.outside)));
    for (double& count : part.audit)
      count = static_cast<double>(privpost::distributed::allreduce(MPI_COMM_WORLD, static_cast<std::uint64_t>(count)));
    if (part.records < 1) throw std::invalid_argument("every rank's shard is empty; nothing was released");
    if (spread_job()->rank() != 0) throw shard_done{};
  }
#endif
  Eigen::VectorXd s(static_cast<Eigen::Index>(part.sums.size()));
  for (std::size_t j = 0; j < part.sums.size(); ++j) s(static_cast<Eigen::Index>(j)) = part.sums[j].value();
  return s;
}

// The ledger of this run (nullptr without --ledger) and the label of its entry.
inline privpost::tools::ledger_file* active_ledger = nullptr;
inline std::string ledger_label;

// The neighbour relation a mechanism was calibrated to, for its charge.
enum class calibrated_for { replace_one, add_remove };

// Every check that could refuse the release of r, from public quantities only, before the charge (the statistic's
// value is private: a refusal that depends on it is itself a leak). The record as it will be written, with zeros in
// place of the noisy statistics, is read back by privpost-infer's reader, so that no budget is spent on a release the
// analyst's tool refuses; a lattice mechanism's capacity (mechanisms/lattice.hpp) is checked against the statistic's
// range, which n and the declared bounds give.
inline void check_before_charge(const privpost::tools::release_record& r, std::size_t dimension) {
  privpost::tools::release_record dry = r;
  dry.noisy_statistics.assign(dimension, 0.0);
  if (is_discrete(r.mechanism)) {
    const double capacity = privpost::lattice{r.granularity}.capacity();
    const auto ranges = privpost::tools::record_detail::statistic_ranges(r, dimension);
    for (std::size_t i = 0; i < dimension; ++i) {
      const auto [lo, hi] = ranges[i];
      const double largest = std::max(std::abs(lo), std::abs(hi));
      if (!(largest <= capacity))
        throw std::invalid_argument(
            "--granularity " + privpost::detail::format_value(r.granularity) +
            ": the statistics of n = " + privpost::detail::format_value(r.n) + " records within the declared bounds reach " +
            privpost::detail::format_value(largest) + ", more than the lattice mechanisms take (2^44 lattice units, " +
            privpost::detail::format_value(capacity) + " at this granularity); accepted: --granularity at least " +
            privpost::detail::format_value(std::ldexp(largest, -44)) +
            " (decided from n and the bounds alone, before anything was charged; nothing was released)");
    }
  }
  try {
    (void)privpost::tools::from_json(privpost::tools::to_json(dry));
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument("privpost-infer would refuse this release (" + std::string(e.what()) + "); nothing was charged");
  }
}

// The release of statistic s by mechanism m into r: every check first (check_before_charge), then the charge of m (and
// of the mechanisms in extra, released by the caller afterwards) to the ledger, all or nothing, then the noise from the
// OS CSPRNG, the only step after the charge. A mechanism calibrated to add/remove neighbours is charged at its
// replace-one guarantee: under the library's replace-one relation a record change is a removal and an addition, so
// the group-of-2 guarantee (2 epsilon, (1 + e^epsilon) delta; Dwork & Roth 2014, Thm. 2.2 and its (epsilon, delta)
// form), 4 rho in zCDP (Bun & Steinke 2016, Prop. 1.9).
template <class M, class... Extra>
void release_into(privpost::tools::release_record& r, const M& m, const Eigen::VectorXd& s, calibrated_for relation,
                  const Extra&... extra) {
  r.epsilon = m.budget().epsilon;
  r.delta = m.budget().delta;
  check_before_charge(r, static_cast<std::size_t>(s.size()));
  if (active_ledger != nullptr) {
    if (relation == calibrated_for::add_remove) {
      if (sizeof...(Extra) != 0) throw std::logic_error("release_into: an add/remove release charges one mechanism");
      const privpost::privacy_budget b = m.budget();
      active_ledger->charge_entry(privpost::ledger_entry{ledger_label + " (add-remove neighbours, charged for replace-one)",
                                                         {2.0 * b.epsilon, (1.0 + std::exp(b.epsilon)) * b.delta},
                                                         4.0 * privpost::zcdp_rho(m)});
    } else {
      active_ledger->charge(ledger_label, m, extra...);
    }
  }
  const Eigen::VectorXd z = m.release(s);  // OS CSPRNG
  r.noisy_statistics.assign(z.data(), z.data() + z.size());
}

template <class M, class... Extra>
void release_into(privpost::tools::release_record& r, const M& m, const Eigen::VectorXd& s, const Extra&... extra) {
  release_into(r, m, s, calibrated_for::replace_one, extra...);
}

// --budget EPSILON[,DELTA] (delta 0 when not given).
inline privpost::privacy_budget parse_budget(const std::string& text) {
  const auto v = privpost::tools::split_list(text, "--budget");
  privpost::privacy_budget b;
  try {
    if (v.size() < 1 || v.size() > 2) throw std::invalid_argument("count");
    std::size_t used = 0;
    b.epsilon = std::stod(v[0], &used);
    if (used != v[0].size()) throw std::invalid_argument("trailing");
    if (v.size() == 2) {
      b.delta = std::stod(v[1], &used);
      if (used != v[1].size()) throw std::invalid_argument("trailing");
    }
  } catch (const std::exception&) {
    throw std::invalid_argument("--budget is '" + text + "'; accepted: EPSILON or EPSILON,DELTA (numbers)");
  }
  if (!(std::isfinite(b.epsilon) && b.epsilon > 0.0))
    throw_invalid("--budget", "total epsilon", b.epsilon, "a finite number > 0");
  check_delta("--budget", b.delta, true);
  return b;
}

inline std::pair<double, double> parse_bounds(const std::string& text, const char* flag) {
  const auto v = privpost::tools::split_list(text, flag);
  if (v.size() != 2) throw std::invalid_argument(std::string(flag) + " is '" + text + "'; accepted: lo,hi");
  double lo = 0, hi = 0;
  try {
    lo = std::stod(v[0]);
    hi = std::stod(v[1]);
  } catch (const std::exception&) {
    throw std::invalid_argument(std::string(flag) + " is '" + text + "'; accepted: two numbers lo,hi");
  }
  if (!(std::isfinite(lo) && std::isfinite(hi) && lo < hi))
    throw std::invalid_argument(std::string(flag) + ": accepted finite lo < hi");
  return {lo, hi};
}

inline std::vector<double> parse_numbers(const std::string& text, const char* flag) {
  std::vector<double> v;
  for (const auto& item : privpost::tools::split_list(text, flag)) {
    char* end = nullptr;
    const double x = std::strtod(item.c_str(), &end);
    if (item.empty() || end != item.c_str() + item.size() || !std::isfinite(x))
      throw std::invalid_argument(std::string(flag) + ": '" + item + "' is not a finite number");
    v.push_back(x);
  }
  return v;
}

/// The exponential-family models (binomial, multinomial, and the unbounded families with declared bounds):
/// release_family.cpp.
privpost::tools::release_record make_family_release(const options& o);
/// Linear regression: release_regression.cpp.
privpost::tools::release_record make_regression_release(const options& o);
/// Logistic and Poisson regression (DP-GLM): release_glm.cpp.
privpost::tools::release_record make_glm_release(const options& o);
/// Pairwise tables (CGM): release_tables.cpp.
privpost::tools::release_record make_tables_release(const options& o);
/// --mechanism discrete-laplace|discrete-gaussian: releases s on the lattice into r, charged (release_family.cpp).
void release_on_lattice(const options& o, privpost::tools::release_record& r, const Eigen::VectorXd& s, double l1, double l2);
/// Marginal tables of a contingency table: release_marginals.cpp.
privpost::tools::release_record make_marginals_release(const options& o);
/// The declared columns (--columns, --levels, --levels-of, --missing-level) into t; returns their level counts
/// (release_tables.cpp, shared with release_marginals.cpp).
std::vector<int> read_declared_columns(const options& o, privpost::tools::table_columns_block& t);
/// The index of column `name` among t's declared columns; std::invalid_argument naming `flag` otherwise.
int column_index(const privpost::tools::table_columns_block& t, const std::string& name, const char* flag);
/// The records of --input as states of t's declared columns, one row per CSV data row.
Eigen::MatrixXi read_declared_records(const std::string& input, const privpost::tools::table_columns_block& t);
/// linreg --partitions: a partition release (sample and aggregate), its JSON record's text: release_partition.cpp.
std::string make_partition_release(const options& o);

}  // namespace privpost::tools::release_tool
