// The persistent kernel cache, for deployments (docs/deployment.md):
// record a run's fragments with WOK_RECORD=manifest, warm a cache up from
// the manifest, pack the cache into one bundle file and unpack it on the
// target, where WOK_STRICT=1 then makes any compilation an error.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace wok {

struct WarmupResult {
  int64_t fragments = 0;             // manifest records whose kernels were built
  int64_t kernels = 0;               // fused kernels in them
  int64_t compiled = 0;              // ... compiled now
  int64_t loaded = 0;                // ... already in the disk cache
  std::vector<std::string> skipped;  // records that could not be rebuilt, with the reason
};

// Builds every kernel the manifest names into the disk cache, without
// data. Throws wok::Error if the manifest cannot be read.
WarmupResult warmup(const std::string& manifest_path);

struct BundleResult {
  int64_t entries = 0;
  int64_t bytes = 0;  // of the bundle file
};

// Packs every sound entry of the disk cache into one file (written
// atomically). Throws wok::Error if the cache is off or cannot be read.
BundleResult export_cache(const std::string& bundle_path);

// Unpacks a bundle into the disk cache. The bundle is checked whole first:
// a damaged one throws wok::Error and changes nothing.
BundleResult import_cache(const std::string& bundle_path);

// The disk cache's directory ("" when WOK_CACHE_DIR is set empty).
std::string cache_directory();

}  // namespace wok
