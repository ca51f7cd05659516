// The precompiled CUDA kernels: host side. The elementwise ops (every op
// with a formula) run on formula kernels rendered from their formulas and
// compiled by NVRTC at first use (cuda_formula_kernel.h). The rest (full,
// the movement ops, matmul, reductions) have device code in
// runtime/kernels/cuda/*.cu (one module per file), built by nvcc into
// fatbins embedded in the library when CMake found the toolkit, and
// otherwise compiled by NVRTC from the embedded sources the first time a
// device needs a module. Each op gets a KernelFn for DeviceType::kCUDA that
// launches on the calling thread's current stream (cuda_stream.h).
#pragma once

#include <string>

#include "wok/runtime/cuda/cuda_driver.h"
#include "wok/runtime/dtype.h"

namespace wok {

class OpRegistry;

// Registers a CUDA kernel for every elementwise, reduction, movement and
// creation op, and matmul. Called by OpRegistry::global(); it touches no
// driver, so it is harmless on machines without CUDA (the kernels report
// what is missing if they are ever called).
void register_builtin_cuda_kernels(OpRegistry& registry);

namespace cuda {

// The function `kernel` of precompiled module `module` ("misc", "reduce") on `device`, loading the module on first use. Throws
// wok::DeviceError when it cannot be loaded or has no such kernel.
CUfunction precompiled_function(int device, const std::string& module, const std::string& kernel);

// The dtype's part of a kernel name: b8, i32, i64, f32, f64.
std::string dtype_abbr(DType t);

// Where a module's code came from on `device`: "fatbin (sm_90)",
// "NVRTC (sm_90)", or "" if not loaded yet. For diagnostics and tests.
std::string precompiled_module_origin(int device, const std::string& module);

// Threads per block of every 1-D launch, and the launch width for n
// elements: enough blocks to fill the device, each thread looping over the
// rest (grid-stride).
inline constexpr unsigned kThreads = 256;
unsigned grid_for(int device, int64_t n);

// cuLaunchKernel with one by-value struct argument, on `stream`.
void launch(CUfunction fn, unsigned grid_x, unsigned grid_y, unsigned grid_z, unsigned block_x, unsigned block_y,
            CUstream stream, void* args, const char* what);

}  // namespace cuda
}  // namespace wok
