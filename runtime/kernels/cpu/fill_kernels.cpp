// Precompiled kernel of full, the creation op that writes one value
// everywhere. (Elementwise ops need no kernel here: formula_kernel.cpp
// evaluates their formulas.)
#include "wok/runtime/kernels/cpu/isa.h"
#include "wok/runtime/kernels/cpu/strided_loop.h"
#include "wok/runtime/op_registry.h"
#include "wok/runtime/thread_pool.h"

namespace wok::cpu::WOK_ISA_NS {

namespace {

void full_kernel(const KernelContext& ctx) {
  const TensorRef& y = ctx.outputs[0];
  visit_any_dtype(y.dtype, [&](auto tag) {
    using T = decltype(tag);
    const T v = ctx.attrs.get_scalar("value").template to<T>();
    T* out = y.as<T>();
    parallel_for(y.numel(), kElementwiseGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) out[i] = v;
    });
  });
}

}  // namespace

void register_fill_kernels(OpRegistry& r) { r.add_kernel("full", DeviceType::kCPU, full_kernel, kAllDTypeMask); }

}  // namespace wok::cpu::WOK_ISA_NS
