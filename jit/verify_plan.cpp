// The plan half of the IR verifier (jit/verify.h).
#include <algorithm>
#include <map>
#include <string>

#include "wok/jit/step_order.h"
#include "wok/jit/union_find.h"
#include "wok/jit/verify.h"
#include "wok/runtime/op_registry.h"

namespace wok::jit {

namespace {

std::string val(int v) { return "%" + std::to_string(v); }
std::string step_name(int s) { return "step " + std::to_string(s); }
absl::Status fail(const std::string& what) { return absl::InternalError(what); }

bool is_fragment_input(const Fragment& f, int v) {
  return std::find(f.inputs.begin(), f.inputs.end(), v) != f.inputs.end();
}

// Each step against its source (node or lowered kernel); one writer per value.
absl::Status verify_steps(const Plan& plan, const PlanGraph& g, std::vector<int>& writer) {
  const Fragment& f = g.fragment;
  const int nv = static_cast<int>(f.values.size());
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const int s = static_cast<int>(i);
    const PlanStep& st = plan.steps[i];
    if (st.kind == PlanStep::Kind::kNode) {
      if (st.node < 0 || st.node >= static_cast<int>(f.nodes.size()) || !g.alive[st.node])
        return fail(step_name(s) + " runs node " + std::to_string(st.node) + ", which is not an alive node");
      if (st.reads != g.inputs_of(st.node)) return fail(step_name(s) + "'s reads are not its node's inputs");
    } else if (st.reads != st.lowered.input_values || st.writes != st.lowered.output_values) {
      return fail(step_name(s) + "'s reads and writes are not its kernel's");
    }
    for (const std::vector<int>* values : {&st.reads, &st.writes})
      for (int v : *values)
        if (v < 0 || v >= nv || plan.canonical[v] != v)
          return fail(step_name(s) + " uses " + val(v) + ", which is not a canonical value");
    for (int v : st.writes) {
      if (writer[v] >= 0) return fail(val(v) + " is written by both " + step_name(writer[v]) + " and " + step_name(s));
      if (is_fragment_input(f, v)) return fail(step_name(s) + " writes fragment input " + val(v));
      writer[v] = s;
    }
  }
  return absl::OkStatus();
}

absl::Status verify_order(const Plan& plan, const Fragment& f, const std::vector<int>& writer, PlanLevel level) {
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const int s = static_cast<int>(i);
    const PlanStep& st = plan.steps[i];
    for (int v : st.reads) {
      int w = writer[v];
      if (w < 0 && !is_fragment_input(f, v))
        return fail(step_name(s) + " reads " + val(v) + ", which no step writes and is not a fragment input");
      if (level < PlanLevel::kOrdered || w < 0) continue;
      if (w >= s) return fail(step_name(s) + " reads " + val(v) + " before its write (" + step_name(w) + ")");
      if (std::find(st.deps.begin(), st.deps.end(), w) == st.deps.end())
        return fail(step_name(s) + " reads " + val(v) + " from " + step_name(w) + " but does not depend on it");
    }
    if (level < PlanLevel::kOrdered) continue;
    for (int d : st.deps)
      if (d < 0 || d >= s) return fail(step_name(s) + " depends on " + step_name(d) + ", which does not come before it");
  }
  return absl::OkStatus();
}

absl::Status verify_lanes(const Plan& plan) {
  if (plan.lanes < 1) return fail("the plan has " + std::to_string(plan.lanes) + " lanes");
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const PlanStep& st = plan.steps[i];
    if (st.lane < 0 || st.lane >= plan.lanes)
      return fail(step_name(static_cast<int>(i)) + " is on lane " + std::to_string(st.lane) + " of " +
                  std::to_string(plan.lanes));
    for (int d : st.deps)
      if (plan.steps[d].lane != st.lane && !plan.steps[d].signals)
        return fail(step_name(static_cast<int>(i)) + " waits on " + step_name(d) +
                    " from another lane, which does not signal");
  }
  return absl::OkStatus();
}

absl::Status verify_placement_of(const Plan& plan, const Fragment& f, int v) {
  const Placement& p = plan.placement[v];
  const int64_t bytes = static_cast<int64_t>(f.values[v].nbytes());
  switch (p.where) {
    case Placement::Where::kNone: return fail(val(v) + " is used but not placed");
    case Placement::Where::kInput:
      if (p.index < 0 || p.index >= static_cast<int>(f.inputs.size()))
        return fail(val(v) + " is placed in input " + std::to_string(p.index) + ", out of range");
      return absl::OkStatus();
    case Placement::Where::kOutput:
      if (p.index < 0 || p.index >= static_cast<int>(plan.output_storage_bytes.size()))
        return fail(val(v) + " is placed in output storage " + std::to_string(p.index) + ", out of range");
      if (static_cast<int64_t>(plan.output_storage_bytes[p.index]) < bytes)
        return fail(val(v) + " does not fit its output storage " + std::to_string(p.index));
      return absl::OkStatus();
    case Placement::Where::kArena:
      if (p.offset < 0 || p.offset % kArenaAlign != 0)
        return fail(val(v) + "'s arena offset " + std::to_string(p.offset) + " is not aligned to " +
                    std::to_string(kArenaAlign));
      if (p.offset + bytes > plan.arena_bytes)
        return fail(val(v) + " at arena offset " + std::to_string(p.offset) + " (" + std::to_string(bytes) +
                    " bytes) runs past the arena's " + std::to_string(plan.arena_bytes) + " bytes");
      return absl::OkStatus();
  }
  return absl::OkStatus();
}

// Arena values that may be alive at the same time must not share bytes
// (Note [Arena reuse across lanes] in jit/step_order.h). Values joined by an
// aliasing step (reshape) are one buffer, as plan_memory sees them.
absl::Status verify_arena_overlaps(const Plan& plan, const Fragment& f) {
  const size_t nv = f.values.size();
  UnionFind cls(nv);
  for (const PlanStep& st : plan.steps)
    if (st.kind == PlanStep::Kind::kNode && f.nodes[st.node].op->def().output_aliases_input)
      cls.join(st.writes[0], st.reads[0]);
  struct Buffer {
    int value = -1;  // one member, for messages
    BufferUses uses;
    int64_t offset = 0, bytes = 0;
  };
  std::map<int, Buffer> buffers;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const int s = static_cast<int>(i);
    for (int v : plan.steps[i].writes) {
      const Placement& p = plan.placement[v];
      if (p.where != Placement::Where::kArena) continue;
      auto [it, fresh] = buffers.try_emplace(cls.find(v), Buffer{v, {}, p.offset, 0});
      if (!fresh && it->second.offset != p.offset)
        return fail("aliased values " + val(it->second.value) + " and " + val(v) + " are at different arena offsets");
      it->second.uses.writes.push_back(s);
      it->second.bytes = std::max<int64_t>(it->second.bytes, static_cast<int64_t>(f.values[v].nbytes()));
    }
    for (int v : plan.steps[i].reads)
      if (auto it = buffers.find(cls.find(v)); it != buffers.end()) it->second.uses.reads.push_back(s);
  }
  auto steps_str = [](const BufferUses& u) {
    std::string out = "written at step";
    for (int s : u.writes) out += " " + std::to_string(s);
    if (!u.reads.empty()) out += ", read at step";
    for (int s : u.reads) out += " " + std::to_string(s);
    return out;
  };
  const StepOrder order(plan.steps);
  std::vector<const Buffer*> all;
  for (auto& [c, b] : buffers)
    if (b.bytes > 0) all.push_back(&b);
  for (size_t i = 0; i < all.size(); ++i)
    for (size_t j = i + 1; j < all.size(); ++j) {
      const Buffer &a = *all[i], &b = *all[j];
      bool same_bytes = a.offset < b.offset + b.bytes && b.offset < a.offset + a.bytes;
      if (same_bytes && !order.apart(a.uses, b.uses))
        return fail("arena placements overlap: " + val(a.value) + " (bytes " + std::to_string(a.offset) + ".." +
                    std::to_string(a.offset + a.bytes) + ", " + steps_str(a.uses) + ") and " + val(b.value) +
                    " (bytes " + std::to_string(b.offset) + ".." + std::to_string(b.offset + b.bytes) + ", " +
                    steps_str(b.uses) + ") may be live at once");
    }
  return absl::OkStatus();
}

absl::Status verify_memory(const Plan& plan, const PlanGraph& g) {
  const Fragment& f = g.fragment;
  if (plan.placement.size() != f.values.size()) return fail("the plan's placements do not cover the fragment's values");
  if (plan.arena_bytes < 0) return fail("the arena has a negative size");
  for (const PlanStep& st : plan.steps)
    for (const std::vector<int>* values : {&st.reads, &st.writes})
      for (int v : *values)
        if (absl::Status s = verify_placement_of(plan, f, v); !s.ok()) return s;
  for (int v : g.outputs()) {
    Placement::Where w = plan.placement[v].where;
    if (w != Placement::Where::kOutput && w != Placement::Where::kInput)
      return fail("fragment output " + val(v) + " is not placed in an output or input storage");
    if (absl::Status s = verify_placement_of(plan, f, v); !s.ok()) return s;
  }
  return verify_arena_overlaps(plan, f);
}

}  // namespace

absl::Status verify_plan(const Plan& plan, const PlanGraph& g, PlanLevel level) {
  if (level == PlanLevel::kNone) return absl::OkStatus();
  const Fragment& f = g.fragment;
  if (plan.canonical.size() != f.values.size()) return fail("the plan's canonical ids do not cover the fragment's values");
  std::vector<int> writer(f.values.size(), -1);
  if (absl::Status s = verify_steps(plan, g, writer); !s.ok()) return s;
  if (absl::Status s = verify_order(plan, f, writer, level); !s.ok()) return s;
  if (level >= PlanLevel::kLaned)
    if (absl::Status s = verify_lanes(plan); !s.ok()) return s;
  if (level >= PlanLevel::kPlaced) return verify_memory(plan, g);
  return absl::OkStatus();
}

}  // namespace wok::jit
