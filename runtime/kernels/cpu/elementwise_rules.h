// What the precompiled reduction and matmul kernels share about dtypes: the
// compile-time float_result_type, and the error for a dtype a kernel does
// not take.
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

template <typename In>
using float_result_t =
    std::conditional_t<std::is_floating_point_v<In>, In, std::conditional_t<std::is_same_v<In, bool>, float, double>>;

[[noreturn]] inline void unsupported_dtype(const KernelContext& ctx, DType t) {
  throw DTypeError("precompiled kernel for '" + ctx.op.name() + "' does not take " + std::string(dtype_name(t)));
}

}  // inline namespace WOK_ISA_NS
}  // namespace wok::cpu
