// Builds every kernel a manifest names, ahead of time and without data:
// each fragment's plan is built, which compiles its kernels through the
// kernel cache and so fills the disk store.
#pragma once

#include <absl/status/statusor.h>

#include <cstdint>
#include <string>
#include <vector>

#include "wok/runtime/cpu_features.h"

namespace wok::jit {

struct WarmupReport {
  int64_t fragments = 0;              // records whose plans were built
  int64_t kernels = 0;                // fused kernels in those plans
  int64_t compiled = 0;               // ... generated now
  int64_t loaded = 0;                 // ... found in the disk store
  std::vector<std::string> problems;  // records skipped, one line each

  std::string str() const;
};

// Fails only if the manifest cannot be read; a bad record is a problem.
absl::StatusOr<WarmupReport> warmup_manifest(const std::string& path, CpuIsa isa);

}  // namespace wok::jit
