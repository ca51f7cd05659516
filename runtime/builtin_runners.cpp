#include "wok/runtime/backend.h"
#include "wok/runtime/executor.h"
#include "wok/jit/jit_runner.h"

namespace wok {

void install_builtin_runners() {
  static PrecompiledExecutor* cpu_precompiled = new PrecompiledExecutor();
  install_runner(Backend::kPrecompiled, DeviceType::kCPU, cpu_precompiled);
  jit::install_cpu_jit();
}

}  // namespace wok
