#include "wok/frontend/backends.h"

#include "wok/jit/cuda/cuda_jit_runner.h"
#include "wok/jit/jit_runner.h"

namespace wok::detail {

void install_backends_once_slow() {
  jit::install_cpu_jit();
  jit::cuda::install_cuda_runners();  // loads nothing until a fragment runs on a GPU
}

}  // namespace wok::detail
