// Conversions between any two dtypes over buffers, and the adapter that
// lets a precompiled kernel written for the compute dtypes serve every
// dtype (Note [Compute dtypes] in runtime/dtype.h).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "wok/runtime/dtype.h"
#include "wok/runtime/kernel.h"
#include "wok/runtime/op_def.h"
#include "wok/runtime/scalar_formula.h"

namespace wok {

// dst[i] = src[i] cast from `from` to `to` (runtime/element_cast.h), over
// the thread pool for large n.
void convert_elements(DType from, const void* src, DType to, void* dst, int64_t n);

// The native set of a kernel with loops for uint64 as well: the compute
// dtypes and uint64, the one dtype the adapter has no wider type for.
inline constexpr DTypeMask kComputeAndUInt64DTypeMask = kComputeDTypeMask | dtype_bit(DType::kUInt64);

// Note [The widening adapter]
// Most precompiled kernels are instantiated for the five compute dtypes.
// `widening_kernel(fn, native)` returns a kernel that runs fn directly when
// every operand's dtype is in `native`, and otherwise converts each other
// input to its compute dtype (exact: float16 and bfloat16 to float32,
// narrow integers to int32, uint32 to int64), runs fn on those, and rounds
// or wraps each such output back once. So an op on float16 computes in
// float32 and rounds once per op, as the JIT does per fused kernel, and an
// op on int8 gives the bits NumPy's wrapping int8 arithmetic gives. A dtype
// whose compute dtype the kernel still lacks (uint64, which has no wider
// type) runs `fallback()` instead where it gives a kernel (the formula
// kernel, for an op with a formula), else raises DTypeError naming the op.
//
// The scratch buffers and the conversions are the device's own
// (DeviceWidening): host memory and convert_elements on the CPU; on CUDA,
// device memory and the cast kernel, queued on the kernel's stream
// (runtime/cuda/cuda_kernels.cpp), so a reduction or a matmul on float16
// computes there as it does here.
struct DeviceWidening {
  std::string device_name;  // for errors: "the CPU kernel of op 'sum' does not take uint64"
  // `bytes` of scratch on ctx's device: `holder` owns it, `data` is its
  // address.
  struct Buffer {
    std::shared_ptr<void> holder;
    void* data = nullptr;
  };
  std::function<Buffer(const KernelContext& ctx, size_t bytes)> scratch;
  // `to` = `from` element by element (the same shape), on ctx's device.
  std::function<void(const KernelContext& ctx, const TensorRef& from, const TensorRef& to)> convert;
  // Called with every holder once the adapter has queued its last use of
  // them (also when a step threw): a device whose work runs later keeps
  // them until it has; the CPU's are freed when dropped.
  std::function<void(const KernelContext& ctx, std::vector<std::shared_ptr<void>>& holders)> release;
};
// The CPU's: host allocator scratch, convert_elements.
const DeviceWidening& host_widening();

KernelFn widening_kernel(KernelFn fn, DTypeMask native, std::function<const KernelFn*()> fallback = {},
                         const DeviceWidening& device = host_widening());

// The dtypes op's outputs are computed in when its inputs are
// `widened_inputs`: those the op's dtype rule gives for them where `native`
// takes them (sqrt of int8 is float32, of its int32 stand-in float64), else
// widen(output's own dtype).
std::vector<DType> widened_output_dtypes(const OpDef& def, std::span<const DType> widened_inputs, const Attrs& attrs,
                                         std::span<const DType> outputs, DTypeMask native,
                                         const std::function<DType(DType)>& widen);

// The program of op's formula on these dtypes as the CPU's precompiled
// kernels run it: the formula at the inputs' compute dtypes, reading each
// input in its own dtype and widening it first; its outputs in the dtypes
// the op's rule gives for the widened inputs where those are compute
// dtypes (rsqrt of int8 computes in float64, as the widening adapter
// does), else in their own (a cast to bfloat16 from float64 rounds once,
// as the cast kernel does); each output cast to its own dtype. The CUDA
// formula kernels render it, so an op on int8 or float16 gives the CPU's
// bits there too.
ScalarProgram widened_formula(const OpDef& def, std::span<const DType> inputs, std::span<const DType> outputs,
                              const Attrs& attrs);

// Whether every input and output of ctx is of a dtype in `m`.
bool operands_in(const KernelContext& ctx, DTypeMask m);

}  // namespace wok
