// CPU features as bits, for cache entries: an entry records what its code
// needs, and a host loads it only if it has every one of them.
#pragma once

#include <cstdint>
#include <string>

#include "wok/runtime/cpu_features.h"

namespace wok::cache {

enum CpuFeature : uint64_t {
  kFeatureAvx = 1ull << 0,
  kFeatureAvx2 = 1ull << 1,
  kFeatureFma = 1ull << 2,
  kFeatureF16c = 1ull << 3,
  kFeatureBmi2 = 1ull << 4,
  kFeatureAvx512F = 1ull << 5,
  kFeatureAvx512Dq = 1ull << 6,
  kFeatureAvx512Bw = 1ull << 7,
  kFeatureAvx512Vl = 1ull << 8,
  kFeatureAvx512Bf16 = 1ull << 9,
  // Bits above these name no feature this build knows; a host never has
  // them, so an entry that asks for one is never loaded.
};

// What the CPU has (not capped by WOK_CPU_ISA: this is about what can run).
uint64_t host_cpu_features();

// What the generator's code for `isa` may use.
uint64_t features_required(CpuIsa isa);

// "avx2 fma"; unknown bits as "bit42".
std::string feature_names(uint64_t mask);

}  // namespace wok::cache
