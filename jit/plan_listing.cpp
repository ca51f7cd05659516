// Plan::str(): the plan as text, for WOK_DUMP_DIR and verifier failures.
#include <sstream>

#include "wok/jit/plan.h"
#include "wok/runtime/op_registry.h"

namespace wok::jit {

namespace {

void list_values(std::ostringstream& out, const std::vector<int>& values) {
  for (size_t i = 0; i < values.size(); ++i) out << (i ? ", %" : "%") << values[i];
}

const char* where_name(Placement::Where w) {
  switch (w) {
    case Placement::Where::kInput: return "input";
    case Placement::Where::kOutput: return "output";
    case Placement::Where::kArena: return "arena";
    case Placement::Where::kNone: break;
  }
  return "none";
}

}  // namespace

std::string Plan::str() const {
  std::ostringstream out;
  for (size_t s = 0; s < steps.size(); ++s) {
    const PlanStep& st = steps[s];
    out << "  step " << s << ": ";
    if (st.kind == PlanStep::Kind::kKernel) out << "kernel " << st.group;
    else out << "node " << st.node;
    out << "  writes ";
    list_values(out, st.writes);
    out << "  reads ";
    list_values(out, st.reads);
    out << "  lane " << st.lane << (st.signals ? " (signals)" : "");
    if (!st.deps.empty()) {
      out << "  after";
      for (int d : st.deps) out << " " << d;
    }
    out << "\n";
  }
  bool placed = false;
  for (size_t v = 0; v < placement.size(); ++v) {
    const Placement& p = placement[v];
    if (p.where == Placement::Where::kNone) continue;
    if (!placed) out << "  placements:\n";
    placed = true;
    out << "    %" << v << ": " << where_name(p.where);
    if (p.where == Placement::Where::kArena) out << " +" << p.offset;
    else out << " " << p.index;
    out << "\n";
  }
  if (placed) out << "  arena: " << arena_bytes << " bytes, " << output_storage_bytes.size() << " output storages\n";
  out << "  " << kernels << " kernels, " << lanes << " lanes\n";
  return out.str();
}

}  // namespace wok::jit
