// Deployment bundles: a whole kernel store packed into one file, unpacked on
// the target machine.
//
// Note [Bundle format]
// Little-endian:
//
//   0   8   magic "WOKBUNDL"
//   8   4   format version (kBundleFormatVersion)
//   12  4   0
//   16  8   number of entries
//   ...     per entry: u32 name size, name ("<key>.wok"), u64 size,
//           u64 XXH3-64 of the bytes, the bytes (a whole entry file,
//           Note [Cache entry format], with its own checksums)
//   end-8   XXH3-64 of everything before
//
// Import checks all of it before writing anything (bundle checksum, every
// entry's checksum, that each entry decodes and is named after its own
// signature), stages every entry in the store's tmp/, then renames them
// into place. A damaged bundle changes nothing.
#pragma once

#include <absl/status/statusor.h>

#include <cstdint>
#include <string>

namespace wok::cache {

inline constexpr uint32_t kBundleFormatVersion = 1;

struct BundleReport {
  int64_t entries = 0;             // packed / unpacked
  int64_t bytes = 0;               // bundle file size
  int64_t skipped = 0;             // export: damaged entries left out
  int64_t not_for_this_build = 0;  // import: entries another wok build or CPU will use, this one won't
  std::string str() const;
};

absl::StatusOr<BundleReport> export_bundle(const std::string& store_dir, const std::string& bundle_path);
absl::StatusOr<BundleReport> import_bundle(const std::string& bundle_path, const std::string& store_dir);

}  // namespace wok::cache
