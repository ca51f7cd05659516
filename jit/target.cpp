#include "wok/jit/target.h"

#include "wok/jit/cuda/cuda_renderer.h"
#include "wok/jit/x86/x86_codegen.h"

namespace wok::jit {

const Target& x86_target() {
  static const Target t{"x86", /*fuses_reductions=*/true, /*fuses_gemm=*/true, x86::kMaxRank, x86::can_compile};
  return t;
}

const Target& cuda_target() {
  static const Target t{"cuda", /*fuses_reductions=*/false, /*fuses_gemm=*/false, cuda::kMaxRenderedRank,
                        cuda::can_render};
  return t;
}

}  // namespace wok::jit
