#include "wok/jit/plan_order_check.h"

#include <atomic>

#include "wok/runtime/error.h"
#include "wok/runtime/observe/log.h"
#include "wok/runtime/op_registry.h"

namespace wok::jit {

namespace {
// Buffer numbers: the kind of place in the high bits, its index below.
constexpr uint64_t kInputBuffer = uint64_t{1} << 32, kOutputBuffer = uint64_t{2} << 32,
                   kArenaBuffer = uint64_t{3} << 32;

std::atomic<void (*)(Plan&)> g_plan_edit_hook{nullptr};
}  // namespace

namespace testing {
void set_plan_edit_hook(void (*hook)(Plan&)) { g_plan_edit_hook.store(hook); }
void apply_plan_edit_hook(Plan& plan) {
  if (auto* hook = g_plan_edit_hook.load(std::memory_order_relaxed)) hook(plan);
}
}  // namespace testing

PlanOrderCheck::PlanOrderCheck(const Plan& plan, const Fragment& fragment, std::vector<int> stream_ids,
                               std::string streams)
    : plan_(plan),
      fragment_(fragment),
      stream_ids_(std::move(stream_ids)),
      streams_(std::move(streams)),
      checker_(static_cast<int>(stream_ids_.size())),
      event_of_step_(plan.steps.size(), -1) {}

void PlanOrderCheck::add_value(int v, bool write, std::vector<BufferAccess>& out) const {
  const int c = plan_.canonical[v];
  const Placement& p = plan_.placement[c];
  const int64_t bytes = static_cast<int64_t>(fragment_.values[c].nbytes());
  if (bytes == 0) return;
  switch (p.where) {
    case Placement::Where::kInput: out.push_back({kInputBuffer | static_cast<uint64_t>(p.index), 0, bytes, write, c}); break;
    case Placement::Where::kOutput: out.push_back({kOutputBuffer | static_cast<uint64_t>(p.index), 0, bytes, write, c}); break;
    case Placement::Where::kArena: out.push_back({kArenaBuffer, p.offset, p.offset + bytes, write, c}); break;
    case Placement::Where::kNone: break;  // a constant inlined into its readers
  }
}

void PlanOrderCheck::wait_for_step(int slot, int dep) {
  if (event_of_step_[dep] >= 0) checker_.wait(slot, event_of_step_[dep]);
}

void PlanOrderCheck::signal(int slot, int s) { event_of_step_[s] = checker_.record(slot); }

void PlanOrderCheck::step(int slot, int s) {
  const PlanStep& st = plan_.steps[s];
  std::vector<BufferAccess> accesses;
  // An aliasing node (reshape) touches no bytes: its output is its input's
  // buffer, planned as one. Its events still order the steps around it.
  const bool aliases = st.kind == PlanStep::Kind::kNode && fragment_.nodes[st.node].op->def().output_aliases_input;
  if (!aliases) {
    for (int v : st.reads) add_value(v, false, accesses);
    for (int v : st.writes) add_value(v, true, accesses);
  }
  check(slot, s, accesses);
}

void PlanOrderCheck::finish(int slot) {
  std::vector<BufferAccess> accesses;
  for (int v : fragment_.outputs) add_value(v, false, accesses);
  check(slot, kHandBackStep, accesses);
}

void PlanOrderCheck::check(int slot, int step, const std::vector<BufferAccess>& accesses) {
  std::optional<StreamHazard> h = checker_.enqueue(slot, step, accesses);
  if (!h) return;
  auto on = [&](int slot_index) { return streams_ + " " + std::to_string(stream_ids_[slot_index]); };
  throw CheckError("WOK_CHECK_STREAMS: " + describe_step(h->step) + ", on " + on(h->stream) + ", " +
                   hazard_kind_text(h->kind) + " by " + describe_step(h->other_step) + ", on " +
                   on(h->other_stream) + ", and no event orders the two: " + describe_bytes(h->access) +
                   ". The run stops before that step.");
}

std::string PlanOrderCheck::describe_step(int s) const {
  if (s == kHandBackStep) return "handing back the outputs";
  const PlanStep& st = plan_.steps[s];
  // The node behind the step: its own, or the one producing what it writes.
  int node = st.node;
  if (st.kind == PlanStep::Kind::kKernel && !st.writes.empty()) {
    for (size_t n = 0; n < fragment_.nodes.size() && node < 0; ++n)
      for (int v : fragment_.nodes[n].outputs)
        if (plan_.canonical[v] == plan_.canonical[st.writes[0]]) node = static_cast<int>(n);
  }
  std::string text = "step " + std::to_string(s) + " (";
  text += st.kind == PlanStep::Kind::kKernel ? "fused kernel '" + st.group + "'"
                                             : "'" + fragment_.nodes[st.node].op->name() + "' precompiled";
  if (node >= 0) {
    std::string site = observe::site_str(fragment_.nodes[node].site, fragment_.nodes[node].caller);
    if (!site.empty()) text += ", recorded at " + site;
  }
  return text + ")";
}

std::string PlanOrderCheck::describe_bytes(const BufferAccess& a) const {
  const uint64_t kind = a.buffer & ~uint64_t{0xffffffff};
  const int index = static_cast<int>(a.buffer & 0xffffffff);
  const char* where = kind == kInputBuffer ? "input " : kind == kOutputBuffer ? "output buffer " : "the plan's arena";
  std::string text;
  if (a.tag >= 0) {
    const TensorMeta& m = fragment_.values[a.tag];
    text = "value " + std::to_string(a.tag) + " (" + std::string(dtype_name(m.dtype)) + shape_str(m.shape) + "), ";
  }
  text += "bytes [" + std::to_string(a.begin) + ", " + std::to_string(a.end) + ") of ";
  text += where;
  if (kind != kArenaBuffer) text += std::to_string(index);
  return text;
}

}  // namespace wok::jit
