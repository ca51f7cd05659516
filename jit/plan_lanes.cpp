// Lane assignment (a stage of jit/pipeline.h): which stream of a run
// executes each step (jit/plan_stream_replay.cpp).
#include <algorithm>

#include "wok/jit/plan_stages.h"

namespace wok::jit {

// Splits the steps into chains: a step continues the lane of a dependency
// that was the last step of its lane, else opens a new lane (up to
// kMaxLanes). Steps read across lanes through events.
void assign_lanes(PipelineState& state) {
  Plan& plan = state.plan;
  const Fragment& f = state.graph.fragment;
  constexpr int kMaxLanes = 4;
  std::vector<int> tail;  // last step of each lane
  for (size_t s = 0; s < plan.steps.size(); ++s) {
    PlanStep& st = plan.steps[s];
    int lane = -1;
    for (int d : st.deps)
      if (tail[plan.steps[d].lane] == d) {
        lane = plan.steps[d].lane;
        break;
      }
    if (lane < 0) {
      if (static_cast<int>(tail.size()) < kMaxLanes) {
        lane = static_cast<int>(tail.size());
        tail.push_back(-1);
      } else {
        lane = st.deps.empty() ? static_cast<int>(s % kMaxLanes) : plan.steps[st.deps[0]].lane;
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
