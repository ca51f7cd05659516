#include "wok/jit/passes/passes.h"

namespace wok::jit {

void eliminate_dead_code(PlanGraph& g) {
  std::vector<bool> live(g.fragment.values.size(), false);
  for (int v : g.outputs()) live[v] = true;
  const auto& nodes = g.fragment.nodes;
  for (size_t n = nodes.size(); n-- > 0;) {
    if (!g.alive[n]) continue;
    bool needed = false;
    for (int v : nodes[n].outputs) needed = needed || (g.canonical[v] == v && live[v]);
    g.alive[n] = needed;
    if (needed)
      for (int v : g.inputs_of(static_cast<int>(n))) live[v] = true;
  }
}

}  // namespace wok::jit
