// Which steps of a plan finish before which others start, on every replay.
//
// Note [Arena reuse across lanes]
// Under stream replay (jit/plan_stream_replay.cpp) each lane is a stream:
// steps on one lane run in order, steps on different lanes run at the same
// time unless an event orders them (a dependency). Two arena buffers may
// therefore share bytes only when every use of one happens before every
// write of the other: through a chain of same-lane order and dependencies.
// Step indices alone would let a step on one lane overwrite a buffer that
// another lane is still reading. The sequential replay runs steps in index
// order, which respects every such chain, so one rule serves both.
#pragma once

#include <cstdint>
#include <vector>

#include "wok/jit/plan.h"

namespace wok::jit {

// The steps that write and that read one buffer.
struct BufferUses {
  std::vector<int> writes, reads;
};

class StepOrder {
 public:
  explicit StepOrder(const std::vector<PlanStep>& steps);

  // Step a finishes before step b starts, on every replay.
  bool happens_before(int a, int b) const {
    return a != b && (before_[static_cast<size_t>(b) * words_ + a / 64] >> (a % 64) & 1);
  }
  // The two buffers are never live at the same time: one's uses all happen
  // before the other's first write.
  bool apart(const BufferUses& a, const BufferUses& b) const { return all_before(a, b) || all_before(b, a); }

 private:
  bool all_before(const BufferUses& first, const BufferUses& then) const;

  size_t words_ = 0;
  std::vector<uint64_t> before_;  // row b: the steps that happen before b
};

}  // namespace wok::jit
