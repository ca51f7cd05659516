// Iteration over a broadcast elementwise operation: the output is
// contiguous, each input is read through broadcast strides. Dimensions that
// are contiguous for every operand are merged first, so the common cases
// (same shapes; a scalar; a row vector) become one long inner loop whose
// input strides are 1 or 0, which the kernels specialise.
#pragma once

#include "wok/runtime/kernels/cpu/isa.h"

#include <algorithm>
#include <array>
#include <cstdint>

#include "wok/runtime/error.h"
#include "wok/runtime/kernel.h"
#include "wok/runtime/shape.h"

namespace wok::cpu {
// Per instruction-set build, like vm:: (see vec_math.h).
inline namespace WOK_ISA_NS {

inline constexpr int kMaxDims = 16;
// Elements per parallel chunk: large enough that a chunk outweighs the cost
// of waking a thread, small enough to split 2^20-element tensors.
inline constexpr int64_t kElementwiseGrain = 32768;

// N operands: index 0 is the output, 1..N-1 the inputs.
template <int N>
struct StridedLayout {
  int ndim = 0;
  int64_t shape[kMaxDims];
  int64_t strides[N][kMaxDims];

  int64_t inner() const { return shape[ndim - 1]; }  // ndim >= 1 (collapse_layout)
  int64_t inner_stride(int k) const { return strides[k][ndim - 1]; }
};

template <int N>
StridedLayout<N> make_layout(const Shape& out, const std::array<const Shape*, N - 1>& inputs) {
  CollapsedLayout c = collapse_layout(out, std::vector<const Shape*>(inputs.begin(), inputs.end()));
  if (c.shape.size() > kMaxDims) throw ShapeError("elementwise operation on more than 16 non-mergeable dims");
  StridedLayout<N> l;
  l.ndim = static_cast<int>(c.shape.size());
  for (int d = 0; d < l.ndim; ++d) {
    l.shape[d] = c.shape[d];
    for (int k = 0; k < N; ++k) l.strides[k][d] = c.strides[k][d];
  }
  return l;
}

// Calls seg(offsets, len) for each run of the flat output range
// [begin, end) that lies within one innermost row; offsets are element
// offsets of every operand at the run's start.
template <int N, typename Seg>
void for_each_run(const StridedLayout<N>& l, int64_t begin, int64_t end, Seg&& seg) {
  if (begin >= end) return;
  int64_t off[N];
  int64_t idx[kMaxDims];
  int64_t rem = begin;
  for (int k = 0; k < N; ++k) off[k] = 0;
  for (int d = l.ndim - 1; d >= 0; --d) {
    idx[d] = rem % l.shape[d];
    rem /= l.shape[d];
    for (int k = 0; k < N; ++k) off[k] += idx[d] * l.strides[k][d];
  }
  const int last = l.ndim - 1;
  int64_t pos = begin;
  while (pos < end) {
    int64_t len = std::min(l.shape[last] - idx[last], end - pos);
    seg(off, len);
    pos += len;
    if (pos >= end) break;
    // Advance to the start of the next row, carrying into outer dims.
    for (int k = 0; k < N; ++k) off[k] += len * l.strides[k][last];
    idx[last] += len;
    for (int d = last; d > 0 && idx[d] == l.shape[d]; --d) {
      for (int k = 0; k < N; ++k) off[k] -= l.shape[d] * l.strides[k][d];
      idx[d] = 0;
      ++idx[d - 1];
      for (int k = 0; k < N; ++k) off[k] += l.strides[k][d - 1];
    }
  }
}

}  // inline namespace WOK_ISA_NS
}  // namespace wok::cpu
