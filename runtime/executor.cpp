#include "wok/runtime/executor.h"

#include "wok/runtime/error.h"
#include "wok/runtime/kernel.h"
#include "wok/runtime/kernel_verify.h"
#include "wok/runtime/observe/events.h"
#include "wok/runtime/op_registry.h"
#include "wok/runtime/stats.h"

namespace wok {

void run_node_kernel(const FragmentNode& node, const Fragment& fragment, std::vector<StoragePtr>& storage) {
  const RegisteredOp& op = *node.op;
  if (op.def().output_aliases_input) {
    storage[node.outputs[0]] = storage[node.inputs[0]];
    return;
  }
  Device device = fragment.values[node.outputs[0]].device;
  const KernelFn& kernel = op.kernel_or_throw(device);
  // Small fixed buffers: nodes rarely have more than a few operands.
  std::vector<TensorRef> refs;
  refs.reserve(node.inputs.size() + node.outputs.size());
  for (int v : node.inputs) refs.push_back({storage[v]->data(), &fragment.values[v].shape, fragment.values[v].dtype});
  for (int v : node.outputs) {
    if (!storage[v]) storage[v] = Storage::allocate(fragment.values[v].nbytes(), device);
    refs.push_back({storage[v]->data(), &fragment.values[v].shape, fragment.values[v].dtype});
  }
  std::span<const TensorRef> all(refs);
  KernelContext ctx{op, *node.attrs, all.first(node.inputs.size()), all.subspan(node.inputs.size()), device};
  // Note [Verifying kernel outputs] in runtime/kernel_verify.h.
  const bool verify = device.is_cpu() && verify_kernels_enabled();
  auto launch = [&] {
    if (verify) run_kernel_verified(kernel, ctx, &node);
    else kernel(ctx);
  };
  if (WOK_OBSERVING(observe::EventKind::kLaunchEnd) || WOK_OBSERVING(observe::EventKind::kLaunchBegin)) {
    observe::Event e;
    e.name = op.name() + " (precompiled)";
    for (const TensorRef& r : refs) e.bytes += r.numel() * static_cast<int64_t>(itemsize(r.dtype));
    for (int v : node.outputs) e.count += fragment.values[v].numel();
    observe::emit_timed_launch(std::move(e), launch);
  } else {
    launch();
  }
  detail::counters().kernel_launches.fetch_add(1, std::memory_order_relaxed);
}

std::vector<StoragePtr> PrecompiledExecutor::run(const Fragment& fragment, std::span<const StoragePtr> input_storage) {
  std::vector<StoragePtr> storage(fragment.values.size());
  for (size_t i = 0; i < fragment.inputs.size(); ++i) storage[fragment.inputs[i]] = input_storage[i];

  // Last node that reads each value; outputs are never freed here.
  const std::vector<int> last_use = last_uses(fragment);

  for (size_t n = 0; n < fragment.nodes.size(); ++n) {
    const FragmentNode& node = fragment.nodes[n];
    run_node_kernel(node, fragment, storage);
    for (int v : node.inputs)
      if (last_use[v] == static_cast<int>(n)) storage[v].reset();
    for (int v : node.outputs)  // produced but never read
      if (last_use[v] < 0) storage[v].reset();
  }

  std::vector<StoragePtr> out;
  out.reserve(fragment.outputs.size());
  for (int v : fragment.outputs) out.push_back(storage[v]);
  return out;
}

}  // namespace wok
