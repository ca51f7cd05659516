#include "wok/cache/maintenance.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>

#include "wok/cache/build_info.h"
#include "wok/cache/cpu_feature_mask.h"
#include "wok/cache/disk_store.h"
#include "wok/cache/file_util.h"
#include "wok/runtime/signature.h"

namespace wok::cache {

namespace {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string key_of_name(const std::string& name) {
  return name.substr(0, name.size() - std::string_view(kEntrySuffix).size());
}

EntryInfo inspect(const DirEntry& f, uint64_t host) {
  EntryInfo e;
  e.key = key_of_name(f.name);
  e.path = f.path;
  e.bytes = f.size;
  e.last_use_ns = f.mtime_ns;
  absl::StatusOr<std::string> bytes = read_file(f.path, kMaxEntryBytes);
  if (!bytes.ok()) {
    e.status = absl::DataLossError(bytes.status().message());
    return e;
  }
  absl::StatusOr<DecodedEntry> d = decode_entry(*bytes);
  if (!d.ok()) {
    e.status = d.status();
    return e;
  }
  e.header = d->header;
  if (key_of(d->header.signature) != e.key)
    e.status = absl::DataLossError("holds the kernel of another key (" + key_of(d->header.signature) + ")");
  else
    e.status = check_current_build(d->header, host);
  return e;
}

absl::StatusOr<std::vector<DirEntry>> files_in(const std::string& dir) {
  absl::StatusOr<std::vector<DirEntry>> files = list_directory(dir);
  if (!files.ok() && absl::IsNotFound(files.status())) return std::vector<DirEntry>{};
  return files;
}

}  // namespace

absl::Status check_current_build(const EntryHeader& h, uint64_t host_features) {
  EntryHeader want;
  want.wok_version = wok_version();
  want.generator = generator_hash();
  want.compiler = h.backend == "x86-64" ? std::string(x86_compiler_id()) : h.compiler;
  want.backend = h.backend;
  want.isa = h.isa;  // any ISA this host can run
  want.cpu_features = h.cpu_features;
  want.signature = h.signature;
  return check_usable(h, want, host_features);
}

absl::StatusOr<std::vector<EntryInfo>> list_entries(const std::string& dir) {
  StoreLayout layout(dir);
  absl::StatusOr<std::vector<DirEntry>> files = list_directory(layout.kernels);
  if (!files.ok()) return files.status();
  std::vector<EntryInfo> out;
  uint64_t host = host_cpu_features();
  for (const DirEntry& f : *files) {
    if (f.name.find(".tmp") != std::string::npos) continue;
    EntryInfo e = f.regular && f.name.ends_with(kEntrySuffix)
                      ? inspect(f, host)
                      : EntryInfo{f.name,     f.path,       f.size,
                                  f.mtime_ns, std::nullopt, absl::DataLossError("not a cache entry file")};
    out.push_back(std::move(e));
  }
  std::sort(out.begin(), out.end(),
            [](const EntryInfo& a, const EntryInfo& b) { return a.last_use_ns > b.last_use_ns; });
  return out;
}

std::string StoreSummary::str() const {
  auto ago = [](int64_t ns) {
    if (ns == 0) return std::string("-");
    int64_t s = (now_ns() - ns) / 1'000'000'000;
    if (s < 120) return std::to_string(s) + " s ago";
    if (s < 7200) return std::to_string(s / 60) + " min ago";
    if (s < 172800) return std::to_string(s / 3600) + " h ago";
    return std::to_string(s / 86400) + " days ago";
  };
  return "entries            " + std::to_string(entries) + " (" + std::to_string(bytes) + " bytes)\n" +
         "usable here        " + std::to_string(usable) + "\n" + "other build or CPU " + std::to_string(other_build) +
         "\n" + "damaged            " + std::to_string(damaged) + "\n" + "temporary files    " +
         std::to_string(temp_files) + "\n" + "lock files         " + std::to_string(lock_files) + "\n" +
         "recorded misses    " + std::to_string(miss_records) + "\n" + "last use           newest " +
         ago(newest_use_ns) + ", oldest " + ago(oldest_use_ns) + "\n";
}

absl::StatusOr<StoreSummary> summarize_store(const std::string& dir) {
  absl::StatusOr<std::vector<EntryInfo>> entries = list_entries(dir);
  if (!entries.ok()) return entries.status();
  StoreSummary s;
  for (const EntryInfo& e : *entries) {
    ++s.entries;
    s.bytes += static_cast<int64_t>(e.bytes);
    if (e.status.ok())
      ++s.usable;
    else if (absl::IsFailedPrecondition(e.status))
      ++s.other_build;
    else
      ++s.damaged;
    if (s.newest_use_ns == 0 || e.last_use_ns > s.newest_use_ns) s.newest_use_ns = e.last_use_ns;
    if (s.oldest_use_ns == 0 || e.last_use_ns < s.oldest_use_ns) s.oldest_use_ns = e.last_use_ns;
  }
  StoreLayout layout(dir);
  for (auto [path, count] : {std::pair{layout.tmp, &s.temp_files}, std::pair{layout.locks, &s.lock_files},
                             std::pair{layout.misses, &s.miss_records}}) {
    absl::StatusOr<std::vector<DirEntry>> files = files_in(path);
    if (files.ok()) *count = static_cast<int64_t>(files->size());
  }
  return s;
}

absl::StatusOr<VerifyReport> verify_store(const std::string& dir, bool remove_damaged) {
  absl::StatusOr<std::vector<EntryInfo>> entries = list_entries(dir);
  if (!entries.ok()) return entries.status();
  VerifyReport r;
  for (const EntryInfo& e : *entries) {
    ++r.checked;
    if (e.status.ok()) {
      ++r.sound;
    } else if (absl::IsFailedPrecondition(e.status)) {
      ++r.other_build;
    } else {
      ++r.damaged;
      r.problems.push_back(e.key + ": " + std::string(e.status.message()));
      if (remove_damaged && remove_tree(e.path).ok()) ++r.removed;
    }
  }
  return r;
}

absl::StatusOr<PruneReport> prune_store(const std::string& dir, uint64_t max_bytes) {
  StoreLayout layout(dir);
  absl::StatusOr<std::vector<EntryInfo>> entries = list_entries(dir);
  if (!entries.ok()) return entries.status();
  PruneReport r;
  for (const EntryInfo& e : *entries) {
    r.bytes_before += e.bytes;
    if (!e.status.ok() && !absl::IsFailedPrecondition(e.status) && remove_tree(e.path).ok()) ++r.leftovers_removed;
  }
  int64_t cutoff = now_ns() - kLeftoverAgeSeconds * 1'000'000'000;
  for (const std::string* d : {&layout.tmp, &layout.locks}) {
    absl::StatusOr<std::vector<DirEntry>> files = files_in(*d);
    if (!files.ok()) continue;
    // Young files may belong to a writer at work; a lock file removed under
    // a waiting process costs at most one duplicate compile.
    for (const DirEntry& f : *files)
      if (f.mtime_ns < cutoff && ::unlink(f.path.c_str()) == 0) ++r.leftovers_removed;
  }
  if (max_bytes > 0) r.evicted = evict_least_recent(layout, max_bytes, "");
  absl::StatusOr<std::vector<EntryInfo>> after = list_entries(dir);
  if (after.ok())
    for (const EntryInfo& e : *after) r.bytes_after += e.bytes;
  return r;
}

absl::Status clear_store(const std::string& dir) {
  StoreLayout layout(dir);
  for (const std::string* d : {&layout.kernels, &layout.locks, &layout.tmp, &layout.misses}) {
    absl::StatusOr<std::vector<DirEntry>> files = files_in(*d);
    if (!files.ok()) return files.status();
    for (const DirEntry& f : *files)
      if (absl::Status st = remove_tree(f.path); !st.ok()) return st;
  }
  return absl::OkStatus();
}

std::string nearest_entry(const std::string& dir, const EntryHeader& want, const std::string& exclude_key) {
  absl::StatusOr<std::vector<EntryInfo>> entries = list_entries(dir);
  if (!entries.ok()) return "cannot list the cache (" + std::string(entries.status().message()) + ")";
  const EntryInfo* best = nullptr;
  std::vector<FieldDifference> best_diff;
  for (const EntryInfo& e : *entries) {
    if (!e.header || e.key == exclude_key) continue;
    std::vector<FieldDifference> d = differences(*e.header, want);
    if (!best || d.size() < best_diff.size()) {
      best = &e;
      best_diff = std::move(d);
    }
  }
  if (!best) return "the cache holds no other entry";
  return "nearest stored entry " + best->key + " differs in " + differences_str(best_diff);
}

absl::StatusOr<std::string> explain_key(const std::string& dir, const std::string& key) {
  StoreLayout layout(dir);
  std::string what = "entry";
  absl::StatusOr<std::string> bytes = read_file(layout.entry(key), kMaxEntryBytes);
  if (absl::IsNotFound(bytes.status())) {
    what = "recorded miss (strict mode refused to compile it)";
    bytes = read_file(layout.miss(key), kMaxEntryBytes);
  }
  if (absl::IsNotFound(bytes.status()))
    return absl::NotFoundError("no entry and no recorded miss with key " + key + " in " + dir);
  if (!bytes.ok()) return bytes.status();
  absl::StatusOr<DecodedEntry> d = decode_entry(*bytes);
  if (!d.ok()) return "key " + key + ": the " + what + " is damaged: " + std::string(d.status().message()) + "\n";
  const EntryHeader& h = d->header;
  std::string out = "key " + key + ": " + what + "\n";
  out += "  backend " + h.backend + ", isa " + h.isa + " (" + feature_names(h.cpu_features) + "), wok " +
         h.wok_version + ", generator " + h.generator + ", " + h.compiler + "\n";
  for (const auto& [name, value] : h.details) out += "  " + name + ": " + value + "\n";
  if (what == "entry") {
    absl::Status usable = check_current_build(h, host_cpu_features());
    out += usable.ok() ? "  this build on this host would load it\n"
                       : "  this build on this host would not load it: " + std::string(usable.message()) + "\n";
  }
  out += "  " + nearest_entry(dir, h, key) + "\n";
  return out;
}

}  // namespace wok::cache
