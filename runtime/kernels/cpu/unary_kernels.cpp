// Precompiled kernels of the unary elementwise ops. Each lambda is the op's
// formula (runtime/ops/elementwise_ops.cpp) in C++, term for term.
#include "wok/runtime/kernels/cpu/elementwise_loops.h"
#include "wok/runtime/kernels/cpu/elementwise_rules.h"
#include "wok/runtime/kernels/cpu/isa.h"
#include "wok/runtime/kernels/cpu/vec_math.h"

namespace wok::cpu::WOK_ISA_NS {

namespace {

// `C` is the type the formula computes in: the output type, or bool for
// logical_not (which reads its input as a truth value).
template <Rule R, bool kAllowBool, bool kComputeInBool = false, typename F>
KernelFn unary_kernel(F f) {
  return [f](const KernelContext& ctx) {
    visit_dtype(ctx.inputs[0].dtype, [&](auto tag) {
      using In = decltype(tag);
      if constexpr (!kAllowBool && std::is_same_v<In, bool>) {
        unsupported_dtype(ctx, ctx.inputs[0].dtype);
      } else {
        using Out = rule_out_t<R, In>;
        using C = std::conditional_t<kComputeInBool, bool, Out>;
        unary_loop<In, C, Out>(ctx, f);
      }
    });
  };
}

template <typename T>
inline constexpr bool is_float_v = std::is_floating_point_v<T>;

}  // namespace

void register_unary_kernels(OpRegistry& r) {
  constexpr DeviceType cpu = DeviceType::kCPU;
  r.add_kernel("neg", cpu, unary_kernel<Rule::kSame, false>([](auto x) {
    using T = decltype(x);
    if constexpr (is_float_v<T>) return -x;
    else return wrap_sub(T(0), x);
  }));
  r.add_kernel("abs", cpu, unary_kernel<Rule::kSame, false>([](auto x) {
    using T = decltype(x);
    if constexpr (is_float_v<T>) return vm::fabs(x);
    else return x < 0 ? wrap_sub(T(0), x) : x;
  }));
  r.add_kernel("exp", cpu, unary_kernel<Rule::kFloat, true>([](auto x) { return vm::exp(x); }));
  r.add_kernel("log", cpu, unary_kernel<Rule::kFloat, true>([](auto x) { return vm::log(x); }));
  r.add_kernel("sqrt", cpu, unary_kernel<Rule::kFloat, true>([](auto x) { return std::sqrt(x); }));
  r.add_kernel("rsqrt", cpu, unary_kernel<Rule::kFloat, true>([](auto x) {
    using T = decltype(x);
    return T(1) / std::sqrt(x);
  }));
  r.add_kernel("sin", cpu, unary_kernel<Rule::kFloat, true>([](auto x) { return vm::sin(x); }));
  r.add_kernel("cos", cpu, unary_kernel<Rule::kFloat, true>([](auto x) { return vm::cos(x); }));
  r.add_kernel("tanh", cpu, unary_kernel<Rule::kFloat, true>([](auto x) { return vm::tanh(x); }));
  r.add_kernel("erf", cpu, unary_kernel<Rule::kFloat, true>([](auto x) { return vm::erf(x); }));
  r.add_kernel("sigmoid", cpu, unary_kernel<Rule::kFloat, true>([](auto x) { return vm::sigmoid(x); }));
  r.add_kernel("relu", cpu, unary_kernel<Rule::kSame, false>([](auto x) {
    using T = decltype(x);
    return vm::maximum(x, T(0));
  }));
  r.add_kernel("gelu", cpu, unary_kernel<Rule::kFloat, true>([](auto x) {
    using T = decltype(x);
    T inner = T(0.7978845608028654) * (x + T(0.044715) * (x * x * x));
    return T(0.5) * x * (T(1) + vm::tanh(inner));
  }));
  r.add_kernel("silu", cpu, unary_kernel<Rule::kFloat, true>([](auto x) { return x * vm::sigmoid(x); }));
  r.add_kernel("floor", cpu, unary_kernel<Rule::kSame, false>([](auto x) {
    if constexpr (is_float_v<decltype(x)>) return std::floor(x);
    else return x;
  }));
  r.add_kernel("ceil", cpu, unary_kernel<Rule::kSame, false>([](auto x) {
    if constexpr (is_float_v<decltype(x)>) return std::ceil(x);
    else return x;
  }));
  r.add_kernel("round", cpu, unary_kernel<Rule::kSame, false>([](auto x) {
    if constexpr (is_float_v<decltype(x)>) return std::nearbyint(x);  // ties to even
    else return x;
  }));
  r.add_kernel("reciprocal", cpu, unary_kernel<Rule::kFloat, true>([](auto x) {
    using T = decltype(x);
    return T(1) / x;
  }));
  r.add_kernel("square", cpu, unary_kernel<Rule::kArith, true>([](auto x) { return wrap_mul(x, x); }));
  r.add_kernel("logical_not", cpu, unary_kernel<Rule::kBool, true, true>([](bool x) { return !x; }));
}

}  // namespace wok::cpu::WOK_ISA_NS
