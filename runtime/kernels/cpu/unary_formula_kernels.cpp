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

#include "wok/runtime/kernels/cpu/elementwise_rules.h"
#include "wok/runtime/kernels/cpu/primitive_loops.h"
#include "wok/runtime/kernels/cpu/strided_loop.h"
#include "wok/runtime/ops/formula_helpers.h"
#include "wok/runtime/scalar_formula.h"
#include "wok/runtime/thread_pool.h"

namespace wok::cpu::WOK_ISA_NS {

namespace {

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
// the unary formulas use.
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
  // A primitive without a function of its own: through its loop, one
  // element at a time (not vectorized; no built-in composite needs one).
  template <typename T> static V<T> apply(ScalarOp op, V<T> a) {
    if constexpr (kIsFloat<T>) {
      if (op == ScalarOp::kTrunc) return {std::trunc(a.v)};
    }
    if (primitive(op).result == ResultRule::kWhole && !kIsFloat<T>) return a;
    V<T> out;
    const void* args[3] = {&a.v, nullptr, nullptr};
    primitive_loop<T>(op, &out.v, args, 1);
    return out;
  }
};

// The C++ type of an op's result under its rule, from the input's.
template <ResultRule R, typename In>
using result_t = std::conditional_t<
    R == ResultRule::kFloat, float_result_t<In>,
    std::conditional_t<R == ResultRule::kLogical || R == ResultRule::kCompare, bool,
                       std::conditional_t<R == ResultRule::kArithmetic && std::is_same_v<In, bool>, int32_t, In>>>;

// out[i] = f(x[i]) with x converted to Out first; x contiguous or one value.
template <typename In, typename Out, typename F>
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
        for (int64_t i = 0; i < len; ++i) o[i] = f(V<Out>{static_cast<Out>(a[i])}).v;
      } else {
        const Out v = f(V<Out>{static_cast<Out>(a[0])}).v;
        for (int64_t i = 0; i < len; ++i) o[i] = v;
      }
    });
  });
}

template <ResultRule R, bool kTakesBool, typename F>
KernelFn unary_formula_kernel(F f) {
  return [f](const KernelContext& ctx) {
    visit_dtype(ctx.inputs[0].dtype, [&](auto tag) {
      using In = decltype(tag);
      if constexpr (!kTakesBool && std::is_same_v<In, bool>) unsupported_dtype(ctx, DType::kBool);
      else unary_loop<In, result_t<R, In>>(ctx, f);
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
