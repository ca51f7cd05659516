// Chooses which compiled variant of the precompiled CPU kernels this host
// runs: the widest instruction set it supports.
#include <cstdlib>
#include <string>

#include "wok/runtime/cpu_features.h"
#include "wok/runtime/op_registry.h"

namespace wok {

namespace cpu {
void register_kernels_baseline(OpRegistry& r);
void register_kernels_avx2(OpRegistry& r);
void register_kernels_avx512(OpRegistry& r);
}  // namespace cpu

void register_builtin_cpu_kernels(OpRegistry& registry) {
  switch (precompiled_kernel_isa()) {
    case CpuIsa::kAvx512: cpu::register_kernels_avx512(registry); break;
    case CpuIsa::kAvx2: cpu::register_kernels_avx2(registry); break;
    case CpuIsa::kBaseline: cpu::register_kernels_baseline(registry); break;
  }
}

}  // namespace wok
