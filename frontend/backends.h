// Installs the runners of the layers above runtime/ (the CPU JIT, the CUDA
// runners) once per process. Called where the frontend records work, which
// every evaluation needs first; runtime/ installs its precompiled executor
// itself and never reaches up for the others.
#pragma once

namespace wok::detail {

void install_backends_once_slow();

inline void install_backends_once() {
  static const bool installed = (install_backends_once_slow(), true);
  (void)installed;
}

}  // namespace wok::detail
