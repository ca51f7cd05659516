// Precompiled CUDA kernels of the unary elementwise ops, one per (op, input
// dtype): wok_<op>_<dtype>. Each is the op's formula (runtime/ops/
// elementwise_ops.cpp) spelled with the device functions the JIT's kernels
// call (templates/wok_device.cuh). Built by nvcc into a fatbin when CMake
// finds the toolkit, else compiled by NVRTC at first use; launched by
// runtime/kernels/cuda/cuda_kernels.cpp.
#include "wok_elementwise.cuh"

using namespace wok;

// x is the input converted to T, the type the formula computes in.
#define WOK_UNARY(op, In, Out, C, expr)                                            \
  extern "C" __global__ void __launch_bounds__(256) wok_##op##_##In(const EwArgs a) { \
    ew_apply<Out, In>(a, [](In v) {                                                \
      using T = C;                                                                 \
      const T x = cast<T>(v);                                                      \
      return cast<Out>(expr);                                                      \
    });                                                                            \
  }

// Result dtype rules: float (exp, ...), same (neg, ...; no bool),
// arithmetic (square: bool computes as int32).
#define WOK_FLOAT_UNARY(op, expr)        \
  WOK_UNARY(op, b8, f32, f32, expr)      \
  WOK_UNARY(op, i32, f64, f64, expr)     \
  WOK_UNARY(op, i64, f64, f64, expr)     \
  WOK_UNARY(op, f32, f32, f32, expr)     \
  WOK_UNARY(op, f64, f64, f64, expr)
#define WOK_SAME_UNARY(op, expr)         \
  WOK_UNARY(op, i32, i32, i32, expr)     \
  WOK_UNARY(op, i64, i64, i64, expr)     \
  WOK_UNARY(op, f32, f32, f32, expr)     \
  WOK_UNARY(op, f64, f64, f64, expr)
#define WOK_ARITH_UNARY(op, expr)        \
  WOK_UNARY(op, b8, i32, i32, expr)      \
  WOK_SAME_UNARY(op, expr)

WOK_SAME_UNARY(neg, wok::neg(x))
WOK_SAME_UNARY(abs, wok::abs(x))
WOK_FLOAT_UNARY(exp, wok::exp_(x))
WOK_FLOAT_UNARY(log, wok::log_(x))
WOK_FLOAT_UNARY(sqrt, wok::sqrt_(x))
WOK_FLOAT_UNARY(rsqrt, wok::div(T(1), wok::sqrt_(x)))
WOK_FLOAT_UNARY(sin, wok::sin_(x))
WOK_FLOAT_UNARY(cos, wok::cos_(x))
WOK_FLOAT_UNARY(tanh, wok::tanh_(x))
WOK_FLOAT_UNARY(erf, wok::erf_(x))
WOK_FLOAT_UNARY(sigmoid, wok::sigmoid(x))
WOK_SAME_UNARY(relu, wok::maximum(x, T(0)))
WOK_FLOAT_UNARY(gelu, wok::gelu(x))
WOK_FLOAT_UNARY(silu, wok::mul(x, wok::sigmoid(x)))
WOK_SAME_UNARY(floor, wok::floor_(x))
WOK_SAME_UNARY(ceil, wok::ceil_(x))
WOK_SAME_UNARY(round, wok::round_(x))
WOK_FLOAT_UNARY(reciprocal, wok::div(T(1), x))
WOK_ARITH_UNARY(square, wok::mul(x, x))
// logical_not reads its input as a truth value.
WOK_UNARY(logical_not, b8, b8, b8, !x)
WOK_UNARY(logical_not, i32, b8, b8, !x)
WOK_UNARY(logical_not, i64, b8, b8, !x)
WOK_UNARY(logical_not, f32, b8, b8, !x)
WOK_UNARY(logical_not, f64, b8, b8, !x)
