// How the JITs treat one op, for wok::describe_op (runtime/op_catalog.h):
// the fusion pass's rules asked of the op's definition and dtypes alone,
// with no graph around it. The x86 JIT plans CPU tensors, the CUDA JIT
// CUDA ones (jit/target.h says what each fuses).
#pragma once

#include <vector>

#include "wok/runtime/op_catalog.h"
#include "wok/runtime/op_registry.h"

namespace wok::jit {

// Entries for each device, in device order; within a device one per
// treatment, naming the input dtypes it applies to when it is not all of
// `info.dtypes`. Shape-dependent limits (a reduction's axes, a depthwise
// convolution, the rank after broadcasting) are stated as notes.
std::vector<JitInfo> describe_fusion(const RegisteredOp& op, const OpInfo& info);

}  // namespace wok::jit
