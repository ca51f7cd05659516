#include "wok/jit/step_order.h"

namespace wok::jit {

StepOrder::StepOrder(const std::vector<PlanStep>& steps)
    : words_((steps.size() + 63) / 64), before_(steps.size() * words_, 0) {
  std::vector<int> last_on_lane;
  auto inherit = [&](size_t s, int from) {
    uint64_t* row = &before_[s * words_];
    const uint64_t* src = &before_[static_cast<size_t>(from) * words_];
    for (size_t w = 0; w < words_; ++w) row[w] |= src[w];
    row[from / 64] |= uint64_t{1} << (from % 64);
  };
  for (size_t s = 0; s < steps.size(); ++s) {
    const PlanStep& st = steps[s];
    if (st.lane >= static_cast<int>(last_on_lane.size())) last_on_lane.resize(st.lane + 1, -1);
    if (int prev = last_on_lane[st.lane]; prev >= 0) inherit(s, prev);
    for (int d : st.deps) inherit(s, d);  // deps point backwards (ordered plans)
    last_on_lane[st.lane] = static_cast<int>(s);
  }
}

bool StepOrder::all_before(const BufferUses& first, const BufferUses& then) const {
  for (int w : then.writes) {
    for (int u : first.writes)
      if (!happens_before(u, w)) return false;
    for (int u : first.reads)
      if (!happens_before(u, w)) return false;
  }
  return true;
}

}  // namespace wok::jit
