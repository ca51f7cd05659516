// A plan replay seen by the stream-ordering checker (WOK_CHECK_STREAMS,
// Note [Checking stream order] in runtime/stream_order_check.h): the CPU
// replay on pooled streams and the CUDA replay tell it each wait, step and
// event as they enqueue them, and it turns the plan's values into the byte
// ranges they occupy and a hazard into a report naming both steps.
#pragma once

#include <string>
#include <vector>

#include "wok/jit/plan.h"
#include "wok/runtime/stream_order_check.h"

namespace wok::jit {

class PlanOrderCheck {
 public:
  // `stream_ids[slot]` names the stream behind each slot of the replay
  // (for messages); `streams` is "CPU stream" or "CUDA stream".
  PlanOrderCheck(const Plan& plan, const Fragment& fragment, std::vector<int> stream_ids, std::string streams);

  // Step `s` is about to be enqueued on `slot`, after waiting for `dep`.
  void wait_for_step(int slot, int dep);
  // Step `s` is enqueued on `slot`; throws wok::CheckError on a hazard.
  void step(int slot, int s);
  // Step `s` signals the steps on other slots that wait for it.
  void signal(int slot, int s);
  // Plain events (the replay's start and join).
  int record(int slot) { return checker_.record(slot); }
  void wait(int slot, int event) { checker_.wait(slot, event); }
  // The outputs are handed back from `slot`: every write must be ordered
  // before it.
  void finish(int slot);

 private:
  void add_value(int v, bool write, std::vector<BufferAccess>& out) const;
  void check(int slot, int step, const std::vector<BufferAccess>& accesses);
  std::string describe_step(int step) const;
  std::string describe_bytes(const BufferAccess& a) const;

  const Plan& plan_;
  const Fragment& fragment_;
  std::vector<int> stream_ids_;
  std::string streams_;
  StreamOrderChecker checker_;
  std::vector<int> event_of_step_;
};

// The fragment's outputs are read back: the pseudo-step number finish()
// reports them under.
inline constexpr int kHandBackStep = -2;

namespace testing {
// Test-only: called on every plan build_plan makes, before it is cached;
// tests use it to drop an event on purpose. nullptr to remove.
void set_plan_edit_hook(void (*hook)(Plan&));
void apply_plan_edit_hook(Plan& plan);
}  // namespace testing

}  // namespace wok::jit
