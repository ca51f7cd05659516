#include "wok/cache/disk_store.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <thread>

#include "wok/cache/cache_config.h"
#include "wok/cache/cpu_feature_mask.h"
#include "wok/cache/maintenance.h"
#include "wok/runtime/signature.h"
#include "wok/runtime/stats.h"

namespace wok::cache {

StoreLayout::StoreLayout(const std::string& dir)
    : root(dir), kernels(dir + "/kernels"), locks(dir + "/locks"), tmp(dir + "/tmp"), misses(dir + "/misses") {}

std::string key_of(std::string_view signature) { return hash128(signature).hex(); }

DiskStore& DiskStore::global() {
  static DiskStore* store = new DiskStore();  // leaked, like the kernel cache it serves
  return *store;
}

std::string DiskStore::directory() const { return cache_config().directory; }

void DiskStore::set_directory_for_testing(const std::string& dir) {
  flush();  // entries on their way to the old directory land there first
  CacheConfig c = cache_config();
  c.directory = dir;
  set_cache_config(c);
  std::lock_guard lock(mu_);
  prepared_root_.clear();
  warned_.clear();
}

void DiskStore::set_write_hook_for_testing(WriteHook hook) {
  std::lock_guard lock(mu_);
  write_hook_ = std::move(hook);
}

void DiskStore::warn_once(const std::string& what, const std::string& line) {
  {
    std::lock_guard lock(mu_);
    if (!warned_.insert(what).second) return;
  }
  warn(line);
}

bool DiskStore::prepare(const StoreLayout& layout) {
  {
    std::lock_guard lock(mu_);
    if (prepared_root_ == layout.root) return root_usable_;
  }
  // Private to the user: kernels are code this process will run.
  absl::Status st = make_directories(layout.root, 0700);
  for (const std::string* sub : {&layout.kernels, &layout.locks, &layout.tmp, &layout.misses})
    if (st.ok()) st = make_directories(*sub, 0700);
  struct stat s;
  bool usable = ::stat(layout.kernels.c_str(), &s) == 0 && S_ISDIR(s.st_mode);
  if (!st.ok()) {
    detail::counters().disk_errors.fetch_add(1, std::memory_order_relaxed);
    warn_once("prepare", "cannot set up " + layout.root + " (" + std::string(st.message()) + "); " +
                             (usable ? "reading what is there, saving nothing" : "compiling without a disk cache"));
  }
  std::lock_guard lock(mu_);
  if (prepared_root_ != layout.root) warned_.clear();
  prepared_root_ = layout.root;
  root_usable_ = usable;
  return usable;
}

DiskStore::Lookup DiskStore::lookup(const StoreLayout& layout, const std::string& key, const EntryHeader& want,
                                    bool count_rejection, std::vector<uint8_t>* payload) {
  auto& counters = detail::counters();
  std::string path = layout.entry(key);
  absl::StatusOr<std::string> file = read_file(path, kMaxEntryBytes);
  auto reject = [&](const std::string& why) {
    if (count_rejection) {
      counters.corrupt_entries.fetch_add(1, std::memory_order_relaxed);
      warn_once("entry " + path, "ignoring " + path + ": " + why + "; rebuilding the kernel");
    }
    return Lookup::kRejected;
  };
  if (!file.ok()) {
    if (absl::IsNotFound(file.status())) return Lookup::kAbsent;
    if (absl::IsPermissionDenied(file.status())) {
      counters.disk_errors.fetch_add(1, std::memory_order_relaxed);
      warn_once("read",
                "cannot read the cache (" + std::string(file.status().message()) + "); compiling kernels instead");
      return Lookup::kUnreadable;
    }
    return reject("not a cache entry (" + std::string(file.status().message()) + ")");
  }
  absl::StatusOr<DecodedEntry> entry = decode_entry(*file);
  if (!entry.ok()) return reject(std::string(entry.status().message()));
  if (absl::Status st = check_usable(entry->header, want, host_cpu_features()); !st.ok())
    return reject(std::string(st.message()));
  payload->assign(entry->payload.begin(), entry->payload.end());
  (void)touch_file(path);  // last use, for eviction; a read-only store keeps the old time
  counters.disk_hits.fetch_add(1, std::memory_order_relaxed);
  log_event("hit " + key + " (" + want.detail("ops") + ")");
  return Lookup::kHit;
}

std::optional<std::vector<uint8_t>> DiskStore::load(const EntryHeader& want) {
  std::string dir = directory();
  if (dir.empty()) return std::nullopt;
  StoreLayout layout(dir);
  if (!prepare(layout)) return std::nullopt;
  std::vector<uint8_t> payload;
  if (lookup(layout, key_of(want.signature), want, true, &payload) != Lookup::kHit) return std::nullopt;
  return payload;
}

absl::StatusOr<DiskStore::Found> DiskStore::get_or_build(const EntryHeader& want, BuildFn build) {
  auto& counters = detail::counters();
  CacheConfig config = cache_config();
  std::string key = key_of(want.signature);
  auto strict_refusal = [&](const std::string& where) {
    return absl::FailedPreconditionError("WOK_STRICT=1: kernel " + key + " is not in " + where +
                                         " and compiling is disabled\n" + where + ": " + explain_miss(want) +
                                         "\nkernel signature:\n" + want.description);
  };
  Found found;
  if (config.directory.empty()) {
    if (config.strict) return strict_refusal("the kernel cache (WOK_CACHE_DIR is empty)");
    absl::StatusOr<std::vector<uint8_t>> built = build();
    if (!built.ok()) return built.status();
    found.payload = std::move(*built);
    return found;
  }
  StoreLayout layout(config.directory);
  bool usable = prepare(layout);
  Lookup first = usable ? lookup(layout, key, want, true, &found.payload) : Lookup::kUnreadable;
  if (first == Lookup::kHit) {
    found.source = Source::kDisk;
    return found;
  }
  // Note [One build per key across processes]
  std::optional<FileLock> held;
  if (first != Lookup::kUnreadable) {
    bool waited = false;
    absl::StatusOr<FileLock> lock = FileLock::acquire(layout.lock(key), kLockTimeoutMs, &waited);
    if (lock.ok()) {
      held.emplace(std::move(*lock));
    } else if (absl::IsDeadlineExceeded(lock.status())) {
      warn("another process held the lock on " + key + " too long; building it here");
    }  // otherwise a read-only store: build without a lock, write nothing
    if (waited) {
      counters.disk_lock_waits.fetch_add(1, std::memory_order_relaxed);
      log_event("waited for another process building " + key);
    }
    if (held && lookup(layout, key, want, first != Lookup::kRejected, &found.payload) == Lookup::kHit) {
      found.source = Source::kDisk;
      return found;
    }
  }
  counters.disk_misses.fetch_add(1, std::memory_order_relaxed);
  if (config.strict) {
    EntryHeader miss = want;
    miss.created_unix = static_cast<int64_t>(std::time(nullptr));
    (void)write_file_atomic(layout.tmp, layout.miss(key), encode_entry(miss, {}));
    return strict_refusal(config.directory);
  }
  if (log_enabled("cache")) log_event("miss " + key + " (" + want.detail("ops") + "); " + explain_miss(want));
  absl::StatusOr<std::vector<uint8_t>> built = build();
  if (!built.ok()) return built.status();
  found.payload = std::move(*built);
  if (usable) write_later({config.directory, config.max_bytes, want, found.payload, std::move(held)});
  return found;
}

void DiskStore::write_later(WriteJob job) {
  std::lock_guard lock(write_mu_);
  if (writer_pid_ != ::getpid()) {
    static std::once_flag registered;
    std::call_once(registered, [] { std::atexit([] { DiskStore::global().flush(kExitFlushMs); }); });
    writer_pid_ = ::getpid();
    std::thread([this] { writer_loop(); }).detach();  // lives as long as the process
  }
  jobs_.push_back(std::move(job));
  write_cv_.notify_one();
}

void DiskStore::writer_loop() {
  std::unique_lock lock(write_mu_);
  while (true) {
    write_cv_.wait(lock, [this] { return !jobs_.empty(); });
    WriteJob job = std::move(jobs_.front());
    jobs_.pop_front();
    writing_ = true;
    lock.unlock();
    (void)store_in(job.directory, job.max_bytes, job.header, job.payload);
    job.lock.reset();  // other processes waiting for this key may load it now
    lock.lock();
    writing_ = false;
    if (jobs_.empty()) idle_cv_.notify_all();
  }
}

bool DiskStore::flush(int timeout_ms) {
  std::unique_lock lock(write_mu_);
  auto idle = [this] { return jobs_.empty() && !writing_; };
  if (writer_pid_ != ::getpid()) return idle();  // jobs queued before a fork have no writer here
  if (timeout_ms < 0) {
    idle_cv_.wait(lock, idle);
    return true;
  }
  return idle_cv_.wait_for(lock, std::chrono::milliseconds(timeout_ms), idle);
}

absl::Status DiskStore::store(const EntryHeader& want, std::span<const uint8_t> payload) {
  CacheConfig config = cache_config();
  return store_in(config.directory, config.max_bytes, want, payload);
}

absl::Status DiskStore::store_in(const std::string& dir, uint64_t max_bytes, const EntryHeader& want,
                                 std::span<const uint8_t> payload) {
  if (dir.empty()) return absl::OkStatus();
  StoreLayout layout(dir);
  if (!prepare(layout)) return absl::FailedPreconditionError("cache directory " + layout.root + " is unusable");
  auto& counters = detail::counters();
  EntryHeader header = want;
  header.created_unix = static_cast<int64_t>(std::time(nullptr));
  std::string key = key_of(want.signature);
  WriteHook hook;
  {
    std::lock_guard lock(mu_);
    hook = write_hook_;
  }
  absl::Status st =
      write_file_atomic(layout.tmp, layout.entry(key), encode_entry(header, payload), hook, /*sync_directory=*/false);
  if (!st.ok()) {
    counters.disk_errors.fetch_add(1, std::memory_order_relaxed);
    warn_once("write", "cannot save kernels in " + layout.root + " (" + std::string(st.message()) +
                           "); they will be compiled again next time");
    return st;
  }
  counters.disk_writes.fetch_add(1, std::memory_order_relaxed);
  log_event("wrote " + key + " (" + std::to_string(payload.size()) + " bytes of code)");
  if (max_bytes > 0) evict_least_recent(layout, max_bytes, key);
  return absl::OkStatus();
}

int evict_least_recent(const StoreLayout& layout, uint64_t max_bytes, const std::string& keep_key) {
  absl::StatusOr<std::vector<DirEntry>> files = list_directory(layout.kernels);
  if (!files.ok()) return 0;
  std::vector<DirEntry> entries;
  uint64_t total = 0;
  for (DirEntry& f : *files)
    if (f.regular && f.name.ends_with(kEntrySuffix)) {
      total += f.size;
      entries.push_back(std::move(f));
    }
  if (total <= max_bytes) return 0;
  std::sort(entries.begin(), entries.end(),
            [](const DirEntry& a, const DirEntry& b) { return a.mtime_ns < b.mtime_ns; });
  int removed = 0;
  std::string keep_name = keep_key.empty() ? "" : keep_key + kEntrySuffix;
  for (const DirEntry& e : entries) {
    if (total <= max_bytes) break;
    if (e.name == keep_name) continue;
    // Another process may have removed it first; either way it is gone.
    if (::unlink(e.path.c_str()) == 0) {
      ++removed;
      log_event("evicted " + e.name + " (" + std::to_string(e.size) + " bytes)");
    }
    total -= e.size;
  }
  detail::counters().disk_evictions.fetch_add(removed, std::memory_order_relaxed);
  return removed;
}

std::string DiskStore::explain_miss(const EntryHeader& want) {
  std::string dir = directory();
  if (dir.empty()) return "no disk cache";
  return nearest_entry(dir, want, "");
}

}  // namespace wok::cache
