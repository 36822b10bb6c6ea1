// privpost-infer's shared pieces for the model source files (see infer_main.cpp for what the tool does): the chain
// runner, summaries, draws CSV, and the run of a family's sampler under the release's mechanism.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <privpost/privpost.hpp>

#include "cmdstan_csv.hpp"
#include "infer_options.hpp"
#include "infer_plot.hpp"
#include "release_record.hpp"
#include "tool_support.hpp"

namespace privpost::tools::infer_tool {

// Runs the noise-aware sampler: infer, or infer_until with --target-ess (saying what it did on stderr).
template <class Make, class Tick>
privpost::inference_result run_chains(Make make, const options& o, const privpost::inference_options& io, Tick tick) {
  if (!(o.target_ess > 0.0)) return privpost::infer(make, io, tick);
  privpost::convergence_target t;
  t.min_ess = o.target_ess;
  t.max_sweeps = o.max_sweeps;
  auto e = privpost::infer_until(make, io, t, tick);
  std::fprintf(
      stderr, "privpost-infer: --target-ess %g: %s after %lld sweeps per chain (%d round%s; %lld draws per chain kept)\n",
      o.target_ess, e.reached ? "reached" : "NOT reached (raise --max-sweeps)", static_cast<long long>(e.sweeps_per_chain),
      e.rounds, e.rounds == 1 ? "" : "s", static_cast<long long>(e.result.draws.draws_per_chain()));
  return std::move(e.result);
}

// Prints the diagnostics' warnings; returns how many there were.
inline std::size_t warn(const char* method, const privpost::inference_result& r, const std::vector<std::string>& names) {
  const auto w = privpost::convergence_warnings(r.draws, r.events, r.sweeps, {}, names);
  for (const auto& line : w) std::printf("  WARNING (%s): %s\n", method, line.c_str());
  if (!w.empty())
    std::printf(
        "  (thresholds: R-hat <= 1.01, bulk and tail ESS >= 100 per chain, repairs <= 1%% of sweeps; --target-ess N "
        "extends the chains until they hold, --strict turns warnings into exit status %d)\n",
        strict_exit_status);
  return w.size();
}

inline privpost::inference_options driver_options(const options& o) {
  privpost::inference_options io;
  io.chains = o.chains;
  io.burnin = o.burnin;
  io.draws = o.draws;
  io.thin = o.thin;
  io.seed = o.seed;
  io.parallel = o.parallel;
  io.stop = &privpost::tools::interrupt_flag();  // Ctrl-C: the chains stop, the draws kept so far are reported
  return io;
}

inline std::vector<double> prior_values(const std::string& text, std::size_t count, const std::string& meaning) {
  std::vector<double> v;
  for (const auto& item : privpost::tools::split_list(text)) {
    char* end = nullptr;
    const double x = std::strtod(item.c_str(), &end);
    if (end != item.c_str() + item.size()) throw std::invalid_argument("--prior: '" + item + "' is not a number");
    v.push_back(x);
  }
  if (v.size() != count)
    throw std::invalid_argument("--prior has " + std::to_string(v.size()) + " values; accepted: " + std::to_string(count) + " (" +
                                meaning + ")");
  return v;
}

// The prior made by make(values) from --prior's text (`count` numbers: `meaning`). A value the prior refuses is
// reported as --prior's, with the accepted range, instead of under the library function that checked it.
template <class Make>
auto prior_from(const std::string& text, std::size_t count, const std::string& meaning, Make make) {
  const auto v = prior_values(text, count, meaning);
  try {
    return make(v);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument("--prior " + text + " (" + meaning + "): " + privpost::tools::without_function(e.what()));
  }
}

// The summary's line for a run that Ctrl-C ended early (inference_options::stop): how many draws it kept.
inline void print_interrupted(const privpost::inference_result& r) {
  if (!r.interrupted) return;
  std::printf("  INTERRUPTED (Ctrl-C): %lld draws per chain of %lld chain(s) kept before the stop\n",
              static_cast<long long>(r.draws.draws_per_chain()), static_cast<long long>(r.draws.num_chains()));
}

inline void summarise(const char* method, const privpost::inference_result& r, const std::vector<std::string>& names) {
  std::printf("%s\n  %-10s %10s %10s %10s %10s %10s %7s %8s %8s\n", method, "parameter", "mean", "sd", "q5", "q50", "q95",
              "R-hat", "ESS bulk", "ESS tail");
  for (Eigen::Index j = 0; j < r.draws.dimension(); ++j) {
    std::printf("  %-10s %10.4g %10.4g %10.4g %10.4g %10.4g %7.3f %8.0f %8.0f\n", names[static_cast<std::size_t>(j)].c_str(),
                r.draws.mean(j), r.draws.sd(j), r.draws.quantile(0.05, j), r.draws.quantile(0.5, j), r.draws.quantile(0.95, j),
                r.draws.rhat(j), r.draws.ess_bulk(j), r.draws.ess_tail(j));
  }
  print_interrupted(r);
  const auto& e = r.events;
  std::printf("  numerical repairs: %llu projections, %llu jitter, %llu PSD repairs, %llu rejected draws\n",
              static_cast<unsigned long long>(e.projections), static_cast<unsigned long long>(e.jitter),
              static_cast<unsigned long long>(e.psd_repairs), static_cast<unsigned long long>(e.rejected_draws));
}

inline void write_draws(const std::string& path, const std::vector<std::pair<std::string, privpost::inference_result>>& results,
                        const std::vector<std::string>& names) {
  std::ofstream f(path);
  if (!f) throw std::runtime_error("cannot open --draws-csv file '" + path + "'");
  f << "method,chain,draw";
  for (const auto& n : names) f << ',' << n;
  f << '\n';
  f.precision(17);
  for (const auto& [method, r] : results) {
    for (std::size_t c = 0; c < r.draws.chains().size(); ++c) {
      const auto& m = r.draws.chains()[c];
      for (Eigen::Index i = 0; i < m.rows(); ++i) {
        f << method << ',' << c << ',' << i;
        for (Eigen::Index j = 0; j < m.cols(); ++j) f << ',' << m(i, j);
        f << '\n';
      }
    }
  }
  if (!f) throw std::runtime_error("error writing '" + path + "'");
}

// --format json: one method's posterior summary. Per parameter the mean, sd, 5/25/50/75/95% quantiles, R-hat, bulk and
// tail ESS and the Monte Carlo standard error of the mean; the numerical events, the sweeps, and the diagnostics'
// warnings (none for the naive baseline, as in the table). NaN (an undefined diagnostic) is written as null.
inline nlohmann::json method_summary_json(const std::string& method, const std::string& title,
                                          const privpost::inference_result& r, const std::vector<std::string>& names) {
  nlohmann::json parameters = nlohmann::json::array();
  for (Eigen::Index j = 0; j < r.draws.dimension(); ++j) {
    nlohmann::json q;
    for (const auto& [key, p] : {std::pair{"q5", 0.05}, {"q25", 0.25}, {"q50", 0.5}, {"q75", 0.75}, {"q95", 0.95}})
      q[key] = r.draws.quantile(p, j);
    parameters.push_back({{"name", names[static_cast<std::size_t>(j)]},
                          {"mean", r.draws.mean(j)},
                          {"sd", r.draws.sd(j)},
                          {"quantiles", q},
                          {"rhat", r.draws.rhat(j)},
                          {"ess_bulk", r.draws.ess_bulk(j)},
                          {"ess_tail", r.draws.ess_tail(j)},
                          {"mcse_mean", r.draws.mcse_mean(j)}});
  }
  const auto& e = r.events;
  const nlohmann::json events = {{"projections", e.projections},
                                 {"jitter", e.jitter},
                                 {"psd_repairs", e.psd_repairs},
                                 {"rejected_draws", e.rejected_draws},
                                 {"divergences", e.divergences},
                                 {"treedepth_saturations", e.treedepth_saturations},
                                 {"nonfinite_density", e.nonfinite_density},
                                 {"message_passing_nonconverged", e.message_passing_nonconverged},
                                 {"inner_solver_nonconverged", e.inner_solver_nonconverged},
                                 {"log_floors", e.log_floors}};
  const std::vector<std::string> warnings =
      method == "naive" ? std::vector<std::string>{} : privpost::convergence_warnings(r.draws, r.events, r.sweeps, {}, names);
  return {{"method", method},
          {"title", title},
          {"interrupted", r.interrupted},
          {"chains", r.draws.num_chains()},
          {"draws_per_chain", r.draws.draws_per_chain()},
          {"sweeps", r.sweeps},
          {"parameters", parameters},
          {"numerical_events", events},
          {"warnings", warnings}};
}

// After a model's run: --output-dir writes every method's chains as CmdStan CSV files (cmdstan_csv.hpp); --format json
// adds every method's summary to o.report (titles[i] names results[i] in words; thin is the run's).
inline void write_outputs(const options& o, const privpost::tools::release_record& rec, int thin,
                          const std::vector<std::pair<std::string, privpost::inference_result>>& results,
                          const std::vector<std::string>& titles, const std::vector<std::string>& names) {
  if (o.report) {
    auto& report = *o.report;
    report["privpost_version"] = privpost::version_string;
    report["release"] = privpost::tools::to_json(rec);
    report["settings"] = {{"chains", o.chains},
                          {"draws", o.draws},
                          {"burnin", o.burnin},
                          {"thin", thin},
                          {"seed", o.seed},
                          {"method", o.method},
                          {"target_ess", o.target_ess > 0 ? nlohmann::json(o.target_ess) : nlohmann::json(nullptr)}};
    if (!report.contains("methods")) report["methods"] = nlohmann::json::array();
    for (std::size_t m = 0; m < results.size(); ++m)
      report["methods"].push_back(method_summary_json(results[m].first, titles[m], results[m].second, names));
  }
  if (!o.plot.empty()) {
    std::ostringstream title;
    title << "privpost-infer: " << rec.model << " release, n " << rec.n << ", " << rec.mechanism << " epsilon " << rec.epsilon
          << (results.front().second.interrupted ? " (interrupted)" : "");
    privpost::tools::write_infer_plot(results, names, o.plot, title.str());
  }
  if (o.output_dir.empty()) return;
  privpost::tools::cmdstan_run run;
  run.model = rec.model;
  run.num_warmup = o.burnin;
  run.thin = thin;
  run.seed = o.seed;
  run.release = privpost::tools::cmdstan_release_fields(privpost::tools::to_json(rec));
  const auto paths = privpost::tools::write_cmdstan_csv(o.output_dir, run, results, titles, names);
  std::printf("wrote %zu CmdStan CSV file%s to %s (<method>_<chain>.csv)\n", paths.size(), paths.size() == 1 ? "" : "s",
              o.output_dir.c_str());
}

template <class Prior, class Mechanism>
int run(const Prior& prior, const Mechanism& mechanism, const privpost::tools::release_record& rec, const options& o,
        const std::vector<std::string>& names) {
  using family = typename Prior::family;
  const Eigen::VectorXd z =
      Eigen::Map<const Eigen::VectorXd>(rec.noisy_statistics.data(), static_cast<Eigen::Index>(rec.noisy_statistics.size()));
  if (z.size() != family::dimension)
    throw std::invalid_argument("release record: " + std::to_string(z.size()) + " noisy statistics; the " + rec.model +
                                " model has " + std::to_string(family::dimension));
  const privpost::inference_options io = driver_options(o);
  // --method auto: the library's default policy (samplers/sampler_policy.hpp), named in the output.
  const bool automatic = o.method == "auto";
  const std::string method = automatic ? privpost::to_string(privpost::default_sampler<family>(rec.n)) : o.method;
  privpost::tools::progress_line progress("privpost-infer: sweeps");
  auto tick = [&](const privpost::inference_progress& p) { progress(static_cast<long>(p.done), static_cast<long>(p.total)); };
  std::vector<std::pair<std::string, privpost::inference_result>> results;
  if constexpr (privpost::truncatable_family<family>) {
    if (!rec.has_bounds) throw std::invalid_argument("release record: the " + rec.model + " model needs bounds");
    if (rec.policy != "drop")
      throw std::invalid_argument("release record: truncation_policy '" + rec.policy + "'; accepted: drop");
    // --method exact|corrected never reaches here: infer_main.cpp refuses them for every model but the binomial.
    if (method == "records") {
      if constexpr (privpost::record_generating_family<family>) {
        // The records latent, each contributing its statistic inside [lower, upper] and nothing outside (the drop policy
        // the release record names): exact, no CLT and no truncated-moment approximation; O(n) a sweep. Every chain
        // starts with its records moved towards the release (record_init::consistent: shorter burn-in, same target).
        results.emplace_back("records", run_chains(
                                            [&](auto& g) {
                                              return privpost::record_gibbs(
                                                  prior, mechanism, z, rec.n, g, privpost::record_init::consistent,
                                                  privpost::dropped_contribution<family>(rec.lower, rec.upper));
                                            },
                                            o, io, tick));
      } else {
        throw std::invalid_argument("--method records: the " + rec.model + " model cannot draw records");
      }
    } else {
      results.emplace_back(
          "gibbs",
          run_chains([&](auto& g) { return privpost::gibbs_ss_truncated(prior, mechanism, z, rec.n, rec.lower, rec.upper, g); },
                     o, io, tick));
    }
  } else if (method == "records") {
    if (o.collapsed_moves != 0) throw std::invalid_argument("--collapsed-moves applies to --method gibbs only");
    results.emplace_back(
        "records",
        run_chains(
            [&](auto& g) { return privpost::record_gibbs(prior, mechanism, z, rec.n, g, privpost::record_init::consistent); }, o,
            io, tick));
  } else if (method == "exact") {
    if constexpr (privpost::finite_sum_family<family>) {
      if (o.collapsed_moves != 0) throw std::invalid_argument("--collapsed-moves applies to --method gibbs only");
      results.emplace_back(
          "exact", run_chains([&](auto& g) { return privpost::gibbs_ss_exact(prior, mechanism, z, rec.n, g); }, o, io, tick));
    } else {
      throw std::invalid_argument("--method exact applies to binomial releases only (the " + rec.model + " model has none)");
    }
  } else if (method == "corrected") {
    if constexpr (privpost::finite_sum_family<family>) {
      if (o.collapsed_moves != 0) throw std::invalid_argument("--collapsed-moves applies to --method gibbs only");
      results.emplace_back(
          "corrected",
          run_chains([&](auto& g) { return privpost::gibbs_ss_corrected(prior, mechanism, z, rec.n, g); }, o, io, tick));
    } else {
      throw std::invalid_argument("--method corrected applies to binomial releases only (the " + rec.model + " model has none)");
    }
  } else {
    results.emplace_back("gibbs", run_chains(
                                      [&](auto& g) {
                                        privpost::gibbs_ss chain(prior, mechanism, z, rec.n, g);
                                        chain.set_collapsed_moves(o.collapsed_moves);
                                        return chain;
                                      },
                                      o, io, tick));
  }
  if (o.compare_naive && !privpost::tools::interrupt_requested())
    results.emplace_back("naive", privpost::infer([&](auto& g) { return privpost::conjugate_sampler(prior, z, rec.n, g); }, io));
  char gamma[32];
  std::snprintf(gamma, sizeof gamma, "%g", rec.granularity);
  std::printf("release: model %s, n %.0f, %s mechanism (epsilon %g%s%s), privpost %s\n", rec.model.c_str(), rec.n,
              rec.mechanism.c_str(), rec.epsilon, rec.delta > 0.0 ? (", delta " + std::to_string(rec.delta)).c_str() : "",
              is_discrete(rec.mechanism) ? (", lattice " + std::string(gamma) + " Z, statistics " + rec.lattice).c_str() : "",
              rec.version.c_str());
  if (automatic)
    std::printf("--method auto chose %s (n = %.0f; the policy of privpost/samplers/sampler_policy.hpp)\n", method.c_str(), rec.n);
  std::printf("%d chains x %d draws (burn-in %d, thin %d, seed %llu%s)\n\n", o.chains, o.draws, o.burnin, o.thin,
              static_cast<unsigned long long>(o.seed),
              o.collapsed_moves > 0 ? (", collapsed moves " + std::to_string(o.collapsed_moves)).c_str() : "");
  std::size_t warnings = 0;
  std::vector<std::string> titles;
  for (const auto& [name, r] : results) {
    titles.emplace_back(name == "gibbs"       ? (privpost::truncatable_family<family> ? "noise-aware Gibbs-SS (truncated release)"
                                                                                      : "noise-aware Gibbs-SS")
                        : name == "exact"     ? "noise-aware exact (the integer sum enumerated; no CLT)"
                        : name == "corrected" ? "noise-aware Gibbs-SS with the Metropolis-Hastings-corrected sum (exact; no CLT)"
                        : name == "records"   ? "noise-aware record-level (the records latent; exact, no CLT)"
                                              : "naive (treats the release as exact; for comparison only)");
    summarise(titles.back().c_str(), r, names);
    if (name != "naive") warnings += warn("noise-aware", r, names);
  }
  if (!o.draws_csv.empty()) write_draws(o.draws_csv, results, names);
  write_outputs(o, rec, o.thin, results, titles, names);
  return (o.strict && warnings > 0) ? strict_exit_status : 0;
}

// The release's mechanism, checked against the record's noise scale. One type for both mechanisms, so every model's
// samplers are compiled once, not once per mechanism (build time); the draws are the held mechanism's.
// The lattice mechanisms are rebuilt from the record's parameters exactly as privpost-release built them;
// the samplers use their log pmf (exact samplers) or their scale-mixture view (Gibbs-SS), see mechanisms/lattice.hpp.
using tool_mechanism = privpost::mechanism_variant<privpost::laplace_mechanism, privpost::gaussian_mechanism,
                                                   privpost::discrete_laplace_mechanism, privpost::discrete_gaussian_mechanism>;

inline tool_mechanism lattice_mechanism_of(const privpost::tools::release_record& rec) {
  using namespace privpost;
  const lattice lat{rec.granularity, rec.lattice == "exact" ? lattice_statistic::exact : lattice_statistic::rounded,
                    rec.lattice_dimension};
  if (static_cast<std::size_t>(rec.lattice_dimension) < rec.noisy_statistics.size() && rec.lattice == "rounded")
    throw std::invalid_argument("release record: lattice_dimension is below the number of noisy statistics");
  // every released value must be a lattice point: anything else is not a release of this mechanism
  for (const double z : rec.noisy_statistics) (void)detail::release_index("release record: noisy_statistics", rec.granularity, z);
  auto check = [&](double mine, const char* what) {
    if (!same_value(rec.noise, mine))
      throw std::invalid_argument(
          std::string("release record: the ") + what + " " + std::to_string(rec.noise) +
          " does not match the lattice calibration of (epsilon, sensitivity, granularity): " + std::to_string(mine));
  };
  if (rec.mechanism == "discrete-laplace") {
    const discrete_laplace_mechanism m(rec.sensitivity, rec.epsilon, lat);
    check(m.scale(), "discrete Laplace scale");
    return m;
  }
  const discrete_gaussian_mechanism m(rec.sensitivity, rec.epsilon, rec.delta, lat);
  check(m.sigma(), "discrete Gaussian sigma");
  return m;
}

inline tool_mechanism mechanism_of(const privpost::tools::release_record& rec) {
  if (is_discrete(rec.mechanism)) return lattice_mechanism_of(rec);
  if (rec.mechanism == "laplace") {
    const privpost::laplace_mechanism m(rec.sensitivity, rec.epsilon);
    if (!privpost::tools::same_value(rec.noise, m.scale()))
      throw std::invalid_argument("release record: Laplace scale " + std::to_string(rec.noise) +
                                  " is not sensitivity / epsilon = " + std::to_string(m.scale()));
    return m;
  }
  const auto m = privpost::gaussian_mechanism::analytic(rec.sensitivity, rec.epsilon, rec.delta);
  if (!privpost::tools::same_value(rec.noise, m.sigma()))
    throw std::invalid_argument(
        "release record: Gaussian sigma does not match the analytic calibration of (epsilon, delta, sensitivity)");
  return m;
}

template <class Prior>
int with_mechanism(const Prior& prior, const privpost::tools::release_record& rec, const options& o,
                   const std::vector<std::string>& names) {
  return run(prior, mechanism_of(rec), rec, o, names);
}

}  // namespace privpost::tools::infer_tool
