// Graphviz view of a planned fragment: fused groups as clusters, constants
// dashed, nodes left to precompiled kernels boxed with the reason.
#pragma once

#include <string>

#include "wok/jit/plan_graph.h"

namespace wok::jit {

std::string to_graphviz(const PlanGraph& g);

}  // namespace wok::jit
