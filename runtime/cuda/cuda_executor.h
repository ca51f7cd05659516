// The precompiled executor on a GPU: runs a fragment node by node with the
// CUDA kernels registered for each op, on one stream from the device's
// pool, and returns once the work has run.
#pragma once

#include "wok/runtime/fragment.h"

namespace wok::cuda {

class CudaPrecompiledExecutor final : public FragmentRunner {
 public:
  std::string_view name() const override { return "cuda-precompiled"; }
  std::vector<StoragePtr> run(const Fragment& fragment, std::span<const StoragePtr> input_storage) override;
};

// The executor behind every CUDA device (never destroyed).
CudaPrecompiledExecutor& cuda_precompiled_executor();

}  // namespace wok::cuda
