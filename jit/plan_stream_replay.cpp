// Stream replay of a plan: its steps on pooled streams, one per lane, with
// events ordering steps across lanes.
#include <mutex>
#include <optional>

#include "wok/jit/plan.h"
#include "wok/jit/plan_order_check.h"
#include "wok/runtime/error.h"
#include "wok/runtime/stream.h"

namespace wok::jit {

namespace {
// State shared by the tasks of one run on streams.
struct StreamRun {
  std::shared_ptr<const Plan> plan;
  std::shared_ptr<FragmentJob> job;
  std::shared_ptr<AsyncResult> result;
  std::unique_ptr<PlanRun> run;
  std::mutex mu;
  std::exception_ptr error;

  void fail(std::exception_ptr e) {
    std::lock_guard lock(mu);
    if (!error) error = std::move(e);
  }
  bool failed() {
    std::lock_guard lock(mu);
    return error != nullptr;
  }
};
}  // namespace

// Note [Letting go of a failed run]
// A run that fails completes its result with the exception, which the
// waiting caller rethrows and reads. The stream task that completed it
// still holds the run's state (and through it the result and the
// exception) until the task is destroyed, so without care the exception
// object can be destroyed on the stream thread after the caller read it.
// Its reference count lives in the C++ runtime, where ThreadSanitizer
// sees no ordering between the two threads, and reports a race on the
// exception's vptr. The event returned completes after that task is
// destroyed; a caller that waits on it before rethrowing holds the last
// reference itself.
EventPtr replay_plan_on_streams(std::shared_ptr<const Plan> plan, std::shared_ptr<FragmentJob> job,
                                std::shared_ptr<AsyncResult> result, std::shared_ptr<std::vector<StoragePtr>> inputs) {
  auto state = std::make_shared<StreamRun>();
  state->plan = plan;
  state->job = job;
  state->result = result;
  StreamPool& pool = StreamPool::global();
  // Compute lanes share the pool's streams from a rotating start (several
  // lanes to a stream when there are more lanes than streams); the
  // collectives' lane runs on the pool's communication stream.
  const int compute_lanes = plan->lanes - (plan->comm_lane >= 0 ? 1 : 0);
  const int compute_slots = std::min(compute_lanes, pool.size());
  const int lanes = compute_slots + (plan->comm_lane >= 0 ? 1 : 0);
  std::vector<int> slot_of_lane(static_cast<size_t>(plan->lanes));
  for (int l = 0, k = 0; l < plan->lanes; ++l)
    slot_of_lane[l] = l == plan->comm_lane ? compute_slots : (k++) % std::max(1, compute_slots);
  Stream& first = pool.next();
  std::vector<Stream*> stream(lanes);
  for (int l = 0; l < compute_slots; ++l) stream[l] = &pool.at(first.id() + l);
  if (plan->comm_lane >= 0) stream[compute_slots] = &pool.communication();

  // With WOK_CHECK_STREAMS, every wait, step and event below is also told
  // to the checker, which stops the run at the first step not ordered
  // after what it touches (Note [Checking stream order]).
  std::optional<PlanOrderCheck> check;
  if (check_streams_enabled()) {
    std::vector<int> ids(lanes);
    for (int l = 0; l < lanes; ++l) ids[l] = stream[l]->id();
    check.emplace(*plan, job->fragment, std::move(ids), "CPU stream");
  }

  // Lane 0 waits for the inputs and allocates the buffers; the others wait for it.
  stream[0]->enqueue([state, inputs] {
    try {
      state->run = std::make_unique<PlanRun>(*state->plan, state->job->fragment,
                                             inputs ? *inputs : state->job->input_storage());
    } catch (...) {
      state->fail(std::current_exception());
    }
  });
  if (lanes > 1) {
    EventPtr ready = stream[0]->record();
    const int ready_check = check ? check->record(0) : -1;
    for (int l = 1; l < lanes; ++l) {
      stream[l]->wait_event(ready);
      if (check) check->wait(l, ready_check);
    }
  }
  std::vector<EventPtr> done(plan->steps.size());
  try {
    for (size_t s = 0; s < plan->steps.size(); ++s) {
      const PlanStep& st = plan->steps[s];
      const int slot = slot_of_lane[st.lane];
      Stream& on = *stream[slot];
      for (int d : st.deps)
        if (done[d]) {
          on.wait_event(done[d]);
          if (check) check->wait_for_step(slot, d);
        }
      if (check) check->step(slot, static_cast<int>(s));
      on.enqueue([state, s] {
        if (state->failed()) return;
        try {
          state->run->run_step(s);
        } catch (...) {
          state->fail(std::current_exception());
        }
      });
      if (st.signals) {
        done[s] = on.record();
        if (check) check->signal(slot, static_cast<int>(s));
      }
    }
    for (int l = 1; l < lanes; ++l) {
      stream[0]->wait_event(stream[l]->record());
      if (check) check->wait(0, check->record(l));
    }
    if (check) check->finish(0);
  } catch (const CheckError&) {
    // Nothing after the bad step was enqueued; what was runs to the end
    // and the result carries the report.
    state->fail(std::current_exception());
    for (int l = 1; l < lanes; ++l) stream[0]->wait_event(stream[l]->record());
  }
  stream[0]->enqueue([state] {
    std::exception_ptr error;
    {
      std::lock_guard lock(state->mu);
      error = state->error;
    }
    if (!error) {
      try {
        state->result->outputs = state->run->results();
      } catch (...) {
        error = std::current_exception();
      }
    }
    state->run.reset();
    state->result->done.complete(error);
  });
  return stream[0]->record();
}

}  // namespace wok::jit
