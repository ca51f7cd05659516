// Helpers of the formulas in runtime/ops/unary_op_list.h, written once over
// any value type: `fx` is wok::fx when a formula is being built (E = Expr)
// and the precompiled kernels' scalar functions when the same formula is
// compiled as C++ (runtime/kernels/cpu/unary_formula_kernels.cpp).
// Plain numbers take the dtype of what they meet, on both.
#pragma once

namespace wok::formula {

// exp(-|x|) never overflows, so results stay accurate down to subnormals
// for large negative x (1 / (1 + exp(-x)) would give 0 there).
template <class fx, class E>
E stable_sigmoid(E x) {
  E e = fx::exp(-fx::abs(x));
  E d = 1.0 / (1.0 + e);
  return fx::where(fx::ge(x, 0.0), d, e * d);
}

// log(1 + e) for e >= 0 without losing e's low bits in 1 + e: with u the
// rounded 1 + e, log(u) * e / (u - 1) cancels the rounding error (Goldberg,
// "What every computer scientist should know about floating-point
// arithmetic", theorem 4); u == 1 means e is below half an ulp of 1.
template <class fx, class E>
E log1p_of(E e) {
  E u = 1.0 + e;
  return fx::where(fx::eq(u, 1.0), e, fx::log(u) * (e / (u - 1.0)));
}

}  // namespace wok::formula
