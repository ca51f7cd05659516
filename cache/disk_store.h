// The persistent kernel store: one file per kernel signature, shared by
// every process of the user, safe against crashes and damage.
//
// Note [Disk store layout]
//   <dir>/kernels/<key>.wok   entries (Note [Cache entry format]); <key> is
//                             the hex XXH3-128 of the full signature
//   <dir>/locks/<key>.lock    held (flock) by the one process building <key>
//   <dir>/tmp/                files being written; a crash can leave some,
//                             which no lookup reads and prune/clear remove
//   <dir>/misses/<key>.wok    header-only records of kernels strict mode
//                             refused to build, for `wok-cache explain`
// Last use is the entry's mtime: a hit sets it to now, and eviction
// (WOK_CACHE_MAX_BYTES) removes the oldest first.
//
// Note [One build per key across processes]
// Lookups never lock: an entry appears by rename, complete, or not at all.
// On a miss a process takes the key's lock, looks again (another process
// may have written the entry while it waited), and only then builds and
// writes, and unlocks. Threads of one process never race here: the
// in-memory KernelCache already lets one of them build. A lock held past
// kLockTimeoutMs (a wedged process) is ignored and the kernel built anyway:
// a second writer is harmless, the last rename wins.
//
// Note [Disk writes off the critical path]
// Writing an entry costs an fsync (about 4 ms on an ordinary disk, several
// times a compile; the directory is not synced, see write_file_atomic). So the kernel a miss built
// is returned at once and its entry written by a background thread, which
// also holds the key's lock until the entry is in place: other processes
// still wait for it and load it. flush() waits for pending writes; an atexit
// handler flushes for up to kExitFlushMs, so a normal exit saves everything
// and a crash loses only entries (a later run compiles them again).
//
// Note [Damage is a miss]
// Whatever is wrong with an entry (short, flipped bits, wrong magic or
// version, another generator, CPU features this host lacks, not an entry at
// all) makes the lookup a miss: the reason is counted in stats()
// (corrupt_entries), said once on stderr, and the rebuilt kernel replaces
// the file. A directory that cannot be read or written counts as
// disk_errors; a read-only one only means nothing is written.
#pragma once

#include <absl/functional/function_ref.h>
#include <absl/status/statusor.h>
#include <sys/types.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "wok/cache/entry_format.h"
#include "wok/cache/file_util.h"

namespace wok::cache {

inline constexpr char kEntrySuffix[] = ".wok";
// How long a process waits for another to build the kernel it wants.
inline constexpr int kLockTimeoutMs = 60'000;
// How long exit waits for entries still being written.
inline constexpr int kExitFlushMs = 10'000;

struct StoreLayout {
  std::string root, kernels, locks, tmp, misses;
  explicit StoreLayout(const std::string& dir);
  std::string entry(const std::string& key) const { return kernels + "/" + key + kEntrySuffix; }
  std::string lock(const std::string& key) const { return locks + "/" + key + ".lock"; }
  std::string miss(const std::string& key) const { return misses + "/" + key + kEntrySuffix; }
};

// The file name key of a signature: hex XXH3-128.
std::string key_of(std::string_view signature);

// Removes least recently used entries until the entries total at most
// `max_bytes`, never the one named `keep_key`. Returns how many went.
int evict_least_recent(const StoreLayout& layout, uint64_t max_bytes, const std::string& keep_key);

class DiskStore {
 public:
  static DiskStore& global();

  // The store's root, from cache_config(); "" when it is off.
  std::string directory() const;
  bool enabled() const { return !directory().empty(); }
  // Points the store at `dir` ("" turns it off), for tests and the tool,
  // after pending writes (flush()).
  void set_directory_for_testing(const std::string& dir);
  void set_write_hook_for_testing(WriteHook hook);

  enum class Source { kDisk, kBuilt };
  struct Found {
    std::vector<uint8_t> payload;
    Source source = Source::kBuilt;
  };
  using BuildFn = absl::FunctionRef<absl::StatusOr<std::vector<uint8_t>>()>;

  // The payload stored for `want`, else `build()`'s, which is then stored.
  // Under WOK_STRICT a miss is an error naming the key, the nearest entry's
  // differences and `want.description`, and build() is not called.
  absl::StatusOr<Found> get_or_build(const EntryHeader& want, BuildFn build);

  // The parts of get_or_build. load() counts a hit or a rejected entry,
  // never a miss; store() writes now, on the caller's thread.
  std::optional<std::vector<uint8_t>> load(const EntryHeader& want);
  absl::Status store(const EntryHeader& want, std::span<const uint8_t> payload);

  // Waits until the entries get_or_build handed to the background writer
  // are written (Note [Disk writes off the critical path]); false if
  // `timeout_ms` (< 0: no limit) passed first.
  bool flush(int timeout_ms = -1);

  // "nearest stored entry <key> differs in ..." or why there is none.
  std::string explain_miss(const EntryHeader& want);

 private:
  DiskStore() = default;
  enum class Lookup { kHit, kAbsent, kRejected, kUnreadable };
  // Creates the directories once per root; false if the root is unusable.
  bool prepare(const StoreLayout& layout);
  Lookup lookup(const StoreLayout& layout, const std::string& key, const EntryHeader& want, bool count_rejection,
                std::vector<uint8_t>* payload);
  void warn_once(const std::string& what, const std::string& line);

  absl::Status store_in(const std::string& dir, uint64_t max_bytes, const EntryHeader& want,
                        std::span<const uint8_t> payload);

  struct WriteJob {
    std::string directory;  // as configured when the kernel was built
    uint64_t max_bytes = 0;
    EntryHeader header;
    std::vector<uint8_t> payload;
    std::optional<FileLock> lock;  // released once the entry is in place
  };
  void write_later(WriteJob job);
  void writer_loop();

  mutable std::mutex mu_;
  std::string prepared_root_;  // the root prepare() last ran for
  bool root_usable_ = false;
  std::set<std::string> warned_;  // what was said on stderr already (per root)
  WriteHook write_hook_;

  std::mutex write_mu_;
  std::condition_variable write_cv_;  // a job arrived
  std::condition_variable idle_cv_;   // the queue drained
  std::deque<WriteJob> jobs_;
  bool writing_ = false;
  pid_t writer_pid_ = 0;  // the process the writer thread runs in (fork leaves it behind)
};

}  // namespace wok::cache
