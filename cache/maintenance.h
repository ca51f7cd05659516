// Looking after a store as a whole: listing, verifying, pruning, clearing
// and explaining misses. What the wok-cache tool runs.
#pragma once

#include <absl/status/statusor.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "wok/cache/entry_format.h"

namespace wok::cache {

struct EntryInfo {
  std::string key, path;
  uint64_t bytes = 0;
  int64_t last_use_ns = 0;            // the file's mtime (Note [Disk store layout])
  std::optional<EntryHeader> header;  // when the file decodes
  // OK: sound, and usable by this build on this host. DataLoss: damaged.
  // FailedPrecondition: sound, for another wok build or CPU.
  absl::Status status;
};

// Every file in <dir>/kernels/, newest use first. NotFound if there is no store.
absl::StatusOr<std::vector<EntryInfo>> list_entries(const std::string& dir);

// Whether this build, on a host with `host_features`, would load `h`.
absl::Status check_current_build(const EntryHeader& h, uint64_t host_features);

struct StoreSummary {
  int64_t entries = 0, bytes = 0;
  int64_t usable = 0, damaged = 0, other_build = 0;
  int64_t temp_files = 0, lock_files = 0, miss_records = 0;
  int64_t oldest_use_ns = 0, newest_use_ns = 0;
  std::string str() const;
};
absl::StatusOr<StoreSummary> summarize_store(const std::string& dir);

struct VerifyReport {
  int64_t checked = 0, sound = 0, damaged = 0, other_build = 0, removed = 0;
  std::vector<std::string> problems;  // one line per damaged entry
  bool ok() const { return damaged == 0; }
};
// Reads and checks every entry; with `remove_damaged`, deletes what fails.
absl::StatusOr<VerifyReport> verify_store(const std::string& dir, bool remove_damaged);

struct PruneReport {
  int64_t evicted = 0, leftovers_removed = 0;
  uint64_t bytes_before = 0, bytes_after = 0;
};
// Evicts least recently used entries down to `max_bytes` (0: keep all) and
// removes what crashed writers and old builds left: temporary files and
// lock files older than kLeftoverAgeSeconds, damaged entries.
absl::StatusOr<PruneReport> prune_store(const std::string& dir, uint64_t max_bytes);
inline constexpr int64_t kLeftoverAgeSeconds = 600;

// Removes every entry, lock, temporary file and miss record.
absl::Status clear_store(const std::string& dir);

// "nearest stored entry <key> differs in ..." for a wanted header, skipping
// `exclude_key`; or why there is none.
std::string nearest_entry(const std::string& dir, const EntryHeader& want, const std::string& exclude_key);

// What `wok-cache explain KEY` prints: the entry (or recorded strict-mode
// miss) named KEY, whether this build would load it, and the nearest other
// entry with the fields in which it differs. NotFound for an unknown key.
absl::StatusOr<std::string> explain_key(const std::string& dir, const std::string& key);

}  // namespace wok::cache
