// privpost-infer --output-dir DIR: the draws in CmdStan's CSV format, one file per method and chain
// (DIR/<method>_<chain>.csv, chains numbered from 1), so that R's posterior::read_cmdstan_csv / cmdstanr, ArviZ's
// from_cmdstan and CmdStan's stansummary read them as they read CmdStan's output
// (https://mc-stan.org/docs/cmdstan-guide/stan_csv_apdx.html). Each file holds:
//  - a '#' comment header of "key = value" lines laid out like CmdStan's configuration: the model (the release's),
//    method = sample with num_samples (kept draws x thin), num_warmup, save_warmup = 0, thin and algorithm (privpost's
//    sampler: gibbs, records, exact, corrected, nuts or naive), the chain id and the seed; then a "release" block with
//    every field of the release record (keys prefixed release_, so that a reader that flattens the blocks cannot
//    confuse the release's model or n with the run's), and a "columns" block naming what each parameter column is;
//  - the header row: the sampler's diagnostic columns where it reports them (NUTS: Stan's lp__, accept_stat__,
//    stepsize__, treedepth__, n_leapfrog__, divergent__, energy__), then the parameters as one Stan vector theta.1 ...
//    theta.D in the tool's order. The Gibbs-SS samplers evaluate no log density, so their files have no lp__ column
//    (the issue asks for lp__ "where meaningful"); readers that insist on one are not served;
//  - one row per kept draw, numbers in the shortest form that reads back to the same double.
// Not written (CmdStan's, not privpost's): stan_version lines, the adaptation block (step size and inverse metric) and
// the timing block.
#pragma once

#include <Eigen/Core>
#include <charconv>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include <privpost/inference/infer.hpp>
#include <privpost/version.hpp>

namespace privpost::tools {

/// What a CmdStan CSV file's comment header says about the run (one method of one privpost-infer run).
struct cmdstan_run {
  std::string model;       ///< the release's model (binomial, linreg, logistic, ...)
  std::string algorithm;   ///< privpost's sampler: gibbs, records, exact, corrected, nuts, naive
  std::string title;       ///< what the tool's summary calls it, in words
  int num_warmup = 0;      ///< burn-in sweeps (NUTS: warm-up transitions)
  int thin = 1;            ///< kept every thin-th sweep
  std::uint64_t seed = 0;  ///< the run's seed (chain c's engine is chain_engine(seed, c - 1))
  /// The release record's fields as key = value (the value as its JSON text, strings unquoted).
  std::vector<std::pair<std::string, std::string>> release;
};

/// A double in the shortest form that reads back to the same value (std::to_chars); "nan", "inf" and "-inf" as
/// CmdStan writes them.
inline std::string cmdstan_number(double x) {
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, x);
  if (ec != std::errc()) throw std::runtime_error("cmdstan_number: std::to_chars failed");
  return std::string(buf, end);
}

/// Writes chain `chain` (0-based) of r as one CmdStan CSV file to os; labels name the parameters (the tool's names,
/// one per column of the draws). std::invalid_argument when the labels do not match the draws.
inline void write_cmdstan_chain(std::ostream& os, const cmdstan_run& run, const privpost::inference_result& r, std::size_t chain,
                                const std::vector<std::string>& labels) {
  if (chain >= r.draws.chains().size())
    throw std::invalid_argument("write_cmdstan_chain: chain " + std::to_string(chain) + "; accepted: below " +
                                std::to_string(r.draws.chains().size()));
  const Eigen::MatrixXd& x = r.draws.chains()[chain];
  if (static_cast<Eigen::Index>(labels.size()) != x.cols())
    throw std::invalid_argument("write_cmdstan_chain: " + std::to_string(labels.size()) + " labels for " +
                                std::to_string(x.cols()) + " parameters");
  const bool diagnostics = !r.diagnostic_names.empty();
  const Eigen::MatrixXd* d = diagnostics ? &r.diagnostics.at(chain) : nullptr;
  if (d && (d->rows() != x.rows() || d->cols() != static_cast<Eigen::Index>(r.diagnostic_names.size())))
    throw std::invalid_argument("write_cmdstan_chain: the diagnostics do not match the draws");
  os << "# model = " << run.model << '\n'
     << "# method = sample\n"
     << "#   sample\n"
     << "#     num_samples = " << x.rows() * run.thin << '\n'
     << "#     num_warmup = " << run.num_warmup << '\n'
     << "#     save_warmup = 0\n"
     << "#     thin = " << run.thin << '\n'
     << "#     adapt\n"
     << "#       engaged = " << (run.algorithm == "nuts" ? 1 : 0) << '\n'
     << "#     algorithm = " << run.algorithm << '\n'
     << "# id = " << chain + 1 << '\n'
     << "# random\n"
     << "#   seed = " << run.seed << '\n'
     << "# privpost\n"
     << "#   version = " << privpost::version_string << '\n'
     << "#   sampler = " << run.title << '\n'
     << "#   kept_draws = " << x.rows() << '\n'
     << "#   interrupted = " << (r.interrupted ? 1 : 0) << '\n'
     << "# release\n";
  for (const auto& [key, value] : run.release) os << "#   release_" << key << " = " << value << '\n';
  os << "# columns\n";
  for (std::size_t j = 0; j < labels.size(); ++j) os << "#   theta." << j + 1 << " = " << labels[j] << '\n';
  bool first = true;
  for (const auto& n : r.diagnostic_names) {
    os << (first ? "" : ",") << n;
    first = false;
  }
  for (std::size_t j = 0; j < labels.size(); ++j) {
    os << (first ? "" : ",") << "theta." << j + 1;
    first = false;
  }
  os << '\n';
  for (Eigen::Index i = 0; i < x.rows(); ++i) {
    first = true;
    if (d)
      for (Eigen::Index k = 0; k < d->cols(); ++k) {
        os << (first ? "" : ",") << cmdstan_number((*d)(i, k));
        first = false;
      }
    for (Eigen::Index j = 0; j < x.cols(); ++j) {
      os << (first ? "" : ",") << cmdstan_number(x(i, j));
      first = false;
    }
    os << '\n';
  }
}

/// The release record's fields for cmdstan_run::release: each top-level key of its JSON with the value's JSON text
/// (strings unquoted).
template <class Json>
std::vector<std::pair<std::string, std::string>> cmdstan_release_fields(const Json& record) {
  std::vector<std::pair<std::string, std::string>> out;
  for (auto it = record.begin(); it != record.end(); ++it)
    out.emplace_back(it.key(), it.value().is_string() ? it.value().template get<std::string>() : it.value().dump());
  return out;
}

/// Writes every chain of every method into dir (created if missing) as <method>_<chain>.csv; returns the paths.
/// `run` is the shared part of the header; each method's algorithm and title come from methods[i].first and titles[i].
inline std::vector<std::string> write_cmdstan_csv(const std::string& dir, cmdstan_run run,
                                                  const std::vector<std::pair<std::string, privpost::inference_result>>& methods,
                                                  const std::vector<std::string>& titles,
                                                  const std::vector<std::string>& labels) {
  if (titles.size() != methods.size()) throw std::invalid_argument("write_cmdstan_csv: one title per method");
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw std::runtime_error("cannot create --output-dir '" + dir + "': " + ec.message());
  std::vector<std::string> paths;
  for (std::size_t m = 0; m < methods.size(); ++m) {
    run.algorithm = methods[m].first;
    run.title = titles[m];
    const auto& r = methods[m].second;
    for (std::size_t c = 0; c < r.draws.chains().size(); ++c) {
      const std::string path = (std::filesystem::path(dir) / (run.algorithm + "_" + std::to_string(c + 1) + ".csv")).string();
      std::ofstream f(path);
      if (!f) throw std::runtime_error("cannot open '" + path + "' for writing");
      write_cmdstan_chain(f, run, r, c, labels);
      f.close();
      if (!f) throw std::runtime_error("error writing '" + path + "'");
      paths.push_back(path);
    }
  }
  return paths;
}

}  // namespace privpost::tools
