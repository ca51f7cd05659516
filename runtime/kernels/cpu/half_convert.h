// The bulk half/bfloat16 <-> float loops, one variant per instruction-set
// build of runtime/kernels/cpu/ (half_convert.cpp). wok::half_to_float and
// the other public loops (runtime/half.h) pick the host's variant; tests
// call each variant the host can run.
#pragma once

#include <cstdint>

#include "wok/runtime/cpu_features.h"
#include "wok/runtime/half.h"

namespace wok::cpu {

struct HalfConvertLoops {
  void (*half_to_float)(const half* in, float* out, int64_t n);
  void (*float_to_half)(const float* in, half* out, int64_t n);
  void (*bfloat16_to_float)(const bfloat16* in, float* out, int64_t n);
  void (*float_to_bfloat16)(const float* in, bfloat16* out, int64_t n);
};

// The loops compiled for `isa`. Calling them on a host without that ISA is
// undefined (an illegal instruction); compare with host_cpu_isa() first.
const HalfConvertLoops& half_convert_loops(CpuIsa isa);

// One per build, defined in half_convert.cpp; half_convert_loops chooses.
const HalfConvertLoops& half_convert_loops_baseline();
const HalfConvertLoops& half_convert_loops_avx2();
const HalfConvertLoops& half_convert_loops_avx512();

}  // namespace wok::cpu
