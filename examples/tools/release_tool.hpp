// privpost-release's options and the pieces every model's release shares: the ledger charge before any noise is
// drawn, the record's privacy fields, the parsers of declared bounds. Each model kind's release is its own file
// (release_family.cpp, release_regression.cpp, release_glm.cpp, release_tables.cpp); release_main.cpp holds the
// command line and picks the file by the model's row in models.hpp.
#pragma once

#include <cmath>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <Eigen/Dense>
#include <privpost/core/math/exact_sum.hpp>
#include <privpost/mechanisms/privacy_accountant.hpp>
#if defined(PRIVPOST_TOOLS_MPI)
#include <privpost/distributed/mpi.hpp>
#endif

#include "ledger_file.hpp"
#include "mpi_job.hpp"
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
  double prior_precision = 1, prior_a = 1, prior_b = 1;
  int threads = 2;
};

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

// Charges the release of mechanism m (and of the mechanisms in extra, released by the caller afterwards) to the ledger,
// all or nothing, then draws the noise from the OS CSPRNG: a release over the budget draws none.
template <class M, class... Extra>
Eigen::VectorXd charged_release(const M& m, const Eigen::VectorXd& s, const Extra&... extra) {
  if (active_ledger != nullptr) active_ledger->charge(ledger_label, m, extra...);
  return m.release(s);  // OS CSPRNG
}

// The same for a mechanism calibrated to add/remove neighbours: under the library's replace-one relation a record
// change is a removal and an addition, so the release is charged at the group-of-2 guarantee (2 epsilon,
// (1 + e^epsilon) delta; Dwork & Roth 2014, Thm. 2.2 and its (epsilon, delta) form) and 4 rho in zCDP (Bun & Steinke
// 2016, Prop. 1.9).
template <class M>
Eigen::VectorXd charged_release_add_remove(const M& m, const Eigen::VectorXd& s) {
  if (active_ledger != nullptr) {
    const privpost::privacy_budget b = m.budget();
    active_ledger->charge_entry(privpost::ledger_entry{ledger_label + " (add-remove neighbours, charged for replace-one)",
                                                       {2.0 * b.epsilon, (1.0 + std::exp(b.epsilon)) * b.delta},
                                                       4.0 * privpost::zcdp_rho(m)});
  }
  return m.release(s);  // OS CSPRNG
}

template <class Mechanism>
void finish(privpost::tools::release_record& r, const Mechanism& m, const Eigen::VectorXd& z) {
  r.epsilon = m.budget().epsilon;
  r.delta = m.budget().delta;
  r.noisy_statistics.assign(z.data(), z.data() + z.size());
}

// --budget EPSILON[,DELTA] (delta 0 when not given).
inline privpost::privacy_budget parse_budget(const std::string& text) {
  const auto v = privpost::tools::split_list(text);
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
  return b;  // the ranges are privacy_accountant's checks
}

inline std::pair<double, double> parse_bounds(const std::string& text, const char* flag) {
  const auto v = privpost::tools::split_list(text);
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
  for (const auto& item : privpost::tools::split_list(text)) {
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
/// The declared columns (--columns, --levels, --levels-of, --missing-level) into r; returns their level counts
/// (release_tables.cpp, shared with release_marginals.cpp).
std::vector<int> read_declared_columns(const options& o, privpost::tools::release_record& r);
/// The index of column `name` among r's declared columns; std::invalid_argument naming `flag` otherwise.
int column_index(const privpost::tools::release_record& r, const std::string& name, const char* flag);
/// The records of --input as states of r's declared columns, one row per CSV data row.
Eigen::MatrixXi read_declared_records(const std::string& input, const privpost::tools::release_record& r);
/// linreg --partitions: a partition release (sample and aggregate), its JSON record's text: release_partition.cpp.
std::string make_partition_release(const options& o);

}  // namespace privpost::tools::release_tool
