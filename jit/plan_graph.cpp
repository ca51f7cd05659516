#include "wok/jit/plan_graph.h"

#include <algorithm>
#include <sstream>

#include "wok/runtime/op_registry.h"

namespace wok::jit {

PlanGraph::PlanGraph(const Fragment& f, const Target& t)
    : fragment(f),
      target(t),
      producer(f.values.size(), -1),
      canonical(f.values.size()),
      alive(f.nodes.size(), true),
      constant(f.nodes.size(), false),
      group(f.nodes.size(), -1),
      break_reason(f.nodes.size()) {
  for (size_t v = 0; v < canonical.size(); ++v) canonical[v] = static_cast<int>(v);
  for (size_t n = 0; n < f.nodes.size(); ++n)
    for (int v : f.nodes[n].outputs) producer[v] = static_cast<int>(n);
}

std::vector<int> PlanGraph::inputs_of(int n) const {
  std::vector<int> in;
  in.reserve(fragment.nodes[n].inputs.size());
  for (int v : fragment.nodes[n].inputs) in.push_back(canonical[v]);
  return in;
}

std::vector<int> PlanGraph::users_of(int v) const {
  std::vector<int> users;
  for (size_t n = 0; n < fragment.nodes.size(); ++n) {
    if (!alive[n]) continue;
    for (int in : fragment.nodes[n].inputs)
      if (canonical[in] == v) {
        users.push_back(static_cast<int>(n));
        break;
      }
  }
  return users;
}

std::vector<int> PlanGraph::outputs() const {
  std::vector<int> out;
  for (int v : fragment.outputs) out.push_back(canonical[v]);
  return out;
}

bool PlanGraph::is_output(int v) const {
  for (int o : fragment.outputs)
    if (canonical[o] == v) return true;
  return false;
}

std::string PlanGraph::str() const {
  std::ostringstream out;
  for (size_t n = 0; n < fragment.nodes.size(); ++n) {
    const FragmentNode& node = fragment.nodes[n];
    out << (alive[n] ? "  " : "  (dead) ");
    for (size_t i = 0; i < node.outputs.size(); ++i) out << (i ? ", %" : "%") << canonical[node.outputs[i]];
    out << " = " << node.op->name() << "(";
    std::vector<int> in = inputs_of(static_cast<int>(n));
    for (size_t i = 0; i < in.size(); ++i) out << (i ? ", %" : "%") << in[i];
    out << ")";
    if (constant[n]) out << "  [constant]";
    if (group[n] >= 0) out << "  [group " << group[n] << "]";
    else if (!break_reason[n].empty()) out << "  [not fused: " << break_reason[n] << "]";
    out << "\n";
  }
  out << "  outputs:";
  for (int v : outputs()) out << " %" << v;
  out << "\n";
  return out.str();
}

}  // namespace wok::jit
