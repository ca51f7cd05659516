// Loops of the precompiled elementwise kernels: split over the thread pool,
// inner loops specialised on contiguous (stride 1) and broadcast (stride 0)
// operands so the compiler vectorizes them.
#pragma once

#include "wok/runtime/kernels/cpu/isa.h"

#include <type_traits>

#include "wok/runtime/kernels/cpu/strided_loop.h"
#include "wok/runtime/thread_pool.h"
#include "wok/runtime/wrapping.h"

namespace wok::cpu {
// Per instruction-set build, like vm:: (see vec_math.h).
inline namespace WOK_ISA_NS {

// out[i] = f(in[i]) with In converted to C first.
template <typename In, typename C, typename Out, typename F>
void unary_loop(const KernelContext& ctx, F f) {
  const TensorRef& x = ctx.inputs[0];
  const TensorRef& y = ctx.outputs[0];
  int64_t n = y.numel();
  if (n == 0) return;
  StridedLayout<2> l = make_layout<2>(*y.shape, {x.shape});
  const In* xp = x.as<In>();
  Out* yp = y.as<Out>();
  parallel_for(n, kElementwiseGrain, [&](int64_t begin, int64_t end) {
    for_each_run(l, begin, end, [&](const int64_t* off, int64_t len) {
      Out* __restrict o = yp + off[0];
      const In* __restrict a = xp + off[1];
      if (l.inner_stride(1) == 1) {
        for (int64_t i = 0; i < len; ++i) o[i] = static_cast<Out>(f(static_cast<C>(a[i])));
      } else {
        Out v = static_cast<Out>(f(static_cast<C>(a[0])));
        for (int64_t i = 0; i < len; ++i) o[i] = v;
      }
    });
  });
}

// out[i] = f(a[i], b[i]) with inputs converted to C first.
template <typename In, typename C, typename Out, typename F>
void binary_loop(const KernelContext& ctx, F f) {
  const TensorRef& x = ctx.inputs[0];
  const TensorRef& w = ctx.inputs[1];
  const TensorRef& y = ctx.outputs[0];
  int64_t n = y.numel();
  if (n == 0) return;
  StridedLayout<3> l = make_layout<3>(*y.shape, {x.shape, w.shape});
  const In* ap = x.as<In>();
  const In* bp = w.as<In>();
  Out* yp = y.as<Out>();
  const int64_t sa = l.inner_stride(1), sb = l.inner_stride(2);
  parallel_for(n, kElementwiseGrain, [&](int64_t begin, int64_t end) {
    for_each_run(l, begin, end, [&](const int64_t* off, int64_t len) {
      Out* __restrict o = yp + off[0];
      const In* __restrict a = ap + off[1];
      const In* __restrict b = bp + off[2];
      if (sa == 1 && sb == 1) {
        for (int64_t i = 0; i < len; ++i) o[i] = static_cast<Out>(f(static_cast<C>(a[i]), static_cast<C>(b[i])));
      } else if (sa == 1) {
        const C bv = static_cast<C>(b[0]);
        for (int64_t i = 0; i < len; ++i) o[i] = static_cast<Out>(f(static_cast<C>(a[i]), bv));
      } else if (sb == 1) {
        const C av = static_cast<C>(a[0]);
        for (int64_t i = 0; i < len; ++i) o[i] = static_cast<Out>(f(av, static_cast<C>(b[i])));
      } else {
        Out v = static_cast<Out>(f(static_cast<C>(a[0]), static_cast<C>(b[0])));
        for (int64_t i = 0; i < len; ++i) o[i] = v;
      }
    });
  });
}

// out[i] = f(c[i], a[i], b[i]), any strides.
template <typename In0, typename T, typename Out, typename F>
void ternary_loop(const KernelContext& ctx, F f) {
  const TensorRef& y = ctx.outputs[0];
  int64_t n = y.numel();
  if (n == 0) return;
  StridedLayout<4> l =
      make_layout<4>(*y.shape, {ctx.inputs[0].shape, ctx.inputs[1].shape, ctx.inputs[2].shape});
  const In0* cp = ctx.inputs[0].as<In0>();
  const T* ap = ctx.inputs[1].as<T>();
  const T* bp = ctx.inputs[2].as<T>();
  Out* yp = y.as<Out>();
  const int64_t sc = l.inner_stride(1), sa = l.inner_stride(2), sb = l.inner_stride(3);
  parallel_for(n, kElementwiseGrain, [&](int64_t begin, int64_t end) {
    for_each_run(l, begin, end, [&](const int64_t* off, int64_t len) {
      Out* __restrict o = yp + off[0];
      const In0* __restrict c = cp + off[1];
      const T* __restrict a = ap + off[2];
      const T* __restrict b = bp + off[3];
      if (sc == 1 && sa == 1 && sb == 1) {
        for (int64_t i = 0; i < len; ++i) o[i] = f(c[i], a[i], b[i]);
      } else {
        for (int64_t i = 0; i < len; ++i) o[i] = f(c[i * sc], a[i * sa], b[i * sb]);
      }
    });
  });
}

}  // inline namespace WOK_ISA_NS
}  // namespace wok::cpu
