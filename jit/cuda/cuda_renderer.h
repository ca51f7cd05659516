// Renders a FusedKernelSpec into CUDA C++ source: the fixed skeleton comes
// from templates/elementwise.cu.in (embedded at build time), the renderer
// writes only the parameter list and the per-element code. The program's
// statements come from runtime/cuda/formula_source.h, which the precompiled
// CUDA formula kernels render with too: each scalar op maps to a device
// function of templates/wok_device.cuh through one table (the CUDA columns
// of runtime/scalar_primitives.h), so backend differences are data.
#pragma once

#include <string>
#include <vector>

#include <absl/status/statusor.h>

#include "wok/jit/fused_kernel.h"
#include "wok/runtime/cuda/formula_source.h"

namespace wok::jit::cuda {

// Kernel parameters must fit the launch's parameter space (4 KiB on every
// architecture wok supports); a spec needing more is refused and its
// fragment runs on the precompiled kernels.
inline constexpr size_t kMaxKernelParamBytes = 4096;
// The elementwise template's layout arrays hold this many dims.
inline constexpr int kMaxRenderedRank = 8;
// Each thread of the flat path handles tiles of this many elements.
inline constexpr int kTileElements = 4;
inline constexpr int kBlockSize = 256;

struct RenderedKernel {
  std::string name;    // extern "C" entry point
  std::string source;  // complete translation unit; includes "wok_device.cuh"
  size_t param_bytes = 0;
};

// The CUDA spelling of a dtype, and whether a program renders: the
// runtime's, shared with the precompiled formula kernels.
using wok::cuda::can_render;
using wok::cuda::cuda_type;

// Fails for ops or dtypes without a CUDA rendering, or too many operands.
absl::StatusOr<RenderedKernel> render_cuda(const FusedKernelSpec& spec, const std::string& name);

}  // namespace wok::jit::cuda
