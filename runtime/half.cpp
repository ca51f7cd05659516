// The public bulk conversions of runtime/half.h: check the count, then run
// the variant of runtime/kernels/cpu/half_convert.cpp this host uses.
#include "wok/runtime/half.h"

#include <string>

#include "wok/runtime/cpu_features.h"
#include "wok/runtime/error.h"
#include "wok/runtime/kernels/cpu/half_convert.h"

namespace wok {

namespace cpu {
const HalfConvertLoops& half_convert_loops(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::kAvx512: return half_convert_loops_avx512();
    case CpuIsa::kAvx2: return half_convert_loops_avx2();
    case CpuIsa::kBaseline: break;
  }
  return half_convert_loops_baseline();
}
}  // namespace cpu

namespace {
// The same variant as the precompiled kernels, chosen once.
const cpu::HalfConvertLoops& host_loops() {
  static const cpu::HalfConvertLoops& loops = cpu::half_convert_loops(precompiled_kernel_isa());
  return loops;
}

void check_count(const char* function, int64_t n) {
  if (n < 0)
    throw ArgumentError(std::string(function) + ": element count must be >= 0, got " + std::to_string(n));
}
}  // namespace

void half_to_float(const half* in, float* out, int64_t n) {
  check_count("half_to_float", n);
  host_loops().half_to_float(in, out, n);
}

void float_to_half(const float* in, half* out, int64_t n) {
  check_count("float_to_half", n);
  host_loops().float_to_half(in, out, n);
}

void bfloat16_to_float(const bfloat16* in, float* out, int64_t n) {
  check_count("bfloat16_to_float", n);
  host_loops().bfloat16_to_float(in, out, n);
}

void float_to_bfloat16(const float* in, bfloat16* out, int64_t n) {
  check_count("float_to_bfloat16", n);
  host_loops().float_to_bfloat16(in, out, n);
}

}  // namespace wok
