// The bytes of one cache entry: a header that says exactly what the payload
// is for, and the payload (machine code).
//
// Note [Cache entry format]
// One file per kernel, little-endian:
//
//   offset  size  field
//   0       8     magic "WOKENTRY"
//   8       4     format version (kEntryFormatVersion)
//   12      4     F: size of the field block
//   16      8     P: payload size
//   24      8     XXH3-64 of the payload
//   32      F     fields, each { u16 tag, u32 size, bytes } (EntryTag)
//   32+F    8     XXH3-64 of bytes [0, 32+F)
//   40+F    P     payload
//
// decode_entry() accepts a file only if all of it checks: magic, version,
// sizes that add up to the file's size exactly (a truncated or extended
// file fails), both checksums. Whether a sound entry may be used here is a
// second question, check_usable(): the same wok version, generator hash,
// compiler and backend, the same ISA and CPU features (all present on this
// host), and the full signature, compared byte for byte. The fields are
// structured (not one blob) so that a miss can name where the nearest
// stored entry differs (differences()).
#pragma once

#include <absl/status/status.h>
#include <absl/status/statusor.h>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace wok::cache {

inline constexpr char kEntryMagic[8] = {'W', 'O', 'K', 'E', 'N', 'T', 'R', 'Y'};
inline constexpr uint32_t kEntryFormatVersion = 1;
inline constexpr size_t kEntryPrefixBytes = 32;
// Larger files are not entries: a kernel is kilobytes.
inline constexpr uint64_t kMaxEntryBytes = uint64_t{64} << 20;

struct EntryHeader {
  uint32_t format_version = kEntryFormatVersion;
  std::string wok_version;
  std::string generator;      // generator_hash() of the build that wrote it
  std::string compiler;       // "asmjit 1.9.0"; NVRTC's version for CUDA
  std::string backend;        // "x86-64"
  std::string isa;            // "avx2", "avx512"; a GPU architecture for CUDA
  uint64_t cpu_features = 0;  // cpu_feature_mask.h bits the code needs
  std::string signature;      // the full canonical signature (its XXH3-128 names the file)
  std::string description;    // readable: the kernel spec
  int64_t created_unix = 0;
  // Named facts for explaining misses and listing: "ops", "dtypes", "rank".
  std::vector<std::pair<std::string, std::string>> details;

  std::string detail(std::string_view name) const;  // "" if absent
};

struct DecodedEntry {
  EntryHeader header;
  std::string_view payload;  // points into the decoded bytes
};

std::string encode_entry(const EntryHeader& header, std::span<const uint8_t> payload);

// DataLossError naming what is wrong (magic, version, truncation, checksum).
absl::StatusOr<DecodedEntry> decode_entry(std::string_view file);

// FailedPreconditionError naming the first field in which `have` does not
// match `want`, or the CPU features `host_features` lacks.
absl::Status check_usable(const EntryHeader& have, const EntryHeader& want, uint64_t host_features);

struct FieldDifference {
  std::string field;  // "isa", "wok version", "dtypes", "ops", ...
  std::string have, want;
};
// The fields in which a stored entry differs from a wanted one; a signature
// difference is named only when nothing more telling differs.
std::vector<FieldDifference> differences(const EntryHeader& have, const EntryHeader& want);
std::string differences_str(const std::vector<FieldDifference>& diffs);

}  // namespace wok::cache
