#include "wok/jit/lowering.h"
#include "wok/jit/passes/passes.h"
#include "wok/runtime/op_registry.h"

namespace wok::jit {

namespace {

// Whether the target's kernels read and write values of dtype t.
bool target_takes(const Target& target, DType t) {
  ScalarProgram p;
  ScalarInstr in(ScalarOp::kInput, t);
  in.index = 0;
  p.instrs.push_back(in);
  p.outputs.push_back(0);
  return target.can_compile(p);
}

}  // namespace

void fold_constants(PlanGraph& g) {
  const auto& nodes = g.fragment.nodes;
  for (size_t n = 0; n < nodes.size(); ++n) {
    if (!g.alive[n]) continue;
    const OpDef& def = nodes[n].op->def();
    if (def.kind == OpKind::kCreation) {
      // A constant becomes a parameter of the kernels that read it, in its
      // dtype, where the target's kernels take that dtype (an int8 fill runs
      // its own kernel).
      g.constant[n] = def.fills_constant && !nodes[n].outputs.empty() &&
                      target_takes(g.target, g.fragment.values[nodes[n].outputs[0]].dtype);
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
