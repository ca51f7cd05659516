// The three fused elementwise programs of the JIT benchmarks (issue 3), shared
// by bench/jit_programs.cpp (CPU) and bench/cuda_programs.cpp (GPU).
#pragma once

#include "wok/wok.h"

namespace wok_bench {

// ((a*2 + b)*0.5 - a)*b + 1: arithmetic only, memory bound.
inline wok::Tensor p1(const wok::Tensor& a, const wok::Tensor& b) { return ((a * 2.0f + b) * 0.5f - a) * b + 1.0f; }
// (max(a*1.5 + b, 0) - exp(-(a*a))) * tanh(b): two transcendentals.
inline wok::Tensor p2(const wok::Tensor& a, const wok::Tensor& b) {
  return (wok::maximum(a * 1.5f + b, 0.0f) - wok::exp(-(a * a))) * wok::tanh(b);
}
// tanh-GELU of a (b unused).
inline wok::Tensor p3(const wok::Tensor& a, const wok::Tensor&) { return wok::gelu(a); }

}  // namespace wok_bench
