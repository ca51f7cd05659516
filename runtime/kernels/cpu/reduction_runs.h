// The reductions of one contiguous run of elements: independent lanes,
// blocked and cascaded for floating-point sums, and argmax's search;
// separate from the loops over a tensor's layout (reduction_kernels.cpp).
#pragma once

#include "wok/runtime/kernels/cpu/isa.h"

#include <algorithm>
#include <cstdint>

#include "wok/runtime/kernels/cpu/reduction_ops.h"

namespace wok::cpu::WOK_ISA_NS {

// Private to reduction_kernels.cpp (internal linkage, as when these lived
// there): one copy per instruction-set build.
namespace {

// ---- contiguous runs -----------------------------------------------------------------

// Software prefetch ahead of long streaming loops: the hardware prefetcher
// alone leaves DRAM bandwidth unused when a loop has several instructions
// per vector (max/min), and it stops at page boundaries.
constexpr int64_t kPrefetchBytes = 2048;

template <typename In, int64_t kBytes>
inline void prefetch_ahead(const In* p) {
  for (int64_t b = 0; b < kBytes; b += 64) __builtin_prefetch(reinterpret_cast<const char*>(p) + kPrefetchBytes + b);
}

// K independent lanes over x[0, n), n >= K; folded pairwise at the end.
template <class Op, int K>
typename Op::P lane_run(const typename Op::In* __restrict x, int64_t n) {
  using P = typename Op::P;
  P acc[K];
  if constexpr (!Op::kPairwise) {
    for (int k = 0; k < K; ++k) acc[k] = Op::first(x[k], 0);
    constexpr int64_t kBytes = std::max<int64_t>(64, K * sizeof(*x));
    int64_t i = K;
    for (; i + K <= n; i += K) {
      prefetch_ahead<typename Op::In, kBytes>(x + i);
      for (int k = 0; k < K; ++k) acc[k] = Op::step(acc[k], x[i + k], 0);
    }
    for (int k = 0; i + k < n; ++k) acc[k] = Op::step(acc[k], x[i + k], 0);
  } else {
    // Blocks of K * kLaneDepth elements; block results go through a cascade.
    constexpr int64_t B = K * kLaneDepth;
    if (n <= B) {
      for (int k = 0; k < K; ++k) acc[k] = Op::first(x[k], 0);
      int64_t i = K;
      for (; i + K <= n; i += K)
        for (int k = 0; k < K; ++k) acc[k] = Op::step(acc[k], x[i + k], 0);
      for (int k = 0; i + k < n; ++k) acc[k] = Op::step(acc[k], x[i + k], 0);
    } else {
      Cascade<Op> cas(K);
      int64_t i = 0;
      while (i < n) {
        int64_t e = std::min(n, i + B);
        if (e - i >= K) {
          for (int k = 0; k < K; ++k) acc[k] = Op::first(x[i + k], 0);
          i += K;
        } else {
          for (int k = 0; k < K; ++k) acc[k] = P(0);
        }
        for (; i + K <= e; i += K) {
          prefetch_ahead<typename Op::In, std::max<int64_t>(64, K * sizeof(*x))>(x + i);
          for (int k = 0; k < K; ++k) acc[k] = Op::step(acc[k], x[i + k], 0);
        }
        for (int k = 0; i + k < e; ++k) acc[k] = Op::step(acc[k], x[i + k], 0);
        i = e;
        cas.push(acc);
      }
      cas.result(acc);
    }
  }
  for (int w = K / 2; w >= 1; w /= 2)
    for (int k = 0; k < w; ++k) acc[k] = Op::merge(acc[k], acc[k + w]);
  return acc[0];
}

template <class Op>
typename Op::P seq_run(const typename Op::In* x, int64_t n, int64_t idx0) {
  typename Op::P a = Op::first(x[0], idx0);
  for (int64_t i = 1; i < n; ++i) a = Op::step(a, x[i], idx0 + i);
  return a;
}

// Four accumulators in named variables (they stay in registers; a short
// array of lanes gets folded through the stack), n >= 4.
template <class Op>
typename Op::P quad_run(const typename Op::In* __restrict x, int64_t n) {
  typename Op::P a0 = Op::first(x[0], 0), a1 = Op::first(x[1], 0), a2 = Op::first(x[2], 0), a3 = Op::first(x[3], 0);
  int64_t i = 4;
  for (; i + 4 <= n; i += 4) {
    a0 = Op::step(a0, x[i], 0);
    a1 = Op::step(a1, x[i + 1], 0);
    a2 = Op::step(a2, x[i + 2], 0);
    a3 = Op::step(a3, x[i + 3], 0);
  }
  if (i < n) a0 = Op::step(a0, x[i], 0);
  if (i + 1 < n) a1 = Op::step(a1, x[i + 1], 0);
  if (i + 2 < n) a2 = Op::step(a2, x[i + 2], 0);
  return Op::merge(Op::merge(a0, a2), Op::merge(a1, a3));
}

// Lanes: 8 vectors' worth for long runs, one vector's worth for short ones.
template <typename P>
inline constexpr int kWideLanes = std::max(16, 8 * kVecBytes / static_cast<int>(sizeof(P)));
template <typename P>
inline constexpr int kNarrowLanes = kWideLanes<P> / 8;

template <class Op>
typename Op::P lanes_run(const typename Op::In* x, int64_t n, int64_t idx0) {
  using P = typename Op::P;
  if (n >= 4 * kWideLanes<P>) return lane_run<Op, kWideLanes<P>>(x, n);
  if (n >= 2 * kNarrowLanes<P>) return lane_run<Op, kNarrowLanes<P>>(x, n);
  if (n >= 8) return quad_run<Op>(x, n);
  return seq_run<Op>(x, n, idx0);
}

// argmax of x[0, n), n >= 1: the maximum of each block by lanes, then a
// search for the first occurrence in the block that holds it.
template <typename T>
ArgP<T> argmax_run(const T* x, int64_t n, int64_t idx0) {
  using Op = ArgmaxOp<T>;
  constexpr int64_t kBlock = 1024;
  if (n < 32) return seq_run<Op>(x, n, idx0);
  T best = x[0];
  int64_t best_block = -1;
  for (int64_t b = 0; b < n; b += kBlock) {
    T m = lanes_run<MaxMinOp<T, true>>(x + b, std::min(kBlock, n - b), 0);
    if (best_block < 0 || Op::better(m, best)) {
      best = m;
      best_block = b;
    }
    if (is_nan(best)) break;
  }
  int64_t e = std::min(n, best_block + kBlock), i = best_block;
  if (is_nan(best)) {
    while (i < e && !is_nan(x[i])) ++i;
  } else {
    while (i < e && !(x[i] == best)) ++i;
  }
  return {best, idx0 + i};
}

template <class Op>
typename Op::P run(const typename Op::In* x, int64_t n, int64_t idx0) {
  if constexpr (Op::kIndexed) return argmax_run(x, n, idx0);
  else return lanes_run<Op>(x, n, idx0);
}

}  // namespace

}  // namespace wok::cpu::WOK_ISA_NS
