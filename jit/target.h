// What a backend's code generator can fuse and compile. The passes and the
// lowering ask the target of the plan they build, never a backend directly,
// so a CUDA plan fuses by CUDA's rules and an x86 plan by x86's.
#pragma once

#include <string_view>

#include "wok/runtime/scalar_formula.h"

namespace wok::jit {

struct Target {
  std::string_view name;  // "x86", "cuda": for dumps and messages
  // Row, column and all-axis reduction kernels (with their prologues and
  // epilogues); without them a reduction ends a fused group and runs on the
  // precompiled kernels.
  bool fuses_reductions = false;
  // Matmuls as generated GEMM kernels with their epilogues fused; without
  // them a matmul runs on its precompiled kernel.
  bool fuses_gemm = false;
  // Dims a fused kernel's collapsed layout may keep.
  int max_rank = 0;
  // Whether the generator has an emitter for every instruction of `program`
  // at its dtypes.
  bool (*can_compile)(const ScalarProgram& program) = nullptr;
};

// asmjit x86-64 kernels (jit/x86/): elementwise, row, column, split and
// argmax kernels.
const Target& x86_target();
// NVRTC-compiled CUDA kernels (jit/cuda/): elementwise groups.
const Target& cuda_target();

}  // namespace wok::jit
