// The stage list and its driver (Note [One pipeline] in jit/pipeline.h).
#include "wok/jit/pipeline.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "wok/jit/passes/passes.h"
#include "wok/jit/plan_stages.h"
#include "wok/jit/verify.h"
#include "wok/runtime/error.h"
#include "wok/runtime/observe/events.h"

namespace wok::jit {

namespace {

template <void (*pass)(PlanGraph&)>
void on_graph(PipelineState& s) {
  pass(s.graph);
}

constexpr Stage kStages[] = {
    {"common-subexpression elimination", on_graph<eliminate_common_subexpressions>, PlanLevel::kNone},
    {"dead-code elimination", on_graph<eliminate_dead_code>, PlanLevel::kNone},
    {"constant folding", on_graph<fold_constants>, PlanLevel::kNone},
    {"elementwise fusion", on_graph<fuse_elementwise>, PlanLevel::kNone},
    {"draft steps", draft_steps, PlanLevel::kDrafted},
    {"order steps", order_steps, PlanLevel::kOrdered},
    {"assign lanes", assign_lanes, PlanLevel::kLaned},
    {"plan memory", plan_memory, PlanLevel::kPlaced},
};

std::atomic<bool>& verify_flag() {
  static std::atomic<bool> flag = [] {
    const char* s = std::getenv("WOK_VERIFY");
    return s != nullptr && std::strcmp(s, "1") == 0;
  }();
  return flag;
}

void run_stage(const Stage& stage, PipelineState& s) {
  if (!WOK_OBSERVING(observe::EventKind::kPass)) {
    stage.run(s);
    return;
  }
  observe::Event e;
  e.kind = observe::EventKind::kPass;
  e.name = stage.name;
  int64_t start = observe::now_ns();
  stage.run(s);
  e.t_ns = observe::now_ns();
  e.dur_ns = e.t_ns - start;
  e.count = static_cast<int64_t>(s.graph.fragment.nodes.size());
  observe::emit(std::move(e));
}

}  // namespace

std::span<const Stage> pipeline_stages() { return kStages; }

bool verify_enabled() { return verify_flag().load(std::memory_order_relaxed); }
void set_verify(bool on) { verify_flag().store(on, std::memory_order_relaxed); }

void run_stages(PipelineState& s, std::span<const Stage> stages, std::vector<StageRecord>* records) {
  const bool verify = verify_enabled();
  for (const Stage& stage : stages) {
    run_stage(stage, s);
    if (verify) {
      absl::Status st = verify_stage(s, stage);
      if (!st.ok()) throw Error(std::string(st.message()));
    }
    if (records)
      records->push_back({stage.name, stage.level == PlanLevel::kNone ? s.graph.str() : s.plan.str()});
  }
}

std::shared_ptr<Plan> run_pipeline(PlanGraph& graph, std::vector<StageRecord>* records) {
  auto plan = std::make_shared<Plan>();
  PipelineState s{graph, *plan, {}};
  run_stages(s, pipeline_stages(), records);
  plan->graph_text = graph.str();
  return plan;
}

void run_graph_passes(PlanGraph& graph) {
  Plan unused;
  PipelineState s{graph, unused, {}};
  std::span<const Stage> all = pipeline_stages();
  size_t n = 0;
  while (n < all.size() && all[n].level == PlanLevel::kNone) ++n;
  run_stages(s, all.first(n), nullptr);
}

}  // namespace wok::jit
