// The privacy budget ledger file of privpost-release (--ledger FILE; issue #13 item 4): a JSON file next to the data
// holding the data set's total (epsilon, delta) and every release charged to it. A release is charged under an
// exclusive lock on the file (flock), read-check-write, before any noise is drawn, so two concurrent releases cannot
// both spend the same budget; the composition rules are privacy_accountant's (basic composition, or zCDP converted at
// the total's delta). The file is rewritten in place under the lock (a rename would move the lock's inode away from a
// waiting process); a write cut short by a crash leaves a file that the next release refuses to read, never one that
// understates the spend.
//
//     {"format": "privpost-ledger-1", "total": {"epsilon": 1, "delta": 1e-6},
//      "entries": [{"label": "...", "epsilon": 0.5, "delta": 0, "rho": 0.125, "time": "2026-11-29T09:00:00Z"}]}
#pragma once

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <privpost/mechanisms/privacy_accountant.hpp>

namespace privpost::tools {

/// An open, locked ledger file. charge() checks and records the entries of one release (all or nothing) and writes the
/// file before returning; the lock is released by the destructor.
class ledger_file {
 public:
  /// How long open() waits for another process's lock before giving up (a release holds it for milliseconds).
  static constexpr int lock_wait_seconds = 30;

  /// Opens (creating it when absent) and locks path. A new or empty file needs total, the data set's budget; an existing
  /// one keeps its own, and a total that differs from it is refused. std::runtime_error for I/O failures and a lock held
  /// too long; std::invalid_argument for a malformed file or a bad total.
  ledger_file(std::string path, std::optional<privacy_budget> total) : path_(std::move(path)) {
    if (total) privacy_accountant check(*total);  // a bad total is refused before the file is touched
    fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd_ < 0) throw std::runtime_error("--ledger: cannot open '" + path_ + "': " + std::strerror(errno));
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(lock_wait_seconds);
    while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      if (errno != EWOULDBLOCK && errno != EINTR) fail("cannot lock '" + path_ + "': " + std::strerror(errno));
      if (std::chrono::steady_clock::now() > deadline)
        fail("'" + path_ + "' is locked by another release for more than " + std::to_string(lock_wait_seconds) + " s");
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    const std::string text = read_all();
    if (text.find_first_not_of(" \t\r\n") == std::string::npos) {
      if (!total) fail("'" + path_ + "' is a new ledger: give the data set's total budget with --budget EPSILON[,DELTA]");
      accountant_.emplace(*total);
      return;
    }
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(text);
    } catch (const std::exception& e) {
      fail("'" + path_ + "' is not a ledger (JSON: " + e.what() + ")", true);
    }
    try {
      if (j.value("format", std::string()) != "privpost-ledger-1")
        fail("'" + path_ + "': unknown format (expected privpost-ledger-1)", true);
      const privacy_budget file_total{j.at("total").at("epsilon").get<double>(), j.at("total").at("delta").get<double>()};
      if (total && !(*total == file_total))
        fail("--budget (" + std::to_string(total->epsilon) + ", " + std::to_string(total->delta) + ") differs from the total (" +
                 std::to_string(file_total.epsilon) + ", " + std::to_string(file_total.delta) + ") recorded in '" + path_ + "'",
             true);
      accountant_.emplace(file_total);
      for (const auto& e : j.at("entries")) {
        entries_json_.push_back(e);
        accountant_->charge(
            ledger_entry{e.at("label").get<std::string>(),
                         {e.at("epsilon").get<double>(), e.at("delta").get<double>()},
                         e.at("rho").is_null() ? std::numeric_limits<double>::infinity() : e.at("rho").get<double>()});
      }
    } catch (const budget_exceeded& e) {
      fail("'" + path_ + "' records more than its total: " + e.what(), true);
    } catch (const nlohmann::json::exception& e) {
      fail("'" + path_ + "' is not a valid ledger: " + e.what(), true);
    }
  }
  ledger_file(const ledger_file&) = delete;
  ledger_file& operator=(const ledger_file&) = delete;
  ~ledger_file() {
    if (fd_ >= 0) ::close(fd_);  // closing releases the lock
  }

  /// Charges every mechanism of one release under label, all or nothing, and writes the file (fsync'd) before
  /// returning: only then may noise be drawn. budget_exceeded when the release does not fit; the file is unchanged.
  template <release_mechanism... Ms>
  void charge(const std::string& label, const Ms&... mechanisms) {
    privacy_accountant trial = *accountant_;
    (trial.charge(mechanisms, label), ...);  // throws before anything is written
    commit(trial);
  }

  /// Charges one entry computed by the caller (a guarantee other than the mechanism's own budget), as charge().
  void charge_entry(ledger_entry entry) {
    privacy_accountant trial = *accountant_;
    trial.charge(std::move(entry));
    commit(trial);
  }

  const privacy_accountant& accountant() const { return *accountant_; }
  const std::string& path() const { return path_; }

 private:
  // Records trial's new entries and writes the file.
  void commit(const privacy_accountant& trial) {
    const std::string time = utc_now();
    for (std::size_t i = accountant_->entries().size(); i < trial.entries().size(); ++i) {
      const ledger_entry& e = trial.entries()[i];
      entries_json_.push_back({{"label", e.label},
                               {"epsilon", e.budget.epsilon},
                               {"delta", e.budget.delta},
                               {"rho", std::isfinite(e.rho) ? nlohmann::json(e.rho) : nlohmann::json(nullptr)},
                               {"time", time}});
    }
    accountant_ = trial;
    write();
    // Test hook: hold the lock a while after charging, so that the concurrency test's two processes overlap.
    if (const char* hold = std::getenv("PRIVPOST_LEDGER_HOLD_MS"))
      std::this_thread::sleep_for(std::chrono::milliseconds(std::atoi(hold)));
  }

  [[noreturn]] void fail(const std::string& what, bool invalid = false) {
    ::close(fd_);
    fd_ = -1;
    if (invalid) throw std::invalid_argument("--ledger: " + what);
    throw std::runtime_error("--ledger: " + what);
  }

  std::string read_all() {
    std::string text;
    char buffer[4096];
    off_t at = 0;
    for (;;) {
      const ssize_t got = ::pread(fd_, buffer, sizeof buffer, at);
      if (got < 0) {
        if (errno == EINTR) continue;
        fail("cannot read '" + path_ + "': " + std::strerror(errno));
      }
      if (got == 0) break;
      text.append(buffer, static_cast<std::size_t>(got));
      at += got;
    }
    return text;
  }

  void write() {
    const privacy_budget total = accountant_->total();
    const privacy_budget spent = accountant_->spent();
    const nlohmann::json j = {{"format", "privpost-ledger-1"},
                              {"total", {{"epsilon", total.epsilon}, {"delta", total.delta}}},
                              {"spent", {{"epsilon", spent.epsilon}, {"delta", spent.delta}}},
                              {"entries", entries_json_}};
    const std::string text = j.dump(2) + "\n";
    if (::ftruncate(fd_, 0) != 0) throw std::runtime_error("--ledger: cannot truncate '" + path_ + "': " + std::strerror(errno));
    std::size_t done = 0;
    while (done < text.size()) {
      const ssize_t put = ::pwrite(fd_, text.data() + done, text.size() - done, static_cast<off_t>(done));
      if (put < 0) {
        if (errno == EINTR) continue;
        throw std::runtime_error("--ledger: cannot write '" + path_ + "': " + std::strerror(errno));
      }
      done += static_cast<std::size_t>(put);
    }
    if (::fsync(fd_) != 0) throw std::runtime_error("--ledger: cannot sync '" + path_ + "': " + std::strerror(errno));
  }

  static std::string utc_now() {
    const std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buffer[32];
    std::strftime(buffer, sizeof buffer, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buffer;
  }

  std::string path_;
  int fd_ = -1;
  std::optional<privacy_accountant> accountant_;
  std::vector<nlohmann::json> entries_json_;
};

}  // namespace privpost::tools
