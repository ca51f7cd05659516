#include "wok/cache/bundle.h"

#include <unistd.h>
#include <xxhash.h>

#include <cstring>

#include "wok/cache/cpu_feature_mask.h"
#include "wok/cache/disk_store.h"
#include "wok/cache/entry_format.h"
#include "wok/cache/file_util.h"
#include "wok/cache/maintenance.h"

namespace wok::cache {

namespace {

constexpr char kBundleMagic[8] = {'W', 'O', 'K', 'B', 'U', 'N', 'D', 'L'};
constexpr uint64_t kMaxBundleBytes = uint64_t{8} << 30;

template <typename T>
void put(std::string& out, T v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}

// Reads fixed-size fields from the bundle, failing past its end.
class Cursor {
 public:
  explicit Cursor(std::string_view bytes) : bytes_(bytes) {}
  template <typename T>
  bool read(T* v) {
    if (bytes_.size() - pos_ < sizeof(T)) return false;
    std::memcpy(v, bytes_.data() + pos_, sizeof(T));
    pos_ += sizeof(T);
    return true;
  }
  bool take(uint64_t n, std::string_view* out) {
    if (bytes_.size() - pos_ < n) return false;
    *out = bytes_.substr(pos_, n);
    pos_ += n;
    return true;
  }
  bool done() const { return pos_ == bytes_.size(); }

 private:
  std::string_view bytes_;
  size_t pos_ = 0;
};

bool is_entry_name(std::string_view name) {
  std::string_view suffix = kEntrySuffix;
  if (name.size() != 32 + suffix.size() || !name.ends_with(suffix)) return false;
  for (char ch : name.substr(0, 32))
    if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f'))) return false;
  return true;
}

std::string parent_dir(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : path.substr(0, slash);
}

absl::Status bad_bundle(const std::string& path, const std::string& what) {
  return absl::DataLossError(path + " is not a usable bundle: " + what + "; nothing was imported");
}

}  // namespace

std::string BundleReport::str() const {
  std::string s = std::to_string(entries) + " entries, " + std::to_string(bytes) + " bytes";
  if (skipped) s += ", " + std::to_string(skipped) + " damaged entries left out";
  if (not_for_this_build) s += ", " + std::to_string(not_for_this_build) + " for another wok build or CPU";
  return s;
}

absl::StatusOr<BundleReport> export_bundle(const std::string& store_dir, const std::string& bundle_path) {
  absl::StatusOr<std::vector<EntryInfo>> entries = list_entries(store_dir);
  if (!entries.ok()) return entries.status();
  BundleReport report;
  std::string body;
  uint64_t count = 0;
  for (const EntryInfo& e : *entries) {
    absl::StatusOr<std::string> bytes = read_file(e.path, kMaxEntryBytes);
    // Only sound entries travel; an entry for another build still does (the
    // target may be that build).
    if (!bytes.ok() || !decode_entry(*bytes).ok()) {
      ++report.skipped;
      continue;
    }
    std::string name = e.key + kEntrySuffix;
    put<uint32_t>(body, static_cast<uint32_t>(name.size()));
    body += name;
    put<uint64_t>(body, bytes->size());
    put<uint64_t>(body, XXH3_64bits(bytes->data(), bytes->size()));
    body += *bytes;
    ++count;
  }
  std::string out(kBundleMagic, sizeof kBundleMagic);
  put<uint32_t>(out, kBundleFormatVersion);
  put<uint32_t>(out, 0);
  put<uint64_t>(out, count);
  out += body;
  put<uint64_t>(out, XXH3_64bits(out.data(), out.size()));
  if (absl::Status st = write_file_atomic(parent_dir(bundle_path), bundle_path, out); !st.ok()) return st;
  report.entries = static_cast<int64_t>(count);
  report.bytes = static_cast<int64_t>(out.size());
  return report;
}

absl::StatusOr<BundleReport> import_bundle(const std::string& bundle_path, const std::string& store_dir) {
  if (store_dir.empty())
    return absl::FailedPreconditionError("no cache directory to import into (WOK_CACHE_DIR is empty)");
  absl::StatusOr<std::string> file = read_file(bundle_path, kMaxBundleBytes);
  if (!file.ok()) return file.status();
  std::string_view all = *file;
  if (all.size() < 32 || std::memcmp(all.data(), kBundleMagic, sizeof kBundleMagic) != 0)
    return bad_bundle(bundle_path, "wrong magic number");
  uint64_t sum;
  std::memcpy(&sum, all.data() + all.size() - 8, 8);
  if (XXH3_64bits(all.data(), all.size() - 8) != sum) return bad_bundle(bundle_path, "checksum mismatch");
  Cursor in(all.substr(0, all.size() - 8));
  std::string_view magic;
  uint32_t version = 0, reserved = 0;
  uint64_t count = 0;
  in.take(8, &magic);
  if (!in.read(&version) || !in.read(&reserved) || !in.read(&count)) return bad_bundle(bundle_path, "short header");
  if (version != kBundleFormatVersion)
    return bad_bundle(bundle_path, "format version " + std::to_string(version) + ", this wok reads " +
                                       std::to_string(kBundleFormatVersion));
  struct Item {
    std::string name;
    std::string_view bytes;
  };
  std::vector<Item> items;
  BundleReport report;
  uint64_t host = host_cpu_features();
  for (uint64_t i = 0; i < count; ++i) {
    uint32_t name_size = 0;
    uint64_t size = 0, entry_sum = 0;
    std::string_view name, bytes;
    if (!in.read(&name_size) || !in.take(name_size, &name) || !in.read(&size) || !in.read(&entry_sum) ||
        !in.take(size, &bytes))
      return bad_bundle(bundle_path, "entry " + std::to_string(i) + " runs past the end");
    if (!is_entry_name(name)) return bad_bundle(bundle_path, "entry " + std::to_string(i) + " has a bad name");
    if (XXH3_64bits(bytes.data(), bytes.size()) != entry_sum)
      return bad_bundle(bundle_path, std::string(name) + ": checksum mismatch");
    absl::StatusOr<DecodedEntry> e = decode_entry(bytes);
    if (!e.ok()) return bad_bundle(bundle_path, std::string(name) + ": " + std::string(e.status().message()));
    if (key_of(e->header.signature) + kEntrySuffix != name)
      return bad_bundle(bundle_path, std::string(name) + " does not hold the kernel its name says");
    if (!check_current_build(e->header, host).ok()) ++report.not_for_this_build;
    items.push_back({std::string(name), bytes});
  }
  if (!in.done()) return bad_bundle(bundle_path, "trailing bytes after the last entry");

  StoreLayout layout(store_dir);
  for (const std::string* d : {&layout.kernels, &layout.tmp})
    if (absl::Status st = make_directories(*d, 0700); !st.ok()) return st;
  // Stage everything, then publish: a failure while staging leaves the
  // store as it was.
  std::vector<std::string> staged;
  for (const Item& item : items) {
    absl::StatusOr<std::string> tmp = write_temp_file(layout.tmp, item.name, item.bytes);
    if (!tmp.ok()) {
      for (const std::string& t : staged) ::unlink(t.c_str());
      return tmp.status();
    }
    staged.push_back(*tmp);
  }
  for (size_t i = 0; i < items.size(); ++i)
    if (absl::Status st = publish_file(staged[i], layout.kernels + "/" + items[i].name, i + 1 == items.size());
        !st.ok()) {
      for (size_t j = i + 1; j < staged.size(); ++j) ::unlink(staged[j].c_str());
      return st;
    }
  report.entries = static_cast<int64_t>(items.size());
  report.bytes = static_cast<int64_t>(all.size());
  return report;
}

}  // namespace wok::cache
