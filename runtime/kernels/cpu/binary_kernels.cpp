// Precompiled kernels of the binary elementwise ops, with broadcasting.
#include "wok/runtime/kernels/cpu/elementwise_loops.h"
#include "wok/runtime/kernels/cpu/elementwise_rules.h"
#include "wok/runtime/kernels/cpu/isa.h"
#include "wok/runtime/kernels/cpu/vec_math.h"

namespace wok::cpu::WOK_ISA_NS {

namespace {

// Inputs share a dtype (the frontend promotes). kCompute says what the
// formula computes in: the output type (arithmetic), the input type
// (comparisons) or bool (logical ops).
enum class Compute { kOut, kIn, kBool };

template <Rule R, bool kAllowBool, Compute K, typename F>
KernelFn binary_kernel(F f) {
  return [f](const KernelContext& ctx) {
    visit_dtype(ctx.inputs[0].dtype, [&](auto tag) {
      using In = decltype(tag);
      if constexpr (!kAllowBool && std::is_same_v<In, bool>) {
        unsupported_dtype(ctx, ctx.inputs[0].dtype);
      } else {
        using Out = rule_out_t<R, In>;
        using C = std::conditional_t<K == Compute::kOut, Out, std::conditional_t<K == Compute::kIn, In, bool>>;
        binary_loop<In, C, Out>(ctx, f);
      }
    });
  };
}

}  // namespace

void register_binary_kernels(OpRegistry& r) {
  constexpr DeviceType cpu = DeviceType::kCPU;
  r.add_kernel("add", cpu, binary_kernel<Rule::kArith, true, Compute::kOut>([](auto a, auto b) { return wrap_add(a, b); }));
  r.add_kernel("sub", cpu, binary_kernel<Rule::kArith, false, Compute::kOut>([](auto a, auto b) { return wrap_sub(a, b); }));
  r.add_kernel("mul", cpu, binary_kernel<Rule::kArith, true, Compute::kOut>([](auto a, auto b) { return wrap_mul(a, b); }));
  r.add_kernel("div", cpu, binary_kernel<Rule::kFloat, true, Compute::kOut>([](auto a, auto b) { return a / b; }));
  r.add_kernel("pow", cpu, binary_kernel<Rule::kArith, true, Compute::kOut>([](auto a, auto b) {
    if constexpr (std::is_floating_point_v<decltype(a)>) return vm::pow(a, b);
    else return vm::ipow(a, b);
  }));
  r.add_kernel("maximum", cpu, binary_kernel<Rule::kSame, true, Compute::kOut>([](auto a, auto b) { return vm::maximum(a, b); }));
  r.add_kernel("minimum", cpu, binary_kernel<Rule::kSame, true, Compute::kOut>([](auto a, auto b) { return vm::minimum(a, b); }));
  r.add_kernel("eq", cpu, binary_kernel<Rule::kBool, true, Compute::kIn>([](auto a, auto b) { return a == b; }));
  r.add_kernel("ne", cpu, binary_kernel<Rule::kBool, true, Compute::kIn>([](auto a, auto b) { return a != b; }));
  r.add_kernel("lt", cpu, binary_kernel<Rule::kBool, true, Compute::kIn>([](auto a, auto b) { return a < b; }));
  r.add_kernel("le", cpu, binary_kernel<Rule::kBool, true, Compute::kIn>([](auto a, auto b) { return a <= b; }));
  r.add_kernel("gt", cpu, binary_kernel<Rule::kBool, true, Compute::kIn>([](auto a, auto b) { return a > b; }));
  r.add_kernel("ge", cpu, binary_kernel<Rule::kBool, true, Compute::kIn>([](auto a, auto b) { return a >= b; }));
  r.add_kernel("logical_and", cpu, binary_kernel<Rule::kBool, true, Compute::kBool>([](bool a, bool b) { return static_cast<bool>(a & b); }));
  r.add_kernel("logical_or", cpu, binary_kernel<Rule::kBool, true, Compute::kBool>([](bool a, bool b) { return static_cast<bool>(a | b); }));
}

}  // namespace wok::cpu::WOK_ISA_NS
