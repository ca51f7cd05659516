#include "wok/jit/jit_runner.h"

#include "wok/jit/plan_cache.h"
#include "wok/runtime/backend.h"

namespace wok::jit {

std::vector<StoragePtr> JitRunner::run(const Fragment& fragment, std::span<const StoragePtr> input_storage) {
  std::shared_ptr<const Plan> plan = PlanCache::global().get_or_build(fragment, isa_);
  return replay_plan(*plan, fragment, input_storage);
}

void install_cpu_jit() {
  CpuIsa isa = host_cpu_isa();
  if (isa == CpuIsa::kBaseline) return;  // runner_for() falls back, with a notice
  static JitRunner* runner = new JitRunner(isa);
  install_runner(Backend::kJit, DeviceType::kCPU, runner);
}

}  // namespace wok::jit
