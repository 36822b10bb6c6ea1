// Writing a file that must arrive whole or not at all (privpost-release's record). A release record that is lost after
// its budget was charged wastes privacy budget, and one that is cut short is worse: a reader could take a truncated
// JSON for a record of fewer statistics. So:
//   - a regular file (or a new path) is written to a temporary file in the same folder, synced, closed and renamed over
//     the target, and the folder is synced: the target holds the old contents or the new ones, whole;
//   - the temporary file is created by open(), before any budget is charged, so an unwritable folder is refused while
//     nothing has been spent;
//   - a path that exists and is not a regular file (a terminal, a pipe, /dev/stdout, /dev/full) cannot be replaced: it
//     is written directly, and every write and the close are checked;
//   - an empty path is standard output, flushed and checked.
//   - a symbolic link is followed: the file it names is replaced and the link stays (resolved_path).
// Every failure is a std::runtime_error naming the path and the system's reason.
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "mpi_job.hpp"

namespace privpost::tools {

/// The one name of the file `path` refers to: symbolic links and relative parts resolved (realpath) where the file
/// exists, else its folder resolved and its own name appended. Two names of one file (a link and its target, a path
/// through a linked folder) give the same result, so a lock or a temporary file derived from it is the same for every
/// name. std::runtime_error naming `flag` for a symbolic link to a missing file (writing through it would create a file
/// somewhere the user did not name) and for a path that cannot be resolved; path unchanged when its folder does not
/// exist (the caller's own open reports that).
inline std::string resolved_path(const std::string& path, const std::string& flag) {
  char buffer[PATH_MAX];
  if (::realpath(path.c_str(), buffer) != nullptr) return buffer;
  const int err = errno;
  struct ::stat link {};
  if (::lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode))
    throw std::runtime_error(flag + " '" + path + "' is a symbolic link to a missing file (" + std::strerror(err) +
                             "); accepted: a link to an existing file, or the file's real path");
  if (err != ENOENT) throw std::runtime_error(flag + " '" + path + "': cannot resolve the path: " + std::strerror(err));
  const auto slash = path.find_last_of('/');
  const std::string folder = slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
  const std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  if (name.empty() || name == "." || name == "..")
    throw std::runtime_error(flag + " '" + path + "' names a folder; accepted: a file name");
  if (::realpath(folder.c_str(), buffer) == nullptr) return path;  // a missing folder: the open that follows says so
  const std::string base(buffer);
  return base == "/" ? "/" + name : base + "/" + name;
}

/// Whether the names a and b (as given) are one file: the same resolved path, or, where both exist, the same device and
/// inode (hard links, bind mounts).
inline bool same_file(const std::string& a, const std::string& b) {
  if (a.empty() || b.empty()) return false;
  struct ::stat sa {
  }, sb{};
  if (::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  try {
    return resolved_path(a, "") == resolved_path(b, "");
  } catch (const std::runtime_error&) {
    return false;
  }
}

/// A file written once, atomically where the file system allows it (see the file comment). open in the constructor,
/// commit() writes; an object destroyed without a successful commit() leaves no temporary file behind.
class output_file {
 public:
  /// Prepares path for writing (empty: standard output); a file it creates gets mode less the user's umask (0644: a
  /// release record is public; the ledger asks for 0600). The temporary file is named path + temp_tag + ".XXXXXX" (the
  /// ledger tags its own, so that it can recognise a killed writer's leftovers). std::runtime_error when it cannot be
  /// written.
  explicit output_file(std::string path, mode_t mode = 0644, const std::string& temp_tag = "") : path_(std::move(path)) {
    if (!output_rank()) path_.clear();  // rank 0 of an MPI job writes; the others' standard output is /dev/null
    if (path_.empty()) return;
    path_ = resolved_path(path_, "--output");  // through a link, the file it names is replaced and the link stays
    struct ::stat st {};
    if (::stat(path_.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
      if (S_ISDIR(st.st_mode)) throw std::runtime_error("--output '" + path_ + "' is a folder; accepted: a file name");
      fd_ = ::open(path_.c_str(), O_WRONLY | O_CLOEXEC);
      if (fd_ < 0) fail("cannot open '" + path_ + "' for writing");
      return;
    }
    std::string pattern = path_ + temp_tag + ".XXXXXX";
    std::vector<char> name(pattern.begin(), pattern.end());
    name.push_back('\0');
    fd_ = ::mkstemp(name.data());
    if (fd_ < 0) fail("cannot create a file beside '" + path_ + "' (the folder must be writable)");
    tmp_.assign(name.data());
    // mkstemp creates 0600: widen it to the requested mode less the user's umask.
    const mode_t mask = ::umask(0);
    ::umask(mask);
    ::fchmod(fd_, mode & ~mask);
  }
  output_file(const output_file&) = delete;
  output_file& operator=(const output_file&) = delete;
  ~output_file() {
    if (fd_ >= 0) ::close(fd_);
    if (!tmp_.empty()) ::unlink(tmp_.c_str());
  }

  /// Writes text and makes it durable; returns only when the whole text is in place.
  void commit(const std::string& text) {
    if (path_.empty()) {
      std::cout << text;
      std::cout.flush();
      if (!std::cout) {
        errno = EIO;
        fail("cannot write the record to standard output");
      }
      return;
    }
    std::size_t done = 0;
    while (done < text.size()) {
      const ssize_t put = ::write(fd_, text.data() + done, text.size() - done);
      if (put < 0) {
        if (errno == EINTR) continue;
        fail("cannot write '" + target() + "'");
      }
      done += static_cast<std::size_t>(put);
    }
    if (tmp_.empty()) {  // a device or pipe: no rename, but the close reports a deferred write error
      const int fd = fd_;
      fd_ = -1;
      if (::close(fd) != 0) fail("cannot close '" + path_ + "'");
      return;
    }
    if (::fsync(fd_) != 0) fail("cannot sync '" + tmp_ + "'");
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) fail("cannot close '" + tmp_ + "'");
    if (::rename(tmp_.c_str(), path_.c_str()) != 0) fail("cannot rename '" + tmp_ + "' to '" + path_ + "'");
    tmp_.clear();
    replaced_ = true;
    const auto slash = path_.find_last_of('/');
    const std::string folder = slash == std::string::npos ? "." : (slash == 0 ? "/" : path_.substr(0, slash));
    const int dir = ::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dir < 0 || ::fsync(dir) != 0) {
      const int err = errno;
      if (dir >= 0) ::close(dir);
      errno = err;
      fail("'" + path_ + "' is written but its folder '" + folder + "' could not be synced");
    }
    ::close(dir);
  }

  const std::string& path() const { return path_; }
  /// Whether commit() has put the new contents in place (true even when only the folder's sync failed after it).
  bool replaced() const { return replaced_; }

 private:
  const std::string& target() const { return tmp_.empty() ? path_ : tmp_; }

  [[noreturn]] void fail(const std::string& what) const { throw std::runtime_error(what + ": " + std::strerror(errno)); }

  std::string path_;
  std::string tmp_;
  int fd_ = -1;
  bool replaced_ = false;
};

}  // namespace privpost::tools
