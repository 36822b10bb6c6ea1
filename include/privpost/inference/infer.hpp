// privpost/inference/infer.hpp
// infer: the one driver that runs any sampler: chains (optionally in parallel threads), burn-in, draws, thinning,
// per-chain seeds derived from one seed, an optional progress callback; returns the posterior and the numerical events.
#pragma once

#include <Eigen/Core>
#include <concepts>
#include <cstdint>
#include <exception>
#include <mutex>
#include <random>
#include <thread>
#include <utility>
#include <vector>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/numerical_events.hpp"
#include "privpost/inference/posterior.hpp"

namespace privpost {

/// A Markov chain (or independent sampler): step(g) advances it, parameter_vector() reads the current parameter.
template <class S>
concept sampler = requires(S& s, const S& cs, std::mt19937_64& g) {
  s.step(g);
  { cs.parameter_vector() } -> std::convertible_to<Eigen::VectorXd>;
  { cs.events() } -> std::convertible_to<numerical_events>;
};

/// Settings of one inference run.
struct inference_options {
  int chains = 4;
  int burnin = 500;
  int draws = 1000;    ///< kept draws per chain (after thinning)
  int thin = 1;        ///< keep every thin-th sweep
  std::uint64_t seed = 0;
  bool parallel = false;  ///< one thread per chain
};

/// What the progress callback is told: sweeps done so far over all chains, out of total.
struct inference_progress {
  std::int64_t done = 0;
  std::int64_t total = 0;
};

struct inference_result {
  posterior draws;
  numerical_events events;
};

/// The engine of chain `chain` for a run seeded with `seed`: independent streams via std::seed_seq.
inline std::mt19937_64 chain_engine(std::uint64_t seed, int chain) {
  std::seed_seq seq{static_cast<std::uint32_t>(seed), static_cast<std::uint32_t>(seed >> 32),
                    static_cast<std::uint32_t>(chain), 0x70726976u};
  return std::mt19937_64(seq);
}

/// Runs options.chains chains of the sampler that make(g) builds (g: the chain's engine, for initialisation),
/// discarding burnin sweeps and keeping draws sweeps thinned by thin. progress(inference_progress) is called about
/// a hundred times per run (serialised across threads). Exceptions in a chain are rethrown here.
template <class MakeSampler, class Progress = void (*)(const inference_progress&)>
  requires std::invocable<MakeSampler&, std::mt19937_64&> && sampler<std::invoke_result_t<MakeSampler&, std::mt19937_64&>>
inference_result infer(MakeSampler make, const inference_options& options, Progress progress = nullptr) {
  if (options.chains < 1) throw_invalid("infer", "chains", options.chains, "an integer >= 1");
  if (options.burnin < 0) throw_invalid("infer", "burnin", options.burnin, "an integer >= 0");
  if (options.draws < 1) throw_invalid("infer", "draws", options.draws, "an integer >= 1");
  if (options.thin < 1) throw_invalid("infer", "thin", options.thin, "an integer >= 1");

  const std::int64_t per_chain = static_cast<std::int64_t>(options.burnin) + static_cast<std::int64_t>(options.draws) * options.thin;
  const std::int64_t total = per_chain * options.chains;
  const std::int64_t report_every = std::max<std::int64_t>(1, total / 100);
  std::vector<Eigen::MatrixXd> chains(static_cast<std::size_t>(options.chains));
  std::vector<numerical_events> events(static_cast<std::size_t>(options.chains));
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(options.chains));
  std::mutex progress_mutex;
  std::int64_t done = 0;

  auto tick = [&](std::int64_t sweeps) {
    if constexpr (std::is_pointer_v<Progress>) {
      if (progress == nullptr) return;
    }
    std::lock_guard lock(progress_mutex);
    done += sweeps;
    progress(inference_progress{done, total});
  };

  auto run_chain = [&](int c) {
    try {
      std::mt19937_64 g = chain_engine(options.seed, c);
      auto s = make(g);
      const Eigen::Index dim = s.parameter_vector().size();
      Eigen::MatrixXd out(options.draws, dim);
      std::int64_t pending = 0;
      for (std::int64_t i = 0; i < per_chain; ++i) {
        s.step(g);
        const std::int64_t kept = i - options.burnin;
        if (kept >= 0 && (kept + 1) % options.thin == 0) out.row(kept / options.thin) = s.parameter_vector().transpose();
        if (++pending == report_every) {
          tick(pending);
          pending = 0;
        }
      }
      if (pending > 0) tick(pending);
      chains[static_cast<std::size_t>(c)] = std::move(out);
      events[static_cast<std::size_t>(c)] = s.events();
    } catch (...) {
      errors[static_cast<std::size_t>(c)] = std::current_exception();
    }
  };

  if (options.parallel && options.chains > 1) {
    std::vector<std::jthread> threads;
    threads.reserve(static_cast<std::size_t>(options.chains));
    for (int c = 0; c < options.chains; ++c) threads.emplace_back(run_chain, c);
  } else {
    for (int c = 0; c < options.chains; ++c) run_chain(c);
  }
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
  numerical_events all;
  for (const auto& e : events) all += e;
  return {posterior(std::move(chains)), all};
}

}  // namespace privpost
