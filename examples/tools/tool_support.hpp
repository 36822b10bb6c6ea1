// Shared helpers of the command-line tools (not part of the library): parsing comma lists, printing calibration
// reports as a table or JSON, writing per-trial ranks, and a throttled progress line on stderr.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <mutex>
#include <new>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <privpost/inference/calibration_study.hpp>

#include "interrupt.hpp"
#include "mpi_job.hpp"

namespace privpost::tools {

/// The items of the comma list s given to option `flag`. An empty item (two commas in a row, a comma at either end) is
/// refused: read silently, "--budget 1,,0.5" meant (1, 0.5). An empty s is an empty list.
inline std::vector<std::string> split_list(const std::string& s, const std::string& flag) {
  std::vector<std::string> out;
  if (s.empty()) return out;  // the option not given
  std::size_t from = 0;
  while (true) {
    const std::size_t comma = s.find(',', from);
    out.push_back(s.substr(from, comma == std::string::npos ? std::string::npos : comma - from));
    if (out.back().empty())
      throw std::invalid_argument(flag + " is '" + s + "': an empty item (two commas in a row, or a comma at an end); " +
                                  "accepted: a comma list of non-empty items");
    if (comma == std::string::npos) return out;
    from = comma + 1;
  }
}

/// The message a tool prints for an exception. Library errors start with a function ("draw_inverse_gamma: shape ... is
/// 1e-300"), which tells a user nothing about what they gave: the cause leads (the message after the function), then the
/// function and the user's inputs that reach that code (context, e.g. "--prior and the release's n and noisy
/// statistics"), so that the first words say what went wrong rather than a generic failure. A bad_alloc becomes a plain
/// out-of-memory message. Messages the tools write themselves (options, "release record: ...", CSV lines) pass
/// unchanged.
namespace message_detail {
// The length of a library message's leading identifier (a function, or class::function, before ": "), or 0 when the
// message does not start with one (the tools' own messages start with an option, a field or a sentence).
inline std::size_t library_function_length(const std::string& what) {
  std::size_t i = 0;
  while (i < what.size() &&
         (std::islower(static_cast<unsigned char>(what[i])) || std::isdigit(static_cast<unsigned char>(what[i])) ||
          what[i] == '_' || (what[i] == ':' && i + 1 < what.size() && what[i + 1] == ':') ||
          (what[i] == ':' && i > 0 && what[i - 1] == ':')))
    ++i;
  const bool internal = i > 0 && i + 1 < what.size() && what[i] == ':' && what[i + 1] == ' ' &&
                        (what.find('_') < i || what.find("::") < i || what.compare(0, i, "posterior") == 0);
  return internal ? i : 0;
}
}  // namespace message_detail

/// A library message without its leading function name ("beta_prior: a is -1; accepted: ..." becomes "a is -1;
/// accepted: ..."), for a tool that names the option the value came from itself.
inline std::string without_function(const std::string& what) {
  const std::size_t i = message_detail::library_function_length(what);
  return i == 0 ? what : what.substr(i + 2);
}

inline std::string for_the_user(const std::exception& e, const std::string& context) {
  if (dynamic_cast<const std::bad_alloc*>(&e) != nullptr)
    return "out of memory: this model and run need more memory than the machine has (" + context +
           "); fewer chains or draws, or a smaller model";
  const std::string what = e.what();
  const std::size_t i = message_detail::library_function_length(what);
  if (i == 0) return what;
  return what.substr(i + 2) + " (raised by " + what.substr(0, i) + "; it depends on " + context + ")";
}

inline void print_table(const std::vector<calibration_row>& rows, std::ostream& os) {
  os << std::left << std::setw(12) << "method" << std::setw(10) << "parameter" << std::right << std::setw(9) << "KS"
     << std::setw(12) << "KS p" << std::setw(9) << "cov50" << std::setw(9) << "cov90" << std::setw(12) << "MMD^2" << std::setw(14)
     << "s/posterior" << '\n';
  for (const auto& r : rows) {
    os << std::left << std::setw(12) << r.method << std::setw(10) << r.parameter << std::right << std::fixed
       << std::setprecision(4) << std::setw(9) << r.ks << std::setw(12) << std::scientific << std::setprecision(2) << r.ks_pvalue
       << std::fixed << std::setprecision(3) << std::setw(9) << r.coverage50 << std::setw(9) << r.coverage90;
    if (r.mmd2) {
      os << std::setw(12) << std::scientific << std::setprecision(2) << *r.mmd2;
    } else {
      os << std::setw(12) << "-";
    }
    os << std::setw(14) << std::scientific << std::setprecision(2) << r.seconds_per_posterior << '\n';
    os << std::defaultfloat;
  }
}

inline nlohmann::json to_json(const std::vector<calibration_row>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : rows) {
    out.push_back({{"method", r.method},
                   {"parameter", r.parameter},
                   {"trials", r.trials},
                   {"ks", r.ks},
                   {"ks_pvalue", r.ks_pvalue},
                   {"coverage50", r.coverage50},
                   {"coverage90", r.coverage90},
                   {"mmd2", r.mmd2 ? nlohmann::json(*r.mmd2) : nlohmann::json(nullptr)},
                   {"seconds_per_posterior", r.seconds_per_posterior}});
  }
  return out;
}

/// trial,method,parameter,quantile rows for QQ plots.
inline void write_ranks(const calibration_accumulator& acc, const std::vector<calibration_row>& rows, const std::string& path) {
  if (!output_rank()) return;  // rank 0 of an MPI job writes the file
  std::ofstream f(path);
  if (!f) throw std::runtime_error("cannot open --ranks file '" + path + "' for writing");
  f << "trial,method,parameter,quantile\n";
  f.precision(17);
  for (const auto& r : rows) {
    const auto& q = acc.quantiles(r.method, r.parameter);
    for (std::size_t t = 0; t < q.size(); ++t) f << t << ',' << r.method << ',' << r.parameter << ',' << q[t] << '\n';
  }
  if (!f) throw std::runtime_error("error writing --ranks file '" + path + "'");
}

/// Progress on stderr from the first second of a run: on a terminal one line updated in place at most twice a second;
/// elsewhere (a log file, a pipe) a plain line every 30 s, so that a long run in a script is not silent for minutes
/// but a log gets no carriage-return noise.
class progress_line {
 public:
  /// The interval between lines when stderr is not a terminal.
  static constexpr double log_interval_seconds = 30.0;

  explicit progress_line(std::string what)
      : what_(std::move(what)), start_(std::chrono::steady_clock::now()), terminal_(::isatty(2) != 0) {
    // Test hook: PRIVPOST_PROGRESS_SECONDS shortens the log interval, so that a test sees the lines of a short run.
    if (const char* s = std::getenv("PRIVPOST_PROGRESS_SECONDS")) interval_ = std::max(0.1, std::atof(s));
  }
  void operator()(long done, long total) {
    const auto now = std::chrono::steady_clock::now();
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    const double since = std::chrono::duration<double>(now - last_).count();
    const double eta = done > 0 ? elapsed * static_cast<double>(total - done) / static_cast<double>(done) : -1.0;
    const double percent = total > 0 ? 100.0 * static_cast<double>(done) / static_cast<double>(total) : 0.0;
    if (!terminal_) {
      if (elapsed < interval_ || (shown_ && since < interval_)) return;
      last_ = now;
      shown_ = true;
      if (eta < 0)
        std::fprintf(stderr, "%s: %ld/%ld, %.0f s elapsed, time left not known before the first is done\n", what_.c_str(), done,
                     total, elapsed);
      else
        std::fprintf(stderr, "%s: %ld/%ld (%.0f%%), %.0f s elapsed, ~%.0f s left\n", what_.c_str(), done, total, percent, elapsed,
                     eta);
      return;
    }
    if (done < total && (elapsed < 1.0 || since < 0.5)) return;
    if (elapsed < 1.0 && !shown_) return;
    last_ = now;
    shown_ = true;
    if (eta < 0)
      std::fprintf(stderr, "\r%s: %ld/%ld, %.1f s elapsed   ", what_.c_str(), done, total, elapsed);
    else
      std::fprintf(stderr, "\r%s: %ld/%ld (%.0f%%), %.1f s elapsed, ~%.1f s left   ", what_.c_str(), done, total, percent,
                   elapsed, eta);
    if (done >= total) std::fprintf(stderr, "\n");
  }

 private:
  std::string what_;
  std::chrono::steady_clock::time_point start_;
  std::chrono::steady_clock::time_point last_{};
  bool terminal_ = false;
  bool shown_ = false;
  double interval_ = log_interval_seconds;
};

/// A progress_line that also speaks while nothing is done: a long step (one calibration trial of a GLM takes minutes)
/// would otherwise leave a run silent from its start to its first tick. A thread repeats the last state every 0.1 s
/// (progress_line throttles what it prints: every 30 s in a log); ticks may come from any thread.
class progress_heartbeat {
 public:
  /// total: the steps of the run (known before the first is done).
  progress_heartbeat(std::string what, long total) : line_(std::move(what)), total_(total), beat_([this] { run(); }) {}
  progress_heartbeat(const progress_heartbeat&) = delete;
  progress_heartbeat& operator=(const progress_heartbeat&) = delete;
  ~progress_heartbeat() {
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    beat_.join();
  }
  void operator()(long done, long total) {
    const std::lock_guard<std::mutex> lock(mutex_);
    done_ = done;
    total_ = total;
    line_(done, total);
  }

 private:
  void run() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!wake_.wait_for(lock, std::chrono::milliseconds(100), [this] { return stop_; }))
      if (total_ > 0 && done_ < total_) line_(done_, total_);
  }

  progress_line line_;
  std::mutex mutex_;
  std::condition_variable wake_;
  long done_ = 0, total_ = 0;
  bool stop_ = false;
  std::thread beat_;  // last: started once every member it reads is constructed
};

}  // namespace privpost::tools
