// Lane assignment (a stage of jit/pipeline.h): which stream of a run
// executes each step (jit/plan_stream_replay.cpp).
#include <algorithm>

#include "wok/jit/plan_stages.h"
#include "wok/runtime/op_registry.h"

namespace wok::jit {

// Note [The communication lane]
// A collective (OpDef::communicates) waits on other processes for as long
// as the transfer takes, mostly idle. Its steps get a lane of their own,
// which no other step continues, so the replay on streams
// (jit/plan_stream_replay.cpp) issues them on a stream of the pool where
// they wait beside the compute that does not depend on them; steps that
// read a collective's result wait for its event like any cross-lane read.
// One lane for all of a plan's collectives keeps them in step order, which
// is the same on every rank (the same program plans the same steps), so
// every rank issues them in one order. The JIT runner takes the stream path
// for every plan that communicates and has other lanes, whatever its size.
// A plan whose compute all feeds or follows its collectives (a lone
// all_reduce of a fresh value) has nothing to overlap: there the
// collectives take lanes like any step, and a one-lane plan runs on the
// caller's thread without a hop to a stream.

namespace {
bool is_collective(const PlanStep& st, const Fragment& f) {
  return st.kind == PlanStep::Kind::kNode && f.nodes[static_cast<size_t>(st.node)].op->def().communicates;
}

// Whether some compute step is neither an ancestor nor a descendant of
// some collective step (steps are in a valid order: deps come first).
bool compute_beside_collectives(const Plan& plan, const Fragment& f) {
  const size_t n = plan.steps.size();
  std::vector<std::vector<bool>> ancestor(n, std::vector<bool>(n, false));
  for (size_t s = 0; s < n; ++s)
    for (int d : plan.steps[s].deps) {
      ancestor[s][static_cast<size_t>(d)] = true;
      for (size_t a = 0; a < n; ++a)
        if (ancestor[static_cast<size_t>(d)][a]) ancestor[s][a] = true;
    }
  for (size_t c = 0; c < n; ++c) {
    if (!is_collective(plan.steps[c], f)) continue;
    for (size_t s = 0; s < n; ++s)
      if (!is_collective(plan.steps[s], f) && !ancestor[c][s] && !ancestor[s][c]) return true;
  }
  return false;
}
}  // namespace

// Splits the steps into chains: a step continues the lane of a dependency
// that was the last step of its lane, else opens a new lane (up to
// kMaxLanes compute lanes). Collectives go on the communication lane.
// Steps read across lanes through events.
void assign_lanes(PipelineState& state) {
  Plan& plan = state.plan;
  const Fragment& f = state.graph.fragment;
  constexpr int kMaxLanes = 4;
  std::vector<int> tail;           // last step of each lane
  std::vector<int> compute_lanes;  // every lane but the communication lane
  int comm_lane = -1;
  for (const PlanStep& st : plan.steps) plan.communicates = plan.communicates || is_collective(st, f);
  const bool comm_lane_pays = plan.communicates && compute_beside_collectives(plan, f);
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    PlanStep& st = plan.steps[s];
    int lane = -1;
    if (plan.communicates && !comm_lane_pays) {
      // Nothing to overlap: one lane, so that the collectives keep the
      // steps' order (independent ones on several lanes would race).
      lane = 0;
      if (tail.empty()) tail.push_back(-1);
    } else if (comm_lane_pays && is_collective(st, f)) {
      if (comm_lane < 0) {
        comm_lane = plan.comm_lane = static_cast<int>(tail.size());
        tail.push_back(-1);
      }
      lane = comm_lane;
    } else {
      for (int d : st.deps)
        if (plan.steps[d].lane != comm_lane && tail[plan.steps[d].lane] == d) {
          lane = plan.steps[d].lane;
          break;
        }
    }
    if (lane < 0) {
      if (static_cast<int>(compute_lanes.size()) < kMaxLanes) {
        lane = static_cast<int>(tail.size());
        tail.push_back(-1);
        compute_lanes.push_back(lane);
      } else {
        int dep_lane = st.deps.empty() ? -1 : plan.steps[st.deps[0]].lane;
        lane = dep_lane >= 0 && dep_lane != comm_lane ? dep_lane : compute_lanes[s % compute_lanes.size()];
      }
    }
    st.lane = lane;
    tail[lane] = static_cast<int>(s);
    for (int d : st.deps)
      if (plan.steps[d].lane != lane) plan.steps[d].signals = true;
    for (int v : st.writes) plan.work_elements += f.values[v].numel();
  }
  plan.lanes = std::max<int>(1, static_cast<int>(tail.size()));
}

}  // namespace wok::jit
