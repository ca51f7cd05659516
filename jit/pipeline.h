// The JIT's pipeline: every stage from the first graph pass to the memory
// plan, as one named list run by one driver.
//
// Note [One pipeline]
// A fragment becomes a plan in eight stages. The first four are graph
// passes: they record decisions in a PlanGraph (jit/plan_graph.h). The last
// four build the Plan from that graph: draft the steps, order them, assign
// them lanes, place their values in memory. The driver runs them in list
// order, emits a kPass event per stage, records the IR after each when
// dumping (WOK_DUMP_DIR), and runs the IR verifier (jit/verify.h) after
// each when verification is on. A new stage is one more entry in the list.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "wok/jit/plan.h"
#include "wok/jit/plan_graph.h"

namespace wok::jit {

// What the stages work on: the graph, the plan being built from it, and
// the drafting order of the steps until they are ordered.
struct PipelineState {
  PlanGraph& graph;
  Plan& plan;
  std::vector<int> order_hint;  // per step of plan.steps: its first node, while unordered
};

// How far a Plan has been built: what the verifier may expect of it.
enum class PlanLevel { kNone, kDrafted, kOrdered, kLaned, kPlaced };

struct Stage {
  const char* name;
  void (*run)(PipelineState&);
  // kNone for graph passes; for plan stages, what the plan is once it ran.
  PlanLevel level;
};

// Every stage, in order.
std::span<const Stage> pipeline_stages();

struct StageRecord {
  std::string name;
  std::string after;  // the graph (graph passes) or the plan (plan stages) after the stage
};

// Runs `stages` over `state` in order. Records the IR after each into
// `records` when given; verifies it after each when verify_enabled(),
// throwing wok::Error with the verifier's message on a failure.
void run_stages(PipelineState& state, std::span<const Stage> stages, std::vector<StageRecord>* records);

// The whole pipeline over `graph` (fresh, for its fragment and target): a
// plan whose kernel steps are lowered but not compiled; `graph` is left
// with the passes' decisions. `records` as for run_stages.
std::shared_ptr<Plan> run_pipeline(PlanGraph& graph, std::vector<StageRecord>* records);

// The graph passes alone (the stages before "draft steps").
void run_graph_passes(PlanGraph& graph);

// Whether the verifier runs between stages: WOK_VERIFY=1 (read once), or
// as set by set_verify (tests).
bool verify_enabled();
void set_verify(bool on);

}  // namespace wok::jit
