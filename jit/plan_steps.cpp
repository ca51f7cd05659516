// Drafting and ordering the plan's steps (stages of jit/pipeline.h).
#include <algorithm>
#include <map>
#include <optional>
#include <queue>
#include <tuple>

#include "wok/jit/lowering.h"
#include "wok/jit/plan_stages.h"
#include "wok/runtime/error.h"
#include "wok/runtime/op_registry.h"

namespace wok::jit {

// The steps of the plan, unordered: fused groups, materialized constants,
// and nodes left to precompiled kernels. Each step's order hint is its
// first node, so that ordering keeps the fragment's own order where it can.
void draft_steps(PipelineState& s) {
  const PlanGraph& g = s.graph;
  const Fragment& f = g.fragment;
  std::vector<PlanStep>& steps = s.plan.steps;
  std::vector<int>& hint = s.order_hint;
  steps.clear();
  hint.clear();
  s.plan.canonical = g.canonical;
  auto add = [&](PlanStep::Kind kind, int first_node) -> PlanStep& {
    hint.push_back(first_node);
    PlanStep& st = steps.emplace_back();
    st.kind = kind;
    return st;
  };
  std::map<int, std::vector<int>> groups;  // group id -> members
  for (size_t n = 0; n < f.nodes.size(); ++n)
    if (g.alive[n] && g.group[n] >= 0) groups[g.group[n]].push_back(static_cast<int>(n));

  // Who reads each value, outside of constants (which are inlined).
  std::vector<std::vector<int>> readers(f.values.size());
  for (size_t n = 0; n < f.nodes.size(); ++n) {
    if (!g.alive[n] || g.constant[n]) continue;
    for (int v : g.inputs_of(static_cast<int>(n))) readers[v].push_back(static_cast<int>(n));
  }
  auto needed_outside = [&](int v, int group) {
    if (g.is_output(v)) return true;
    for (int r : readers[v])
      if (g.group[r] != group || group < 0) return true;
    return false;
  };

  for (auto& [id, members] : groups) {
    std::vector<int> outs;
    for (int n : members)
      for (int v : f.nodes[n].outputs)
        if (g.canonical[v] == v && needed_outside(v, id)) outs.push_back(v);
    if (outs.empty()) continue;
    PlanStep& st = add(PlanStep::Kind::kKernel, members.front());
    std::optional<ReduceSpace> row;
    bool gemm = false;
    for (int n : members) {
      if (!row) row = reduction_space(g, n);
      gemm = gemm || is_gemm_node(g, n);
    }
    st.lowered = gemm  ? lower_gemm_group(g, members, outs)
                 : row ? lower_reduction_group(g, members, outs, *row)
                       : lower_group(g, members, outs);
    for (int n : members) st.group += (st.group.empty() ? "" : "+") + f.nodes[n].op->name();
  }
  for (size_t n = 0; n < f.nodes.size(); ++n) {
    if (!g.alive[n]) continue;
    if (g.constant[n]) {
      // A constant someone needs in memory gets a kernel of its own: a
      // fragment output, a node outside every group, or a GEMM reading it
      // as an operand (a fused group inlines constants as parameters; a
      // GEMM's operands are read from memory, only its epilogue inlines).
      for (int v : f.nodes[n].outputs) {
        if (g.canonical[v] != v) continue;
        bool materialize = g.is_output(v);
        for (int r : readers[v]) materialize = materialize || g.group[r] < 0 || is_gemm_node(g, r);
        if (!materialize) continue;
        PlanStep& st = add(PlanStep::Kind::kKernel, static_cast<int>(n));
        st.lowered = lower_group(g, {}, {v});
        st.group = "constant";
      }
    } else if (g.group[n] < 0) {
      add(PlanStep::Kind::kNode, static_cast<int>(n)).node = static_cast<int>(n);
    }
  }
  for (PlanStep& st : steps) {
    if (st.kind == PlanStep::Kind::kKernel) {
      st.reads = st.lowered.input_values;
      st.writes = st.lowered.output_values;
    } else {
      st.reads = g.inputs_of(st.node);
      for (int v : f.nodes[st.node].outputs) st.writes.push_back(g.canonical[v]);
    }
  }
  s.plan.kernels = 0;
  for (const PlanStep& st : steps) s.plan.kernels += st.kind == PlanStep::Kind::kKernel;
}

// Orders steps so each runs after the steps that write what it reads
// (Kahn's algorithm, ties broken by the order hints), and records each
// step's deps as positions in the new order.
void order_steps(PipelineState& s) {
  std::vector<PlanStep>& drafts = s.plan.steps;
  const std::vector<int>& hint = s.order_hint;
  std::vector<int> writer(s.graph.fragment.values.size(), -1);
  for (size_t d = 0; d < drafts.size(); ++d)
    for (int v : drafts[d].writes) writer[v] = static_cast<int>(d);
  std::vector<std::vector<int>> users(drafts.size());
  std::vector<int> pending(drafts.size(), 0);
  for (size_t d = 0; d < drafts.size(); ++d) {
    std::vector<int> deps;
    for (int v : drafts[d].reads)
      if (int w = writer[v]; w >= 0 && w != static_cast<int>(d)) deps.push_back(w);
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    for (int w : deps) users[w].push_back(static_cast<int>(d));
    pending[d] = static_cast<int>(deps.size());
    drafts[d].deps = deps;  // draft indices for now
  }
  // A node step's op may ask to run before other ready steps
  // (OpDef::schedule_priority); the rest keep the fragment's order.
  const Fragment& f = s.graph.fragment;
  auto priority = [&](int d) {
    const PlanStep& st = drafts[static_cast<size_t>(d)];
    return st.kind == PlanStep::Kind::kNode ? f.nodes[static_cast<size_t>(st.node)].op->def().schedule_priority : 0;
  };
  using Item = std::tuple<int, int, int>;  // (priority, order hint, draft)
  std::priority_queue<Item, std::vector<Item>, std::greater<>> ready;
  for (size_t d = 0; d < drafts.size(); ++d)
    if (pending[d] == 0) ready.push({priority(static_cast<int>(d)), hint[d], static_cast<int>(d)});
  std::vector<int> position(drafts.size(), -1);
  std::vector<PlanStep> steps;
  steps.reserve(drafts.size());
  while (!ready.empty()) {
    int d = std::get<2>(ready.top());
    ready.pop();
    position[d] = static_cast<int>(steps.size());
    steps.push_back(std::move(drafts[d]));
    for (int u : users[d])
      if (--pending[u] == 0) ready.push({priority(u), hint[u], u});
  }
  if (steps.size() != drafts.size()) throw Error("wok JIT: fused groups form a cycle (internal error)");
  for (PlanStep& st : steps)
    for (int& d : st.deps) d = position[d];
  drafts = std::move(steps);
  s.order_hint.clear();
}

}  // namespace wok::jit
