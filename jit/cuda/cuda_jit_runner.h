// The CUDA JIT: plans a fragment with the CPU JIT's passes and lowering
// (jit/plan.h plan_structure), compiles each fused elementwise group with
// NVRTC (jit/cuda/cuda_kernel_cache.h), and replays the plan on pooled CUDA
// streams.
//
// Note [CUDA plan replay]
// A replay allocates the plan's arena and outputs from the device's caching
// allocator and walks the steps in order, one pooled stream per lane of the
// plan (jit/plan_lanes.cpp assign_lanes): a step waits on its cross-lane
// dependencies through events recorded after them, so independent chains
// run concurrently and nothing waits on the host. Steps left to
// precompiled kernels (reductions, movement, matmul) launch on their lane's
// stream too. The run ends by synchronizing its streams, so buffers go
// back to the pool idle (Note [Stream-ordered reuse] in runtime/cuda/
// cuda_allocator.h).
//
// A fragment whose kernels the CUDA renderer does not generate (the CPU
// JIT's row and column kernels, more operands than a launch can pass) runs
// on the precompiled CUDA kernels instead, with a one-time notice; so does
// everything when NVRTC is missing.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "wok/runtime/fragment.h"

namespace wok::jit::cuda {

class CudaJitRunner final : public FragmentRunner {
 public:
  std::string_view name() const override { return "cuda-jit"; }
  std::vector<StoragePtr> run(const Fragment& fragment, std::span<const StoragePtr> input_storage) override;
};

// Installs the CUDA JIT and the CUDA precompiled executor. Nothing is
// loaded until a fragment on a GPU runs.
void install_cuda_runners();

// Plans cached by fragment signature and device; tests clear it.
size_t cuda_plan_cache_size();
void clear_cuda_plan_cache();

// The pending work behind `targets` as a Fragment, built as the evaluator
// builds one but without running or claiming anything (tests, benchmarks,
// inspection). `nodes` keeps the attributes the fragment points to alive.
struct PendingFragment {
  Fragment fragment;
  std::vector<std::shared_ptr<Node>> nodes;
};
PendingFragment pending_fragment(std::span<const TensorImplPtr> targets);

}  // namespace wok::jit::cuda
