#include <string>
#include <unordered_map>

#include "wok/jit/passes/passes.h"
#include "wok/runtime/op_registry.h"

namespace wok::jit {

void eliminate_common_subexpressions(PlanGraph& g) {
  std::unordered_map<std::string, int> seen;  // key -> node
  const auto& nodes = g.fragment.nodes;
  for (size_t n = 0; n < nodes.size(); ++n) {
    if (!g.alive[n]) continue;
    const FragmentNode& node = nodes[n];
    // Two equal collectives are two messages (two recvs from one rank are
    // two different tensors).
    if (node.op->def().kind == OpKind::kCreation || node.op->def().communicates) continue;
    std::string key;
    const void* op = node.op;
    key.append(reinterpret_cast<const char*>(&op), sizeof op);
    for (int v : g.inputs_of(static_cast<int>(n))) key.append(reinterpret_cast<const char*>(&v), sizeof v);
    key.push_back('|');
    node.attrs->append_signature(key);
    auto [it, inserted] = seen.try_emplace(key, static_cast<int>(n));
    if (inserted) continue;
    const FragmentNode& first = nodes[it->second];
    for (size_t k = 0; k < node.outputs.size(); ++k) g.canonical[node.outputs[k]] = g.canonical[first.outputs[k]];
    g.alive[n] = false;
  }
}

}  // namespace wok::jit
