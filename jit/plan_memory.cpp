// The memory plan (a stage of jit/pipeline.h): where each value lives, and
// the arena's offsets (Note [Memory planned once] in jit/plan.h).
#include <algorithm>
#include <map>

#include "wok/jit/plan_stages.h"
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
  // Arena classes: live from their first write to their last read.
  std::map<int, std::pair<int, int>> life;
  std::map<int, int64_t> bytes;
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    for (int v : plan.steps[s].writes) {
      int c = cls.find(v);
      if (where.count(c)) continue;
      auto [it, fresh] = life.try_emplace(c, static_cast<int>(s), static_cast<int>(s));
      if (!fresh) it->second.first = std::min(it->second.first, static_cast<int>(s));
      bytes[c] = std::max<int64_t>(bytes[c], static_cast<int64_t>(f.values[v].nbytes()));
    }
    for (int v : plan.steps[s].reads) {
      int c = cls.find(v);
      if (auto it = life.find(c); it != life.end()) it->second.second = std::max(it->second.second, static_cast<int>(s));
    }
  }
  // Largest first, each at the lowest offset not overlapping a placed
  // class that is alive at the same time.
  std::vector<int> order;
  for (auto& [c, l] : life) order.push_back(c);
  std::sort(order.begin(), order.end(), [&](int a, int b) { return bytes[a] > bytes[b]; });
  struct Placed {
    int64_t offset, size;
    int first, last;
  };
  std::vector<Placed> placed;
  for (int c : order) {
    int64_t size = (bytes[c] + kArenaAlign - 1) / kArenaAlign * kArenaAlign;
    auto [first, last] = life[c];
    std::vector<std::pair<int64_t, int64_t>> busy;
    for (const Placed& p : placed)
      if (p.first <= last && first <= p.last) busy.push_back({p.offset, p.offset + p.size});
    std::sort(busy.begin(), busy.end());
    int64_t offset = 0;
    for (auto [b, e] : busy) {
      if (offset + size <= b) break;
      offset = std::max(offset, e);
    }
    placed.push_back({offset, size, first, last});
    where[c] = {Placement::Where::kArena, -1, offset};
    plan.arena_bytes = std::max(plan.arena_bytes, offset + size);
  }
  plan.placement.assign(nv, Placement{});
  for (size_t v = 0; v < nv; ++v)
    if (used[v])
      if (auto it = where.find(cls.find(static_cast<int>(v))); it != where.end()) plan.placement[v] = it->second;
}

}  // namespace wok::jit
