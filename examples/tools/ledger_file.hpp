// The privacy budget ledger file of privpost-release (--ledger FILE): a JSON file next to the data holding the data
// set's total (epsilon, delta) and every release charged to it. A release is charged under an exclusive lock,
// read-check-write, before any noise is drawn, so two concurrent releases cannot both spend the same budget; the
// composition rules are privacy_accountant's (basic composition, or zCDP converted at the total's delta).
//
// A ledger must never lose an entry, whatever fails (a full disk, a crash, a kill): a ledger that understates the spend
// lets the next release overspend. So the file is never rewritten in place. The new state goes to a temporary file
// beside it (FILE.XXXXXX), which is flushed and synced, then renamed over FILE, and the folder is synced: at every instant FILE
// holds either the old ledger or the new one, whole. The lock is taken on a separate file, FILE.lock, that is never renamed (a
// lock on FILE itself would stay on the old inode after the rename, and a process waiting on it would read a stale ledger). A
// missing FILE is a new ledger; an existing FILE that is empty, unreadable, not a regular file or larger than any plausible
// ledger is an error, never a fresh start.
//
//     {"format": "privpost-ledger-1", "total": {"epsilon": 1, "delta": 1e-6},
//      "entries": [{"label": "...", "epsilon": 0.5, "delta": 0, "rho": 0.125, "time": "2026-11-29T09:00:00Z"}]}
#pragma once

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdint>
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

#include "output_file.hpp"

namespace privpost::tools {

/// An open, locked ledger file. charge() checks and records the entries of one release (all or nothing) and writes the
/// file before returning; the lock is released by the destructor.
class ledger_file {
 public:
  /// How long open() waits for another process's lock before giving up (a release holds it for milliseconds).
  static constexpr int lock_wait_seconds = 30;

  /// The largest ledger file read, in bytes. An entry takes about 200 bytes, so this is some 80000 releases: a larger
  /// file is not a ledger (reading /dev/zero as one would grow without bound).
  static constexpr std::size_t max_file_bytes = std::size_t{16} << 20;

  /// Locks path's ledger (through path + ".lock") and reads it. A missing file is a new ledger and needs total, the
  /// data set's budget; an existing one keeps its own, and a total that differs from it is refused. std::runtime_error
  /// for I/O failures and a lock held too long; std::invalid_argument for a malformed, empty, non-regular or oversized
  /// file or a bad total.
  ledger_file(std::string path, std::optional<privacy_budget> total) : path_(std::move(path)) {
    if (total) privacy_accountant check(*total);  // a bad total is refused before the file is touched
    if (path_.empty()) throw std::invalid_argument("--ledger: the file name is empty");
    const std::string lock_path = path_ + ".lock";
    fd_ = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd_ < 0) throw std::runtime_error("--ledger: cannot open the lock file '" + lock_path + "': " + std::strerror(errno));
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(lock_wait_seconds);
    while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      if (errno != EWOULDBLOCK && errno != EINTR) fail("cannot lock '" + lock_path + "': " + std::strerror(errno));
      if (std::chrono::steady_clock::now() > deadline)
        fail("'" + path_ + "' is locked by another release for more than " + std::to_string(lock_wait_seconds) + " s");
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    const std::optional<std::string> contents = read_ledger();
    if (!contents) {
      if (!total) fail("'" + path_ + "' is a new ledger: give the data set's total budget with --budget EPSILON[,DELTA]");
      accountant_.emplace(*total);
      return;
    }
    const std::string& text = *contents;
    if (text.find_first_not_of(" \t\r\n") == std::string::npos)
      fail("'" + path_ +
               "' is empty: a ledger always records its total, so this one was cut short or replaced. It is not "
               "read as a new ledger (that would forget every release charged to it): restore it from a backup, or move "
               "it away only if no release was ever charged to it",
           true);
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

  // The ledger's text, or nullopt when the file does not exist (a new ledger). Refuses what cannot be a ledger: a
  // folder, a device or a FIFO (/dev/zero would be read forever), a file over max_file_bytes.
  std::optional<std::string> read_ledger() {
    const int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
      if (errno == ENOENT) return std::nullopt;
      fail("cannot open '" + path_ + "': " + std::strerror(errno));
    }
    struct ::stat st {};
    if (::fstat(fd, &st) != 0) {
      const int err = errno;
      ::close(fd);
      fail("cannot inspect '" + path_ + "': " + std::strerror(err));
    }
    if (!S_ISREG(st.st_mode)) {
      ::close(fd);
      fail("'" + path_ + "' is not a regular file; accepted: a ledger file written by privpost-release", true);
    }
    if (static_cast<std::uintmax_t>(st.st_size) > max_file_bytes) {
      ::close(fd);
      fail("'" + path_ + "' has " + std::to_string(st.st_size) + " bytes; accepted: a ledger of at most " +
               std::to_string(max_file_bytes) + " bytes",
           true);
    }
    std::string text;
    char buffer[4096];
    for (;;) {
      const ssize_t got = ::read(fd, buffer, sizeof buffer);
      if (got < 0) {
        if (errno == EINTR) continue;
        const int err = errno;
        ::close(fd);
        fail("cannot read '" + path_ + "': " + std::strerror(err));
      }
      if (got == 0) break;
      text.append(buffer, static_cast<std::size_t>(got));
      if (text.size() > max_file_bytes) {  // the file grew while it was read
        ::close(fd);
        fail("'" + path_ + "' grew past " + std::to_string(max_file_bytes) + " bytes while it was read", true);
      }
    }
    ::close(fd);
    return text;
  }

  void write() {
    const privacy_budget total = accountant_->total();
    const privacy_budget spent = accountant_->spent();
    const nlohmann::json j = {{"format", "privpost-ledger-1"},
                              {"total", {{"epsilon", total.epsilon}, {"delta", total.delta}}},
                              {"spent", {{"epsilon", spent.epsilon}, {"delta", spent.delta}}},
                              {"entries", entries_json_}};
    replace_file(j.dump(2) + "\n");
  }

  // Replaces path_ by text whole (output_file: a temporary file beside it, synced, renamed over it, the folder
  // synced). On a failure before the rename the ledger is unchanged and nothing was charged.
  void replace_file(const std::string& text) {
    std::optional<output_file> out;
    try {
      out.emplace(path_, 0600);
      out->commit(text);
    } catch (const std::runtime_error& e) {
      if (out && out->replaced())
        throw std::runtime_error("--ledger: the new ledger is in '" + path_ + "' but " + e.what() + "; nothing was released");
      throw std::runtime_error("--ledger: " + std::string(e.what()) + "; the ledger '" + path_ +
                               "' is unchanged and nothing was charged");
    }
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
