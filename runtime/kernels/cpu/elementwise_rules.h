// Compile-time versions of the elementwise dtype rules (runtime/ops/
// elementwise_ops.cpp), so each kernel is instantiated only for the
// (input, output) pairs its op can produce.
#pragma once

#include "wok/runtime/kernels/cpu/isa.h"

#include <cstdint>
#include <string>
#include <type_traits>

#include "wok/runtime/dtype.h"
#include "wok/runtime/error.h"
#include "wok/runtime/kernel.h"
#include "wok/runtime/op_registry.h"

namespace wok::cpu {
// Per instruction-set build, like vm:: (see vec_math.h).
inline namespace WOK_ISA_NS {

enum class Rule { kSame, kFloat, kBool, kArith };

template <typename In>
using float_result_t =
    std::conditional_t<std::is_floating_point_v<In>, In, std::conditional_t<std::is_same_v<In, bool>, float, double>>;

template <Rule R, typename In>
using rule_out_t = std::conditional_t<
    R == Rule::kSame, In,
    std::conditional_t<R == Rule::kFloat, float_result_t<In>,
                       std::conditional_t<R == Rule::kBool, bool, std::conditional_t<std::is_same_v<In, bool>, int32_t, In>>>>;

[[noreturn]] inline void unsupported_dtype(const KernelContext& ctx, DType t) {
  throw DTypeError("precompiled kernel for '" + ctx.op.name() + "' does not take " + std::string(dtype_name(t)));
}

}  // inline namespace WOK_ISA_NS
}  // namespace wok::cpu
