// The precompiled executor: runs a fragment node by node with the kernels
// registered for its device, freeing each intermediate buffer right after
// its last use.
#pragma once

#include "wok/runtime/fragment.h"

namespace wok {

class PrecompiledExecutor final : public FragmentRunner {
 public:
  std::string_view name() const override { return "precompiled"; }
  std::vector<StoragePtr> run(const Fragment& fragment, std::span<const StoragePtr> input_storage) override;
};

// Runs one node's kernel on already-allocated buffers (or aliases input 0
// for ops that declare output_aliases_input). Shared by every executor
// that falls back to precompiled kernels.
void run_node_kernel(const FragmentNode& node, const Fragment& fragment, std::vector<StoragePtr>& storage);

}  // namespace wok
