// The hand-written fused loops of handwritten_fused.h. Built twice with
// different flags; HANDWRITTEN_SUFFIX (_strict or _fastmath) names the copies
// apart. Plain loops on purpose: what the compiler makes of them is the
// baseline.
#include "handwritten_fused.h"

#include <algorithm>
#include <cmath>

#ifndef HANDWRITTEN_SUFFIX
#error "build with -DHANDWRITTEN_SUFFIX=_strict or _fastmath"
#endif
#define WOK_BENCH_JOIN2(a, b) a##b
#define WOK_BENCH_JOIN(a, b) WOK_BENCH_JOIN2(a, b)
#define HANDWRITTEN(name) WOK_BENCH_JOIN(name, HANDWRITTEN_SUFFIX)

namespace wok_bench {

void HANDWRITTEN(p1)(const float* __restrict a, const float* __restrict b, float* __restrict out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = ((a[i] * 2.0f + b[i]) * 0.5f - a[i]) * b[i] + 1.0f;
}

void HANDWRITTEN(p2)(const float* __restrict a, const float* __restrict b, float* __restrict out, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    out[i] = (std::max(a[i] * 1.5f + b[i], 0.0f) - std::exp(-(a[i] * a[i]))) * std::tanh(b[i]);
}

void HANDWRITTEN(p3)(const float* __restrict x, float* __restrict out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    float v = x[i];
    out[i] = 0.5f * v * (1.0f + std::tanh(0.7978845608f * (v + 0.044715f * v * v * v)));
  }
}

void HANDWRITTEN(triad)(const float* __restrict b, const float* __restrict c, float s, float* __restrict out,
                        int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = b[i] + s * c[i];
}

}  // namespace wok_bench
