// File-system steps the cache is built from, each returning a Status that
// names the path and errno: whole-file reads, crash-safe writes (temporary
// file, fsync, rename), directories and advisory locks.
#pragma once

#include <absl/status/status.h>
#include <absl/status/statusor.h>
#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace wok::cache {

// "open /x/y: Permission denied" as a Status whose code follows errno
// (NotFound for ENOENT, PermissionDenied for EACCES/EPERM/EROFS, ...).
absl::Status errno_status(std::string_view what, const std::string& path, int err);

// The whole file. NotFound if it does not exist; FailedPrecondition if it
// is not a regular file or is larger than `max_bytes`.
absl::StatusOr<std::string> read_file(const std::string& path, uint64_t max_bytes);

// Called at named points of write_file_atomic ("partial": half the bytes
// written; "before-rename"): lets tests kill a writer mid-write.
using WriteHook = std::function<void(std::string_view stage)>;

// The two halves of write_file_atomic, for writers that stage several files
// before publishing any (bundle import): a new fsynced file in `tmp_dir`
// named after `final_name`, and its rename into place (then the directory's
// fsync).
absl::StatusOr<std::string> write_temp_file(const std::string& tmp_dir, const std::string& final_name,
                                            std::string_view bytes, const WriteHook& hook = nullptr);
absl::Status publish_file(const std::string& tmp_path, const std::string& path, bool sync_directory = true);

// Writes `bytes` to a new file in `tmp_dir` (same file system as `path`),
// fsyncs it, renames it over `path` and, with `sync_directory`, fsyncs
// `path`'s directory. Readers see the old file or the new one, never a
// part, even after a crash. The directory's fsync only makes the rename
// itself survive a power cut: a cache entry can do without (lost, it is
// compiled again). The temporary file is removed on failure; a crash may
// leave it behind in `tmp_dir`.
absl::Status write_file_atomic(const std::string& tmp_dir, const std::string& path, std::string_view bytes,
                               const WriteHook& hook = nullptr, bool sync_directory = true);

// mkdir -p; new directories get `mode` (less the umask).
absl::Status make_directories(const std::string& path, mode_t mode);
// rm -rf; NotFound is success.
absl::Status remove_tree(const std::string& path);

struct DirEntry {
  std::string name;
  std::string path;
  bool regular = false;
  uint64_t size = 0;
  int64_t mtime_ns = 0;  // last use, for cache entries (touch_file)
};
// Entries of a directory (no "." or ".."), with lstat facts.
absl::StatusOr<std::vector<DirEntry>> list_directory(const std::string& dir);

// Sets the file's modification time to now.
absl::Status touch_file(const std::string& path);

// An exclusive flock() on a lock file, created if needed; released when
// the object dies (or the process does, however it ends).
class FileLock {
 public:
  // Waits up to `timeout_ms` for the lock. `*waited` tells whether another
  // holder had it first. DeadlineExceeded after the timeout.
  static absl::StatusOr<FileLock> acquire(const std::string& path, int timeout_ms, bool* waited);

  FileLock(FileLock&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  FileLock& operator=(FileLock&& other) noexcept;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  ~FileLock();

 private:
  explicit FileLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace wok::cache
