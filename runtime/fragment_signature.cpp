#include "wok/runtime/fragment_signature.h"

#include <cstdio>

#include "wok/runtime/op_registry.h"

namespace wok {

namespace {
void put(std::string& s, int64_t x) { s.append(reinterpret_cast<const char*>(&x), sizeof x); }

void append_nodes_and_ends(std::string& s, const Fragment& f, bool with_attrs) {
  for (const FragmentNode& n : f.nodes) {
    s += n.op->name();
    s.push_back('(');
    for (int v : n.inputs) put(s, v);
    s.push_back(')');
    for (int v : n.outputs) put(s, v);
    // A constant's value is a launch parameter, not part of the plan.
    if (with_attrs && n.op->def().kind != OpKind::kCreation) n.attrs->append_signature(s);
  }
  s.push_back('<');
  for (int v : f.inputs) put(s, v);
  s.push_back('>');
  for (int v : f.outputs) put(s, v);
}
}  // namespace

void append_fragment_wiring(std::string& s, const Fragment& f, bool with_attrs) {
  put(s, static_cast<int64_t>(f.values.size()));
  append_nodes_and_ends(s, f, with_attrs);
}

std::string fragment_signature(const Fragment& f) {
  std::string s;
  put(s, static_cast<int64_t>(f.values.size()));
  for (const TensorMeta& m : f.values) {
    s.push_back(static_cast<char>(m.dtype));
    s.push_back(static_cast<char>(m.device.type));
    put(s, m.device.index);
    put(s, static_cast<int64_t>(m.shape.size()));
    for (int64_t d : m.shape) put(s, d);
  }
  append_nodes_and_ends(s, f, /*with_attrs=*/true);
  return s;
}

std::string program_name(const Fragment& f, uint64_t id) {
  std::string ops;
  int shown = 0;
  for (const FragmentNode& n : f.nodes) {
    if (n.op->def().kind == OpKind::kCreation) continue;
    if (shown++ == 5) {
      ops += ",...";
      break;
    }
    ops += (ops.empty() ? "" : ",") + n.op->name();
  }
  char hex[20];
  std::snprintf(hex, sizeof hex, "%08x", static_cast<unsigned>(id & 0xffffffffu));
  return (ops.empty() ? std::string("constants") : ops) + " (" + std::to_string(f.nodes.size()) + " nodes) #" + hex;
}

}  // namespace wok
