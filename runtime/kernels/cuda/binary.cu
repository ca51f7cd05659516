// Precompiled CUDA kernels of the binary elementwise ops, one per (op,
// input dtype): wok_<op>_<dtype>. Both inputs have that dtype (the frontend
// promotes); broadcasting is in the strides. See unary.cu.
#include "wok_elementwise.cuh"

using namespace wok;

// x and y are the inputs converted to T, the type the formula computes in.
#define WOK_BINARY(op, In, Out, C, expr)                                           \
  extern "C" __global__ void __launch_bounds__(256) wok_##op##_##In(const EwArgs a) { \
    ew_apply<Out, In, In>(a, [](In va, In vb) {                                    \
      using T = C;                                                                 \
      const T x = cast<T>(va), y = cast<T>(vb);                                    \
      return cast<Out>(expr);                                                      \
    });                                                                            \
  }

#define WOK_EACH_DTYPE(M, op, expr) M(op, b8, expr) M(op, i32, expr) M(op, i64, expr) M(op, f32, expr) M(op, f64, expr)
// Arithmetic (bool computes as int32), float, same, comparison (computes in
// the input type, gives bool), logical (computes in bool).
#define WOK_ARITH(op, In, expr) WOK_BINARY(op, In, ArithOf<In>::type, ArithOf<In>::type, expr)
#define WOK_FLOAT(op, In, expr) WOK_BINARY(op, In, FloatOf<In>::type, FloatOf<In>::type, expr)
#define WOK_SAME(op, In, expr) WOK_BINARY(op, In, In, In, expr)
#define WOK_COMPARE(op, In, expr) WOK_BINARY(op, In, b8, In, expr)
#define WOK_LOGICAL(op, In, expr) WOK_BINARY(op, In, b8, b8, expr)

WOK_EACH_DTYPE(WOK_ARITH, add, wok::add(x, y))
WOK_ARITH(sub, i32, wok::sub(x, y))
WOK_ARITH(sub, i64, wok::sub(x, y))
WOK_ARITH(sub, f32, wok::sub(x, y))
WOK_ARITH(sub, f64, wok::sub(x, y))
WOK_EACH_DTYPE(WOK_ARITH, mul, wok::mul(x, y))
WOK_EACH_DTYPE(WOK_FLOAT, div, wok::div(x, y))
WOK_EACH_DTYPE(WOK_ARITH, pow, wok::pow_(x, y))
WOK_EACH_DTYPE(WOK_SAME, maximum, wok::maximum(x, y))
WOK_EACH_DTYPE(WOK_SAME, minimum, wok::minimum(x, y))
WOK_EACH_DTYPE(WOK_COMPARE, eq, x == y)
WOK_EACH_DTYPE(WOK_COMPARE, ne, x != y)
WOK_EACH_DTYPE(WOK_COMPARE, lt, x < y)
WOK_EACH_DTYPE(WOK_COMPARE, le, x <= y)
WOK_EACH_DTYPE(WOK_COMPARE, gt, x > y)
WOK_EACH_DTYPE(WOK_COMPARE, ge, x >= y)
WOK_EACH_DTYPE(WOK_LOGICAL, logical_and, x && y)
WOK_EACH_DTYPE(WOK_LOGICAL, logical_or, x || y)
