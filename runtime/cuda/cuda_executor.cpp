#include "wok/runtime/cuda/cuda_executor.h"

#include <map>

#include "wok/runtime/backend.h"
#include "wok/runtime/cuda/cuda_stream.h"
#include "wok/runtime/executor.h"
#include "wok/runtime/op_registry.h"

namespace wok::cuda {

std::vector<StoragePtr> CudaPrecompiledExecutor::run(const Fragment& fragment,
                                                     std::span<const StoragePtr> input_storage) {
  const Device device = fragment.values[fragment.outputs[0]].device;
  set_device(device.index);
  CudaStream& stream = CudaStreamPool::for_device(device.index).next();
  StreamGuard guard(stream);

  std::vector<StoragePtr> storage(fragment.values.size());
  for (size_t i = 0; i < fragment.inputs.size(); ++i) storage[fragment.inputs[i]] = input_storage[i];
  const std::vector<int> last_use = last_uses(fragment);

  // Intermediates that died stay with the run until the stream has run
  // (Note [Stream-ordered reuse]); later nodes of the run may take them
  // over, which is safe in stream order.
  std::map<size_t, std::vector<StoragePtr>> dead;
  auto retire = [&](int v) {
    if (storage[v] && storage[v].use_count() == 1) dead[storage[v]->bytes()].push_back(std::move(storage[v]));
    storage[v].reset();
  };
  try {
    for (size_t n = 0; n < fragment.nodes.size(); ++n) {
      const FragmentNode& node = fragment.nodes[n];
      if (!node.op->def().output_aliases_input)
        for (int v : node.outputs) {
          auto it = dead.find(fragment.values[v].nbytes());
          if (last_use[v] >= static_cast<int>(fragment.nodes.size()) || it == dead.end() || it->second.empty())
            continue;  // outputs get fresh storage: they leave the run
          storage[v] = std::move(it->second.back());
          it->second.pop_back();
        }
      run_node_kernel(node, fragment, storage);
      for (int v : node.inputs)
        if (last_use[v] == static_cast<int>(n)) retire(v);
      for (int v : node.outputs)
        if (last_use[v] < 0) retire(v);
    }
    guard.synchronize();
  } catch (...) {
    try {
      stream.synchronize();  // what was launched must finish before its buffers go back
    } catch (...) {
    }
    throw;
  }
  std::vector<StoragePtr> out;
  out.reserve(fragment.outputs.size());
  for (int v : fragment.outputs) out.push_back(storage[v]);
  return out;
}

CudaPrecompiledExecutor& cuda_precompiled_executor() {
  static CudaPrecompiledExecutor* e = new CudaPrecompiledExecutor();  // leaked: Note [CUDA teardown]
  return *e;
}

}  // namespace wok::cuda
