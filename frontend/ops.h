// Free functions named after the ops. Each validates, promotes dtypes and
// records a node; nothing runs here.
#pragma once

#include <optional>
#include <type_traits>
#include <vector>

#include "wok/frontend/tensor.h"

namespace wok {

// ---- unary -----------------------------------------------------------------
// neg, abs, exp, log, sqrt, rsqrt, sin, cos, tanh, erf, sigmoid, relu, gelu
// (tanh approximation), silu, softplus, floor, ceil, round (half to even),
// trunc, reciprocal, square, logical_not, tan, asin, acos, atan, sinh, cosh,
// asinh, acosh, atanh, sign, isnan, isinf (bool results), gelu_erf (exact
// GELU), softsign, mish, hard_swish, bitwise_not (integers and bool): one
// line each, with its formula and doc, in wok/runtime/ops/unary_op_list.h.
#define WOK_UNARY_OP(name, rule, takes_bool, formula, doc) Tensor name(const Tensor& x);
#include "wok/runtime/ops/unary_op_list.h"
#undef WOK_UNARY_OP
Tensor cast(const Tensor& x, DType dtype);

// ---- binary, with NumPy broadcasting and promotion ----------------------------
// Plain numbers are weakly typed: a float32 tensor times 2.0 stays float32;
// an int32 tensor times 2.5f becomes float32 (the number's own type).
#define WOK_DECLARE_BINARY(name)                   \
  Tensor name(const Tensor& a, const Tensor& b);   \
  Tensor name(const Tensor& a, Scalar b);          \
  Tensor name(Scalar a, const Tensor& b);
WOK_DECLARE_BINARY(add)
WOK_DECLARE_BINARY(sub)
WOK_DECLARE_BINARY(mul)
WOK_DECLARE_BINARY(div)
WOK_DECLARE_BINARY(pow)
WOK_DECLARE_BINARY(maximum)
WOK_DECLARE_BINARY(minimum)
WOK_DECLARE_BINARY(eq)
WOK_DECLARE_BINARY(ne)
WOK_DECLARE_BINARY(lt)
WOK_DECLARE_BINARY(le)
WOK_DECLARE_BINARY(gt)
WOK_DECLARE_BINARY(ge)
WOK_DECLARE_BINARY(logical_and)
WOK_DECLARE_BINARY(logical_or)
// fmod: C's, the sign of a; remainder: Python's a % b, the sign of b;
// floor_divide: floor(a / b), exact on integers. An integer division by
// zero gives 0; INT_MIN / -1 wraps to INT_MIN (remainder 0).
WOK_DECLARE_BINARY(fmod)
WOK_DECLARE_BINARY(remainder)
WOK_DECLARE_BINARY(floor_divide)
WOK_DECLARE_BINARY(atan2)  // atan2(y, x), in [-pi, pi]
// Integers, and bool as truth values; a float operand is a DTypeError.
// Shifts are logical, on the unsigned view (ONNX BitShift): a count that
// is negative or at least the width (32, 64) gives 0; bool shifts in int32.
WOK_DECLARE_BINARY(bitwise_and)
WOK_DECLARE_BINARY(bitwise_or)
WOK_DECLARE_BINARY(bitwise_xor)
WOK_DECLARE_BINARY(bitwise_left_shift)
WOK_DECLARE_BINARY(bitwise_right_shift)
#undef WOK_DECLARE_BINARY

// cond ? a : b, all three broadcast together.
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
Tensor where(const Tensor& cond, const Tensor& a, Scalar b);
Tensor where(const Tensor& cond, Scalar a, const Tensor& b);
// min(max(x, lo), hi); nan stays nan.
Tensor clamp(const Tensor& x, std::optional<double> lo, std::optional<double> hi);

// ---- reductions ---------------------------------------------------------------
// `axes` may be negative; empty means every axis. Over zero elements each
// gives its identity (ONNX): sum 0, prod 1, max -inf and min +inf (an
// integer's lowest and highest value), mean nan (docs/numerics.md).
Tensor sum(const Tensor& x, std::vector<int64_t> axes = {}, bool keepdims = false);
Tensor mean(const Tensor& x, std::vector<int64_t> axes = {}, bool keepdims = false);
Tensor max(const Tensor& x, std::vector<int64_t> axes = {}, bool keepdims = false);
Tensor min(const Tensor& x, std::vector<int64_t> axes = {}, bool keepdims = false);
Tensor prod(const Tensor& x, std::vector<int64_t> axes = {}, bool keepdims = false);
// int64 row-major index of the first maximum within the reduced axes (nan
// counts as the maximum); with select_last_index, of the last one (ONNX
// ArgMax's flag). argmin: the same for the minimum (nan counts as the
// minimum, as in NumPy and PyTorch).
Tensor argmax(const Tensor& x, std::vector<int64_t> axes = {}, bool keepdims = false);
Tensor argmax(const Tensor& x, std::vector<int64_t> axes, bool keepdims, bool select_last_index);
Tensor argmin(const Tensor& x, std::vector<int64_t> axes = {}, bool keepdims = false);
Tensor argmin(const Tensor& x, std::vector<int64_t> axes, bool keepdims, bool select_last_index);

// ---- movement -----------------------------------------------------------------
Tensor reshape(const Tensor& x, Shape shape);  // one -1 is inferred
Tensor permute(const Tensor& x, std::vector<int64_t> dims);
Tensor transpose(const Tensor& x);                      // reverse all dims
Tensor transpose(const Tensor& x, int64_t a, int64_t b);  // swap two dims
Tensor broadcast_to(const Tensor& x, Shape shape);
// x[start:stop:step] along one axis, Python rules (negative and
// out-of-range bounds are clamped; std::nullopt means "to the end").
Tensor slice(const Tensor& x, int64_t axis, std::optional<int64_t> start, std::optional<int64_t> stop,
             int64_t step = 1);
Tensor concat(const std::vector<Tensor>& xs, int64_t axis = 0);

// ---- linear algebra ---------------------------------------------------------------
// NumPy matmul: 1-D operands are promoted to matrices and the added dim
// removed; batch dims broadcast.
Tensor matmul(const Tensor& a, const Tensor& b);
// The determinant of each square matrix in the last two dims, [..., n, n]
// -> [...] (torch.linalg.det, ONNX Det): LU with partial pivoting in
// float64, rounded once to x's float dtype; integers and bool give float64
// (float32), as the other float ops. CPU only.
Tensor det(const Tensor& x);

// ---- operators ------------------------------------------------------------------
Tensor operator-(const Tensor& x);
Tensor operator!(const Tensor& x);
// Always inlined, so that the named function they call sees a return
// address in the user's code (Note [Call sites] in frontend/dispatch.h).
#define WOK_DECLARE_OPERATOR(op, fn)                                                                \
  [[gnu::always_inline]] inline Tensor operator op(const Tensor& a, const Tensor& b) { return fn(a, b); } \
  template <typename S, std::enable_if_t<std::is_arithmetic_v<S>, int> = 0>                         \
  [[gnu::always_inline]] inline Tensor operator op(const Tensor& a, S b) {                          \
    return fn(a, Scalar(b));                                                                        \
  }                                                                                                 \
  template <typename S, std::enable_if_t<std::is_arithmetic_v<S>, int> = 0>                         \
  [[gnu::always_inline]] inline Tensor operator op(S a, const Tensor& b) {                          \
    return fn(Scalar(a), b);                                                                        \
  }
WOK_DECLARE_OPERATOR(+, add)
WOK_DECLARE_OPERATOR(-, sub)
WOK_DECLARE_OPERATOR(*, mul)
WOK_DECLARE_OPERATOR(/, div)
WOK_DECLARE_OPERATOR(==, eq)
WOK_DECLARE_OPERATOR(!=, ne)
WOK_DECLARE_OPERATOR(<, lt)
WOK_DECLARE_OPERATOR(<=, le)
WOK_DECLARE_OPERATOR(>, gt)
WOK_DECLARE_OPERATOR(>=, ge)
#undef WOK_DECLARE_OPERATOR

}  // namespace wok
