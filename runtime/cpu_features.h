// What this host's CPU can run, detected once at start-up.
#pragma once

#include <cstdint>
#include <string_view>

namespace wok {

enum class CpuIsa { kBaseline, kAvx2, kAvx512 };

std::string_view cpu_isa_name(CpuIsa isa);

// The widest of baseline x86-64, AVX2+FMA and AVX-512 (F, DQ, BW, VL) that
// the CPU supports. WOK_CPU_ISA=baseline|avx2|avx512 caps it (to test the
// narrower paths on a wider machine).
CpuIsa host_cpu_isa();

// Whether generated AVX-512 code may use AVX512-BF16 (vcvtneps2bf16): the
// CPU has it, host_cpu_isa() is AVX-512, and WOK_CPU_ISA is not set (a cap
// names a base level: avx512 means F, DQ, BW and VL only).
bool host_has_avx512_bf16();

// The variant of the precompiled kernels in use (= host_cpu_isa()).
CpuIsa precompiled_kernel_isa();

// Data cache sizes in bytes, per core for L1 and L2, detected at start-up
// (glibc's sysconf, which reads CPUID); defaults where it cannot tell.
struct CacheSizes {
  int64_t l1d = 32 << 10;
  int64_t l2 = 512 << 10;
  int64_t l3 = 8 << 20;
};
const CacheSizes& host_cache_sizes();

}  // namespace wok
