// The privacy budget ledger file of privpost-release (--ledger FILE): a JSON file next to the data holding the data
// set's total (epsilon, delta) and every release charged to it. A release is charged under an exclusive lock,
// read-check-write, before any noise is drawn, so two concurrent releases cannot both spend the same budget; the
// composition rules are privacy_accountant's (basic composition, or zCDP converted at the total's delta).
//
// One ledger, one identity. A ledger is often reached through links (one shared ledger linked into each project
// folder), so the name given is resolved to the file's real path first (symbolic links and relative parts), and the
// lock and the temporary files are derived from that path: every name of the ledger takes the same lock and replaces
// the same file, and a symbolic link stays a link. A ledger with several hard links is refused: a rename replaces one
// name only, so the other names would keep the old state and the budget would be spent twice.
//
// A ledger must never lose an entry, whatever fails (a full disk, a crash, a kill): a ledger that understates the spend
// lets the next release overspend. So the file is never rewritten in place. The new state goes to a temporary file
// beside it (FILE.privpost-tmp.XXXXXX), which is flushed and synced, then renamed over FILE, and the folder is synced: at
// every instant FILE holds either the old ledger or the new one, whole. A writer killed before its rename leaves its
// temporary file; only the lock's holder writes one, so the next holder removes such leftovers. The lock is taken on a
// separate file, FILE.lock, that is never renamed (a lock on FILE itself would stay on the old inode after the rename,
// and a process waiting on it would read a stale ledger). A missing FILE is a new ledger; an existing FILE that is not
// exactly what privpost writes (empty, unreadable, not a regular file, larger than any plausible ledger, a field
// missing, extra or of the wrong type, a spend that its entries do not compose to) is an error, never a fresh start.
//
//     {"format": "privpost-ledger-1", "total": {"epsilon": 1, "delta": 1e-6}, "spent": {"epsilon": 0.5, "delta": 0},
//      "entries": [{"label": "...", "epsilon": 0.5, "delta": 0, "rho": 0.125, "time": "2026-11-29T09:00:00Z"}]}
#pragma once

#include <dirent.h>
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
#include <initializer_list>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <privpost/core/errors.hpp>
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
  ledger_file(std::string path, std::optional<privacy_budget> total) : given_(std::move(path)) {
    if (total) privacy_accountant check(*total);  // a bad total is refused before the file is touched
    if (given_.empty()) throw std::invalid_argument("--ledger: the file name is empty");
    path_ = resolved_path(given_, "--ledger");
    const std::string lock_path = path_ + ".lock";
    // O_NOFOLLOW: a lock file replaced by a link would lock another file than every other release's.
    fd_ = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd_ < 0) throw std::runtime_error("--ledger: cannot open the lock file '" + lock_path + "': " + std::strerror(errno));
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(lock_wait_seconds);
    while (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      if (errno != EWOULDBLOCK && errno != EINTR) fail("cannot lock '" + lock_path + "': " + std::strerror(errno));
      if (std::chrono::steady_clock::now() > deadline)
        fail("'" + path_ + "' is locked by another release for more than " + std::to_string(lock_wait_seconds) + " s");
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    // The name may have been pointed elsewhere while this process waited: then this lock is not that file's.
    std::string now;
    try {
      now = resolved_path(given_, "--ledger");
    } catch (const std::runtime_error& e) {
      fail(without_flag(e.what()));
    }
    if (now != path_) fail("'" + given_ + "' was re-linked while its lock was awaited; run the release again");
    remove_stale_temporaries();
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
      parse(j, total);
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
  /// The ledger's resolved path (its one identity; the lock is this path + ".lock").
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

  // The ledger's JSON, field by field: exactly what write() produces (no field missing, none extra, each of its type),
  // and a recorded spend equal to what its entries compose to. An edited or foreign file is refused, never read as
  // a smaller ledger ("entries": null once read as no entries at all).
  void parse(const nlohmann::json& j, const std::optional<privacy_budget>& total) {
    auto exact_keys = [&](const nlohmann::json& o, const std::string& what, std::initializer_list<const char*> keys) {
      if (!o.is_object()) fail("'" + path_ + "': " + what + " is not a JSON object; not a ledger privpost wrote", true);
      for (const char* k : keys)
        if (!o.contains(k)) fail("'" + path_ + "': " + what + " has no field '" + k + "'; not a ledger privpost wrote", true);
      if (o.size() != keys.size()) {
        for (const auto& item : o.items()) {
          bool known = false;
          for (const char* k : keys) known = known || item.key() == k;
          if (!known)
            fail("'" + path_ + "': " + what + " has the unknown field '" + item.key() + "'; not a ledger privpost wrote", true);
        }
      }
    };
    auto number = [&](const nlohmann::json& o, const char* key, const std::string& what) {
      const auto& v = o.at(key);
      if (!v.is_number() || !std::isfinite(v.get<double>()))
        fail("'" + path_ + "': " + what + " field '" + key + "' is " + v.dump() + "; accepted: a finite number", true);
      return v.get<double>();
    };
    auto budget = [&](const nlohmann::json& o, const char* key) {
      exact_keys(o.at(key), std::string("'") + key + "'", {"epsilon", "delta"});
      return privacy_budget{number(o.at(key), "epsilon", key), number(o.at(key), "delta", key)};
    };
    exact_keys(j, "the file", {"format", "total", "spent", "entries"});
    if (!j.at("format").is_string() || j.at("format").get<std::string>() != "privpost-ledger-1")
      fail("'" + path_ + "': format " + j.at("format").dump() + "; accepted: \"privpost-ledger-1\"", true);
    const privacy_budget file_total = budget(j, "total");
    const privacy_budget file_spent = budget(j, "spent");
    if (total && !(*total == file_total))
      fail("--budget " + detail::format_value(total->epsilon) + "," + detail::format_value(total->delta) +
               " differs from the total (" + detail::format_value(file_total.epsilon) + ", " +
               detail::format_value(file_total.delta) + ") recorded in '" + path_ + "'",
           true);
    try {
      accountant_.emplace(file_total);
    } catch (const std::invalid_argument& e) {
      fail("'" + path_ + "': its total is not a budget (" + std::string(e.what()) + ")", true);
    }
    const auto& entries = j.at("entries");
    if (!entries.is_array()) fail("'" + path_ + "': 'entries' is " + entries.dump() + "; accepted: a list of entries", true);
    for (std::size_t i = 0; i < entries.size(); ++i) {
      const auto& e = entries.at(i);
      const std::string what = "entry " + std::to_string(i + 1);
      exact_keys(e, what, {"label", "epsilon", "delta", "rho", "time"});
      if (!e.at("label").is_string() || !e.at("time").is_string())
        fail("'" + path_ + "': " + what + ": 'label' and 'time' must be strings; not a ledger privpost wrote", true);
      const double rho = e.at("rho").is_null() ? std::numeric_limits<double>::infinity() : number(e, "rho", what);
      try {
        accountant_->charge(
            ledger_entry{e.at("label").get<std::string>(), {number(e, "epsilon", what), number(e, "delta", what)}, rho});
      } catch (const std::invalid_argument& x) {
        fail("'" + path_ + "': " + what + " is not a charge (" + std::string(x.what()) + ")", true);
      }
      entries_json_.push_back(e);
    }
    const privacy_budget composed = accountant_->spent();
    auto near = [](double a, double b) { return std::abs(a - b) <= 1e-9 * std::max({std::abs(a), std::abs(b), 1e-300}); };
    if (!near(composed.epsilon, file_spent.epsilon) || !near(composed.delta, file_spent.delta))
      fail("'" + path_ + "' records a spend of (" + detail::format_value(file_spent.epsilon) + ", " +
               detail::format_value(file_spent.delta) + ") but its entries compose to (" +
               detail::format_value(composed.epsilon) + ", " + detail::format_value(composed.delta) +
               "); not a ledger privpost wrote (edited by hand?): restore it from a backup",
           true);
  }

  // Removes the temporary files of writers killed before their rename (FILE.privpost-tmp.XXXXXX). Called under the
  // lock: only the lock's holder writes such a file, so every one found then is a leftover.
  void remove_stale_temporaries() {
    const auto slash = path_.find_last_of('/');
    const std::string folder = slash == 0 ? "/" : path_.substr(0, slash);
    const std::string prefix = path_.substr(slash + 1) + temp_tag;
    DIR* dir = ::opendir(folder.c_str());
    if (dir == nullptr) return;  // reading the ledger reports an unreadable folder
    std::vector<std::string> stale;
    while (const ::dirent* entry = ::readdir(dir)) {
      const std::string name = entry->d_name;
      if (name.size() == prefix.size() + 7 && name.compare(0, prefix.size(), prefix) == 0 && name[prefix.size()] == '.')
        stale.push_back(folder + "/" + name);
    }
    ::closedir(dir);
    for (const auto& f : stale) ::unlink(f.c_str());
  }

  static std::string without_flag(const std::string& what) { return what.rfind("--ledger ", 0) == 0 ? what.substr(9) : what; }

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
    if (st.st_nlink > 1) {
      ::close(fd);
      fail("'" + path_ + "' has " + std::to_string(st.st_nlink) +
               " hard links; accepted: a ledger with one name (a release replaces one name only, so the others would keep "
               "an old state and spend the budget again): remove the other names (find / -samefile '" +
               path_ + "') and link to the ledger with symbolic links",
           true);
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
      out.emplace(path_, 0600, temp_tag);
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

  // The tag of the ledger's temporary files (FILE.privpost-tmp.XXXXXX), by which remove_stale_temporaries knows them.
  static constexpr const char* temp_tag = ".privpost-tmp";

  std::string given_;  // the name as given
  std::string path_;   // its resolved path: the ledger's one identity
  int fd_ = -1;
  std::optional<privacy_accountant> accountant_;
  std::vector<nlohmann::json> entries_json_;
};

}  // namespace privpost::tools
