#include "wok/jit/graphviz.h"

#include <map>
#include <sstream>

#include "wok/jit/lowering.h"
#include "wok/runtime/observe/log.h"
#include "wok/runtime/op_registry.h"

namespace wok::jit {

namespace {
std::string value_label(const Fragment& f, int v) {
  return "%" + std::to_string(v) + " " + std::string(dtype_name(f.values[v].dtype)) + shape_str(f.values[v].shape);
}
}  // namespace

std::string to_graphviz(const PlanGraph& g) {
  const Fragment& f = g.fragment;
  std::ostringstream out;
  out << "digraph fragment {\n  rankdir=TB;\n  node [fontname=\"Helvetica\", fontsize=10];\n";
  for (size_t i = 0; i < f.inputs.size(); ++i)
    out << "  v" << f.inputs[i] << " [shape=ellipse, label=\"input " << i << "\\n" << value_label(f, f.inputs[i])
        << "\"];\n";
  std::map<int, std::vector<int>> clusters;
  for (size_t n = 0; n < f.nodes.size(); ++n)
    if (g.alive[n] && g.group[n] >= 0) clusters[g.group[n]].push_back(static_cast<int>(n));
  auto node_stmt = [&](int n) {
    const FragmentNode& node = f.nodes[n];
    std::ostringstream s;
    s << "n" << n << " [label=\"" << node.op->name();
    if (node.attrs->size() && node.op->def().kind != OpKind::kCreation) s << "\\n" << node.attrs->str();
    if (node.op->def().kind == OpKind::kCreation) s << "\\n" << node.attrs->str();
    s << "\\n" << value_label(f, g.canonical[node.outputs[0]]);
    if (g.group[n] < 0 && !g.constant[n] && !g.break_reason[n].empty())
      s << "\\nnot fused: " << g.break_reason[n];
    if (std::string site = observe::site_str(node.site, node.caller); !site.empty()) s << "\\n@ " << site;
    s << "\"";
    if (g.constant[n]) s << ", style=dashed";
    else if (g.group[n] < 0) s << ", shape=box, style=filled, fillcolor=\"#fde2c8\"";
    else s << ", shape=box, style=filled, fillcolor=\"#d5e8f8\"";
    s << "];";
    return s.str();
  };
  for (auto& [id, members] : clusters) {
    bool gemm = false;
    for (int n : members) gemm = gemm || is_gemm_node(g, n);
    out << "  subgraph cluster_" << id << " {\n    label=\"" << (gemm ? "GEMM kernel " : "fused kernel ") << id
        << "\";\n    color=\"#3b7dd8\";\n";
    for (int n : members) out << "    " << node_stmt(n) << "\n";
    out << "  }\n";
  }
  for (size_t n = 0; n < f.nodes.size(); ++n)
    if (g.alive[n] && g.group[n] < 0) out << "  " << node_stmt(static_cast<int>(n)) << "\n";
  for (size_t n = 0; n < f.nodes.size(); ++n) {
    if (!g.alive[n]) continue;
    for (int v : g.inputs_of(static_cast<int>(n))) {
      int p = g.producer[v];
      if (p < 0) {
        out << "  v" << v << " -> n" << n << ";\n";
        continue;
      }
      out << "  n" << p << " -> n" << n;
      // A fusion break: the value goes through memory between two kernels.
      bool same_group = g.group[p] >= 0 && g.group[p] == g.group[n];
      if (!same_group && !g.constant[p]) out << " [color=\"#d04040\", style=dashed, label=\"break\", fontsize=8]";
      out << ";\n";
    }
  }
  int i = 0;
  for (int v : g.outputs()) {
    out << "  out" << i << " [shape=ellipse, label=\"output " << i << "\"];\n";
    int p = g.producer[v];
    out << "  " << (p >= 0 ? "n" + std::to_string(p) : "v" + std::to_string(v)) << " -> out" << i << ";\n";
    ++i;
  }
  out << "}\n";
  return out.str();
}

}  // namespace wok::jit
