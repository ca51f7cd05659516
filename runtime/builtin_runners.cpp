#include "wok/runtime/backend.h"
#include "wok/runtime/executor.h"
#include "wok/jit/cuda/cuda_jit_runner.h"
#include "wok/jit/jit_runner.h"

namespace wok {

void install_builtin_runners() {
  static PrecompiledExecutor* cpu_precompiled = new PrecompiledExecutor();
  install_runner(Backend::kPrecompiled, DeviceType::kCPU, cpu_precompiled);
  jit::install_cpu_jit();
  jit::cuda::install_cuda_runners();  // loads nothing until a fragment runs on a GPU
}

}  // namespace wok
