// Stream replay of a plan: its steps on pooled streams, one per lane, with
// events ordering steps across lanes.
#include <mutex>

#include "wok/jit/plan.h"
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

void replay_plan_on_streams(std::shared_ptr<const Plan> plan, std::shared_ptr<FragmentJob> job,
                            std::shared_ptr<AsyncResult> result, std::shared_ptr<std::vector<StoragePtr>> inputs) {
  auto state = std::make_shared<StreamRun>();
  state->plan = plan;
  state->job = job;
  state->result = result;
  StreamPool& pool = StreamPool::global();
  const int lanes = std::min(plan->lanes, pool.size());
  Stream& first = pool.next();
  std::vector<Stream*> stream(lanes);
  for (int l = 0; l < lanes; ++l) stream[l] = &pool.at(first.id() + l);

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
    for (int l = 1; l < lanes; ++l) stream[l]->wait_event(ready);
  }
  std::vector<EventPtr> done(plan->steps.size());
  for (size_t s = 0; s < plan->steps.size(); ++s) {
    const PlanStep& st = plan->steps[s];
    Stream& on = *stream[st.lane % lanes];
    for (int d : st.deps)
      if (done[d]) on.wait_event(done[d]);
    on.enqueue([state, s] {
      if (state->failed()) return;
      try {
        state->run->run_step(s);
      } catch (...) {
        state->fail(std::current_exception());
      }
    });
    if (st.signals) done[s] = on.record();
  }
  for (int l = 1; l < lanes; ++l) stream[0]->wait_event(stream[l]->record());
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
}

}  // namespace wok::jit
