// The memory plan (a stage of jit/pipeline.h): where each value lives, and
// the arena's offsets (Note [Memory planned once] in jit/plan.h).
#include <algorithm>
#include <map>

#include "wok/jit/plan_stages.h"
#include "wok/jit/step_order.h"
#include "wok/jit/union_find.h"
#include "wok/runtime/op_registry.h"

namespace wok::jit {

void plan_memory(PipelineState& state) {
  Plan& plan = state.plan;
  const PlanGraph& g = state.graph;
  const Fragment& f = g.fragment;
  const size_t nv = f.values.size();
  UnionFind cls(nv);
  for (const PlanStep& st : plan.steps)
    if (st.kind == PlanStep::Kind::kNode && f.nodes[st.node].op->def().output_aliases_input)
      cls.join(st.writes[0], st.reads[0]);

  std::vector<bool> used(nv, false);
  for (const PlanStep& st : plan.steps) {
    for (int v : st.reads) used[v] = true;
    for (int v : st.writes) used[v] = true;
  }
  for (int v : g.outputs()) used[v] = true;

  // Where each class lives: an input's storage, an output storage, or the arena.
  std::map<int, Placement> where;
  for (size_t i = 0; i < f.inputs.size(); ++i)
    where[cls.find(f.inputs[i])] = {Placement::Where::kInput, static_cast<int>(i), 0};
  for (int v : g.outputs()) {
    int c = cls.find(v);
    if (where.count(c)) continue;
    where[c] = {Placement::Where::kOutput, static_cast<int>(plan.output_storage_bytes.size()), 0};
    plan.output_storage_bytes.push_back(f.values[v].nbytes());
  }
  // Arena classes: the steps that write and read each.
  std::map<int, BufferUses> uses;
  std::map<int, int64_t> bytes;
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    for (int v : plan.steps[s].writes) {
      int c = cls.find(v);
      if (where.count(c)) continue;
      uses[c].writes.push_back(static_cast<int>(s));
      bytes[c] = std::max<int64_t>(bytes[c], static_cast<int64_t>(f.values[v].nbytes()));
    }
    for (int v : plan.steps[s].reads)
      if (auto it = uses.find(cls.find(v)); it != uses.end()) it->second.reads.push_back(static_cast<int>(s));
  }
  // Largest first, each at the lowest offset not overlapping a placed class
  // that may be live at the same time (Note [Arena reuse across lanes]).
  const StepOrder order(plan.steps);
  std::vector<int> by_size;
  for (auto& [c, u] : uses) by_size.push_back(c);
  std::stable_sort(by_size.begin(), by_size.end(), [&](int a, int b) { return bytes[a] > bytes[b]; });
  struct Placed {
    int64_t offset, size;
    int cls;
  };
  std::vector<Placed> placed;
  for (int c : by_size) {
    int64_t size = (bytes[c] + kArenaAlign - 1) / kArenaAlign * kArenaAlign;
    std::vector<std::pair<int64_t, int64_t>> busy;
    for (const Placed& p : placed)
      if (!order.apart(uses[p.cls], uses[c])) busy.push_back({p.offset, p.offset + p.size});
    std::sort(busy.begin(), busy.end());
    int64_t offset = 0;
    for (auto [b, e] : busy) {
      if (offset + size <= b) break;
      offset = std::max(offset, e);
    }
    placed.push_back({offset, size, c});
    where[c] = {Placement::Where::kArena, -1, offset};
    plan.arena_bytes = std::max(plan.arena_bytes, offset + size);
  }
  plan.placement.assign(nv, Placement{});
  for (size_t v = 0; v < nv; ++v)
    if (used[v])
      if (auto it = where.find(cls.find(static_cast<int>(v))); it != where.end()) plan.placement[v] = it->second;
}

}  // namespace wok::jit
