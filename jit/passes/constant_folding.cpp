#include "wok/jit/lowering.h"
#include "wok/jit/passes/passes.h"
#include "wok/runtime/op_registry.h"

namespace wok::jit {

void fold_constants(PlanGraph& g) {
  const auto& nodes = g.fragment.nodes;
  for (size_t n = 0; n < nodes.size(); ++n) {
    if (!g.alive[n]) continue;
    const OpDef& def = nodes[n].op->def();
    if (def.kind == OpKind::kCreation) {
      // A constant becomes a parameter of the kernels that read it, in its
      // dtype: the generators hold the compute dtypes only (Note [Compute
      // dtypes] in runtime/dtype.h); a float16 fill runs its own kernel.
      g.constant[n] = def.fills_constant && !nodes[n].outputs.empty() &&
                      in_mask(kComputeDTypeMask, g.fragment.values[nodes[n].outputs[0]].dtype);
      continue;
    }
    if (!is_jit_elementwise(g, static_cast<int>(n))) continue;
    bool all_constant = !nodes[n].inputs.empty();
    for (int v : g.inputs_of(static_cast<int>(n))) {
      int p = g.producer[v];
      all_constant = all_constant && p >= 0 && g.constant[p];
    }
    g.constant[n] = all_constant;
  }
}

}  // namespace wok::jit
