// Precompiled kernels of the built-in unary ops, compiled from the same
// formula text the JIT builds its program from (runtime/ops/
// unary_op_list.h): each line's formula is expanded here with `x` a scalar
// value and `fx` the scalar functions below, so the compiler fuses and
// vectorizes the whole composite into one loop, as a hand-written kernel
// would be. (The formula kernel, formula_kernel.cpp, evaluates a formula
// one primitive at a time: right for any op, user ops included, but a
// composite like gelu made one pass per instruction there and ran at a
// third of memory bandwidth.)
#include "wok/runtime/kernels/cpu/isa.h"

#include <cmath>
#include <type_traits>

#include "wok/runtime/kernels/cpu/formula_values.h"
#include "wok/runtime/kernels/cpu/strided_loop.h"
#include "wok/runtime/ops/formula_helpers.h"
#include "wok/runtime/thread_pool.h"

namespace wok::cpu::WOK_ISA_NS {

namespace {

// out[i] = f(x[i]) with x converted to C first; x contiguous or one value.
template <typename In, typename C, typename Out, typename F>
void unary_loop(const KernelContext& ctx, F f) {
  const TensorRef& x = ctx.inputs[0];
  const TensorRef& y = ctx.outputs[0];
  const int64_t n = y.numel();
  if (n == 0) return;
  StridedLayout<2> l = make_layout<2>(*y.shape, {x.shape});
  const In* xp = x.as<In>();
  Out* yp = y.as<Out>();
  parallel_for(n, kElementwiseGrain, [&](int64_t begin, int64_t end) {
    for_each_run(l, begin, end, [&](const int64_t* off, int64_t len) {
      Out* __restrict o = yp + off[0];
      const In* __restrict a = xp + off[1];
      if (l.inner_stride(1) == 1) {
        for (int64_t i = 0; i < len; ++i) o[i] = f(V<C>{static_cast<C>(a[i])}).v;
      } else {
        const Out v = f(V<C>{static_cast<C>(a[0])}).v;
        for (int64_t i = 0; i < len; ++i) o[i] = v;
      }
    });
  });
}

template <ResultRule R, bool kTakesBool, typename F>
KernelFn unary_formula_kernel(F f) {
  return [f](const KernelContext& ctx) {
    visit_input_dtype<kTakesBool>(ctx, [&](auto tag) {
      using In = decltype(tag);
      // A predicate (isnan) reads its input as it is; the rest compute in their result's dtype.
      using C = std::conditional_t<R == ResultRule::kCompare, In, result_t<R, In>>;
      unary_loop<In, C, result_t<R, In>>(ctx, f);
    });
  };
}

}  // namespace

void register_unary_formula_kernels(OpRegistry& r) {
#define WOK_UNARY_OP(name, rule, takes_bool, expr, doc)                                             \
  r.add_kernel(#name, DeviceType::kCPU, unary_formula_kernel<ResultRule::rule, takes_bool>([](auto x) { \
                 using fx [[maybe_unused]] = ScalarFx;                                                \
                 using namespace ::wok::formula;                                                      \
                 return expr;                                                                         \
               }));
#include "wok/runtime/ops/unary_op_list.h"
#undef WOK_UNARY_OP
}

}  // namespace wok::cpu::WOK_ISA_NS
