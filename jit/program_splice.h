// Program splicing, internal to lowering: the formulas of a fused group's
// members (and of the constants they read) become one scalar program. The
// layouts of the lowered kernels are computed in lowering.cpp.
#pragma once

#include <vector>

#include "wok/jit/lowering.h"
#include "wok/jit/plan_graph.h"

namespace wok::jit {

// Splices the formulas of `members` (and of the constants they read) into
// k.spec.program, numbering kernel inputs and params, and writing `outputs`.
void build_program(const PlanGraph& g, const std::vector<int>& members, const std::vector<int>& outputs,
                   LoweredKernel& k);

}  // namespace wok::jit
