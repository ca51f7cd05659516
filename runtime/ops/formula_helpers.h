// Helpers of the formulas in runtime/ops/unary_op_list.h and
// binary_op_list.h, written once over any value type: `fx` is wok::fx when
// a formula is being built (E = Expr) and the precompiled kernels' scalar
// functions when the same formula is compiled as C++
// (runtime/kernels/cpu/unary_formula_kernels.cpp). Plain numbers take the
// dtype of what they meet, on both.
//
// Note [Composite transcendentals]
// The inverse trigonometric and the hyperbolic functions are formulas over
// the primitives, not primitives: every backend (the x86 JIT, the
// precompiled kernels, CUDA) gets them, vectorized and fused, from the
// expressions below, and backends that agree on the primitives agree on
// these. Each is branch-free: every branch is computed and `where` picks
// (so a branch may divide by zero or overflow where it is not picked).
// fx::is_float32 is answered while the formula is built (at compile time in
// C++), so float32 evaluates a shorter polynomial than float64. Tiny
// arguments return x itself where f(x) = x (1 + O(x^2)) rounds to x: that
// keeps the sign of -0 and subnormal results without a copysign. Accuracy
// is measured by tests/jit_math_sweep_test.cpp and listed in
// docs/numerics.md.
#pragma once

#include <cstddef>
#include <limits>
#include <utility>

#include "wok/runtime/scalar_primitives.h"
#include "wok/runtime/vec_math_coeffs.h"

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

// log1p_of for any e >= -1: the same correction (it holds for e < 0 too),
// and log1p(inf) = inf, where the correction would be inf / inf.
template <class fx, class E>
E log1p_any(E e) {
  constexpr double kInf = std::numeric_limits<double>::infinity();
  E u = 1.0 + e;
  E r = fx::where(fx::eq(u, kInf), u, fx::log(u) * (e / (u - 1.0)));
  return fx::where(fx::eq(u, 1.0), e, r);
}

// c[0] x^(N-1) + ... + c[N-1], unrolled (a loop here would keep GCC from
// vectorizing the element loop around it).
template <class E, class C, size_t N, size_t... I>
E polynomial_unrolled(E x, const C (&c)[N], std::index_sequence<I...>) {
  E acc = x * static_cast<double>(c[0]) + static_cast<double>(c[1]);
  ((acc = acc * x + static_cast<double>(c[I + 2])), ...);
  return acc;
}
template <class E, class C, size_t N>
E polynomial(E x, const C (&c)[N]) {
  static_assert(N >= 2);
  return polynomial_unrolled(x, c, std::make_index_sequence<N - 2>{});
}

// Where odd functions with f(x) = x (1 + O(x^2)) return x: (2^-27)^2 is
// below float64's half ulp.
inline constexpr double kTiny = 0x1p-27;

// A constant given for each format (the parts of a split constant differ:
// vec_math_coeffs.h), as a number of like's dtype.
template <class fx, class E>
E in_format(E like, double for_float64, float for_float32) {
  return fx::number(like, fx::is_float32(like) ? static_cast<double>(for_float32) : for_float64);
}

// atan q for q in [0, 1] (or nan), fdlibm's reduction: q < 7/16 directly;
// q < 11/16 as atan(1/2) + atan((2q - 1)/(2 + q)); else pi/4 + atan((q - 1)/(q + 1)).
// The reduced t has |t| <= 7/16; 2q - 1 and q - 1 are exact (Sterbenz).
template <class fx, class E>
E atan_unit(E q) {
  namespace c = vmc;
  const bool f32 = fx::is_float32(q);
  auto mid = fx::ge(q, 0.4375), top = fx::ge(q, 0.6875);
  E num = fx::where(top, q - 1.0, fx::where(mid, 2.0 * q - 1.0, q));
  E den = fx::where(top, q + 1.0, fx::where(mid, q + 2.0, fx::number(q, 1.0)));
  E t = num / den;
  E hi = fx::where(top, in_format<fx>(q, c::kPio4HiD, c::kPio4HiF),
                   fx::where(mid, in_format<fx>(q, c::kAtanHalfHiD, c::kAtanHalfHiF), fx::number(q, 0.0)));
  E lo = fx::where(top, in_format<fx>(q, c::kPio4LoD, c::kPio4LoF),
                   fx::where(mid, in_format<fx>(q, c::kAtanHalfLoD, c::kAtanHalfLoF), fx::number(q, 0.0)));
  E z = t * t;
  E p = t * (z * (f32 ? polynomial(z, c::kAtanPolyF) : polynomial(z, c::kAtanPolyD)));
  return hi + (t + (p + lo));  // the small terms first
}

// pi/2 - r, with pi/2 carried in two parts.
template <class fx, class E>
E pio2_minus(E r) {
  return (in_format<fx>(r, vmc::kPio2HiD, vmc::kPio2HiF) - r) + in_format<fx>(r, vmc::kPio2LoD, vmc::kPio2LoF);
}

// Sign of x applied to r >= 0 (nan: r); x is not -0 here (see kTiny).
template <class fx, class E>
E with_sign_of(E x, E r) {
  return fx::where(fx::lt(x, 0.0), -r, r);
}

// atan x: |x| > 1 reduces to pi/2 - atan(1/|x|), then atan_unit.
template <class fx, class E>
E atan_of(E x) {
  E a = fx::abs(x);
  auto big = fx::gt(a, 1.0);
  E r = atan_unit<fx>(fx::where(big, 1.0 / a, a));  // inf: 1/inf = 0, pi/2
  r = fx::where(big, pio2_minus<fx>(r), r);
  return fx::where(fx::lt(a, kTiny), x, with_sign_of<fx>(x, r));
}

// atan2(y, x), the angle of (x, y) in [-pi, pi], as C's: the quotient of
// the smaller and the larger magnitude goes to atan_unit, then the octant
// is put back with hi + (+-r) + lo, hi one of 0, pi/2, pi. Signed zeros
// count: atan2(+-0, -0) = +-pi, atan2(-0, +0) = -0.
template <class fx, class E>
E atan2_of(E y, E x) {
  namespace c = vmc;
  constexpr double kInf = std::numeric_limits<double>::infinity();
  E ay = fx::abs(y), ax = fx::abs(x);
  auto swap = fx::gt(ay, ax);
  E num = fx::where(swap, ax, ay), den = fx::where(swap, ay, ax);
  E q = num / den;
  q = fx::where(fx::eq(den, 0.0), fx::number(q, 0.0), q);    // both zero
  q = fx::where(fx::eq(num, kInf), fx::number(q, 1.0), q);   // both infinite
  E r = atan_unit<fx>(q);
  // x < 0 by its sign bit: 1/x is -inf for x = -0.
  auto x_neg = fx::logical_or(fx::lt(x, 0.0), fx::lt(1.0 / x, 0.0));
  auto y_neg = fx::logical_or(fx::lt(y, 0.0), fx::lt(1.0 / y, 0.0));
  // Octants: r, pi/2 - r (swap), pi - r (x < 0), pi/2 + r (both).
  auto plus = fx::eq(swap, x_neg);
  E hi = fx::where(swap, in_format<fx>(q, c::kPio2HiD, c::kPio2HiF),
                   fx::where(x_neg, in_format<fx>(q, c::kPiHiD, c::kPiHiF), fx::number(q, 0.0)));
  E lo = fx::where(swap, in_format<fx>(q, c::kPio2LoD, c::kPio2LoF),
                   fx::where(x_neg, in_format<fx>(q, c::kPiLoD, c::kPiLoF), fx::number(q, 0.0)));
  E angle = (hi + fx::where(plus, r, -r)) + lo;
  angle = fx::where(y_neg, -angle, angle);
  // A nan operand: the zero and infinity fixes above may have hidden it.
  return fx::where(fx::logical_or(fx::ne(y, y), fx::ne(x, x)), y + x, angle);
}

// asin x = atan2(|x|, sqrt((1 - |x|)(1 + |x|))): 1 - |x| is exact where it
// matters (|x| >= 1/2), and the quotient stays in [0, 1]. |x| > 1 gives
// sqrt of a negative number, nan.
template <class fx, class E>
E asin_of(E x) {
  E a = fx::abs(x);
  E s = fx::sqrt((1.0 - a) * (1.0 + a));
  auto swap = fx::gt(a, s);  // |x| > sqrt(1/2); false for nan
  E q = fx::where(swap, s, a) / fx::where(swap, a, s);
  E r = atan_unit<fx>(q);
  r = fx::where(swap, pio2_minus<fx>(r), r);
  return fx::where(fx::lt(a, kTiny), x, with_sign_of<fx>(x, r));
}

// acos x = 2 atan(sqrt((1 - x)/(1 + x))) for x >= 0, and pi - 2 atan(sqrt((1
// + x)/(1 - x))) for x < 0: the quotient stays in [0, 1], and near x = 1,
// where acos x ~ sqrt(2 (1 - x)), 1 - x is exact.
template <class fx, class E>
E acos_of(E x) {
  auto neg = fx::lt(x, 0.0);
  E up = 1.0 - x, down = 1.0 + x;
  E r = atan_unit<fx>(fx::sqrt(fx::where(neg, down, up) / fx::where(neg, up, down)));
  E twice = 2.0 * r;
  return fx::where(neg, (in_format<fx>(x, vmc::kPiHiD, vmc::kPiHiF) - twice) + in_format<fx>(x, vmc::kPiLoD, vmc::kPiLoF),
                   twice);
}

// tan x = sin x / cos x: each within an ulp or so (float32 computes them in
// float64), no cancellation. Beyond |x| = 2.1e8 sin and cos are nan.
template <class fx, class E>
E tan_of(E x) {
  return fx::sin(x) / fx::cos(x);
}

// exp(|x|) / 2 where exp(|x|) itself would overflow: (e^(|x|/2) / 2) e^(|x|/2).
template <class fx, class E>
E half_exp_large(E a) {
  E h = fx::exp(0.5 * a);
  return (0.5 * h) * h;
}
// Where exp(|x|) is still finite (float32 overflows past 88.72).
template <class fx, class E>
double exp_finite_below(E x) {
  return fx::is_float32(x) ? 88.0 : 709.0;
}

// sinh: a polynomial for |x| < 1 (odd, so -0 stays -0), (e - 1/e) / 2 with
// e = exp(|x|) up to where e overflows, then half_exp_large.
template <class fx, class E>
E sinh_of(E x) {
  E a = fx::abs(x);
  E z = x * x;
  E small = x + x * (z * (fx::is_float32(x) ? polynomial(z, vmc::kSinhPolyF) : polynomial(z, vmc::kSinhPolyD)));
  E e = fx::exp(a);
  E r = fx::where(fx::lt(a, exp_finite_below<fx>(x)), 0.5 * (e - 1.0 / e), half_exp_large<fx>(a));
  return fx::where(fx::lt(a, 1.0), small, with_sign_of<fx>(x, r));
}

// cosh: (e + 1/e) / 2 with e = exp(|x|), no cancellation; half_exp_large
// where e overflows.
template <class fx, class E>
E cosh_of(E x) {
  E a = fx::abs(x);
  E e = fx::exp(a);
  return fx::where(fx::lt(a, exp_finite_below<fx>(x)), 0.5 * (e + 1.0 / e), half_exp_large<fx>(a));
}

// asinh |x| = log1p(|x| + x^2 / (1 + sqrt(1 + x^2))), free of cancellation;
// beyond 2^28 (where x^2 could overflow) log|x| + log 2.
template <class fx, class E>
E asinh_of(E x) {
  E a = fx::abs(x);
  E a2 = a * a;
  E r = log1p_any<fx>(a + a2 / (1.0 + fx::sqrt(1.0 + a2)));
  r = fx::where(fx::gt(a, 0x1p28), fx::log(a) + 0.69314718055994530942, r);
  return fx::where(fx::lt(a, kTiny), x, with_sign_of<fx>(x, r));
}

// acosh x = log1p(t + sqrt(t (t + 2))), t = x - 1 (exact for x <= 2): no
// cancellation near 1; beyond 2^28 log x + log 2; nan below 1.
template <class fx, class E>
E acosh_of(E x) {
  constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  E t = x - 1.0;
  E r = log1p_any<fx>(t + fx::sqrt(t * (t + 2.0)));
  r = fx::where(fx::gt(x, 0x1p28), fx::log(x) + 0.69314718055994530942, r);
  return fx::where(fx::lt(x, 1.0), kNaN, r);
}

// atanh |x| = log1p(2|x| / (1 - |x|)) / 2: the argument is >= 0, so log1p
// never cancels (near x = -1 it would, from x itself), and log1p_any keeps
// small arguments' bits; 1 - |x| is exact for |x| >= 1/2. |x| = 1 gives
// inf; |x| > 1 the log of a negative number, nan.
template <class fx, class E>
E atanh_of(E x) {
  E a = fx::abs(x);
  E r = 0.5 * log1p_any<fx>((2.0 * a) / (1.0 - a));
  return fx::where(fx::lt(a, kTiny), x, with_sign_of<fx>(x, r));
}

// 1, -1 or 0 by the sign; x itself for 0 (keeping -0) and nan.
template <class fx, class E>
E sign_of(E x) {
  return fx::where(fx::gt(x, 0.0), fx::number(x, 1.0), fx::where(fx::lt(x, 0.0), fx::number(x, -1.0), x));
}

// |x| = inf, without a comparison against inf (which an integer x would
// read as its largest value): x * 0 is nan only for inf and nan.
template <class fx, class E>
auto isinf_of(E x) {
  return fx::logical_and(fx::eq(x, x), fx::ne(x * 0.0, 0.0));
}

// x tanh(softplus(x)) = x n / (n + 2) with n = e^x (e^x + 2), since
// tanh(log(1 + e)) = ((1 + e)^2 - 1) / ((1 + e)^2 + 1): one exp and no
// cancellation (for x < 0, n / (n + 2) ~ e^x). e^x is taken at min(x, 20),
// where n / (n + 2) is already 1 in either format, and x is clamped at
// -1e4 (where the result is -0) so that -inf gives -0, not -inf * 0.
template <class fx, class E>
E mish_of(E x) {
  E xc = fx::maximum(x, -1e4);
  E e = fx::exp(fx::minimum(xc, 20.0));
  E n = e * (e + 2.0);
  return xc * (n / (n + 2.0));
}

// x / (1 + |x|), with |x| clamped at 2^60 (where the result rounds to +-1
// in either format) so that +-inf gives +-1, not inf / inf.
template <class fx, class E>
E softsign_of(E x) {
  E xc = fx::minimum(fx::maximum(x, -0x1p60), 0x1p60);
  return xc / (1.0 + fx::abs(xc));
}

// x relu6(x + 3) / 6 (PyTorch's hardswish), rounded as PyTorch's between
// -3 and 3; x itself from 3 on (where x * 6 / 6 could overflow); x is
// clamped at -3, below which the result is -0, so that -inf gives -0 rather
// than nan.
template <class fx, class E>
E hard_swish_of(E x) {
  E xc = fx::maximum(x, -3.0);
  return fx::where(fx::ge(x, 3.0), x, xc * (xc + 3.0) / 6.0);
}

// Python's and NumPy's a mod b, the sign of b: from the exact C fmod r,
// r + b where r is nonzero and of the other sign. A zero result takes b's
// sign (floats). Integers: exact, r + b cannot overflow; b = 0 gives 0.
template <class fx, class E>
E remainder_of(E a, E b) {
  E r = fx::apply(ScalarOp::kFmod, a, b);
  auto other_sign = fx::logical_and(fx::ne(r, 0.0), fx::ne(fx::lt(r, 0.0), fx::lt(b, 0.0)));
  E m = fx::where(other_sign, r + b, r);
  if (!fx::is_floating(m)) return m;
  return fx::where(fx::eq(m, 0.0), fx::where(fx::lt(b, 0.0), fx::number(m, -0.0), fx::number(m, 0.0)), m);
}

}  // namespace wok::formula
