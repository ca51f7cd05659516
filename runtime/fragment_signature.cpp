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

namespace {
bool same_attrs_signature(const Attrs& a, const Attrs& b) {
  if (a.size() != b.size()) return false;
  if (a.size() == 0) return true;
  thread_local std::string sa, sb;  // the bytes fragment_signature would append
  sa.clear();
  sb.clear();
  a.append_signature(sa);
  b.append_signature(sb);
  return sa == sb;
}
}  // namespace

bool same_signature(const Fragment& a, const Fragment& b) {
  if (a.values.size() != b.values.size() || a.nodes.size() != b.nodes.size() || a.inputs != b.inputs ||
      a.outputs != b.outputs)
    return false;
  for (size_t i = 0; i < a.values.size(); ++i) {
    const TensorMeta& x = a.values[i];
    const TensorMeta& y = b.values[i];
    if (x.dtype != y.dtype || x.device != y.device || x.shape != y.shape) return false;
  }
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    const FragmentNode& x = a.nodes[i];
    const FragmentNode& y = b.nodes[i];
    // The signature names ops; a name is registered once.
    if (x.op != y.op && x.op->name() != y.op->name()) return false;
    if (x.inputs != y.inputs || x.outputs != y.outputs) return false;
    if (x.op->def().kind != OpKind::kCreation && !same_attrs_signature(*x.attrs, *y.attrs)) return false;
  }
  return true;
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
