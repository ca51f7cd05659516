// Hand-written fused loops, the baselines of bench/jit_programs.cpp.
// handwritten_fused.cpp is compiled twice: `_strict` with -O3 -march=native,
// `_fastmath` with -ffast-math added (which lets GCC call glibc's libmvec
// for exp and tanh). Each function covers elements [0, n); callers split
// the range over threads.
#pragma once

#include <cstdint>

namespace wok_bench {

#define WOK_BENCH_DECLARE_HANDWRITTEN(suffix)                             \
  /* ((a*2 + b)*0.5 - a)*b + 1 */                                         \
  void p1##suffix(const float* a, const float* b, float* out, int64_t n); \
  /* (max(a*1.5 + b, 0) - exp(-(a*a))) * tanh(b) */                       \
  void p2##suffix(const float* a, const float* b, float* out, int64_t n); \
  /* 0.5*x*(1 + tanh(0.7978845608*(x + 0.044715*x^3))) */                 \
  void p3##suffix(const float* x, float* out, int64_t n);                 \
  /* STREAM triad: out = b + s*c */                                       \
  void triad##suffix(const float* b, const float* c, float s, float* out, int64_t n); \
  /* softmax over each row of [rows, cols]: max, sum of exp, scale */     \
  void softmax_rows##suffix(const float* x, float* out, int64_t rows, int64_t cols); \
  /* layer_norm over each row: (x - mean) / sqrt(var + eps) * w + b */    \
  void layer_norm_rows##suffix(const float* x, const float* w, const float* b, float eps, float* out, \
                               int64_t rows, int64_t cols);
WOK_BENCH_DECLARE_HANDWRITTEN(_strict)
WOK_BENCH_DECLARE_HANDWRITTEN(_fastmath)
#undef WOK_BENCH_DECLARE_HANDWRITTEN

}  // namespace wok_bench
