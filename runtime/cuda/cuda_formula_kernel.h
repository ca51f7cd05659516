// The precompiled CUDA kernel of every elementwise op: the op's scalar
// formula for its operands' dtypes and attributes, rendered into the loop
// of templates/wok_elementwise.cuh (templates/formula_kernel.cu.in) and
// compiled by NVRTC the first time a device needs that program. So no
// composite (gelu, sigmoid, clamp, ...) is spelled by hand in CUDA code,
// and a user op written as a formula alone runs on CUDA too; see Note
// [CUDA formula kernels] in cuda_formula_kernel.cpp.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include <absl/status/statusor.h>

#include "wok/runtime/kernel.h"
#include "wok/runtime/scalar_formula.h"

namespace wok::cuda {

// Everything the kernel's code depends on: the input dtypes and the program
// (attribute values are constants in it). The cache key.
std::string formula_kernel_signature(const ScalarProgram& program, std::span<const DType> input_dtypes);

struct FormulaKernelSource {
  std::string name;    // extern "C" entry point: wok_<op>_<hash of the signature>
  std::string source;  // complete translation unit; includes "wok_elementwise.cuh"
};

// The kernel of `program` over inputs of `input_dtypes`, named after `op`.
// Fails for programs with more than 3 inputs or other than one output, and
// for instructions without a CUDA rendering.
absl::StatusOr<FormulaKernelSource> render_formula_kernel(std::string_view op, const ScalarProgram& program,
                                                          std::span<const DType> input_dtypes);

// The KernelFn that OpRegistry::set_formula_kernel installs for CUDA.
void formula_kernel(const KernelContext& ctx);

}  // namespace wok::cuda
