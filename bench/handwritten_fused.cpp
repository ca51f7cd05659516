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

// A row is read from memory once: the later passes over it hit the cache
// (16 KiB for 4096 floats). The exp is the one the compiler picks: libm's
// expf (strict) or glibc's vector expf from libmvec (-ffast-math).
void HANDWRITTEN(softmax_rows)(const float* __restrict x, float* __restrict out, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* o = out + r * cols;
    float m = -INFINITY;
    for (int64_t i = 0; i < cols; ++i) m = std::max(m, xr[i]);
    float s = 0.0f;
    for (int64_t i = 0; i < cols; ++i) {
      o[i] = std::exp(xr[i] - m);
      s += o[i];
    }
    const float inv = 1.0f / s;
    for (int64_t i = 0; i < cols; ++i) o[i] *= inv;
  }
}

void HANDWRITTEN(layer_norm_rows)(const float* __restrict x, const float* __restrict w, const float* __restrict b,
                                  float eps, float* __restrict out, int64_t rows, int64_t cols) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    float* o = out + r * cols;
    float s = 0.0f;
    for (int64_t i = 0; i < cols; ++i) s += xr[i];
    const float mean = s / static_cast<float>(cols);
    float v = 0.0f;
    for (int64_t i = 0; i < cols; ++i) v += (xr[i] - mean) * (xr[i] - mean);
    const float rstd = 1.0f / std::sqrt(v / static_cast<float>(cols) + eps);
    for (int64_t i = 0; i < cols; ++i) o[i] = (xr[i] - mean) * rstd * w[i] + b[i];
  }
}

}  // namespace wok_bench
