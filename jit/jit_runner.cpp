#include "wok/jit/jit_runner.h"

#include <atomic>
#include <functional>
#include <mutex>

#include "wok/jit/async_compile.h"
#include "wok/jit/plan_cache.h"
#include "wok/jit/shadow.h"
#include "wok/runtime/backend.h"
#include "wok/runtime/error.h"
#include "wok/runtime/executor.h"
#include "wok/runtime/stream_order_check.h"

namespace wok::jit {

namespace {
// Below this much work, handing lanes to stream threads costs more than
// running the steps one after another on the caller's thread.
constexpr int64_t kMultiStreamMinElements = int64_t{1} << 20;

// Runs fragments while their plans compile in the background.
PrecompiledExecutor& fallback() {
  static PrecompiledExecutor* executor = new PrecompiledExecutor();
  return *executor;
}
}  // namespace

std::shared_ptr<const Plan> JitRunner::plan_for(const Fragment& fragment) {
  if (async_compile_enabled()) {
    if (std::shared_ptr<const Plan> plan = PlanCache::global().find(fragment, isa_)) return plan;
    if (compile_in_background(fragment, isa_)) return nullptr;
  }
  // Where the JIT's errors become the API's exception (Note [Errors inside
  // the JIT] in jit/plan.h).
  absl::StatusOr<std::shared_ptr<const Plan>> plan = PlanCache::global().get_or_build(fragment, isa_);
  if (!plan.ok()) throw Error("wok JIT: " + std::string(plan.status().message()));
  return *std::move(plan);
}

namespace {
// One run of `plan` for `fragment`, with its parameters when precomputed.
std::vector<StoragePtr> run_plan(const std::shared_ptr<const Plan>& plan, const Fragment& fragment,
                                 std::span<const StoragePtr> input_storage, const PlanParams* params) {
  // A shadow run would issue the plan's collectives a second time on this
  // rank alone.
  if (!plan->communicates && shadow_due()) {
    std::vector<StoragePtr> out = replay_plan(*plan, fragment, input_storage, params);
    shadow_compare(*plan, fragment, input_storage, out);
    return out;
  }
  // Under WOK_CHECK_STREAMS every plan with several lanes takes the stream
  // path, so that the checker sees its events whatever its size.
  // Plans that communicate take it too: their collectives wait beside the
  // compute (Note [The communication lane] in jit/plan_lanes.cpp).
  if (plan->lanes == 1 ||
      (plan->work_elements < kMultiStreamMinElements && !check_streams_enabled() && !plan->communicates))
    return replay_plan(*plan, fragment, input_storage, params);
  // Independent chains run on pooled streams; the caller waits for them.
  // The fragment outlives the wait, so the job need not own anything.
  auto job = std::make_shared<FragmentJob>();
  job->fragment = fragment;
  auto result = std::make_shared<AsyncResult>();
  std::vector<StoragePtr> inputs(input_storage.begin(), input_storage.end());
  auto resolved = std::make_shared<std::vector<StoragePtr>>(inputs);
  EventPtr released = replay_plan_on_streams(plan, job, result, resolved);
  try {
    result->done.wait();
  } catch (...) {
    // Note [Letting go of a failed run] in jit/plan_stream_replay.cpp. The
    // fence reports nothing of its own: the run's failure is what is thrown.
    try {
      released->wait();
    } catch (...) {
    }
    throw;
  }
  return result->outputs;
}

// Note [Prepared plans]
// wok::compile replays one fragment many times: its plan is looked up once
// (no signature bytes, no hash per call) and its kernels' parameters are
// computed once, so a replay costs the launches and the buffers. Under
// async compile the plan may still be building when the capture is
// prepared: until it is ready each run looks it up again and, while it is
// not, runs on the precompiled kernels, as an eager evaluation would.
class PreparedPlan final : public PreparedFragment {
 public:
  PreparedPlan(std::function<std::shared_ptr<const Plan>()> lookup, const Fragment& fragment)
      : lookup_(std::move(lookup)), fragment_(fragment) {
    adopt(lookup_());
  }

  std::vector<StoragePtr> run(std::span<const StoragePtr> input_storage) override {
    if (!ready_.load(std::memory_order_acquire)) {
      std::shared_ptr<const Plan> plan = lookup_();
      if (!plan) {
        set_fragment_delegate(fallback().name());
        return fallback().run(fragment_, input_storage);
      }
      adopt(std::move(plan));
    }
    return run_plan(plan_, fragment_, input_storage, &params_);
  }

 private:
  void adopt(std::shared_ptr<const Plan> plan) {
    if (!plan) return;
    std::lock_guard lock(mu_);
    if (ready_.load(std::memory_order_relaxed)) return;
    params_ = plan_params(*plan, fragment_);
    plan_ = std::move(plan);
    ready_.store(true, std::memory_order_release);
  }

  std::function<std::shared_ptr<const Plan>()> lookup_;
  const Fragment& fragment_;
  std::mutex mu_;
  std::atomic<bool> ready_{false};
  std::shared_ptr<const Plan> plan_;  // written once, before ready_
  PlanParams params_;
};
}  // namespace

std::vector<StoragePtr> JitRunner::run(const Fragment& fragment, std::span<const StoragePtr> input_storage) {
  std::shared_ptr<const Plan> plan = plan_for(fragment);
  if (!plan) {
    set_fragment_delegate(fallback().name());
    return fallback().run(fragment, input_storage);
  }
  return run_plan(plan, fragment, input_storage, nullptr);
}

std::unique_ptr<PreparedFragment> JitRunner::prepare(const Fragment& fragment) {
  return std::make_unique<PreparedPlan>([this, &fragment] { return plan_for(fragment); }, fragment);
}

void JitRunner::run_async(std::shared_ptr<FragmentJob> job, std::shared_ptr<AsyncResult> result) {
  std::shared_ptr<const Plan> plan = plan_for(job->fragment);
  if (!plan) {
    set_fragment_delegate(fallback().name());
    fallback().run_async(std::move(job), std::move(result));
    return;
  }
  replay_plan_on_streams(plan, job, result, nullptr);
}

void install_cpu_jit() {
  CpuIsa isa = host_cpu_isa();
  if (isa == CpuIsa::kBaseline) return;  // runner_for() falls back, with a notice
  static JitRunner* runner = new JitRunner(isa);
  install_runner(Backend::kJit, DeviceType::kCPU, runner);
}

}  // namespace wok::jit
