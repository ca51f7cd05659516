// Precompiled kernels of the built-in binary ops, compiled from the same
// formula text the JIT builds its program from (runtime/ops/
// binary_op_list.h), as unary_formula_kernels.cpp does for the unary ops.
#include "wok/runtime/kernels/cpu/isa.h"

#include "wok/runtime/kernels/cpu/formula_values.h"
#include "wok/runtime/kernels/cpu/strided_loop.h"
#include "wok/runtime/ops/formula_helpers.h"
#include "wok/runtime/thread_pool.h"

namespace wok::cpu::WOK_ISA_NS {

namespace {

// What a binary formula's operands are converted to: comparisons compare
// the (common) input dtype, logical ops read truth values, the rest
// compute in their result's dtype.
template <ResultRule R, typename In>
using operand_t = std::conditional_t<R == ResultRule::kCompare, In,
                                     std::conditional_t<R == ResultRule::kLogical, bool, result_t<R, In>>>;

// out[i] = f(a[i], b[i]) with the inputs converted to C first; each input
// contiguous or one value along the innermost run.
template <typename In, typename C, typename Out, typename F>
void binary_loop(const KernelContext& ctx, F f) {
  const TensorRef& y = ctx.outputs[0];
  const int64_t n = y.numel();
  if (n == 0) return;
  StridedLayout<3> l = make_layout<3>(*y.shape, {ctx.inputs[0].shape, ctx.inputs[1].shape});
  const In* ap = ctx.inputs[0].as<In>();
  const In* bp = ctx.inputs[1].as<In>();
  Out* yp = y.as<Out>();
  const int64_t sa = l.inner_stride(1), sb = l.inner_stride(2);
  auto at = [](const In* p, int64_t i) { return V<C>{static_cast<C>(p[i])}; };
  parallel_for(n, kElementwiseGrain, [&](int64_t begin, int64_t end) {
    for_each_run(l, begin, end, [&](const int64_t* off, int64_t len) {
      Out* __restrict o = yp + off[0];
      const In* __restrict a = ap + off[1];
      const In* __restrict b = bp + off[2];
      if (sa == 1 && sb == 1) {
        for (int64_t i = 0; i < len; ++i) o[i] = f(at(a, i), at(b, i)).v;
      } else if (sa == 1) {
        const V<C> bv = at(b, 0);
        for (int64_t i = 0; i < len; ++i) o[i] = f(at(a, i), bv).v;
      } else if (sb == 1) {
        const V<C> av = at(a, 0);
        for (int64_t i = 0; i < len; ++i) o[i] = f(av, at(b, i)).v;
      } else {
        const Out v = f(at(a, 0), at(b, 0)).v;
        for (int64_t i = 0; i < len; ++i) o[i] = v;
      }
    });
  });
}

template <ResultRule R, bool kTakesBool, typename F>
KernelFn binary_formula_kernel(F f) {
  return [f](const KernelContext& ctx) {
    visit_input_dtype<kTakesBool>(ctx, [&](auto tag) {
      using In = decltype(tag);
      binary_loop<In, operand_t<R, In>, result_t<R, In>>(ctx, f);
    });
  };
}

}  // namespace

void register_binary_formula_kernels(OpRegistry& r) {
#define WOK_BINARY_OP(name, rule, takes_bool, expr, doc)                                                \
  r.add_kernel(#name, DeviceType::kCPU,                                                                 \
               binary_formula_kernel<ResultRule::rule, takes_bool>([](auto a, auto b) {                 \
                 using fx [[maybe_unused]] = ScalarFx;                                                  \
                 using namespace ::wok::formula;                                                        \
                 return expr;                                                                           \
               }));
#include "wok/runtime/ops/binary_op_list.h"
#undef WOK_BINARY_OP
}

}  // namespace wok::cpu::WOK_ISA_NS
