// Eigen's Tensor module as the reference library of jit_programs and
// norm_programs: P2, P3, softmax and layer_norm written the natural way with
// Eigen (its vectorized exp and tanh), evaluated into preallocated outputs
// over the same input buffers wok uses.
//
// eigen_reference.cpp is compiled twice (bench/CMakeLists.txt), -O3 with
// -mavx2 -mfma -mf16c and with -march=native, each inside its own renamed
// Eigen namespace so the linker cannot merge one build's template code into
// the other. eigen_reference() picks the build that matches the ISA wok
// runs: the AVX2 one under WOK_CPU_ISA=avx2, the native one otherwise.
// Without Eigen (Debian: libeigen3-dev) at configure time it returns
// nullptr and the benchmarks skip their Eigen variants.
#pragma once

#include <cstdint>
#include <string>

#include "wok/runtime/cpu_features.h"

namespace wok_bench {

// One build of the reference. `threads` 1 evaluates on Eigen::DefaultDevice,
// more on an Eigen::ThreadPoolDevice of that many threads (a pool kept for
// the process).
struct EigenReference {
  const char* build;  // the flags it was compiled with
  // (max(a*1.5 + b, 0) - exp(-(a*a))) * tanh(b) over n elements.
  void (*p2)(const float* a, const float* b, float* out, int64_t n, int threads);
  // 0.5*x*(1 + tanh(0.79788456*(x + 0.044715*x^3))) over n elements.
  void (*p3)(const float* x, float* out, int64_t n, int threads);
  // Softmax over each row of row-major [rows, cols].
  void (*softmax)(const float* x, float* out, int64_t rows, int64_t cols, int threads);
  // (x - mean) / sqrt(var + eps) * w + b over each row of [rows, cols].
  void (*layer_norm)(const float* x, const float* w, const float* b, float eps, float* out, int64_t rows,
                     int64_t cols, int threads);
};

#if WOK_BENCH_HAVE_EIGEN
extern const EigenReference eigen_reference_avx2;
extern const EigenReference eigen_reference_native;
#endif

// The build matching wok's ISA (wok::host_cpu_isa()); nullptr without Eigen.
inline const EigenReference* eigen_reference() {
#if WOK_BENCH_HAVE_EIGEN
  return wok::host_cpu_isa() == wok::CpuIsa::kAvx2 ? &eigen_reference_avx2 : &eigen_reference_native;
#else
  return nullptr;
#endif
}

// One line for the tables: which build ran, and why; or why none did.
inline std::string eigen_reference_note() {
  const EigenReference* e = eigen_reference();
  if (!e)
    return "Eigen reference: not built (Eigen 3.3+ not found at configure time; Debian: libeigen3-dev), "
           "its variants are skipped";
  return std::string("Eigen reference: the ") + e->build + " build (wok's CPU ISA: " +
         std::string(wok::cpu_isa_name(wok::host_cpu_isa())) + ")";
}

}  // namespace wok_bench
