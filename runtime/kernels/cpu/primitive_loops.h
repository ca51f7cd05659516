// The precompiled CPU column of Note [One table per primitive]
// (runtime/scalar_primitives.h): each scalar primitive as a loop over a
// block of elements, with the vector math of vec_math.h. The formula kernel
// (formula_kernel.cpp) evaluates an op's formula with these, one instruction
// at a time over cache-resident blocks; the compiler vectorizes each loop.
#pragma once

#include "wok/runtime/kernels/cpu/isa.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "wok/runtime/dtype.h"
#include "wok/runtime/element_cast.h"
#include "wok/runtime/error.h"
#include "wok/runtime/kernels/cpu/vec_math.h"
#include "wok/runtime/scalar_primitives.h"
#include "wok/runtime/wrapping.h"

namespace wok::cpu {
// Per instruction-set build, like vm:: (see vec_math.h).
inline namespace WOK_ISA_NS {

// out[i] = in[i] converted to Out, as the cast primitive defines it
// (runtime/element_cast.h).
template <typename In, typename Out>
void cast_loop(Out* __restrict out, const In* __restrict in, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = element_cast<Out>(in[i]);
}

// The scalar definitions of the primitives that are not one C++ operator,
// shared by their loops below and by formulas compiled as C++ (ScalarFx in
// formula_values.h). Integer division by zero gives 0 (quotient and
// remainder), and INT_MIN / -1 wraps to INT_MIN (remainder 0): never a trap.
namespace prim {

// C fmod: the remainder of a / b truncated, with the sign of a; exact.
template <typename T>
inline T fmod(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::fmod(a, b);
  } else {
    // b == -1 also avoids INT_MIN % -1, which traps on x86; on an unsigned
    // type -1 would be its largest value, an ordinary divisor.
    if constexpr (std::is_signed_v<T>)
      if (b == T(-1)) return T(0);
    return b == 0 ? T(0) : static_cast<T>(a % b);
  }
}

// floor(a / b): on integers the exact floor of the quotient.
template <typename T>
inline T floor_div(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::floor(a / b);
  } else {
    if (b == 0) return T(0);
    if constexpr (std::is_signed_v<T>)
      if (b == T(-1)) return wrap_sub(T(0), a);  // INT_MIN / -1 wraps to INT_MIN
    T q = static_cast<T>(a / b);
    T r = static_cast<T>(a % b);
    return (r != 0 && ((r < 0) != (b < 0))) ? static_cast<T>(q - 1) : q;
  }
}

// Bitwise operations; on bool the logical ones.
template <typename T>
inline T bit_not(T a) {
  if constexpr (std::is_same_v<T, bool>) return !a;
  else return static_cast<T>(~a);
}
template <typename T> inline T bit_and(T a, T b) { return static_cast<T>(a & b); }
template <typename T> inline T bit_or(T a, T b) { return static_cast<T>(a | b); }
template <typename T> inline T bit_xor(T a, T b) { return static_cast<T>(a ^ b); }

// Logical shifts of the unsigned view (ONNX BitShift); a count that is
// negative or at least the width gives 0, as x86's vpsllv/vpsrlv do.
template <typename T>
inline T shl(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<U>(b) >= sizeof(T) * 8 ? T(0) : static_cast<T>(static_cast<U>(a) << static_cast<U>(b));
}
template <typename T>
inline T shr(T a, T b) {
  using U = std::make_unsigned_t<T>;
  return static_cast<U>(b) >= sizeof(T) * 8 ? T(0) : static_cast<T>(static_cast<U>(a) >> static_cast<U>(b));
}

}  // namespace prim

template <typename T, typename F>
inline void map1(T* __restrict out, const T* __restrict a, int64_t n, F f) {
  for (int64_t i = 0; i < n; ++i) out[i] = f(a[i]);
}
template <typename Out, typename T, typename F>
inline void map2(Out* __restrict out, const T* __restrict a, const T* __restrict b, int64_t n, F f) {
  for (int64_t i = 0; i < n; ++i) out[i] = f(a[i], b[i]);
}

[[noreturn]] inline void no_loop(ScalarOp op, DType t) {
  throw Error("precompiled CPU formula kernel: no loop for '" + std::string(scalar_op_name(op)) + "' on " +
              std::string(dtype_name(t)) + " (internal error: the formula builder should not produce it)");
}

// One value instruction over n elements. T is the dtype of operand 0 (of
// the branches for select); `out` is of the instruction's result dtype,
// which the primitive's ResultRule fixes: bool for comparisons, T otherwise.
// Input, const, cast and the row reductions are the caller's.
template <typename T>
void primitive_loop(ScalarOp op, void* out_v, const void* const* args_v, int64_t n) {
  constexpr bool kFloat = std::is_floating_point_v<T>;
  constexpr bool kBool = std::is_same_v<T, bool>;
  T* out = static_cast<T*>(out_v);
  bool* out_b = static_cast<bool*>(out_v);
  const T* a = static_cast<const T*>(args_v[0]);
  const T* b = static_cast<const T*>(args_v[1]);
  switch (op) {
    case ScalarOp::kNeg:
      if constexpr (kFloat) return map1(out, a, n, [](T x) { return -x; });
      else if constexpr (!kBool) return map1(out, a, n, [](T x) { return wrap_sub(T(0), x); });
      break;
    case ScalarOp::kAbs:
      if constexpr (kFloat) return map1(out, a, n, [](T x) { return vm::fabs(x); });
      else if constexpr (!kBool) return map1(out, a, n, [](T x) { return x < 0 ? wrap_sub(T(0), x) : x; });
      break;
    case ScalarOp::kSqrt:
      if constexpr (kFloat) return map1(out, a, n, [](T x) { return std::sqrt(x); });
      break;
    case ScalarOp::kExp:
      if constexpr (kFloat) return map1(out, a, n, [](T x) { return vm::exp(x); });
      break;
    case ScalarOp::kLog:
      if constexpr (kFloat) return map1(out, a, n, [](T x) { return vm::log(x); });
      break;
    case ScalarOp::kSin:
      if constexpr (kFloat) return map1(out, a, n, [](T x) { return vm::sin(x); });
      break;
    case ScalarOp::kCos:
      if constexpr (kFloat) return map1(out, a, n, [](T x) { return vm::cos(x); });
      break;
    case ScalarOp::kTanh:
      if constexpr (kFloat) return map1(out, a, n, [](T x) { return vm::tanh(x); });
      break;
    case ScalarOp::kErf:
      if constexpr (kFloat) return map1(out, a, n, [](T x) { return vm::erf(x); });
      break;
    case ScalarOp::kFloor:
      if constexpr (kFloat) return map1(out, a, n, [](T x) { return std::floor(x); });
      break;
    case ScalarOp::kCeil:
      if constexpr (kFloat) return map1(out, a, n, [](T x) { return std::ceil(x); });
      break;
    case ScalarOp::kRound:
      if constexpr (kFloat) return map1(out, a, n, [](T x) { return std::nearbyint(x); });  // ties to even
      break;
    case ScalarOp::kTrunc:
      if constexpr (kFloat) return map1(out, a, n, [](T x) { return std::trunc(x); });
      break;
    case ScalarOp::kNot:
      if constexpr (kBool) return map1(out, a, n, [](bool x) { return !x; });
      break;
    case ScalarOp::kBitNot:
      if constexpr (!kFloat) return map1(out, a, n, [](T x) { return prim::bit_not(x); });
      break;
    case ScalarOp::kAdd:
      if constexpr (!kBool) return map2(out, a, b, n, [](T x, T y) { return wrap_add(x, y); });
      break;
    case ScalarOp::kSub:
      if constexpr (!kBool) return map2(out, a, b, n, [](T x, T y) { return wrap_sub(x, y); });
      break;
    case ScalarOp::kMul:
      if constexpr (!kBool) return map2(out, a, b, n, [](T x, T y) { return wrap_mul(x, y); });
      break;
    case ScalarOp::kDiv:
      if constexpr (kFloat) return map2(out, a, b, n, [](T x, T y) { return x / y; });
      break;
    case ScalarOp::kMax: return map2(out, a, b, n, [](T x, T y) { return vm::maximum(x, y); });
    case ScalarOp::kMin: return map2(out, a, b, n, [](T x, T y) { return vm::minimum(x, y); });
    case ScalarOp::kPow:
      if constexpr (kFloat) return map2(out, a, b, n, [](T x, T y) { return vm::pow(x, y); });
      else if constexpr (!kBool) return map2(out, a, b, n, [](T x, T y) { return vm::ipow(x, y); });
      break;
    case ScalarOp::kFmod:
      if constexpr (!kBool) return map2(out, a, b, n, [](T x, T y) { return prim::fmod(x, y); });
      break;
    case ScalarOp::kFloorDiv:
      if constexpr (!kBool) return map2(out, a, b, n, [](T x, T y) { return prim::floor_div(x, y); });
      break;
    case ScalarOp::kBitAnd:
      if constexpr (!kFloat) return map2(out, a, b, n, [](T x, T y) { return prim::bit_and(x, y); });
      break;
    case ScalarOp::kBitOr:
      if constexpr (!kFloat) return map2(out, a, b, n, [](T x, T y) { return prim::bit_or(x, y); });
      break;
    case ScalarOp::kBitXor:
      if constexpr (!kFloat) return map2(out, a, b, n, [](T x, T y) { return prim::bit_xor(x, y); });
      break;
    case ScalarOp::kShl:
      if constexpr (!kFloat && !kBool) return map2(out, a, b, n, [](T x, T y) { return prim::shl(x, y); });
      break;
    case ScalarOp::kShr:
      if constexpr (!kFloat && !kBool) return map2(out, a, b, n, [](T x, T y) { return prim::shr(x, y); });
      break;
    case ScalarOp::kEq: return map2(out_b, a, b, n, [](T x, T y) { return x == y; });
    case ScalarOp::kNe: return map2(out_b, a, b, n, [](T x, T y) { return x != y; });
    case ScalarOp::kLt: return map2(out_b, a, b, n, [](T x, T y) { return x < y; });
    case ScalarOp::kLe: return map2(out_b, a, b, n, [](T x, T y) { return x <= y; });
    case ScalarOp::kGt: return map2(out_b, a, b, n, [](T x, T y) { return x > y; });
    case ScalarOp::kGe: return map2(out_b, a, b, n, [](T x, T y) { return x >= y; });
    case ScalarOp::kAnd:
      if constexpr (kBool) return map2(out, a, b, n, [](bool x, bool y) { return static_cast<bool>(x & y); });
      break;
    case ScalarOp::kOr:
      if constexpr (kBool) return map2(out, a, b, n, [](bool x, bool y) { return static_cast<bool>(x | y); });
      break;
    case ScalarOp::kSelect: {
      // A bit blend, not `c ? x : y`: GCC leaves that a branch, which on
      // data-dependent conditions mispredicts half the time (sigmoid ran
      // at a tenth of memory bandwidth).
      using U = std::conditional_t<sizeof(T) == 1, uint8_t, std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>;
      const bool* __restrict c = static_cast<const bool*>(args_v[0]);
      const T* __restrict x = static_cast<const T*>(args_v[1]);
      const T* __restrict y = static_cast<const T*>(args_v[2]);
      for (int64_t i = 0; i < n; ++i) {
        const U m = static_cast<U>(U(0) - static_cast<U>(c[i]));
        out[i] = std::bit_cast<T>(static_cast<U>((std::bit_cast<U>(x[i]) & m) | (std::bit_cast<U>(y[i]) & ~m)));
      }
      return;
    }
    case ScalarOp::kInput:
    case ScalarOp::kConst:
    case ScalarOp::kCast:
    case ScalarOp::kReduceSum:
    case ScalarOp::kReduceMax:
    case ScalarOp::kReduceMin:
    case ScalarOp::kReduceProd:
    case ScalarOp::kReduceArgmax:
    case ScalarOp::kRowLength: break;
  }
  no_loop(op, dtype_of<T>());
}

}  // inline namespace WOK_ISA_NS
}  // namespace wok::cpu
