#include "wok/jit/verify.h"

#include <algorithm>
#include <map>
#include <string>

#include "wok/jit/lowering.h"
#include "wok/jit/union_find.h"
#include "wok/runtime/op_registry.h"

namespace wok::jit {

namespace {

std::string val(int v) { return "%" + std::to_string(v); }

std::string node_name(const Fragment& f, int n) {
  return "node " + std::to_string(n) + " (" + f.nodes[n].op->name() + ")";
}

bool is_fragment_input(const Fragment& f, int v) {
  return std::find(f.inputs.begin(), f.inputs.end(), v) != f.inputs.end();
}

absl::Status fail(const std::string& what) { return absl::InternalError(what); }

absl::Status verify_canonical(const PlanGraph& g) {
  const Fragment& f = g.fragment;
  const int nv = static_cast<int>(f.values.size());
  for (int v = 0; v < nv; ++v) {
    int c = g.canonical[v];
    if (c < 0 || c >= nv) return fail("value " + val(v) + " has canonical id " + std::to_string(c) + ", out of range");
    if (g.canonical[c] != c)
      return fail("canonical ids are not idempotent: " + val(v) + " -> " + val(c) + " -> " + val(g.canonical[c]));
    if (f.values[c].shape != f.values[v].shape || f.values[c].dtype != f.values[v].dtype)
      return fail("value " + val(v) + " stands for " + val(c) + " of another shape or dtype");
  }
  return absl::OkStatus();
}

// Members of one fusion group compute in one kernel: one device, and one
// iteration space (one output shape, or the row space of their reductions).
absl::Status verify_groups(const PlanGraph& g) {
  const Fragment& f = g.fragment;
  std::map<int, std::vector<int>> groups;
  for (size_t n = 0; n < f.nodes.size(); ++n)
    if (g.group[n] >= 0) groups[g.group[n]].push_back(static_cast<int>(n));
  int expected = 0;
  for (auto& [id, members] : groups) {
    if (id != expected++) return fail("fusion group ids are not compact: group " + std::to_string(id) + " follows " +
                                      std::to_string(expected - 2));
    const Device device = f.values[f.nodes[members[0]].outputs[0]].device;
    std::optional<ReduceSpace> space;
    for (int n : members) {
      if (!(f.values[f.nodes[n].outputs[0]].device == device))
        return fail("fusion group " + std::to_string(id) + " spans two devices");
      std::optional<ReduceSpace> rs = reduction_space(g, n);
      if (!rs) continue;
      if (space && !(*space == *rs))
        return fail("fusion group " + std::to_string(id) + " holds reductions over different spaces");
      space = rs;
    }
    // A GEMM group's space is its product's shape; the transposes it reads
    // through and the prologues that compute its operands have theirs.
    int anchor = -1;
    for (int n : members)
      if (is_gemm_node(g, n)) anchor = n;
    const Shape& first = f.values[f.nodes[anchor >= 0 ? anchor : members[0]].outputs[0]].shape;
    std::vector<int> operands;  // a GEMM's operand views and prologues: the operands' shapes
    if (anchor >= 0)
      for (int side = 0; side < 2; ++side)
        for (int n : gemm_prologue_members(g, anchor, side)) operands.push_back(n);
    for (int n : members) {
      if (anchor >= 0 && (is_gemm_operand_view(g, n) || std::count(operands.begin(), operands.end(), n))) continue;
      const Shape& shape = f.values[f.nodes[n].outputs[0]].shape;
      bool fits = space ? is_full_value(shape, *space) || is_reduced_value(shape, *space) : shape == first;
      if (!fits)
        return fail("fusion group " + std::to_string(id) + ": " + node_name(f, n) +
                    " is outside the group's iteration space");
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status verify_graph(const PlanGraph& g) {
  const Fragment& f = g.fragment;
  const size_t nv = f.values.size(), nn = f.nodes.size();
  if (g.canonical.size() != nv || g.producer.size() != nv || g.alive.size() != nn || g.constant.size() != nn ||
      g.group.size() != nn || g.break_reason.size() != nn)
    return fail("the graph's tables do not match the fragment's sizes");
  if (absl::Status s = verify_canonical(g); !s.ok()) return s;
  for (size_t n = 0; n < nn; ++n) {
    const int node = static_cast<int>(n);
    for (int v : f.nodes[n].outputs)
      if (g.producer[v] != node) return fail(node_name(f, node) + " writes " + val(v) + " but is not its producer");
    if (!g.alive[n]) {
      if (g.constant[n]) return fail("dead " + node_name(f, node) + " is marked constant");
      if (g.group[n] >= 0) return fail("dead " + node_name(f, node) + " is in fusion group " + std::to_string(g.group[n]));
      continue;
    }
    if (g.group[n] >= 0 && g.constant[n])
      return fail("constant " + node_name(f, node) + " is in fusion group " + std::to_string(g.group[n]));
    for (int v : f.nodes[n].outputs)
      if (g.canonical[v] != v) return fail("alive " + node_name(f, node) + " writes " + val(v) + ", which is not canonical");
    for (int c : g.inputs_of(node)) {
      int p = g.producer[c];
      if (p < 0 && !is_fragment_input(f, c))
        return fail("alive " + node_name(f, node) + " reads " + val(c) + ", which nothing produces");
      if (p >= 0 && !g.alive[p])
        return fail("alive " + node_name(f, node) + " reads " + val(c) + " of dead " + node_name(f, p));
    }
  }
  for (int c : g.outputs()) {
    int p = g.producer[c];
    if (p < 0 && !is_fragment_input(f, c)) return fail("fragment output " + val(c) + " is produced by nothing");
    if (p >= 0 && !g.alive[p]) return fail("fragment output " + val(c) + " is produced by dead " + node_name(f, p));
  }
  return verify_groups(g);
}

absl::Status verify_stage(const PipelineState& s, const Stage& stage) {
  absl::Status st = verify_graph(s.graph);
  if (st.ok() && stage.level != PlanLevel::kNone) st = verify_plan(s.plan, s.graph, stage.level);
  if (st.ok()) return st;
  return absl::InternalError("wok JIT: invalid IR after stage \"" + std::string(stage.name) +
                             "\": " + std::string(st.message()));
}

}  // namespace wok::jit
