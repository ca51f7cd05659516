// Formulas compiled as C++ for the precompiled CPU kernels
// (unary_formula_kernels.cpp, binary_formula_kernels.cpp): the value type
// `x`, `a` and `b` have there, the scalar `fx`, and the C++ types of the
// result rules. Each operation does what the primitive of the same name
// does in primitive_loops.h, wrapping integers included.
#pragma once

#include "wok/runtime/kernels/cpu/isa.h"

#include <cmath>
#include <type_traits>

#include "wok/runtime/kernels/cpu/elementwise_rules.h"
#include "wok/runtime/kernels/cpu/primitive_loops.h"
#include "wok/runtime/scalar_formula.h"

namespace wok::cpu {
// Per instruction-set build, like vm:: (see vec_math.h).
inline namespace WOK_ISA_NS {

// A value of a formula compiled as C++: T is the dtype the formula builder
// would give it, and each operator does what the primitive of the same name
// does (runtime/kernels/cpu/primitive_loops.h), wrapping integers included.
template <typename T>
struct V {
  T v;
};

template <typename T>
constexpr bool kIsFloat = std::is_floating_point_v<T>;

// A plain number meets a value: it takes the value's dtype.
template <typename T>
V<T> weak(double d) {
  return {static_cast<T>(d)};
}

template <typename T> V<T> operator+(V<T> a, V<T> b) { return {wrap_add(a.v, b.v)}; }
template <typename T> V<T> operator-(V<T> a, V<T> b) { return {wrap_sub(a.v, b.v)}; }
template <typename T> V<T> operator*(V<T> a, V<T> b) { return {wrap_mul(a.v, b.v)}; }
template <typename T> V<T> operator/(V<T> a, V<T> b) { return {a.v / b.v}; }
template <typename T> V<T> operator-(V<T> a) {
  if constexpr (kIsFloat<T>) return {-a.v};
  else return {wrap_sub(T(0), a.v)};
}
template <typename T> V<T> operator+(V<T> a, double b) { return a + weak<T>(b); }
template <typename T> V<T> operator+(double a, V<T> b) { return weak<T>(a) + b; }
template <typename T> V<T> operator-(V<T> a, double b) { return a - weak<T>(b); }
template <typename T> V<T> operator-(double a, V<T> b) { return weak<T>(a) - b; }
template <typename T> V<T> operator*(V<T> a, double b) { return a * weak<T>(b); }
template <typename T> V<T> operator*(double a, V<T> b) { return weak<T>(a) * b; }
template <typename T> V<T> operator/(V<T> a, double b) { return a / weak<T>(b); }
template <typename T> V<T> operator/(double a, V<T> b) { return weak<T>(a) / b; }

// The scalar side of wok::fx (runtime/scalar_formula.h), for the functions
// the unary and binary formulas use.
struct ScalarFx {
  template <typename T> static V<T> abs(V<T> a) {
    if constexpr (kIsFloat<T>) return {vm::fabs(a.v)};
    else return {a.v < 0 ? wrap_sub(T(0), a.v) : a.v};
  }
  template <typename T> static V<T> sqrt(V<T> a) { return {std::sqrt(a.v)}; }
  template <typename T> static V<T> exp(V<T> a) { return {vm::exp(a.v)}; }
  template <typename T> static V<T> log(V<T> a) { return {vm::log(a.v)}; }
  template <typename T> static V<T> sin(V<T> a) { return {vm::sin(a.v)}; }
  template <typename T> static V<T> cos(V<T> a) { return {vm::cos(a.v)}; }
  template <typename T> static V<T> tanh(V<T> a) { return {vm::tanh(a.v)}; }
  template <typename T> static V<T> erf(V<T> a) { return {vm::erf(a.v)}; }
  // Integers are already whole: the formula builder drops these for them.
  template <typename T> static V<T> floor(V<T> a) {
    if constexpr (kIsFloat<T>) return {std::floor(a.v)};
    else return a;
  }
  template <typename T> static V<T> ceil(V<T> a) {
    if constexpr (kIsFloat<T>) return {std::ceil(a.v)};
    else return a;
  }
  template <typename T> static V<T> round(V<T> a) {
    if constexpr (kIsFloat<T>) return {std::nearbyint(a.v)};  // ties to even
    else return a;
  }
  static V<bool> logical_not(V<bool> a) { return {!a.v}; }
  template <typename T> static V<T> maximum(V<T> a, double b) { return {vm::maximum(a.v, weak<T>(b).v)}; }
  template <typename T> static V<bool> ge(V<T> a, double b) { return {a.v >= weak<T>(b).v}; }
  template <typename T> static V<bool> eq(V<T> a, double b) { return {a.v == weak<T>(b).v}; }
  template <typename T> static V<T> where(V<bool> c, V<T> a, V<T> b) { return {c.v ? a.v : b.v}; }
  template <typename T> static V<T> where(V<bool> c, V<T> a, double b) { return where(c, a, weak<T>(b)); }
  template <typename T> static V<T> where(V<bool> c, double a, V<T> b) { return where(c, weak<T>(a), b); }
  template <typename T> static V<bool> ne(V<T> a, double b) { return {a.v != weak<T>(b).v}; }
  template <typename T> static V<bool> lt(V<T> a, double b) { return {a.v < weak<T>(b).v}; }
  template <typename T> static V<bool> le(V<T> a, double b) { return {a.v <= weak<T>(b).v}; }
  template <typename T> static V<bool> gt(V<T> a, double b) { return {a.v > weak<T>(b).v}; }
  template <typename T> static V<T> minimum(V<T> a, double b) { return {vm::minimum(a.v, weak<T>(b).v)}; }
  template <typename T> static V<T> number(V<T>, double v) { return weak<T>(v); }
  template <typename T> static V<float_result_t<T>> as_float(V<T> a) { return {static_cast<float_result_t<T>>(a.v)}; }
  template <typename T> static constexpr bool is_float32(V<T>) { return std::is_same_v<T, float>; }
  template <typename T> static constexpr bool is_floating(V<T>) { return kIsFloat<T>; }
  template <typename T> static V<T> maximum(V<T> a, V<T> b) { return {vm::maximum(a.v, b.v)}; }
  template <typename T> static V<T> minimum(V<T> a, V<T> b) { return {vm::minimum(a.v, b.v)}; }
  template <typename T> static V<T> pow(V<T> a, V<T> b) {
    if constexpr (kIsFloat<T>) return {vm::pow(a.v, b.v)};
    else return {vm::ipow(a.v, b.v)};
  }
  template <typename T> static V<bool> eq(V<T> a, V<T> b) { return {a.v == b.v}; }
  template <typename T> static V<bool> ne(V<T> a, V<T> b) { return {a.v != b.v}; }
  template <typename T> static V<bool> lt(V<T> a, V<T> b) { return {a.v < b.v}; }
  template <typename T> static V<bool> le(V<T> a, V<T> b) { return {a.v <= b.v}; }
  template <typename T> static V<bool> gt(V<T> a, V<T> b) { return {a.v > b.v}; }
  template <typename T> static V<bool> ge(V<T> a, V<T> b) { return {a.v >= b.v}; }
  static V<bool> logical_and(V<bool> a, V<bool> b) { return {static_cast<bool>(a.v & b.v)}; }
  static V<bool> logical_or(V<bool> a, V<bool> b) { return {static_cast<bool>(a.v | b.v)}; }
  // A primitive without a function of its own: through its loop, one
  // element at a time (not vectorized; no built-in composite needs one).
  template <typename T> static V<T> apply(ScalarOp op, V<T> a) {
    if constexpr (kIsFloat<T>) {
      if (op == ScalarOp::kTrunc) return {std::trunc(a.v)};
    } else {
      if (op == ScalarOp::kBitNot) return {prim::bit_not(a.v)};
    }
    if (primitive(op).result == ResultRule::kWhole && !kIsFloat<T>) return a;
    V<T> out;
    const void* args[3] = {&a.v, nullptr, nullptr};
    primitive_loop<T>(op, &out.v, args, 1);
    return out;
  }
  // The binary primitives whose result has the operands' dtype (fmod,
  // floor_div, the bitwise ops and shifts): the same scalar functions as
  // their loops (prim:: in primitive_loops.h), so the compiler inlines them.
  template <typename T> static V<T> apply(ScalarOp op, V<T> a, V<T> b) {
    if constexpr (kIsFloat<T>) {
      if (op == ScalarOp::kFmod) return {prim::fmod(a.v, b.v)};
      if (op == ScalarOp::kFloorDiv) return {prim::floor_div(a.v, b.v)};
    } else {
      if (op == ScalarOp::kBitAnd) return {prim::bit_and(a.v, b.v)};
      if (op == ScalarOp::kBitOr) return {prim::bit_or(a.v, b.v)};
      if (op == ScalarOp::kBitXor) return {prim::bit_xor(a.v, b.v)};
      if constexpr (is_wrapping_int_v<T>) {
        if (op == ScalarOp::kFmod) return {prim::fmod(a.v, b.v)};
        if (op == ScalarOp::kFloorDiv) return {prim::floor_div(a.v, b.v)};
        if (op == ScalarOp::kShl) return {prim::shl(a.v, b.v)};
        if (op == ScalarOp::kShr) return {prim::shr(a.v, b.v)};
      }
    }
    V<T> out;
    const void* args[3] = {&a.v, &b.v, nullptr};
    primitive_loop<T>(op, &out.v, args, 1);
    return out;
  }
};

// The C++ type of an op's result under its rule, from the input's.
template <ResultRule R, typename In>
using result_t = std::conditional_t<
    R == ResultRule::kFloat, float_result_t<In>,
    std::conditional_t<R == ResultRule::kLogical || R == ResultRule::kCompare, bool,
                       std::conditional_t<(R == ResultRule::kArithmetic || R == ResultRule::kShift) &&
                                              std::is_same_v<In, bool>,
                                          int32_t, In>>>;

// Calls body(In{}) with the C++ type of input 0's dtype; bool is refused
// for ops that do not take it (their dtype rule refuses it first).
template <bool kTakesBool, typename Body>
void visit_input_dtype(const KernelContext& ctx, Body body) {
  visit_dtype(ctx.inputs[0].dtype, [&](auto tag) {
    if constexpr (!kTakesBool && std::is_same_v<decltype(tag), bool>) unsupported_dtype(ctx, DType::kBool);
    else body(tag);
  });
}

}  // inline namespace WOK_ISA_NS
}  // namespace wok::cpu
