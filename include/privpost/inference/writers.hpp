// privpost/inference/writers.hpp
// The writers run() composes (inference/run.hpp): a summary table, the draws as one CSV file, CmdStan's CSV files
// (https://mc-stan.org/docs/cmdstan-guide/stan_csv_apdx.html, read by R's posterior, cmdstanr, ArviZ, stansummary) and
// a JSON summary, each on a stream or directory the caller owns. Numbers in CSV and JSON are written in the shortest
// form that reads back to the same double; JSON writes an undefined diagnostic (NaN) as null.
#pragma once

#include <Eigen/Core>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "privpost/core/errors.hpp"
#include "privpost/inference/convergence_check.hpp"
#include "privpost/inference/run.hpp"
#include "privpost/version.hpp"

namespace privpost {

namespace detail {

// The shortest text that reads back to x (std::to_chars); "nan", "inf", "-inf" for the others.
inline std::string shortest_number(double x) {
  char buf[64];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof buf, x);
  if (ec != std::errc()) throw std::runtime_error("shortest_number: std::to_chars failed");
  return std::string(buf, end);
}

// A JSON number: null where x is not finite (JSON has no NaN), and a decimal point on whole numbers so that a
// reader keeps them floating point.
inline std::string json_number(double x) {
  if (!std::isfinite(x)) return "null";
  std::string s = shortest_number(x);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

// A JSON string literal: quotes, backslashes and control characters escaped (RFC 8259 Sec. 7).
inline std::string json_string(std::string_view text) {
  std::string out = "\"";
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (c < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

inline void check_stream(std::ostream& os, const char* writer) {
  if (!os) throw std::runtime_error(std::string(writer) + ": the output stream failed (disk full?)");
}

}  // namespace detail

/// The convergence warnings of a run as run() reports them: none when the header says not to check (exact samplers),
/// else convergence_warnings with the default criteria and the header's names.
inline std::vector<std::string> run_warnings(const run_header& h, const inference_result& r) {
  if (!h.check_convergence) return {};
  return convergence_warnings(r.draws, r.events, r.sweeps, {}, h.names);
}

/// The line a summary prints for a run that inference_options::stop ended early: how many draws it kept (two spaces
/// of indent, no newline).
inline std::string interrupted_line(const inference_result& r) {
  return "  INTERRUPTED (Ctrl-C): " + std::to_string(r.draws.draws_per_chain()) + " draws per chain of " +
         std::to_string(r.draws.num_chains()) + " chain(s) kept before the stop";
}

/// What a summary table shows besides mean, sd, R-hat and the ESS. The defaults are summary_writer's table.
struct summary_layout {
  /// Width of the parameter-name column (at least 1).
  int name_width = 10;
  /// The quantile columns: (probability in (0, 1), column title).
  std::vector<std::pair<double, std::string>> quantiles = {{0.05, "q5"}, {0.5, "q50"}, {0.95, "q95"}};
  /// Flag with "*" (a column of its own) each parameter j < flagged whose central interval between the first and last
  /// quantile columns excludes flag_value: the GLM's coefficients whose 95% interval excludes 0. 0: no flag column.
  Eigen::Index flagged = 0;
  /// The value a flagged parameter's interval is tested against.
  double flag_value = 0.0;
  /// What the table's last line reports.
  enum class footer {
    repairs,  ///< the numerical repairs: projections, jitter, PSD repairs, rejected draws
    nuts      ///< NUTS's divergent transitions and tree-depth saturations after warm-up
  };
  /// The table's last line.
  footer last_line = footer::repairs;
};

/// The summary table: per parameter mean, sd, the layout's quantiles (5/50/95% by default), R-hat, bulk and tail ESS; a
/// line when the run was interrupted; the numerical repairs (or NUTS's events).
class summary_writer {
 public:
  /// Writes to os (which must outlive the writer) with the default layout.
  explicit summary_writer(std::ostream& os) : os_(&os) {}
  /// Writes to os with the given layout; std::invalid_argument for a name width outside [1, 64], no quantile column, a
  /// probability outside (0, 1) or a flag without two quantile columns.
  summary_writer(std::ostream& os, summary_layout layout) : os_(&os), layout_(std::move(layout)) {
    if (layout_.name_width < 1 || layout_.name_width > 64)
      throw_invalid("summary_writer", "name_width", layout_.name_width, "an integer in [1, 64]");
    if (layout_.quantiles.empty()) throw_invalid("summary_writer", "quantile columns", 0, "at least one");
    for (const auto& [q, title] : layout_.quantiles)
      if (!(q > 0.0 && q < 1.0)) throw_invalid("summary_writer", "quantile", q, "a probability in (0, 1)");
    if (layout_.flagged < 0) throw_invalid("summary_writer", "flagged", layout_.flagged, "a count >= 0");
    if (layout_.flagged > 0 && layout_.quantiles.size() < 2)
      throw_invalid("summary_writer", "quantile columns with a flag", layout_.quantiles.size(), "at least two (the interval)");
  }

  /// Writes the table of r, titled by h.title.
  void write(const run_header& h, const inference_result& r) {
    const int w = layout_.name_width;
    const bool flags = layout_.flagged > 0;
    // Names and the title may be long (a CSV's column names): they are appended, never cut to a buffer.
    const auto padded = [w](const std::string& name) {
      return name.size() < static_cast<std::size_t>(w) ? name + std::string(static_cast<std::size_t>(w) - name.size(), ' ')
                                                       : name;
    };
    char cell[128];
    std::string line = h.title + "\n  " + padded("parameter");
    std::snprintf(cell, sizeof cell, " %10s %10s", "mean", "sd");
    line += cell;
    for (const auto& [q, title] : layout_.quantiles) {
      std::snprintf(cell, sizeof cell, " %10s", title.substr(0, 32).c_str());
      line += cell;
    }
    if (flags) line += "    ";
    std::snprintf(cell, sizeof cell, " %7s %8s %8s\n", "R-hat", "ESS bulk", "ESS tail");
    *os_ << line << cell;
    for (Eigen::Index j = 0; j < r.draws.dimension(); ++j) {
      std::snprintf(cell, sizeof cell, " %10.4g %10.4g", r.draws.mean(j), r.draws.sd(j));
      line = "  " + padded(h.names[static_cast<std::size_t>(j)]) + cell;
      double lower = 0.0, upper = 0.0;
      for (std::size_t k = 0; k < layout_.quantiles.size(); ++k) {
        const double v = r.draws.quantile(layout_.quantiles[k].first, j);
        if (k == 0) lower = v;
        upper = v;
        std::snprintf(cell, sizeof cell, " %10.4g", v);
        line += cell;
      }
      if (flags) line += (j < layout_.flagged && !(lower <= layout_.flag_value && layout_.flag_value <= upper)) ? "   *" : "    ";
      std::snprintf(cell, sizeof cell, " %7.3f %8.0f %8.0f\n", r.draws.rhat(j), r.draws.ess_bulk(j), r.draws.ess_tail(j));
      *os_ << line << cell;
    }
    if (r.interrupted) *os_ << interrupted_line(r) << '\n';
    const auto& e = r.events;
    if (layout_.last_line == summary_layout::footer::nuts) {
      std::snprintf(cell, sizeof cell, "  NUTS after warm-up: %llu divergent transitions, %llu at the maximum tree depth\n",
                    static_cast<unsigned long long>(e.divergences), static_cast<unsigned long long>(e.treedepth_saturations));
    } else {
      std::snprintf(cell, sizeof cell,
                    "  numerical repairs: %llu projections, %llu jitter, %llu PSD repairs, %llu rejected draws\n",
                    static_cast<unsigned long long>(e.projections), static_cast<unsigned long long>(e.jitter),
                    static_cast<unsigned long long>(e.psd_repairs), static_cast<unsigned long long>(e.rejected_draws));
    }
    *os_ << cell;
    detail::check_stream(*os_, "summary_writer");
  }

 private:
  std::ostream* os_;
  summary_layout layout_;
};

/// Every draw as one CSV file: a header "method,chain,draw,<names>" (once, from the first run written), then one row
/// per kept draw; several runs (methods) may share the file. Numbers at 17 significant digits.
class draws_csv_writer {
 public:
  /// Writes to os (which must outlive the writer).
  explicit draws_csv_writer(std::ostream& os) : os_(&os) {}

  /// Appends the draws of r; std::invalid_argument when its parameters differ from the first run's.
  void write(const run_header& h, const inference_result& r) {
    if (!header_written_) {
      *os_ << "method,chain,draw";
      for (const auto& n : h.names) *os_ << ',' << n;
      *os_ << '\n';
      header_written_ = true;
      columns_ = h.names.size();
    }
    check_size_match("draws_csv_writer", "parameters", static_cast<Eigen::Index>(h.names.size()), "the file's columns",
                     static_cast<Eigen::Index>(columns_));
    const auto precision = os_->precision(17);
    for (std::size_t c = 0; c < r.draws.chains().size(); ++c) {
      const auto& m = r.draws.chains()[c];
      for (Eigen::Index i = 0; i < m.rows(); ++i) {
        *os_ << h.method << ',' << c << ',' << i;
        for (Eigen::Index j = 0; j < m.cols(); ++j) *os_ << ',' << m(i, j);
        *os_ << '\n';
      }
    }
    os_->precision(precision);
    detail::check_stream(*os_, "draws_csv_writer");
  }

 private:
  std::ostream* os_;
  bool header_written_ = false;
  std::size_t columns_ = 0;
};

/// Each chain as a CmdStan CSV file, `DIRECTORY/METHOD_CHAIN.csv` (chains numbered from 1). Each file holds a '#'
/// comment header of "key = value" lines laid out like CmdStan's configuration (model, method = sample with
/// num_samples = kept draws x thin, num_warmup, save_warmup = 0, thin, algorithm = the run's method, id, seed), a
/// "privpost" block, the caller's context lines (the release record's fields, say, prefixed so that a reader that
/// flattens the blocks cannot confuse them with the run's), and a "columns" block naming each parameter; then the
/// sampler's per-draw diagnostic columns where it reports them (NUTS: lp__, accept_stat__, stepsize__, ...), the
/// parameters as one Stan vector theta.1 ... theta.D, and one row per kept draw. Samplers that evaluate no log density
/// (the Gibbs-SS family) have no lp__ column. Not written: stan_version lines and the adaptation and timing blocks.
///
/// Under run() the files are streamed (a streaming_writer): a chain's file is created at its first kept draw with the
/// header of the planned run (num_samples and kept_draws planned, interrupted = 0, as CmdStan writes its configuration
/// before its draws), and its rows are appended in whole lines at most flush_seconds apart, so that a run killed
/// outright (kill -9, a lost machine) leaves valid CmdStan CSV files with the draws made until shortly before. When the
/// run ends, write() rewrites each file with the final header and every kept draw.
class cmdstan_csv_writer {
 public:
  /// The longest a streamed row waits before it reaches the file.
  static constexpr double flush_seconds = 0.25;

  /// Files go to directory (created when missing); model names the model in the headers; context lines are written
  /// as "#   <context_prefix><key> = <value>" under a block named context_block.
  cmdstan_csv_writer(std::string directory, std::string model, std::vector<std::pair<std::string, std::string>> context = {},
                     std::string context_block = "context", std::string context_prefix = "")
      : directory_(std::move(directory)),
        model_(std::move(model)),
        context_(std::move(context)),
        block_(std::move(context_block)),
        prefix_(std::move(context_prefix)) {}

  /// Appends draw d of the run h to its chain's file (created with the planned run's header at the chain's first
  /// draw); std::runtime_error naming the path when it cannot be written.
  void draw(const run_header& h, const kept_draw& d) {
    stream& s = streams_[{h.method, d.chain}];
    if (!s.file) {
      s.path = path_of(h.method, static_cast<std::size_t>(d.chain));
      s.file = std::make_unique<std::ofstream>();
      s.file->rdbuf()->pubsetbuf(nullptr, 0);  // unbuffered: each write below is one whole block of lines
      s.file->open(s.path, std::ios::out | std::ios::trunc);
      if (!*s.file) throw std::runtime_error("cannot open '" + s.path + "' for writing");
      std::ostringstream head;
      write_header(head, h, static_cast<std::size_t>(d.chain), h.draws, false, *d.diagnostic_names);
      s.pending = head.str();
      s.last = std::chrono::steady_clock::time_point{};  // the header goes out with the first row
    }
    bool first = true;
    for (const double x : d.diagnostics) append_cell(s.pending, first, x);
    for (const double x : d.parameters) append_cell(s.pending, first, x);
    s.pending += '\n';
    const auto now = std::chrono::steady_clock::now();
    if (now - s.last >= std::chrono::duration<double>(flush_seconds)) {
      s.file->write(s.pending.data(), static_cast<std::streamsize>(s.pending.size()));
      if (!*s.file) throw std::runtime_error("error writing '" + s.path + "' (disk full?)");
      s.pending.clear();
      s.last = now;
    }
  }

  /// Writes every chain of r (replacing what draw() streamed); std::runtime_error naming the path when a file cannot be
  /// written.
  void write(const run_header& h, const inference_result& r) {
    std::erase_if(streams_, [&](const auto& entry) { return entry.first.first == h.method; });
    for (std::size_t c = 0; c < r.draws.chains().size(); ++c) {
      const std::string path = path_of(h.method, c);
      std::ofstream f(path);
      if (!f) throw std::runtime_error("cannot open '" + path + "' for writing");
      write_chain(f, h, r, c);
      f.close();
      if (!f) throw std::runtime_error("error writing '" + path + "'");
      paths_.push_back(path);
    }
  }

  /// One chain (0-based) as one CmdStan CSV document on os.
  void write_chain(std::ostream& os, const run_header& h, const inference_result& r, std::size_t chain) const {
    if (chain >= r.draws.chains().size())
      throw std::invalid_argument("cmdstan_csv_writer: chain " + std::to_string(chain) + "; accepted: below " +
                                  std::to_string(r.draws.chains().size()));
    const Eigen::MatrixXd& x = r.draws.chains()[chain];
    if (static_cast<Eigen::Index>(h.names.size()) != x.cols())
      throw std::invalid_argument("cmdstan_csv_writer: " + std::to_string(h.names.size()) + " labels for " +
                                  std::to_string(x.cols()) + " parameters; accepted: one name per parameter");
    const Eigen::MatrixXd* d = r.diagnostic_names.empty() ? nullptr : &r.diagnostics.at(chain);
    if (d && (d->rows() != x.rows() || d->cols() != static_cast<Eigen::Index>(r.diagnostic_names.size())))
      throw std::invalid_argument("cmdstan_csv_writer: the diagnostics do not match the draws");
    write_header(os, h, chain, x.rows(), r.interrupted, r.diagnostic_names);
    std::string line;
    for (Eigen::Index i = 0; i < x.rows(); ++i) {
      line.clear();
      bool first = true;
      if (d)
        for (Eigen::Index k = 0; k < d->cols(); ++k) append_cell(line, first, (*d)(i, k));
      for (Eigen::Index j = 0; j < x.cols(); ++j) append_cell(line, first, x(i, j));
      os << line << '\n';
    }
    detail::check_stream(os, "cmdstan_csv_writer");
  }

  /// The files written so far.
  const std::vector<std::string>& paths() const noexcept { return paths_; }

 private:
  struct stream {
    std::string path;
    std::unique_ptr<std::ofstream> file;
    std::string pending;  // whole lines not yet written
    std::chrono::steady_clock::time_point last;
  };

  // DIRECTORY/METHOD_CHAIN.csv, the directory created when missing.
  std::string path_of(const std::string& method, std::size_t chain) const {
    std::error_code ec;
    std::filesystem::create_directories(directory_, ec);
    if (ec) throw std::runtime_error("cmdstan_csv_writer: cannot create the directory '" + directory_ + "': " + ec.message());
    return (std::filesystem::path(directory_) / (method + "_" + std::to_string(chain + 1) + ".csv")).string();
  }

  static void append_cell(std::string& line, bool& first, double x) {
    if (!first) line += ',';
    line += detail::shortest_number(x);
    first = false;
  }

  // The comment header and the column line of a chain of `rows` kept draws.
  void write_header(std::ostream& os, const run_header& h, std::size_t chain, Eigen::Index rows, bool interrupted,
                    const std::vector<std::string>& diagnostic_names) const {
    os << "# model = " << model_ << '\n'
       << "# method = sample\n"
       << "#   sample\n"
       << "#     num_samples = " << rows * h.thin << '\n'
       << "#     num_warmup = " << h.burnin << '\n'
       << "#     save_warmup = 0\n"
       << "#     thin = " << h.thin << '\n'
       << "#     adapt\n"
       << "#       engaged = " << (h.method == "nuts" ? 1 : 0) << '\n'
       << "#     algorithm = " << h.method << '\n'
       << "# id = " << chain + 1 << '\n'
       << "# random\n"
       << "#   seed = " << h.seed << '\n'
       << "# privpost\n"
       << "#   version = " << version_string << '\n'
       << "#   sampler = " << h.title << '\n'
       << "#   kept_draws = " << rows << '\n'
       << "#   interrupted = " << (interrupted ? 1 : 0) << '\n';
    if (!context_.empty()) {
      os << "# " << block_ << '\n';
      for (const auto& [key, value] : context_) os << "#   " << prefix_ << key << " = " << value << '\n';
    }
    os << "# columns\n";
    for (std::size_t j = 0; j < h.names.size(); ++j) os << "#   theta." << j + 1 << " = " << h.names[j] << '\n';
    std::string line;
    bool first = true;
    auto cell = [&](const std::string& text) {
      line += (first ? "" : ",") + text;
      first = false;
    };
    for (const auto& n : diagnostic_names) cell(n);
    for (std::size_t j = 0; j < h.names.size(); ++j) cell("theta." + std::to_string(j + 1));
    os << line << '\n';
  }

  std::string directory_, model_;
  std::vector<std::pair<std::string, std::string>> context_;
  std::string block_, prefix_;
  std::vector<std::string> paths_;
  std::map<std::pair<std::string, int>, stream> streams_;
};

/// A run's summary as one JSON object per write: method, title, interrupted, chains, draws_per_chain, sweeps; per
/// parameter name, mean, sd, quantiles (q5, q25, q50, q75, q95), rhat, ess_bulk, ess_tail and mcse_mean; the
/// numerical events and the convergence warnings (run_warnings). Objects of several runs are separated by newlines
/// (JSON Lines).
class json_summary_writer {
 public:
  /// Writes to os (which must outlive the writer).
  explicit json_summary_writer(std::ostream& os) : os_(&os) {}

  /// Writes the summary of r as one line of JSON.
  void write(const run_header& h, const inference_result& r) {
    using detail::json_number;
    using detail::json_string;
    std::ostream& os = *os_;
    os << "{\"method\":" << json_string(h.method) << ",\"title\":" << json_string(h.title)
       << ",\"interrupted\":" << (r.interrupted ? "true" : "false") << ",\"chains\":" << r.draws.num_chains()
       << ",\"draws_per_chain\":" << r.draws.draws_per_chain() << ",\"sweeps\":" << r.sweeps << ",\"parameters\":[";
    for (Eigen::Index j = 0; j < r.draws.dimension(); ++j) {
      os << (j ? "," : "") << "{\"name\":" << json_string(h.names[static_cast<std::size_t>(j)])
         << ",\"mean\":" << json_number(r.draws.mean(j)) << ",\"sd\":" << json_number(r.draws.sd(j)) << ",\"quantiles\":{";
      const char* keys[] = {"q5", "q25", "q50", "q75", "q95"};
      const double levels[] = {0.05, 0.25, 0.5, 0.75, 0.95};
      for (int q = 0; q < 5; ++q) os << (q ? "," : "") << '"' << keys[q] << "\":" << json_number(r.draws.quantile(levels[q], j));
      os << "},\"rhat\":" << json_number(r.draws.rhat(j)) << ",\"ess_bulk\":" << json_number(r.draws.ess_bulk(j))
         << ",\"ess_tail\":" << json_number(r.draws.ess_tail(j)) << ",\"mcse_mean\":" << json_number(r.draws.mcse_mean(j)) << '}';
    }
    const auto& e = r.events;
    os << "],\"numerical_events\":{\"projections\":" << e.projections << ",\"jitter\":" << e.jitter
       << ",\"psd_repairs\":" << e.psd_repairs << ",\"rejected_draws\":" << e.rejected_draws
       << ",\"divergences\":" << e.divergences << ",\"treedepth_saturations\":" << e.treedepth_saturations
       << ",\"nonfinite_density\":" << e.nonfinite_density
       << ",\"message_passing_nonconverged\":" << e.message_passing_nonconverged
       << ",\"inner_solver_nonconverged\":" << e.inner_solver_nonconverged << ",\"log_floors\":" << e.log_floors
       << "},\"warnings\":[";
    const auto warnings = run_warnings(h, r);
    for (std::size_t i = 0; i < warnings.size(); ++i) os << (i ? "," : "") << json_string(warnings[i]);
    os << "]}\n";
    detail::check_stream(os, "json_summary_writer");
  }

 private:
  std::ostream* os_;
};

}  // namespace privpost
