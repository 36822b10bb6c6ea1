// privpost/inference/calibration_study.hpp
// calibration_study: simulation-based calibration (Cook, Gelman & Rubin 2006; dissertation Sec. 4.4) for any set of
// methods: per trial, each method's posterior draws and the true parameter; then KS of the quantiles per coordinate,
// coverage of central 50% and 90% intervals, mean MMD^2 to the non-private posterior, and seconds per posterior.
#pragma once

#include <Eigen/Core>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "privpost/core/concepts.hpp"
#include "privpost/core/errors.hpp"
#include "privpost/core/progress.hpp"
#include "privpost/diagnostics/calibration.hpp"
#include "privpost/diagnostics/mmd.hpp"
#include "privpost/inference/infer.hpp"

namespace privpost {

/// One method's output in one trial.
struct method_draws {
  /// The method's name.
  std::string method;
  Eigen::VectorXd truth;  ///< the true parameter vector of the trial
  Eigen::MatrixXd draws;  ///< rows are draws, columns parameter coordinates
  double seconds = 0.0;   ///< wall time to produce the draws
};

/// One row of a calibration report: one method, one parameter coordinate.
struct calibration_row {
  /// The method's name.
  std::string method;
  /// The parameter coordinate, from 0.
  int parameter = 0;
  /// Trials accumulated.
  int trials = 0;
  /// Kolmogorov-Smirnov distance of the true parameter's quantiles in its posteriors from Uniform(0, 1).
  double ks = 0.0;
  /// Its p-value.
  double ks_pvalue = 1.0;
  /// Share of trials whose central 50% interval held the truth.
  double coverage50 = 0.0;
  /// Share of trials whose central 90% interval held the truth.
  double coverage90 = 0.0;
  std::optional<double> mmd2;  ///< mean MMD^2 to the "nonprivate" method's posterior, when that method ran
  /// Median wall time per posterior, in seconds.
  double seconds_per_posterior = 0.0;
};

/// One trial reduced to what a calibration report needs: per method, the true parameter's quantile in each coordinate's
/// posterior, the seconds it took and its MMD^2 to the non-private posterior (when that method ran). What a process
/// running some of a study's trials sends to the one that reports (privpost/distributed/).
struct calibration_trial_summary {
  /// One method's part of the trial.
  struct method {
    /// The method's name.
    std::string name;
    /// posterior_quantile(truth_j, draws_j) for each coordinate j.
    std::vector<double> quantiles;
    /// Wall time of the method's draws.
    double seconds = 0.0;
    /// MMD^2 to the "nonprivate" method's draws, when computed.
    std::optional<double> mmd2;
  };
  /// The methods, in the trial's order.
  std::vector<method> methods;
};

/// Accumulates trials and reports. MMD uses at most `mmd_draws` evenly spaced draws of each posterior; 0 turns the
/// (quadratic-cost) MMD off.
class calibration_accumulator {
 public:
  /// An empty accumulator; std::invalid_argument unless mmd_draws is 0 or >= 2.
  explicit calibration_accumulator(int mmd_draws = 500) : mmd_draws_(mmd_draws) {
    if (mmd_draws < 0 || mmd_draws == 1)
      throw_invalid("calibration_accumulator", "mmd_draws", mmd_draws, "0 (off) or an integer >= 2");
  }

  /// Adds one trial: every method's truth and draws (a method's first appearance fixes its place in the order);
  /// std::invalid_argument when a truth and its draws differ in size.
  void add(const std::vector<method_draws>& trial) { add(summarize(trial)); }

  /// The summary of one trial that add() accumulates (std::invalid_argument when a truth and its draws differ in size).
  calibration_trial_summary summarize(const std::vector<method_draws>& trial) const {
    const method_draws* reference = nullptr;
    for (const auto& m : trial)
      if (m.method == "nonprivate") reference = &m;
    calibration_trial_summary out;
    for (const auto& m : trial) {
      check_size_match("calibration_accumulator", "truth", m.truth.size(), "draw columns", m.draws.cols());
      calibration_trial_summary::method s{m.method, {}, m.seconds, std::nullopt};
      for (Eigen::Index j = 0; j < m.truth.size(); ++j) s.quantiles.push_back(posterior_quantile(m.truth(j), m.draws.col(j)));
      if (mmd_draws_ > 0 && reference != nullptr && m.draws.rows() >= 2) s.mmd2 = mmd2(thin(m.draws), thin(reference->draws));
      out.methods.push_back(std::move(s));
    }
    return out;
  }

  /// Adds one summarised trial (std::invalid_argument when a method's coordinates differ from its earlier trials').
  void add(const calibration_trial_summary& trial) {
    for (const auto& m : trial.methods) {
      auto& acc = methods_[m.name];
      if (acc.quantiles.empty()) {
        acc.order = static_cast<int>(methods_.size());
        acc.quantiles.resize(m.quantiles.size());
      }
      check_size_match("calibration_accumulator", "truth", static_cast<std::int64_t>(m.quantiles.size()), "earlier truths",
                       static_cast<std::int64_t>(acc.quantiles.size()));
      for (std::size_t j = 0; j < m.quantiles.size(); ++j) acc.quantiles[j].push_back(m.quantiles[j]);
      acc.seconds.push_back(m.seconds);
      if (m.mmd2) acc.mmd2.push_back(*m.mmd2);
    }
  }

  /// Each trial's true-parameter quantile for one method and coordinate (for QQ plots).
  const std::vector<double>& quantiles(const std::string& method, int parameter) const {
    return methods_.at(method).quantiles.at(static_cast<std::size_t>(parameter));
  }

  /// The methods, in the order they first appeared.
  std::vector<std::string> methods() const {
    std::vector<std::pair<int, std::string>> ordered;
    for (const auto& [name, acc] : methods_) ordered.emplace_back(acc.order, name);
    std::sort(ordered.begin(), ordered.end());
    std::vector<std::string> out;
    for (auto& o : ordered) out.push_back(o.second);
    return out;
  }

  /// One row per method and parameter coordinate, over the trials added so far.
  std::vector<calibration_row> report() const {
    std::vector<calibration_row> rows;
    for (const auto& name : methods()) {
      const auto& acc = methods_.at(name);
      std::vector<double> secs = acc.seconds;
      std::sort(secs.begin(), secs.end());
      for (std::size_t j = 0; j < acc.quantiles.size(); ++j) {
        const auto& q = acc.quantiles[j];
        calibration_row r;
        r.method = name;
        r.parameter = static_cast<int>(j);
        r.trials = static_cast<int>(q.size());
        const auto ks = ks_uniform(q);
        r.ks = ks.statistic;
        r.ks_pvalue = ks.p_value;
        r.coverage50 = coverage(q, 0.5);
        r.coverage90 = coverage(q, 0.9);
        if (!acc.mmd2.empty()) {
          double total = 0.0;
          for (double v : acc.mmd2) total += v;
          r.mmd2 = total / static_cast<double>(acc.mmd2.size());
        }
        r.seconds_per_posterior = secs.empty() ? 0.0 : secs[secs.size() / 2];
        rows.push_back(r);
      }
    }
    return rows;
  }

 private:
  struct per_method {
    int order = 0;
    std::vector<std::vector<double>> quantiles;
    std::vector<double> seconds;
    std::vector<double> mmd2;
  };

  Eigen::MatrixXd thin(const Eigen::MatrixXd& x) const {
    if (x.rows() <= mmd_draws_) return x;
    Eigen::MatrixXd out(mmd_draws_, x.cols());
    for (int i = 0; i < mmd_draws_; ++i) out.row(i) = x.row(static_cast<Eigen::Index>(i) * x.rows() / mmd_draws_);
    return out;
  }

  int mmd_draws_;
  std::map<std::string, per_method> methods_;
};

/// One method of a calibration study: its name and a factory turning a simulated trial into posterior draws (rows are
/// draws). Methods are values: a study runs whatever list it is given, so adding a method is one more named_method.
///
///     named_method<my_trial>{"gibbs", [=](const my_trial& t, std::mt19937_64& g) { return one_chain(...); }}
namespace detail {
// What a simulated trial must carry for the harness: the true parameter vector.
template <class T>
concept simulated_trial = requires(const T& t) {
  { t.truth } -> std::convertible_to<Eigen::VectorXd>;
};
}  // namespace detail

/// A method of a study: its name and how it draws a posterior sample from a trial.
template <detail::simulated_trial Trial>
struct named_method {
  /// The method's name in reports.
  std::string name;
  /// Draws (rows) of the parameter vector (columns) given the trial, with the trial's engine.
  std::function<Eigen::MatrixXd(const Trial&, std::mt19937_64&)> draws;
};

/// The methods of `available` named in `names`, in the order of `names`. Throws std::invalid_argument for an empty list
/// or a name not available (the message lists the available ones).
template <detail::simulated_trial Trial>
std::vector<named_method<Trial>> select_methods(const std::vector<named_method<Trial>>& available,
                                                const std::vector<std::string>& names, std::string_view who) {
  std::string accepted;
  for (const auto& m : available) accepted += (accepted.empty() ? "" : ", ") + m.name;
  if (names.empty()) throw std::invalid_argument(std::string(who) + ": methods is empty; accepted: " + accepted);
  std::vector<named_method<Trial>> out;
  for (const auto& name : names) {
    const auto it = std::find_if(available.begin(), available.end(), [&](const auto& m) { return m.name == name; });
    if (it == available.end())
      throw std::invalid_argument(std::string(who) + ": method is '" + name + "'; accepted: " + accepted);
    out.push_back(*it);
  }
  return out;
}

/// One chain of `make`'s sampler (make(g) builds it from the chain's engine), seeded from g: the draws after burnin
/// sweeps, thinned. What a method factory usually returns.
template <class Make>
requires std::invocable<Make&, std::mt19937_64&> && sampler<std::invoke_result_t<Make&, std::mt19937_64&>> Eigen::MatrixXd
single_chain(Make make, int burnin, int draws, std::mt19937_64& g, int thin = 1) {
  inference_options o;
  o.chains = 1;
  o.burnin = burnin;
  o.draws = draws;
  o.thin = thin;
  o.seed = static_cast<std::uint64_t>(g());
  return infer(make, o).draws.chains().front();
}

/// Times a callable, returning its result and the seconds it took.
template <std::invocable F>
auto timed(F&& f, double& seconds) {
  const auto start = std::chrono::steady_clock::now();
  auto result = f();
  seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

/// Size of a calibration run.
struct calibration_options {
  /// Number of trials (the run needs at least 2).
  int trials = 300;
  /// Seed of the run: trial t uses chain_engine(seed, t).
  std::uint64_t seed = 0;
  int mmd_draws = 500;  ///< draws per posterior used for MMD^2 (0: no MMD)
  /// When not null and set (a signal handler, another thread), run_calibration stops before its next trial and returns
  /// the trials done (the accumulator's report then covers those); interrupted_error when fewer than 2 were done.
  const std::atomic<bool>* stop = nullptr;
};

/// Runs options.trials trials of a study (anything with trial(g)), trial t seeded by chain_engine(seed, t), and
/// reports through `progress(done, total)` after each trial when given.
template <calibration_study Study, class Progress = void (*)(int, int)>
calibration_accumulator run_calibration(const Study& study, const calibration_options& options, Progress progress = nullptr) {
  const int trials = options.trials;
  const std::uint64_t seed = options.seed;
  if (trials < 2) throw_invalid("run_calibration", "trials", trials, "an integer >= 2");
  calibration_accumulator acc(options.mmd_draws);
  for (int t = 0; t < trials; ++t) {
    if (options.stop != nullptr && options.stop->load(std::memory_order_relaxed)) {
      if (t < 2)
        throw interrupted_error("run_calibration: stopped (calibration_options::stop) after " + std::to_string(t) +
                                " trial(s); a report needs at least 2");
      break;
    }
    std::mt19937_64 g = chain_engine(seed, t);
    acc.add(study.trial(g));
    detail::report_progress(progress, t + 1, trials);
  }
  return acc;
}

/// Runs every method on one simulated trial (Trial has the true parameter vector `truth`), in order, timing each.
template <detail::simulated_trial Trial>
std::vector<method_draws> run_methods(const Trial& trial, const std::vector<named_method<Trial>>& methods, std::mt19937_64& g) {
  std::vector<method_draws> out;
  out.reserve(methods.size());
  for (const auto& m : methods) {
    method_draws r{m.name, trial.truth, {}, 0.0};
    r.draws = timed([&] { return m.draws(trial, g); }, r.seconds);
    check_size_match("run_methods", "truth", r.truth.size(), m.name + " draw columns", r.draws.cols());
    out.push_back(std::move(r));
  }
  return out;
}

/// The named methods of a study, held once for every study class: replaced by set_methods, listed by methods(), run on
/// one trial by run_on.
template <detail::simulated_trial Trial>
class study_methods {
 public:
  /// Replaces the methods (adding one is one more named_method); std::invalid_argument when the list is empty.
  void set_methods(std::vector<named_method<Trial>> methods) {
    if (methods.empty()) throw std::invalid_argument(std::string(study_) + ": no method; accepted: at least one named_method");
    methods_ = std::move(methods);
  }
  /// The methods.
  const std::vector<named_method<Trial>>& methods() const noexcept { return methods_; }

 protected:
  /// `study` names the study class in the errors.
  explicit study_methods(const char* study) : study_(study) {}
  /// Every method's draws on one trial (run_methods).
  std::vector<method_draws> run_on(const Trial& trial, std::mt19937_64& g) const { return run_methods(trial, methods_, g); }

 private:
  const char* study_;
  std::vector<named_method<Trial>> methods_;
};

/// A calibration study from a simulation design and a list of named methods: simulate(g) draws the truth, the data and
/// the release (a Trial with `truth`); every method then gives its draws. Models calibration_study.
template <class Simulate>
requires std::invocable<const Simulate&, std::mt19937_64&> &&
    detail::simulated_trial<std::invoke_result_t<const Simulate&, std::mt19937_64&>>
class simulation_study : public study_methods<std::invoke_result_t<const Simulate&, std::mt19937_64&>> {
 public:
  /// The trial type that simulate returns.
  using trial_type = std::invoke_result_t<const Simulate&, std::mt19937_64&>;

  /// The study of simulate's trials under these methods; std::invalid_argument when methods is empty.
  simulation_study(Simulate simulate, std::vector<named_method<trial_type>> methods)
      : study_methods<trial_type>("simulation_study"), simulate_(std::move(simulate)) {
    this->set_methods(std::move(methods));
  }

  /// One trial: simulate, then every method's draws.
  std::vector<method_draws> trial(std::mt19937_64& g) const { return this->run_on(simulate_(g), g); }

 private:
  Simulate simulate_;
};

}  // namespace privpost
