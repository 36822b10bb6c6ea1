// privpost/inference/run.hpp
// run(make, options[, placement], writers...): one entry for a posterior run, in the style of Stan's services: the
// chains as infer runs them (or infer_until's, when a convergence target is given), in this process or spread over MPI
// ranks (distributed::ranks), every kept draw handed as it is made to the writers that stream (draw(header,
// kept_draw)), then every writer handed the result in turn.
// Writers (inference/writers.hpp, or a user's own) are composed by the caller instead of each program writing its
// own report: a summary table, the draws as CSV, CmdStan CSV files, a JSON summary.
#pragma once

#include <concepts>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/inference/infer.hpp"

namespace privpost {

/// Settings of a run: the driver's, an optional convergence target, and how writers name what they write.
struct run_options {
  /// Chains, burn-in (the warm-up, given once: NUTS adapts over exactly it), draws, thin, seed, threads, stop flag.
  inference_options inference{};
  /// Set: the chains are extended until the target is met (infer_until); unset: one round (infer).
  std::optional<convergence_target> target{};
  /// The method's short name, for file names and tables ("gibbs", "nuts", "naive").
  std::string method = "sampler";
  /// The method in words, for titles ("noise-aware Gibbs-SS").
  std::string title{};
  /// One name per parameter coordinate; empty: theta[0], theta[1], ...
  std::vector<std::string> names{};
  /// Whether writers check convergence (R-hat, ESS, repairs): off for exact samplers of independent draws.
  bool check_convergence = true;
};

/// What a writer is told about the run it writes (the run's options, resolved).
struct run_header {
  std::string method;              ///< run_options::method
  std::string title;               ///< run_options::title, or the method when empty
  std::vector<std::string> names;  ///< one per parameter coordinate
  int burnin = 0;                  ///< warm-up sweeps per chain
  int thin = 1;                    ///< kept every thin-th sweep
  std::uint64_t seed = 0;          ///< chain c's engine is chain_engine(seed, c)
  bool check_convergence = true;   ///< run_options::check_convergence
  /// Kept draws per chain planned (infer_until's first round; the result says how many were kept).
  int draws = 0;
};

/// A writer: told the header and the result once the chains are done. It may also take progress(inference_progress),
/// called about a hundred times during the run (serialised across threads).
template <class W>
concept run_writer = requires(W& w, const run_header& h, const inference_result& r) {
  w.write(h, r);
};

/// A writer that also takes every kept draw as it is made: draw(header, kept_draw), called by run() one call at a time
/// (the chains of a parallel run take turns), each chain's draws in order, before write(header, result) at the end.
/// cmdstan_csv_writer streams its files this way, so that a run killed outright leaves the draws it had made.
template <class W>
concept streaming_writer = run_writer<W> && requires(W& w, const run_header& h, const kept_draw& d) {
  w.draw(h, d);
};

/// A writer that only reports progress: f(inference_progress) about a hundred times per run.
template <std::invocable<const inference_progress&> F>
struct progress_writer {
  F f;  ///< the callback
  /// Forwards to f.
  void progress(const inference_progress& p) { f(p); }
  /// Writes nothing.
  void write(const run_header&, const inference_result&) noexcept {}
};

template <class F>
progress_writer(F) -> progress_writer<F>;

namespace detail {

inline std::vector<std::string> default_names(Eigen::Index dimension) {
  std::vector<std::string> names;
  for (Eigen::Index j = 0; j < dimension; ++j) names.push_back("theta[" + std::to_string(j) + "]");
  return names;
}

}  // namespace detail

/// Runs the sampler that make(g) builds as infer does (infer_until when options.target is set), with its chains where
/// the placement says (this_process, or distributed::ranks to spread them over MPI ranks), then calls
/// write(header, result) on every writer, in order; writers with progress() are told the run's progress. Returns what
/// the chains did (reached is true and rounds 1 without a target), on every process of the placement. The writers
/// write on the placement's root only, which streams the draws of the chains it makes itself (under ranks, the other
/// chains reach the writers at the end). The draws reach the writers even when options.inference.stop ended the run
/// early (inference_result::interrupted). std::invalid_argument when names does not match the sampler's dimension.
// clang-format off
template <random_engine Engine = std::mt19937_64, class MakeSampler, chain_placement Placement, run_writer... Writers>
  requires std::invocable<MakeSampler&, Engine&> && sampler<std::invoke_result_t<MakeSampler&, Engine&>, Engine>
extended_inference_result run(MakeSampler make, const run_options& options, const Placement& where, Writers&&... writers) {
  // clang-format on
  auto progress = [&](const inference_progress& p) {
    (
        [&](auto& w) {
          if constexpr (requires { w.progress(p); }) w.progress(p);
        }(writers),
        ...);
  };
  // The header needs the parameters' count: made from the first kept draw when a writer streams, else from the result.
  auto header_for = [&](Eigen::Index dimension) {
    if (!options.names.empty())
      check_size_match("run", "names", static_cast<Eigen::Index>(options.names.size()), "parameters", dimension);
    return run_header{options.method,
                      options.title.empty() ? options.method : options.title,
                      options.names.empty() ? detail::default_names(dimension) : options.names,
                      options.inference.burnin,
                      options.inference.thin,
                      options.inference.seed,
                      options.check_convergence,
                      options.inference.draws};
  };
  inference_options io = options.inference;
  std::optional<run_header> streamed;
  std::mutex stream_mutex;
  if constexpr ((streaming_writer<std::remove_cvref_t<Writers>> || ...)) {
    if (where.is_root())
      io.on_draw = [&, chained = io.on_draw](const kept_draw& d) {
        if (chained) chained(d);
        std::lock_guard lock(stream_mutex);
        if (!streamed) streamed = header_for(static_cast<Eigen::Index>(d.parameters.size()));
        (
            [&](auto& w) {
              if constexpr (streaming_writer<std::remove_cvref_t<decltype(w)>>) w.draw(*streamed, d);
            }(writers),
            ...);
      };
  }
  std::optional<extended_inference_result> on_root;
  if (options.target) {
    on_root = detail::infer_until_on<Engine>(where, make, io, *options.target, progress);
  } else if (auto result = detail::infer_on<Engine>(where, make, io, progress)) {
    const std::int64_t per_chain = result->sweeps / io.chains;
    on_root = extended_inference_result{std::move(*result), true, 1, per_chain};
  }
  extended_inference_result out = where.share(std::move(on_root));
  if (where.is_root()) {
    const run_header header = header_for(out.result.draws.dimension());
    (writers.write(header, out.result), ...);
  }
  return out;
}

/// run() with every chain in this process (this_process).
// clang-format off
template <random_engine Engine = std::mt19937_64, class MakeSampler, run_writer... Writers>
  requires std::invocable<MakeSampler&, Engine&> && sampler<std::invoke_result_t<MakeSampler&, Engine&>, Engine>
extended_inference_result run(MakeSampler make, const run_options& options, Writers&&... writers) {
  // clang-format on
  return run<Engine>(std::move(make), options, this_process{}, std::forward<Writers>(writers)...);
}

}  // namespace privpost
