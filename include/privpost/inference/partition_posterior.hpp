// privpost/inference/partition_posterior.hpp
// Partition posteriors for sample-and-aggregate releases (Amitai 2018 Ch. 3-4): runs any posterior on each partition
// of a partition_plan, in parallel threads, and returns its CDF at cutoffs or its quantiles at levels. A partition
// posterior (core/concepts.hpp) is a closed form, draws, any conjugate prior through its tempered update
// (conjugate_partition_posterior) or any sampler through run() (sampler_partition_posterior); the regression's are in
// families/regression/coefficient_posterior.hpp and samplers/semi_conjugate_regression.hpp.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <atomic>
#include <cmath>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <random>
#include <span>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/numerical_events.hpp"
#include "privpost/diagnostics/calibration.hpp"
#include "privpost/diagnostics/sample_quantile.hpp"
#include "privpost/families/family_model.hpp"
#include "privpost/inference/run.hpp"
#include "privpost/mechanisms/partition_plan.hpp"

namespace privpost {

/// How the prior enters the untempered partition posteriors of a probability release.
enum class partition_prior {
  /// p(theta)^(1/M) in each partition, so that the product of the M partition posteriors has the prior once (the
  /// default: with the full prior the aggregate is biased by M - 1 extra priors).
  fractional,
  /// The full prior in each partition (the thesis's setting, kept to reproduce it).
  full,
};

/// How the partitions are run.
struct partition_run_options {
  /// Partition j's engine is chain_engine(seed, j). A release's seed must not depend on the data.
  std::uint64_t seed = 0;
  /// Worker threads (>= 1). The outputs are stored by partition and seeded by index: the same for any thread count.
  int threads = 1;
};

/// The partition outputs, one vector per partition (empty where the posterior failed), ready for the release
/// functions of mechanisms/sample_aggregate.hpp, which replace empty or invalid outputs by their fallback.
struct partition_outputs {
  /// outputs[j][k]: partition j's value at cutoff or level k.
  std::vector<std::vector<double>> values;
  /// Partitions whose posterior threw. Private: never publish it (it depends on the data); an escaping exception
  /// would itself be an output, so none escapes.
  std::size_t failures = 0;
};

namespace detail {
// Runs one task per partition on `threads` workers (an atomic work index); output(task, g) fills values[j]. Any
// exception leaves values[j] empty and counts a failure.
template <class Output>
partition_outputs run_partitions(const char* who, const partition_plan& plan, double prior_power, bool tempered,
                                 const partition_run_options& options, Output output) {
  if (options.threads < 1) throw_invalid(who, "threads", options.threads, "an integer >= 1");
  if (plan.partitions() > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw_invalid(who, "partitions", static_cast<double>(plan.partitions()), "at most INT_MAX");
  partition_outputs out;
  out.values.resize(plan.partitions());
  std::vector<char> failed(plan.partitions(), 0);
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    for (std::size_t j = next++; j < plan.partitions(); j = next++) {
      try {
        partition_task task{j, plan.members(j), tempered ? plan.likelihood_power(j) : 1.0, prior_power};
        std::mt19937_64 g = chain_engine(options.seed, static_cast<int>(j));
        out.values[j] = output(task, g);
      } catch (...) {
        out.values[j].clear();
        failed[j] = 1;
      }
    }
  };
  const auto threads = std::min<std::size_t>(static_cast<std::size_t>(options.threads), plan.partitions());
  if (threads <= 1) {
    work();
  } else {
    std::vector<std::jthread> pool;
    pool.reserve(threads);
    for (std::size_t t = 0; t < threads; ++t) pool.emplace_back(work);
  }
  for (char f : failed) out.failures += static_cast<std::size_t>(f);
  return out;
}

template <class Result>
Eigen::VectorXd as_draws(Result&& r) {
  if constexpr (std::convertible_to<Result, Eigen::VectorXd>) {
    return Eigen::VectorXd(std::forward<Result>(r));
  } else {
    const std::vector<double> v(std::forward<Result>(r));
    return Eigen::Map<const Eigen::VectorXd>(v.data(), static_cast<Eigen::Index>(v.size()));
  }
}

// Pr(theta <= b) of a closed form; outside the support it declares (Boost's support(d)) 0 or 1 without asking it.
template <closed_form_marginal D>
double marginal_cdf(const D& d, double b) {
  if constexpr (requires { support(d); }) {
    const auto [lo, hi] = support(d);
    if (b < lo) return 0.0;
    if (b >= hi) return 1.0;
  }
  return cdf(d, b);
}

// Each partition's posterior read at every point: read_closed(marginal, point) for a closed form, read_draws(draws,
// point) for draws.
template <class F, class ReadClosed, class ReadDraws>
partition_outputs read_partitions(const char* who, const partition_plan& plan, F& posterior, std::span<const double> points,
                                  double prior_power, bool tempered, const partition_run_options& options, ReadClosed read_closed,
                                  ReadDraws read_draws) {
  return run_partitions(who, plan, prior_power, tempered, options, [&](const partition_task& task, std::mt19937_64& g) {
    auto&& r = posterior(task, g);
    std::vector<double> out(points.size());
    if constexpr (closed_form_marginal<std::remove_cvref_t<decltype(r)>>) {
      for (std::size_t k = 0; k < points.size(); ++k) out[k] = read_closed(r, points[k]);
    } else {
      const Eigen::VectorXd draws = as_draws(std::forward<decltype(r)>(r));
      for (std::size_t k = 0; k < points.size(); ++k) out[k] = read_draws(draws, points[k]);
    }
    return out;
  });
}
}  // namespace detail

/// Partition probabilities Pr(theta <= b_k | D_j) for a probability release (Ch. 3): each partition's untempered
/// posterior (likelihood power 1, prior power 1/M under partition_prior::fractional), its CDF at every cutoff (closed
/// form, or the fraction of draws below b with ties counted half). std::invalid_argument for no cutoffs or
/// threads < 1; a posterior that throws or returns no draws gives an empty output (the release's fallback).
template <partition_posterior F>
partition_outputs partition_cdf(const partition_plan& plan, F&& posterior, std::span<const double> cutoffs,
                                const partition_run_options& options, partition_prior prior = partition_prior::fractional) {
  constexpr const char* who = "partition_cdf";
  if (cutoffs.empty()) throw_invalid(who, "number of cutoffs", 0.0, "at least 1");
  for (double b : cutoffs) check_finite(who, "cutoff", b);
  const double prior_power = prior == partition_prior::fractional ? 1.0 / static_cast<double>(plan.partitions()) : 1.0;
  return detail::read_partitions(
      who, plan, posterior, cutoffs, prior_power, false, options,
      [](const auto& d, double b) { return detail::marginal_cdf(d, b); },
      [](const Eigen::VectorXd& draws, double b) { return posterior_quantile(b, draws); });
}

/// Partition quantiles for a quantile release (Ch. 4): each partition's posterior with its likelihood tempered by
/// n / n_j and the full prior (Eq. 4.1), its quantile at every level (closed form, or the type-7 sample quantile of
/// the draws). std::invalid_argument for levels outside (0, 1) or threads < 1; failures as for partition_cdf.
template <partition_posterior F>
partition_outputs partition_quantiles(const partition_plan& plan, F&& posterior, std::span<const double> levels,
                                      const partition_run_options& options) {
  constexpr const char* who = "partition_quantiles";
  if (levels.empty()) throw_invalid(who, "number of levels", 0.0, "at least 1");
  for (double p : levels)
    if (!(p > 0.0 && p < 1.0)) throw_invalid(who, "level", p, "a number in (0, 1)");
  return detail::read_partitions(
      who, plan, posterior, levels, 1.0, true, options, [](const auto& d, double p) { return quantile(d, p); },
      [](const Eigen::VectorXd& draws, double p) { return sample_quantile(draws, p); });
}

/// The partition posterior of any conjugate prior: the prior raised to task.prior_power (prior_power, found by
/// argument-dependent lookup; not called at power 1), updated by the partition's records' statistic and count, both
/// times task.likelihood_power w (the tempered update: w copies of each record), so Conjugate-Update(prior^q, w s_j,
/// w n_j). Coordinate k of the parameter is reported by its closed form when the prior has parameter_marginal
/// (families/marginals.hpp has the built-in priors'), else by `draws` independent draws of the updated prior. The
/// records are referenced, not copied: they must outlive it.
///
///     conjugate_partition_posterior proportion(records, beta_prior(1, 1));      // Beta(1 + w s_j, 1 + w (n_j - s_j))
template <powered_prior Prior>
class conjugate_partition_posterior {
 public:
  /// The prior's family.
  using family = typename Prior::family;
  /// Its record.
  using record_type = typename family::record_type;

  /// std::invalid_argument for a coordinate outside the parameter, draws < 1, or a record whose statistic is not
  /// finite or outside the family's support for one record (a Bernoulli record 2, a Poisson count 1.5).
  conjugate_partition_posterior(const std::vector<record_type>& records, Prior prior, int coordinate = 0, int draws = 4000)
      : records_(records), prior_(std::move(prior)), coordinate_(coordinate), draws_(draws) {
    constexpr const char* who = "conjugate_partition_posterior";
    if (coordinate < 0 || coordinate >= family::parameter_dimension)
      throw_invalid(who, "coordinate", coordinate, "an integer in [0, parameter_dimension)");
    if (draws < 1) throw_invalid(who, "draws", draws, "an integer >= 1");
    const family_model<family> model;
    numerical_events events;
    for (const record_type& x : records) {
      typename family_model<family>::vector_type t = family::statistic(x);
      check_finite(who, "record's statistic", t);
      if constexpr (integer_sum_family<family>)
        if (t(0) != std::floor(t(0))) throw_invalid(who, "record's statistic", t(0), "an integer (the family's sums are)");
      if (model.support().project(t, 1.0, events))
        throw_invalid(who, "record's statistic", family::statistic(x)(0), "a value in the family's support for one record");
    }
  }

  /// Partition task.partition's posterior: the closed-form marginal of the coordinate, or its draws.
  auto operator()(const partition_task& task, [[maybe_unused]] std::mt19937_64& g) const {
    const Prior powered = task.prior_power == 1.0 ? prior_ : prior_power(prior_, task.prior_power);
    const family_model<family> model;
    typename family_model<family>::vector_type s = family_model<family>::vector_type::Zero();
    for (std::size_t i : task.members) s += family::statistic(records_[i]);
    const double w = task.likelihood_power, n = w * static_cast<double>(task.members.size());
    s *= w;
    numerical_events events;  // w s_j can leave the support by a rounding of w (sum of w c_k above w n_j): put it back
    model.support().project(s, n, events);
    const Prior posterior = task.members.empty() ? powered : powered.update(s, n);
    if constexpr (prior_with_marginals<Prior>) {
      return parameter_marginal(posterior, coordinate_);
    } else {
      Eigen::VectorXd out(draws_);
      for (int d = 0; d < draws_; ++d) out(d) = model.parameter_vector(posterior.draw(g))(coordinate_);
      return out;
    }
  }

 private:
  const std::vector<record_type>& records_;
  Prior prior_;
  int coordinate_;
  int draws_;
};

/// A partition posterior that runs any sampler through run() on each partition: make(task) returns the factory
/// (g -> sampler) of the partition's sampler, built from task.members, task.likelihood_power and task.prior_power; the
/// partition's draws are coordinate `coordinate` of every chain's kept draws (with options.target set, after the
/// chains have converged). The chains of a partition run one after another in its worker thread (partitions are the
/// unit of parallelism), seeded by a word of the partition's engine, so the outputs do not depend on the thread count.
template <class MakeForPartition>
class sampler_partition_posterior {
 public:
  /// std::invalid_argument for options infer() refuses or a negative coordinate.
  sampler_partition_posterior(MakeForPartition make, run_options options, Eigen::Index coordinate)
      : make_(std::move(make)), options_(std::move(options)), coordinate_(coordinate) {
    detail::check_inference_options("sampler_partition_posterior", options_.inference, 1);
    if (coordinate < 0)
      throw_invalid("sampler_partition_posterior", "coordinate", static_cast<double>(coordinate), "an index >= 0");
    options_.inference.parallel = false;
  }

  /// The draws of the coordinate on the task's partition. std::invalid_argument when the sampler's parameter has no
  /// such coordinate.
  Eigen::VectorXd operator()(const partition_task& task, std::mt19937_64& g) const {
    run_options o = options_;
    o.inference.seed = g();
    const auto result = run(make_(task), o).result;
    const auto& chains = result.draws.chains();
    if (chains.empty() || coordinate_ >= chains.front().cols())
      throw_invalid("sampler_partition_posterior", "coordinate", static_cast<double>(coordinate_),
                    "an index of the sampler's parameter");
    Eigen::VectorXd out(result.draws.size());
    Eigen::Index at = 0;
    for (const auto& c : chains) {
      out.segment(at, c.rows()) = c.col(coordinate_);
      at += c.rows();
    }
    return out;
  }

 private:
  MakeForPartition make_;
  run_options options_;
  Eigen::Index coordinate_;
};

}  // namespace privpost
