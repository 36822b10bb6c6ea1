// privpost-infer's shared pieces for the model source files (see infer_main.cpp for what the tool does): the chain
// runner, summaries, draws CSV, and the run of a family's sampler under the release's mechanism.
#pragma once

#include <cmath>
#include <concepts>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <optional>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <privpost/privpost.hpp>
#if defined(PRIVPOST_TOOLS_MPI)
#include <privpost/distributed/mpi.hpp>
#endif

#include "infer_options.hpp"
#include "infer_plot.hpp"
#include "release_record.hpp"
#include "synthesize.hpp"
#include "tool_support.hpp"

namespace privpost::tools::infer_tool {

// Runs the noise-aware sampler through privpost::run: infer with the length asked for, or infer_until with
// --target-ess or by default (saying what it did on stderr); tick is told the progress. Without --target-ess or a
// chain length, a model's own target applies (until_rhat: extend until R-hat <= 1.01 and, where it sets min_ess, bulk
// and tail ESS >= min_ess; at most until_rhat->max_sweeps a chain), else the tools' default (until_warning_thresholds
// for default_until_rounds). Under mpirun the chains are spread over the ranks, with the draws of one process.
// stream_as: the method's name and the reported parameters' names, for the kept draws to be streamed to --output-dir's
// CmdStan CSV files as they are made (a run killed outright leaves valid files). transform, when set, makes the
// reported draw from the sampled one (a model that reports its draws on another scale, or fewer columns than it
// samples); unset, the sampled draw is the one reported. The final files are rewritten at the end from the reported
// results (write_outputs), which the same transform made. judged > 0: the chains' convergence (--target-ess, the
// model's default target) is judged on the first this many sampled columns only, the rest being carried along
// (privpost-synthesize's cell probabilities).
// The engine of the tools' chains: xoshiro256 (core/random/xoshiro.hpp), a third faster than std::mt19937_64 where
// a sweep's cost is its draws (the histogram sweep: 2.15 against 3.23 ms at n = 10^5, D = 1000). Release noise never
// comes from it (the OS CSPRNG); each chain's engine is seeded from --seed and the chain's number (chain_engine).
using chain_engine_type = privpost::xoshiro256;

struct stream_as {
  std::string method;
  std::vector<std::string> names;
  std::function<void(std::span<const double> sampled, std::span<double> reported)> transform{};
  Eigen::Index judged = 0;
};

// A per-draw transform: f(sampled, reported) fills a reported draw from a sampled one (stream_as::transform's shape).
template <class F>
concept draw_transform = std::invocable<F&, std::span<const double>, std::span<double>>;

// The posterior whose every draw is f's image of the sampled one: f(sampled, reported) fills the `columns` reported
// values of a draw (the per-draw transform of stream_as, applied to a finished run).
template <draw_transform F>
privpost::posterior map_draws(const privpost::posterior& sampled, Eigen::Index columns, F&& f) {
  std::vector<Eigen::MatrixXd> chains;
  std::vector<double> in, out(static_cast<std::size_t>(columns));
  for (const auto& m : sampled.chains()) {
    Eigen::MatrixXd mapped(m.rows(), columns);
    in.resize(static_cast<std::size_t>(m.cols()));
    for (Eigen::Index i = 0; i < m.rows(); ++i) {
      for (Eigen::Index j = 0; j < m.cols(); ++j) in[static_cast<std::size_t>(j)] = m(i, j);
      f(std::span<const double>(in), std::span<double>(out));
      for (Eigen::Index j = 0; j < columns; ++j) mapped(i, j) = out[static_cast<std::size_t>(j)];
    }
    chains.push_back(std::move(mapped));
  }
  return privpost::posterior(std::move(chains));
}

namespace map_draws_check {
inline constexpr auto per_draw = [](std::span<const double>, std::span<double>) {};
inline constexpr auto per_value = [](double) { return 0.0; };
static_assert(draw_transform<decltype(per_draw)>, "map_draws takes a per-draw transform");
static_assert(!draw_transform<decltype(per_value)> && !draw_transform<int>, "map_draws refuses what is no per-draw transform");
}  // namespace map_draws_check

// Hands the kept draws to --output-dir's writer as they are made, on the reported scale; the final files are written
// by write_outputs (with the method's title and the final header), so the end of the run writes nothing here.
struct cmdstan_stream {
  privpost::cmdstan_csv_writer* writer;
  const stream_as* as;
  std::optional<privpost::run_header> header{};  // the run's, with the reported names (a transformed stream)
  std::vector<double> reported{};
  void draw(const privpost::run_header& h, const privpost::kept_draw& d) {
    if (!as->transform) return writer->draw(h, d);
    if (!header) {
      header = h;
      header->names = as->names;
      reported.resize(as->names.size());
    }
    as->transform(d.parameters, reported);
    privpost::kept_draw r = d;
    r.parameters = reported;
    writer->draw(*header, r);
  }
  void write(const privpost::run_header&, const privpost::inference_result&) noexcept {}
};

/// The tools' default length: unless a chain length (--draws, --burnin) or --target-ess is given, the chains are
/// extended until every judged quantity has R-hat <= 1.01 and bulk and tail ESS >= 100 per chain (the tools' own
/// warning thresholds, so that a command run with its defaults converges or says it did not), for at most `rounds`
/// rounds, each doubling the kept draws; a chain that meets them after the first round costs nothing more. nullopt
/// when a length is given.
inline std::optional<privpost::convergence_target> until_warning_thresholds(const options& o,
                                                                            const privpost::inference_options& io, int rounds) {
  if (o.chain_length_given || o.target_ess > 0.0) return std::nullopt;
  privpost::convergence_target t = privpost::rhat_target_for_rounds(io, rounds);
  t.min_ess = 100.0 * o.chains;
  return t;
}

template <class Make, class Tick>
privpost::inference_result run_chains(Make make, const options& o, const privpost::inference_options& io, Tick tick,
                                      std::optional<privpost::convergence_target> until_rhat = std::nullopt,
                                      const std::optional<stream_as>& stream = std::nullopt) {
  privpost::run_options ro;
  ro.inference = io;
  if (o.target_ess > 0.0) {
    privpost::convergence_target t;
    t.min_ess = o.target_ess;
    t.max_sweeps = o.max_sweeps;
    ro.target = t;
  } else {
    ro.target = until_rhat ? until_rhat : until_warning_thresholds(o, io, default_until_rounds);
  }
  if (ro.target && stream) ro.target->judged = stream->judged;
  const bool streams = stream && o.cmdstan;
  if (streams) {
    ro.method = stream->method;
    if (!stream->transform) ro.names = stream->names;  // else the sampled parameters are not the reported ones
  }
  auto run_on = [&](const auto& where) {
    return streams ? privpost::run<chain_engine_type>(make, ro, where, privpost::progress_writer{tick},
                                                      cmdstan_stream{o.cmdstan.get(), &*stream})
                   : privpost::run<chain_engine_type>(make, ro, where, privpost::progress_writer{tick});
  };
#if defined(PRIVPOST_TOOLS_MPI)
  // Under mpirun the chains are spread over the ranks (chain c on rank c mod K, the same seeds); every rank gets the
  // draws, so that all go on through the same code (rank 0 alone prints and writes).
  auto e = privpost::tools::spread_job() != nullptr ? run_on(privpost::distributed::ranks(MPI_COMM_WORLD))
                                                    : run_on(privpost::this_process{});
#else
  auto e = run_on(privpost::this_process{});
#endif
  if (o.target_ess > 0.0)
    std::fprintf(stderr, "%s: --target-ess %g: %s after %lld sweeps per chain (%d round%s; %lld draws per chain kept)\n",
                 tool_name(o), o.target_ess, e.reached ? "reached" : "NOT reached (raise --max-sweeps)",
                 static_cast<long long>(e.sweeps_per_chain), e.rounds, e.rounds == 1 ? "" : "s",
                 static_cast<long long>(e.result.draws.draws_per_chain()));
  else if (ro.target)
    std::fprintf(stderr,
                 "%s: chains run until R-hat <= %g%s: %s after %lld sweeps per chain (%d round%s; %lld draws "
                 "per chain kept)\n",
                 tool_name(o), ro.target->max_rhat,
                 ro.target->min_ess > 0.0
                     ? (" and bulk and tail ESS >= " + std::to_string(static_cast<long long>(ro.target->min_ess))).c_str()
                     : "",
                 e.reached ? "reached" : "NOT reached (raise --draws, or set --target-ess)",
                 static_cast<long long>(e.sweeps_per_chain), e.rounds, e.rounds == 1 ? "" : "s",
                 static_cast<long long>(e.result.draws.draws_per_chain()));
  return std::move(e.result);
}

// What the library's writers are told about one method's run: its name and title, the parameters' names, the
// run's warm-up, thinning and seed; the naive baseline (independent conjugate draws) is not checked for convergence.
inline privpost::run_header header_for(const options& o, int thin, const std::string& method, const std::string& title,
                                       const std::vector<std::string>& names) {
  return {method, title, names, o.burnin, thin, o.seed, method != "naive"};
}

// The header of a table or CSV block that only needs a title and the parameters' names.
inline privpost::run_header table_header(const std::string& title, const std::vector<std::string>& names) {
  return {title, title, names, 0, 1, 0, true};
}

// Prints the diagnostics' warnings (privpost::run_warnings); returns how many there were.
inline std::size_t warn(const char* method, const privpost::inference_result& r, const std::vector<std::string>& names) {
  const auto w = privpost::run_warnings(table_header(method, names), r);
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

/// The draws a chain keeps at most: those of the last round `until` allows (infer_until keeps burn-in aside and every
/// thin-th sweep), else the chains' own draws.
inline std::int64_t longest_kept_draws(const privpost::inference_options& io,
                                       const std::optional<privpost::convergence_target>& until) {
  return until ? (until->max_sweeps - io.burnin) / io.thin : io.draws;
}

inline std::vector<double> prior_values(const std::string& text, std::size_t count, const std::string& meaning) {
  std::vector<double> v;
  for (const auto& item : privpost::tools::split_list(text, "--prior")) {
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

// The summary's line for a run that Ctrl-C ended early, for the models whose tables are their own (summary_writer
// writes it itself).
inline void print_interrupted(const privpost::inference_result& r) {
  if (r.interrupted) std::printf("%s\n", privpost::interrupted_line(r).c_str());
}

// The summary table of one method (privpost::summary_writer), on stdout with the tool's other lines.
inline void summarise(const char* title, const privpost::inference_result& r, const std::vector<std::string>& names) {
  std::fflush(stdout);
  privpost::summary_writer(std::cout).write(table_header(title, names), r);
  std::cout.flush();
}

// --draws-csv: every method's draws in one file (privpost::draws_csv_writer).
inline void write_draws(const std::string& path, const std::vector<std::pair<std::string, privpost::inference_result>>& results,
                        const std::vector<std::string>& names) {
  if (!output_rank()) return;  // rank 0 of an MPI job writes the file
  std::ofstream f(path);
  if (!f) throw std::runtime_error("cannot open --draws-csv file '" + path + "'");
  privpost::draws_csv_writer writer(f);
  for (const auto& [method, r] : results) writer.write(table_header(method, names), r);
  f.close();
  if (!f) throw std::runtime_error("error writing '" + path + "'");
}

// After a model's run: --output-dir writes every method's chains as CmdStan CSV files (privpost::cmdstan_csv_writer); --format
// json adds every method's summary to o.report (titles[i] names results[i] in words; thin is the run's).
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
    for (std::size_t m = 0; m < results.size(); ++m) {
      std::ostringstream summary;  // privpost::json_summary_writer's object, in the tool's document
      privpost::json_summary_writer(summary).write(header_for(o, thin, results[m].first, titles[m], names), results[m].second);
      report["methods"].push_back(nlohmann::json::parse(summary.str()));
    }
  }
  if (!o.plot.empty()) {
    std::ostringstream title;
    title << "privpost-infer: " << rec.model << " release, n " << rec.n << ", " << rec.mechanism << " epsilon " << rec.epsilon
          << (results.front().second.interrupted ? " (interrupted)" : "");
    privpost::tools::write_infer_plot(results, names, o.plot, title.str());
  }
  if (o.output_dir.empty()) return;
  if (!o.cmdstan) throw std::logic_error("privpost-infer: --output-dir without its writer (dispatch makes it)");
  privpost::cmdstan_csv_writer& writer = *o.cmdstan;
  for (std::size_t m = 0; m < results.size(); ++m)
    writer.write(header_for(o, thin, results[m].first, titles[m], names), results[m].second);
  const auto& paths = writer.paths();
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
  using privpost::sampler_kind;
  const sampler_kind kind = automatic ? privpost::default_sampler<family>(rec.n) : privpost::sampler_kind_from_string(o.method);
  const std::string method = privpost::to_string(kind);
  privpost::tools::progress_line progress(std::string(tool_name(o)) + ": sweeps");
  auto tick = [&](const privpost::inference_progress& p) { progress(static_cast<long>(p.done), static_cast<long>(p.total)); };
  std::vector<std::pair<std::string, privpost::inference_result>> results;
  // The library builds the sampler the kind names (samplers/sampler_policy.hpp visit_sampler); the model table has
  // refused a --method the model lacks before this point, and visit_sampler refuses what the table let through.
  privpost::sampler_build build;
  build.collapsed_moves = o.collapsed_moves;
  // Every record-level chain starts with its records moved towards the release (record_init::consistent: shorter
  // burn-in, the same target).
  if (kind == sampler_kind::records) build.init = privpost::record_init::consistent;
  if constexpr (privpost::truncatable_family<family>) {
    if (!rec.family().has_bounds) throw std::invalid_argument("release record: the " + rec.model + " model needs bounds");
    if (rec.policy != "drop")
      throw std::invalid_argument("release record: truncation_policy '" + rec.policy + "'; accepted: drop");
    // The release summed each record inside [lower, upper] and dropped the rest (the drop policy the record names):
    // gibbs_ss_truncated, or the records latent with that rule (exact, no CLT, O(n) a sweep).
    build.dropped_outside = privpost::interval(rec.family().lower, rec.family().upper);
  }
  try {
    privpost::check_sampler_applies<Prior, Mechanism>(kind, build);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument("--method " + (automatic ? "auto chose " + method : method) + ": " + e.what());
  }
  privpost::visit_sampler(kind, prior, mechanism, z, rec.n, build, [&](auto make) {
    results.emplace_back(method, run_chains(make, o, io, tick, std::nullopt, stream_as{method, names}));
  });
  if (o.compare_naive && !privpost::tools::interrupt_requested())
    results.emplace_back(
        "naive", privpost::run<chain_engine_type>([&](auto& g) { return privpost::conjugate_sampler(prior, z, rec.n, g); },
                                                  privpost::run_options{.inference = io})
                     .result);
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
  if (o.synthetic_sets > 0 && !privpost::tools::interrupt_requested())
    write_synthetic_sets<family>(o, rec, results.front().second, prior);  // the noise-aware run, never the naive one
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
