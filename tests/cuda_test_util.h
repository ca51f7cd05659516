// Helpers of the CUDA tests: the skip conditions, and the pending graph
// behind tensors as a Fragment (without running it).
#pragma once

#include <gtest/gtest.h>
#include <wok/wok.h>

#include <memory>
#include <vector>

#include "wok/jit/cuda/cuda_jit_runner.h"
#include "wok/jit/plan.h"
#include "wok/runtime/cuda/nvrtc_loader.h"

// NVRTC tests run wherever NVRTC loads; GPU tests only with a device.
#define WOK_SKIP_WITHOUT_NVRTC()                                                              \
  do {                                                                                        \
    if (!wok::nvrtc_available()) GTEST_SKIP() << "NVRTC not available: " << wok::nvrtc_unavailable_reason(); \
  } while (0)

#define WOK_SKIP_WITHOUT_GPU()                                                                \
  do {                                                                                        \
    if (!wok::cuda_available()) GTEST_SKIP() << "no CUDA device: " << wok::cuda_unavailable_reason(); \
  } while (0)

namespace wt {

// The dtypes of `mask`, in kAllDTypes' order.
inline std::vector<wok::DType> dtypes_in(wok::DTypeMask mask) {
  std::vector<wok::DType> out;
  for (wok::DType t : wok::kAllDTypes)
    if (wok::in_mask(mask, t)) out.push_back(t);
  return out;
}

// The dtypes the GPU tests run: the compute dtypes (Note [Compute dtypes]
// in runtime/dtype.h), which every CUDA kernel takes.
inline const std::vector<wok::DType>& cuda_dtypes() {
  static const std::vector<wok::DType> dtypes = dtypes_in(wok::kComputeDTypeMask);
  return dtypes;
}

// The dtypes the CUDA renderers take (Note [Programs in their compute
// dtypes] in runtime/compute_program.h): every dtype.
inline const std::vector<wok::DType>& cuda_rendered_dtypes() {
  static const std::vector<wok::DType> dtypes = dtypes_in(wok::kAllDTypeMask);
  return dtypes;
}

inline wok::jit::cuda::PendingFragment pending_fragment(const std::vector<wok::Tensor>& targets) {
  std::vector<wok::TensorImplPtr> impls;
  for (const wok::Tensor& t : targets) impls.push_back(t.impl());
  return wok::jit::cuda::pending_fragment(impls);
}

// The specs of the kernels of `kind` the JIT plans for `out`.
inline std::vector<wok::jit::FusedKernelSpec> kernel_specs(const wok::Tensor& out, wok::jit::KernelKind kind) {
  wok::jit::cuda::PendingFragment pf = pending_fragment({out});
  std::shared_ptr<wok::jit::Plan> plan = wok::jit::plan_structure(pf.fragment);
  std::vector<wok::jit::FusedKernelSpec> specs;
  for (const wok::jit::PlanStep& st : plan->steps)
    if (st.kind == wok::jit::PlanStep::Kind::kKernel && st.lowered.spec.kind == kind) specs.push_back(st.lowered.spec);
  return specs;
}
inline std::vector<wok::jit::FusedKernelSpec> row_kernel_specs(const wok::Tensor& out) {
  return kernel_specs(out, wok::jit::KernelKind::kRow);
}

}  // namespace wt
