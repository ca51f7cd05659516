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
      g.constant[n] = def.fills_constant;
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
