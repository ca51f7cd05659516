// Precompiled kernels of where, clamp, cast and full.
#include "wok/runtime/kernels/cpu/elementwise_loops.h"
#include "wok/runtime/kernels/cpu/elementwise_rules.h"
#include "wok/runtime/kernels/cpu/isa.h"
#include "wok/runtime/kernels/cpu/vec_math.h"

#include <limits>

namespace wok::cpu::WOK_ISA_NS {

namespace {

void where_kernel(const KernelContext& ctx) {
  visit_dtype(ctx.outputs[0].dtype, [&](auto tag) {
    using T = decltype(tag);
    ternary_loop<bool, T, T>(ctx, [](bool c, T a, T b) { return c ? a : b; });
  });
}

void clamp_kernel(const KernelContext& ctx) {
  visit_dtype(ctx.inputs[0].dtype, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) {
      unsupported_dtype(ctx, DType::kBool);
    } else {
      // The bounds convert like the formula's constants do (saturating).
      const T lo = Scalar(ctx.attrs.get_float("min")).cast(dtype_of<T>()).template to<T>();
      const T hi = Scalar(ctx.attrs.get_float("max")).cast(dtype_of<T>()).template to<T>();
      unary_loop<T, T, T>(ctx, [lo, hi](T x) { return vm::minimum(vm::maximum(x, lo), hi); });
    }
  });
}

// Float to integer: truncation, and for nan, infinities and values out of
// range the most negative integer, as x86's conversion instructions (and so
// the JIT) give. Spelled out because static_cast is undefined there.
template <typename Out, typename In>
inline Out float_to_int(In x) {
  constexpr In kLimit = static_cast<In>(std::numeric_limits<Out>::max()) + In(1);  // 2^31 or 2^63, exact
  bool out_of_range = !(x > -kLimit - In(1) && x < kLimit);  // also true for nan
  return out_of_range ? std::numeric_limits<Out>::min() : static_cast<Out>(x);
}

void cast_kernel(const KernelContext& ctx) {
  visit_dtype(ctx.inputs[0].dtype, [&](auto in_tag) {
    using In = decltype(in_tag);
    visit_dtype(ctx.outputs[0].dtype, [&](auto out_tag) {
      using Out = decltype(out_tag);
      if constexpr (std::is_floating_point_v<In> && is_wrapping_int_v<Out>) {
        unary_loop<In, In, Out>(ctx, [](In x) { return float_to_int<Out>(x); });
      } else {
        unary_loop<In, In, Out>(ctx, [](In x) { return x; });
      }
    });
  });
}

void full_kernel(const KernelContext& ctx) {
  const TensorRef& y = ctx.outputs[0];
  visit_dtype(y.dtype, [&](auto tag) {
    using T = decltype(tag);
    const T v = ctx.attrs.get_scalar("value").template to<T>();
    T* out = y.as<T>();
    parallel_for(y.numel(), kElementwiseGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) out[i] = v;
    });
  });
}

}  // namespace

void register_misc_elementwise_kernels(OpRegistry& r) {
  constexpr DeviceType cpu = DeviceType::kCPU;
  r.add_kernel("where", cpu, where_kernel);
  r.add_kernel("clamp", cpu, clamp_kernel);
  r.add_kernel("cast", cpu, cast_kernel);
  r.add_kernel("full", cpu, full_kernel);
}

}  // namespace wok::cpu::WOK_ISA_NS
