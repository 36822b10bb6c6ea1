// privpost/distributed/mpi.hpp
// privpost across the processes of an MPI job: sums of sharded records that are bit for bit the single-process sums,
// chains spread over ranks with the draws of the single-process run, and failures that end every rank together.
// Not part of the umbrella header: it needs MPI (CMake target privpost::distributed, found by FindMPI). The caller
// owns MPI_Init and MPI_Finalize; every function here is collective over its communicator (every rank calls it, in
// the same order), and reports an MPI error as std::runtime_error (communicators whose error handler returns codes;
// MPI's default handler aborts the job first).
#pragma once

#include <mpi.h>

#include <Eigen/Core>
#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "privpost/core/errors.hpp"
#include "privpost/core/math/exact_sum.hpp"
#include "privpost/core/numerical_events.hpp"
#include "privpost/inference/calibration_study.hpp"
#include "privpost/inference/infer.hpp"
#include "privpost/inference/run.hpp"
#include "privpost/mechanisms/ssp.hpp"
#include "privpost/samplers/record_sharded.hpp"
#include "privpost/samplers/record_sharded_histogram.hpp"
#include "privpost/samplers/record_sharded_regression.hpp"

namespace privpost::distributed {

/// Thrown on the ranks that did not fail when another rank's part of a collective step failed: names that rank and
/// carries its message, so every rank of the job stops with the same explanation.
class remote_failure : public std::runtime_error {
 public:
  /// rank: the lowest rank that failed; what: its error message.
  remote_failure(int rank, const std::string& what)
      : std::runtime_error("rank " + std::to_string(rank) + " failed: " + what), rank_(rank) {}
  /// The lowest rank that failed.
  int rank() const noexcept { return rank_; }

 private:
  int rank_;
};

namespace detail {
inline void check_mpi(int code, const char* call) {
  if (code != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(code, text, &length);
    throw std::runtime_error(std::string(call) + " failed: " + std::string(text, static_cast<std::size_t>(length)));
  }
}
}  // namespace detail

/// This process's rank in comm.
inline int rank(MPI_Comm comm) {
  int r = 0;
  detail::check_mpi(MPI_Comm_rank(comm, &r), "MPI_Comm_rank");
  return r;
}

/// The number of processes in comm.
inline int size(MPI_Comm comm) {
  int s = 0;
  detail::check_mpi(MPI_Comm_size(comm, &s), "MPI_Comm_size");
  return s;
}

/// Runs body() on every rank and agrees on the outcome: when it throws on any rank, every rank throws (the failing
/// ranks their own exception, the others remote_failure naming the lowest failing rank and its message), so no rank
/// goes on to a later collective step, or to a release, that the others will never reach. Returns body()'s value.
template <class Body>
auto collectively(MPI_Comm comm, Body&& body) -> std::invoke_result_t<Body&> {
  using R = std::invoke_result_t<Body&>;
  std::exception_ptr error;
  std::string message;
  std::optional<std::conditional_t<std::is_void_v<R>, int, R>> value;
  try {
    if constexpr (std::is_void_v<R>) {
      body();
      value.emplace(0);
    } else {
      value.emplace(body());
    }
  } catch (const std::exception& e) {
    error = std::current_exception();
    message = e.what();
  } catch (...) {
    error = std::current_exception();
    message = "an exception of a type other than std::exception";
  }
  const int n = size(comm), me = rank(comm);
  int failed = error ? me : n;
  int lowest = n;
  detail::check_mpi(MPI_Allreduce(&failed, &lowest, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce");
  if (lowest == n) {
    if constexpr (std::is_void_v<R>)
      return;
    else
      return std::move(*value);
  }
  // The lowest failing rank tells the others its message (length first).
  std::uint64_t length = me == lowest ? message.size() : 0;
  detail::check_mpi(MPI_Bcast(&length, 1, MPI_UINT64_T, lowest, comm), "MPI_Bcast");
  std::string text(static_cast<std::size_t>(length), '\0');
  if (me == lowest) text = message;
  if (length > 0) detail::check_mpi(MPI_Bcast(text.data(), static_cast<int>(length), MPI_CHAR, lowest, comm), "MPI_Bcast");
  if (error) std::rethrow_exception(error);
  throw remote_failure(lowest, text);
}

/// Replaces each of `sums` by its total over the ranks of comm, on every rank: the exact sums' digits are added as
/// integers, so the totals are bit for bit what one process gets from all the values, whatever the number of ranks
/// and however the values were split. std::invalid_argument if comm has 2^30 ranks or more (the digits' headroom).
inline void allreduce(MPI_Comm comm, std::span<exact_sum> sums) {
  if (size(comm) >= (1 << 30))
    throw_invalid("distributed::allreduce", "ranks", static_cast<double>(size(comm)), "fewer than 2^30");
  constexpr std::size_t digits = exact_sum::digits;
  std::vector<std::int64_t> local(sums.size() * digits), total(sums.size() * digits);
  for (std::size_t j = 0; j < sums.size(); ++j) {
    const auto d = sums[j].limbs();
    std::copy(d.begin(), d.end(), local.begin() + static_cast<std::ptrdiff_t>(j * digits));
  }
  if (!local.empty())
    detail::check_mpi(MPI_Allreduce(local.data(), total.data(), static_cast<int>(local.size()), MPI_INT64_T, MPI_SUM, comm),
                      "MPI_Allreduce");
  for (std::size_t j = 0; j < sums.size(); ++j) {
    exact_sum::limbs_type d{};
    std::copy_n(total.begin() + static_cast<std::ptrdiff_t>(j * digits), digits, d.begin());
    sums[j] = exact_sum::from_limbs(d);
  }
}

/// The total of a count over the ranks of comm, on every rank.
inline std::uint64_t allreduce(MPI_Comm comm, std::uint64_t count) {
  std::uint64_t total = 0;
  detail::check_mpi(MPI_Allreduce(&count, &total, 1, MPI_UINT64_T, MPI_SUM, comm), "MPI_Allreduce");
  return total;
}

/// Sends root's `values` to every rank of comm (in place): how a release drawn on one rank, or any decision made there,
/// reaches the others.
inline void broadcast(MPI_Comm comm, std::span<double> values, int root = 0) {
  if (!values.empty())
    detail::check_mpi(MPI_Bcast(values.data(), static_cast<int>(values.size()), MPI_DOUBLE, root, comm), "MPI_Bcast");
}

/// The statistic of the records of every rank (each rank passes its shard), on every rank: bit for bit
/// stat.compute() of the concatenated shards, with the global record and outside counts. The shards are read
/// collectively: a shard that makes the statistic throw (a NaN record) ends every rank (see collectively).
template <std::size_t P, class Statistic>
typename bounded_statistic<P, Statistic>::result sharded_statistic(
    MPI_Comm comm, const bounded_statistic<P, Statistic>& stat,
    std::type_identity_t<std::span<const std::array<double, P>>> shard) {
  auto part = collectively(comm, [&] { return stat.accumulate(shard); });
  allreduce(comm, std::span<exact_sum>(part.sums));
  part.records = static_cast<std::size_t>(allreduce(comm, static_cast<std::uint64_t>(part.records)));
  part.outside = static_cast<std::size_t>(allreduce(comm, static_cast<std::uint64_t>(part.outside)));
  return part.finish();
}

/// The combine step of sharded_record_gibbs (samplers/record_sharded.hpp) over the ranks of comm: one allreduce of the
/// chain's 2 d exact sums per sweep, so every rank holds the global T and S bit for bit.
struct shard_sums {
  /// The ranks that hold the chain's shards.
  MPI_Comm comm;
  /// Replaces the sums by their totals over comm.
  void operator()(std::span<exact_sum> sums) const { allreduce(comm, sums); }
};
static_assert(shard_combine<shard_sums>);

/// The record-level sampler of records sharded over the ranks of comm: K = shards shards, rank r holding shards r,
/// r + size, ... (so K >= size keeps every rank busy). Every rank of comm constructs it with the same arguments and an
/// engine in the same state, and steps it the same number of times (each step is collective); every rank then holds
/// the same theta, T and S, and the draws are bit for bit those of sharded_record_gibbs with K shards in one process.
/// Run it through privpost::infer on every rank with options.parallel false (chains one after another, each spread
/// over all ranks) and without options.stop (a rank stopping alone would leave the others waiting); every rank gets the
/// same result. The per-shard sweeps throw nothing but std::bad_alloc; the shared steps throw identically on every rank.
///
///     auto make = [&](std::mt19937_64& g) {
///       return distributed::sharded_records(comm, beta_prior(1, 1), laplace_mechanism(1, 0.5), z, 1e7, g, 64);
///     };
///     const inference_result r = privpost::infer(make, options);   // on every rank
template <conjugate_prior Prior, exact_scale_mixture_noise Mechanism, random_engine G,
          class Contribution = statistic_contribution<typename Prior::family>>
sharded_record_gibbs<Prior, Mechanism, Contribution, shard_sums> sharded_records(MPI_Comm comm, const Prior& prior,
                                                                                 const Mechanism& mechanism,
                                                                                 const Eigen::VectorXd& z, double n, G& g,
                                                                                 int shards, Contribution contribution = {}) {
  return {prior, mechanism, z, n, g, record_sharding{shards, rank(comm), size(comm)}, std::move(contribution), shard_sums{comm}};
}

/// Any summed_record_model (a user's too) on the sharded record frame with its records sharded over the ranks of comm,
/// as above: sharded_record_frame over model and release (a record_release through Laplace or Gaussian noise, or
/// linear_query_releases), K = shards shards, rank r holding shards r, r + size, .... The same rules: every rank
/// constructs and steps it alike, through privpost::infer with options.parallel false and no options.stop, and gets
/// the draws of the K shards in one process bit for bit.
///
///     distributed::sharded_records(comm, my_model{...}, n, g, 64, record_release(gaussian_mechanism::published(sd), z));
template <summed_record_model Model, random_engine G, sharded_release_for<Model> Release>
sharded_record_frame<Model, Release, shard_sums> sharded_records(MPI_Comm comm, Model model, double n, G& g, int shards,
                                                                 Release release) {
  return {std::move(model), n, g, record_sharding{shards, rank(comm), size(comm)}, std::move(release), shard_sums{comm}};
}

/// The record-level linear regression sampler (sharded_record_regression) with its records sharded over the ranks of
/// comm, as sharded_records: K = shards shards, rank r holding shards r, r + size, ...; covariate_law is an
/// niw_hyperprior (hierarchical covariates) or a normal_covariate_law (fixed). The same rules: every rank constructs
/// and steps it alike, through privpost::infer with options.parallel false and no options.stop, and gets the draws of
/// the K shards in one process bit for bit.
template <exact_scale_mixture_noise Mechanism, class CovariateLaw, random_engine G>
requires std::same_as<CovariateLaw, niw_hyperprior> || std::same_as<CovariateLaw, normal_covariate_law>
    sharded_record_regression<Mechanism, shard_sums> sharded_regression_records(
        MPI_Comm comm, const regression_layout& layout, const nig_regression_prior& prior, const CovariateLaw& covariate_law,
        const std::vector<interval>& covariate_bounds, interval response_bounds, const Mechanism& mechanism,
        const Eigen::VectorXd& z, double n, G& g, int shards) {
  return {layout,
          prior,
          covariate_law,
          covariate_bounds,
          response_bounds,
          mechanism,
          z,
          n,
          g,
          record_sharding{shards, rank(comm), size(comm)},
          shard_sums{comm}};
}

/// The record-level sampler of cell records given noisy linear queries (sharded_histogram_gibbs) with its records
/// sharded over the ranks of comm, as sharded_records: K = shards shards, rank r holding shards r, r + size, ...; one
/// allreduce of the D cells' counts a sweep. The same rules: every rank constructs and steps it alike, through
/// privpost::infer with options.parallel false and no options.stop, and gets the draws of the K shards in one process.
template <random_engine G>
sharded_histogram_gibbs<shard_sums> sharded_histogram_records(MPI_Comm comm, Eigen::VectorXd alpha, double n,
                                                              std::vector<histogram_measurement> measurements, G& g, int shards) {
  return {std::move(alpha), n, std::move(measurements), g, record_sharding{shards, rank(comm), size(comm)}, shard_sums{comm}};
}

namespace detail {
// numerical_events as an array of its counters (all std::uint64_t), for sending between ranks.
constexpr std::size_t event_counters = sizeof(numerical_events) / sizeof(std::uint64_t);
static_assert(std::is_trivially_copyable_v<numerical_events> && sizeof(numerical_events) % sizeof(std::uint64_t) == 0,
              "numerical_events must hold only std::uint64_t counters to be sent between ranks");

using privpost::detail::chain_payload;

inline void send_chain(MPI_Comm comm, int root, int tag, const chain_payload& p) {
  const std::array<std::int64_t, 6> header{p.draws.rows(),       p.draws.cols(), p.diagnostics.rows(),
                                           p.diagnostics.cols(), p.kept,         p.swept};
  check_mpi(MPI_Send(header.data(), 6, MPI_INT64_T, root, tag, comm), "MPI_Send");
  const auto events = std::bit_cast<std::array<std::uint64_t, event_counters>>(p.events);
  check_mpi(MPI_Send(events.data(), static_cast<int>(event_counters), MPI_UINT64_T, root, tag, comm), "MPI_Send");
  check_mpi(MPI_Send(p.draws.data(), static_cast<int>(p.draws.size()), MPI_DOUBLE, root, tag, comm), "MPI_Send");
  check_mpi(MPI_Send(p.diagnostics.data(), static_cast<int>(p.diagnostics.size()), MPI_DOUBLE, root, tag, comm), "MPI_Send");
}

inline chain_payload receive_chain(MPI_Comm comm, int source, int tag) {
  std::array<std::int64_t, 6> header{};
  check_mpi(MPI_Recv(header.data(), 6, MPI_INT64_T, source, tag, comm, MPI_STATUS_IGNORE), "MPI_Recv");
  chain_payload p;
  std::array<std::uint64_t, event_counters> events{};
  check_mpi(MPI_Recv(events.data(), static_cast<int>(event_counters), MPI_UINT64_T, source, tag, comm, MPI_STATUS_IGNORE),
            "MPI_Recv");
  p.events = std::bit_cast<numerical_events>(events);
  p.draws.resize(header[0], header[1]);
  p.diagnostics.resize(header[2], header[3]);
  p.kept = header[4];
  p.swept = header[5];
  check_mpi(MPI_Recv(p.draws.data(), static_cast<int>(p.draws.size()), MPI_DOUBLE, source, tag, comm, MPI_STATUS_IGNORE),
            "MPI_Recv");
  check_mpi(
      MPI_Recv(p.diagnostics.data(), static_cast<int>(p.diagnostics.size()), MPI_DOUBLE, source, tag, comm, MPI_STATUS_IGNORE),
      "MPI_Recv");
  return p;
}
}  // namespace detail

/// Sends the root's inference_result to every rank (on_root: the root's result; ignored elsewhere). What run() under
/// ranks gives every rank, so that programs whose ranks all go on with the draws (the command-line tools) can run the
/// same code and line up their later collective steps.
inline inference_result broadcast(MPI_Comm comm, const std::optional<inference_result>& on_root, int root = 0) {
  const bool here = rank(comm) == root;
  if (here && !on_root) throw std::invalid_argument("distributed::broadcast: the root has no inference_result to send");
  auto send_u64 = [&](std::uint64_t v) {
    detail::check_mpi(MPI_Bcast(&v, 1, MPI_UINT64_T, root, comm), "MPI_Bcast");
    return v;
  };
  auto send_matrix = [&](const Eigen::MatrixXd* m) {
    const auto rows = static_cast<Eigen::Index>(send_u64(here ? static_cast<std::uint64_t>(m->rows()) : 0));
    const auto cols = static_cast<Eigen::Index>(send_u64(here ? static_cast<std::uint64_t>(m->cols()) : 0));
    Eigen::MatrixXd out = here ? *m : Eigen::MatrixXd(rows, cols);
    if (out.size() > 0)
      detail::check_mpi(MPI_Bcast(out.data(), static_cast<int>(out.size()), MPI_DOUBLE, root, comm), "MPI_Bcast");
    return out;
  };
  auto send_list = [&](const std::vector<Eigen::MatrixXd>* list) {
    const auto n = send_u64(here ? list->size() : 0);
    std::vector<Eigen::MatrixXd> out;
    for (std::uint64_t k = 0; k < n; ++k) out.push_back(send_matrix(here ? &(*list)[static_cast<std::size_t>(k)] : nullptr));
    return out;
  };
  const inference_result* r = here ? &*on_root : nullptr;
  std::vector<Eigen::MatrixXd> chains = send_list(here ? &r->draws.chains() : nullptr);
  auto events = std::bit_cast<std::array<std::uint64_t, detail::event_counters>>(here ? r->events : numerical_events{});
  detail::check_mpi(MPI_Bcast(events.data(), static_cast<int>(events.size()), MPI_UINT64_T, root, comm), "MPI_Bcast");
  const auto sweeps = static_cast<std::int64_t>(send_u64(here ? static_cast<std::uint64_t>(r->sweeps) : 0));
  std::vector<std::string> names;
  const auto n_names = send_u64(here ? r->diagnostic_names.size() : 0);
  for (std::uint64_t k = 0; k < n_names; ++k) {
    std::string name = here ? r->diagnostic_names[static_cast<std::size_t>(k)] : std::string();
    name.resize(static_cast<std::size_t>(send_u64(name.size())));
    if (!name.empty())
      detail::check_mpi(MPI_Bcast(name.data(), static_cast<int>(name.size()), MPI_CHAR, root, comm), "MPI_Bcast");
    names.push_back(std::move(name));
  }
  std::vector<Eigen::MatrixXd> diagnostics = send_list(here ? &r->diagnostics : nullptr);
  const bool interrupted = send_u64(here && r->interrupted ? 1 : 0) != 0;
  return inference_result{posterior(std::move(chains)),
                          std::bit_cast<numerical_events>(events),
                          sweeps,
                          std::move(names),
                          std::move(diagnostics),
                          interrupted};
}

/// The placement of a run's chains over the ranks of comm (run(make, options, distributed::ranks(comm), writers...)):
/// chain c runs on rank c mod size, with the engine chain_engine(seed, c) it has in one process, each rank running its
/// chains as inference_options::parallel says; the root receives every chain and checks infer_until's target, and
/// run() gives every rank the root's result, exactly what the same run returns in one process. Progress and the writers
/// are the root's (its own chains scaled to the whole run). A chain that throws ends every rank (collectively);
/// inference_options::stop on any rank ends the run on all, every chain cut to the shortest kept, as in one process.
/// Every rank calls run() with the same arguments.
class ranks {
 public:
  /// std::invalid_argument when root is not a rank of comm.
  explicit ranks(MPI_Comm comm, int root = 0) : comm_(comm), root_(root), rank_(rank(comm)), size_(size(comm)) {
    if (root < 0 || root >= size_)
      throw_invalid("distributed::ranks", "root", root, "a rank in [0, " + std::to_string(size_ - 1) + "]");
  }
  /// Chain c runs on rank c mod size.
  bool runs(int chain) const noexcept { return chain % size_ == rank_; }
  /// How many of chains chains run on this rank.
  int chains_here(int chains) const noexcept { return chains > rank_ ? (chains - rank_ - 1) / size_ + 1 : 0; }
  /// This rank receives every chain.
  bool is_root() const noexcept { return rank_ == root_; }
  /// f(), with a failure on one rank ending every rank (distributed::collectively).
  template <class F>
  void collectively(F&& f) const {
    distributed::collectively(comm_, std::forward<F>(f));
  }
  /// Sends this rank's chains to the root; on the root, receives every other rank's.
  void gather(std::vector<detail::chain_payload>& chains) const {
    constexpr int tag = 0x7076;  // "pv"
    for (std::size_t c = 0; c < chains.size(); ++c) {
      const int owner = static_cast<int>(c % static_cast<std::size_t>(size_));
      if (owner == root_) continue;
      if (owner == rank_)
        detail::send_chain(comm_, root_, tag, chains[c]);
      else if (is_root())
        chains[c] = detail::receive_chain(comm_, owner, tag);
    }
  }
  /// The root's v, on every rank.
  bool agree(bool v) const {
    std::uint8_t b = v ? 1 : 0;
    detail::check_mpi(MPI_Bcast(&b, 1, MPI_UINT8_T, root_, comm_), "MPI_Bcast");
    return b != 0;
  }
  /// Whether flag is set on any rank.
  bool any(bool flag) const {
    int in = flag ? 1 : 0, out = 0;
    detail::check_mpi(MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_LOR, comm_), "MPI_Allreduce");
    return out != 0;
  }
  /// The root's result on every rank.
  extended_inference_result share(std::optional<extended_inference_result> on_root) const {
    const bool here = is_root();
    std::optional<inference_result> result;
    std::array<std::int64_t, 3> rest{};
    if (here) {
      rest = {on_root->reached ? 1 : 0, on_root->rounds, on_root->sweeps_per_chain};
      result = std::move(on_root->result);
    }
    detail::check_mpi(MPI_Bcast(rest.data(), 3, MPI_INT64_T, root_, comm_), "MPI_Bcast");
    return {broadcast(comm_, result, root_), rest[0] != 0, static_cast<int>(rest[1]), rest[2]};
  }

 private:
  MPI_Comm comm_;
  int root_, rank_, size_;
};
static_assert(chain_placement<ranks>);

namespace detail {
// A trial summary as bytes, sent from the rank that ran the trial to the root: counts and sizes as std::uint64_t,
// values as doubles, names as their bytes.
class summary_writer {
 public:
  template <class T>
  void put(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    const auto bytes = std::bit_cast<std::array<char, sizeof(T)>>(v);
    out.insert(out.end(), bytes.begin(), bytes.end());
  }
  std::vector<char> out;
};

class summary_reader {
 public:
  explicit summary_reader(const std::vector<char>& in) : in_(in) {}
  template <class T>
  T get() {
    static_assert(std::is_trivially_copyable_v<T>);
    if (in_.size() - at_ < sizeof(T)) throw std::runtime_error("distributed::run_calibration: a truncated trial summary");
    std::array<char, sizeof(T)> bytes{};
    std::copy_n(in_.begin() + static_cast<std::ptrdiff_t>(at_), sizeof(T), bytes.begin());
    at_ += sizeof(T);
    return std::bit_cast<T>(bytes);
  }
  std::size_t left() const { return in_.size() - at_; }

 private:
  const std::vector<char>& in_;
  std::size_t at_ = 0;
};

inline std::vector<char> encode(const calibration_trial_summary& s) {
  summary_writer w;
  w.put(static_cast<std::uint64_t>(s.methods.size()));
  for (const auto& m : s.methods) {
    w.put(static_cast<std::uint64_t>(m.name.size()));
    for (char c : m.name) w.put(c);
    w.put(static_cast<std::uint64_t>(m.quantiles.size()));
    for (double q : m.quantiles) w.put(q);
    w.put(m.seconds);
    w.put(static_cast<std::uint8_t>(m.mmd2 ? 1 : 0));
    w.put(m.mmd2.value_or(0.0));
  }
  return std::move(w.out);
}

inline calibration_trial_summary decode(const std::vector<char>& bytes) {
  summary_reader r(bytes);
  calibration_trial_summary s;
  const auto methods = r.get<std::uint64_t>();
  for (std::uint64_t k = 0; k < methods; ++k) {
    calibration_trial_summary::method m;
    const auto name = r.get<std::uint64_t>();
    if (name > r.left()) throw std::runtime_error("distributed::run_calibration: a truncated trial summary");
    for (std::uint64_t i = 0; i < name; ++i) m.name.push_back(r.get<char>());
    const auto quantiles = r.get<std::uint64_t>();
    if (quantiles > r.left() / sizeof(double))
      throw std::runtime_error("distributed::run_calibration: a truncated trial summary");
    for (std::uint64_t i = 0; i < quantiles; ++i) m.quantiles.push_back(r.get<double>());
    m.seconds = r.get<double>();
    const bool has_mmd = r.get<std::uint8_t>() != 0;
    const double mmd = r.get<double>();
    if (has_mmd) m.mmd2 = mmd;
    s.methods.push_back(std::move(m));
  }
  return s;
}

inline void send_bytes(MPI_Comm comm, int to, int tag, const std::vector<char>& bytes) {
  const std::uint64_t n = bytes.size();
  check_mpi(MPI_Send(&n, 1, MPI_UINT64_T, to, tag, comm), "MPI_Send");
  check_mpi(MPI_Send(bytes.data(), static_cast<int>(n), MPI_BYTE, to, tag, comm), "MPI_Send");
}

inline std::vector<char> receive_bytes(MPI_Comm comm, int from, int tag) {
  std::uint64_t n = 0;
  check_mpi(MPI_Recv(&n, 1, MPI_UINT64_T, from, tag, comm, MPI_STATUS_IGNORE), "MPI_Recv");
  std::vector<char> bytes(static_cast<std::size_t>(n));
  check_mpi(MPI_Recv(bytes.data(), static_cast<int>(n), MPI_BYTE, from, tag, comm, MPI_STATUS_IGNORE), "MPI_Recv");
  return bytes;
}
}  // namespace detail

/// privpost::run_calibration with the trials spread over the ranks of comm: trial t runs on rank t mod size, seeded
/// by chain_engine(seed, t) as in one process, and is reduced there to its summary (calibration_trial_summary); the
/// root adds the summaries in trial order. Returns on the root the accumulator one process builds for the same
/// options (every report field equal but the seconds, which are measured), std::nullopt on the other ranks.
/// progress(done, total) is called on the root only, from its own trials scaled to the whole run. A trial that throws
/// ends every rank (collectively); options.stop stops every rank before its next trial, and the root then reports the
/// trials 0..k-1 done before the first one missing (interrupted_error on the root when k < 2).
template <calibration_study Study, class Progress = void (*)(int, int)>
std::optional<calibration_accumulator> run_calibration(MPI_Comm comm, const Study& study, const calibration_options& options,
                                                       Progress progress = nullptr, int root = 0) {
  if (options.trials < 2) throw_invalid("distributed::run_calibration", "trials", options.trials, "an integer >= 2");
  const int n_ranks = size(comm), me = rank(comm);
  if (root < 0 || root >= n_ranks)
    throw_invalid("distributed::run_calibration", "root", root, "a rank in [0, " + std::to_string(n_ranks - 1) + "]");
  const calibration_accumulator summarizer(options.mmd_draws);
  std::vector<std::vector<char>> mine;
  const int local_total = me < options.trials ? (options.trials - 1 - me) / n_ranks + 1 : 0;
  collectively(comm, [&] {
    for (int t = me; t < options.trials; t += n_ranks) {
      if (options.stop != nullptr && options.stop->load(std::memory_order_relaxed)) break;
      std::mt19937_64 g = chain_engine(options.seed, t);
      mine.push_back(detail::encode(summarizer.summarize(study.trial(g))));
      if (me == root && local_total > 0)
        privpost::detail::report_progress(
            progress, static_cast<int>(static_cast<std::int64_t>(mine.size()) * options.trials / local_total), options.trials);
    }
  });
  constexpr int tag = 0x7063;  // "pc"
  if (me != root) {
    const std::uint64_t done = mine.size();
    detail::check_mpi(MPI_Send(&done, 1, MPI_UINT64_T, root, tag, comm), "MPI_Send");
    for (const auto& bytes : mine) detail::send_bytes(comm, root, tag, bytes);
    return std::nullopt;
  }
  std::vector<std::uint64_t> done(static_cast<std::size_t>(n_ranks), 0);
  for (int r = 0; r < n_ranks; ++r) {
    if (r == me)
      done[static_cast<std::size_t>(r)] = mine.size();
    else
      detail::check_mpi(MPI_Recv(&done[static_cast<std::size_t>(r)], 1, MPI_UINT64_T, r, tag, comm, MPI_STATUS_IGNORE),
                        "MPI_Recv");
  }
  // Every sent summary is received (in each rank's sending order, ascending t) before the prefix is chosen.
  std::vector<std::vector<char>> summaries(static_cast<std::size_t>(options.trials));
  std::vector<bool> have(static_cast<std::size_t>(options.trials), false);
  for (int t = 0; t < options.trials; ++t) {
    const int owner = t % n_ranks;
    const auto index = static_cast<std::uint64_t>(t / n_ranks);
    if (index >= done[static_cast<std::size_t>(owner)]) continue;
    summaries[static_cast<std::size_t>(t)] =
        owner == me ? std::move(mine[static_cast<std::size_t>(index)]) : detail::receive_bytes(comm, owner, tag);
    have[static_cast<std::size_t>(t)] = true;
  }
  calibration_accumulator acc(options.mmd_draws);
  int added = 0;
  while (added < options.trials && have[static_cast<std::size_t>(added)]) {
    acc.add(detail::decode(summaries[static_cast<std::size_t>(added)]));
    ++added;
  }
  if (added < 2)
    throw interrupted_error("distributed::run_calibration: stopped (calibration_options::stop) after " + std::to_string(added) +
                            " trial(s) in order; a report needs at least 2");
  return acc;
}

}  // namespace privpost::distributed
