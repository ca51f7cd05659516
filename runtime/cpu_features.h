// What this host's CPU can run, detected once at start-up.
#pragma once

#include <string_view>

namespace wok {

enum class CpuIsa { kBaseline, kAvx2, kAvx512 };

std::string_view cpu_isa_name(CpuIsa isa);

// The widest of baseline x86-64, AVX2+FMA and AVX-512 (F, DQ, BW, VL) that
// the CPU supports. WOK_CPU_ISA=baseline|avx2|avx512 caps it (to test the
// narrower paths on a wider machine).
CpuIsa host_cpu_isa();

// The variant of the precompiled kernels in use (= host_cpu_isa()).
CpuIsa precompiled_kernel_isa();

}  // namespace wok
