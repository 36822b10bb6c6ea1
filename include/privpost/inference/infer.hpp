// privpost/inference/infer.hpp
// infer: the one driver that runs any sampler: chains (optionally in parallel threads), burn-in, draws, thinning,
// per-chain seeds derived from one seed, an optional progress callback; returns the posterior and the numerical events.
#pragma once

#include <Eigen/Core>
#include <cmath>
#include <concepts>
#include <cstdint>
#include <exception>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/numerical_events.hpp"
#include "privpost/inference/posterior.hpp"

namespace privpost {

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
  std::int64_t sweeps = 0;  ///< sweeps run over all chains, burn-in included
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
  return {posterior(std::move(chains)), all, total};
}

/// When infer_until stops: every parameter with R-hat <= max_rhat and bulk and tail ESS >= min_ess (over all chains),
/// or max_sweeps sweeps per chain (burn-in included), whichever comes first.
struct convergence_target {
  double max_rhat = 1.01;
  double min_ess = 400.0;
  std::int64_t max_sweeps = 1'000'000;
};

/// What infer_until did.
struct extended_inference_result {
  inference_result result;
  bool reached = false;              ///< the target was met
  int rounds = 0;                    ///< rounds of draws (the first is options.draws per chain)
  std::int64_t sweeps_per_chain = 0; ///< burn-in included
};

/// Runs the chains as infer does, then keeps extending every chain (the same samplers, continuing) until the target
/// is met or max_sweeps per chain would be exceeded: each round doubles the kept draws per chain (thinning unchanged).
/// All kept draws are returned. progress is told the sweeps done and the sweeps planned so far.
template <class MakeSampler, class Progress = void (*)(const inference_progress&)>
  requires std::invocable<MakeSampler&, std::mt19937_64&> && sampler<std::invoke_result_t<MakeSampler&, std::mt19937_64&>>
extended_inference_result infer_until(MakeSampler make, const inference_options& options, const convergence_target& target,
                                      Progress progress = nullptr) {
  if (options.chains < 1) throw_invalid("infer_until", "chains", options.chains, "an integer >= 1");
  if (options.burnin < 0) throw_invalid("infer_until", "burnin", options.burnin, "an integer >= 0");
  if (options.draws < 4) throw_invalid("infer_until", "draws", options.draws, "an integer >= 4");
  if (options.thin < 1) throw_invalid("infer_until", "thin", options.thin, "an integer >= 1");
  if (!(target.max_rhat >= 1.0 && std::isfinite(target.max_rhat))) throw_invalid("infer_until", "max_rhat", target.max_rhat, "a finite number >= 1");
  if (!(target.min_ess >= 0.0 && std::isfinite(target.min_ess))) throw_invalid("infer_until", "min_ess", target.min_ess, "a finite number >= 0");
  const std::int64_t first = static_cast<std::int64_t>(options.burnin) + static_cast<std::int64_t>(options.draws) * options.thin;
  if (target.max_sweeps < first)
    throw_invalid("infer_until", "max_sweeps", static_cast<double>(target.max_sweeps),
                  "at least burnin + draws * thin = " + std::to_string(first));
  using S = std::invoke_result_t<MakeSampler&, std::mt19937_64&>;
  const auto n_chains = static_cast<std::size_t>(options.chains);
  std::vector<std::mt19937_64> engines;
  std::vector<S> samplers;
  engines.reserve(n_chains);
  samplers.reserve(n_chains);
  for (int c = 0; c < options.chains; ++c) {
    engines.push_back(chain_engine(options.seed, c));
    samplers.push_back(make(engines.back()));
  }
  const Eigen::Index dim = samplers.front().parameter_vector().size();
  std::vector<Eigen::MatrixXd> chains(n_chains, Eigen::MatrixXd(0, dim));
  std::vector<std::exception_ptr> errors(n_chains);
  std::mutex progress_mutex;
  std::int64_t done = 0, planned = first * options.chains;

  // Advances chain c by `burn` sweeps, then keeps `keep` thinned draws appended to its matrix.
  auto advance = [&](int c, std::int64_t burn, std::int64_t keep) {
    try {
      auto& s = samplers[static_cast<std::size_t>(c)];
      auto& g = engines[static_cast<std::size_t>(c)];
      auto& m = chains[static_cast<std::size_t>(c)];
      const Eigen::Index start = m.rows();
      m.conservativeResize(start + keep, dim);
      const std::int64_t sweeps = burn + keep * options.thin;
      for (std::int64_t i = 0; i < sweeps; ++i) {
        s.step(g);
        const std::int64_t kept = i - burn;
        if (kept >= 0 && (kept + 1) % options.thin == 0) m.row(start + kept / options.thin) = s.parameter_vector().transpose();
      }
      if constexpr (std::is_pointer_v<Progress>) {
        if (progress == nullptr) return;
      }
      std::lock_guard lock(progress_mutex);
      done += sweeps;
      progress(inference_progress{done, planned});
    } catch (...) {
      errors[static_cast<std::size_t>(c)] = std::current_exception();
    }
  };
  auto round = [&](std::int64_t burn, std::int64_t keep) {
    if (options.parallel && options.chains > 1) {
      std::vector<std::jthread> threads;
      threads.reserve(n_chains);
      for (int c = 0; c < options.chains; ++c) threads.emplace_back(advance, c, burn, keep);
    } else {
      for (int c = 0; c < options.chains; ++c) advance(c, burn, keep);
    }
    for (const auto& e : errors)
      if (e) std::rethrow_exception(e);
  };

  std::int64_t per_chain = first;
  round(options.burnin, options.draws);
  int rounds = 1;
  bool reached = false;
  for (;;) {
    const posterior p(chains);
    bool ok = true;
    for (Eigen::Index j = 0; j < dim && ok; ++j) {
      const double r = p.rhat(j), b = p.ess_bulk(j), t = p.ess_tail(j);
      ok = std::isfinite(r) && r <= target.max_rhat && b >= target.min_ess && t >= target.min_ess;
    }
    const std::int64_t keep = chains.front().rows();  // double the kept draws
    if (ok || per_chain + keep * options.thin > target.max_sweeps) {
      reached = ok;
      break;
    }
    planned += keep * options.thin * options.chains;
    round(0, keep);
    per_chain += keep * options.thin;
    ++rounds;
  }
  numerical_events all;
  for (const auto& s : samplers) all += s.events();
  return {inference_result{posterior(std::move(chains)), all, per_chain * options.chains}, reached, rounds, per_chain};
}

}  // namespace privpost
