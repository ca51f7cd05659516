// The JIT's graph passes over a fragment, in the order the pipeline runs
// them (jit/pipeline.cpp). Each reads and writes the decisions recorded in
// a PlanGraph.
#pragma once

#include "wok/jit/plan_graph.h"

namespace wok::jit {

// Nodes computing the same op on the same inputs with the same attributes
// become one. Constants are left distinct: their values are not part of
// the plan's key (Note [Constants are parameters] in jit/lowering.h).
void eliminate_common_subexpressions(PlanGraph& g);
// Nodes whose results nothing needs are dropped.
void eliminate_dead_code(PlanGraph& g);
// Marks nodes computable from constants alone; they are folded into the
// kernels that use them (evaluated once per launch, not per element).
void fold_constants(PlanGraph& g);
// Groups elementwise nodes into fused kernels.
void fuse_elementwise(PlanGraph& g);

}  // namespace wok::jit
