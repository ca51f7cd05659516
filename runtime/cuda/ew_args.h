// The host side of the loops of templates/wok_elementwise.cuh: EwArgs (the
// device declares the same layout), filled from a kernel's operands, and
// its launch. Used by the precompiled kernels (cuda_kernels.cpp) and the
// formula kernels (cuda_formula_kernel.cpp).
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "wok/runtime/cuda/cuda_driver.h"
#include "wok/runtime/kernel.h"

namespace wok::cuda {

inline constexpr int kMaxRank = 8;
inline constexpr int kEwMaxInputs = 3;

struct EwArgs {
  void* out;
  const void* in[kEwMaxInputs];
  int64_t n;
  int32_t rank;
  int32_t flat;
  int32_t pad[2];
  int64_t shape[kMaxRank];
  int64_t stride[kEwMaxInputs + 1][kMaxRank];
  uint64_t attr[2];
};
static_assert(sizeof(EwArgs) == 392, "EwArgs must match templates/wok_elementwise.cuh");

// n, rank, flat, shape, and the pointers and strides of `ins` broadcast to
// `out`, with dims merged where every operand allows. Throws
// wok::DeviceError naming `op` when more than kMaxRank dims remain.
void fill_layout(EwArgs& a, const Shape& out, std::span<const TensorRef> ins, const std::string& op);

// Launches fn over a.n elements (grid-stride, kThreads per block) on the
// calling thread's current stream of ctx's device; nothing when n is 0.
void launch_ew(const KernelContext& ctx, CUfunction fn, EwArgs& a, const std::string& what);

}  // namespace wok::cuda
