// From graph nodes to a FusedKernelSpec: splices the formulas of a fused
// group's members (and of the constants they read) into one scalar
// program, and computes the group's collapsed iteration layout.
//
// Note [Constants are parameters]
// A scalar constant (`x * 2.0f` records a 0-d `full`) enters a kernel as a
// parameter passed at launch, not as an immediate in the code: kernel and
// plan signatures leave constant values out, so a loop whose learning rate
// changes every step neither recompiles nor re-plans. Constants computed
// from constants (fold_constants) are evaluated once per launch inside the
// kernel, before its loops.
#pragma once

#include <string>
#include <vector>

#include "wok/jit/fused_kernel.h"
#include "wok/jit/plan_graph.h"

namespace wok::jit {

// The node's formula instantiated for its dtypes and attributes.
ScalarProgram node_program(const Fragment& f, int node);

// An elementwise node with a formula the JIT can compile.
bool is_jit_elementwise(const PlanGraph& g, int node);
// Why node n cannot join a fused kernel, or "" if it can.
std::string fusion_blocker(const PlanGraph& g, int node);

struct LoweredKernel {
  FusedKernelSpec spec;
  std::vector<int> input_values;   // fragment values, in spec input order
  std::vector<int> param_nodes;    // the `full` node behind each param
  std::vector<int> output_values;  // fragment values written, in spec output order
  Shape shape;                     // collapsed iteration shape
  std::vector<int64_t> strides;    // [(inputs + outputs) * rank], elements
  int64_t numel = 0;
};

// Lowers `members` (nodes in topological order, all of one output shape;
// may be empty when only constants are materialized) writing `outputs`.
LoweredKernel lower_group(const PlanGraph& g, const std::vector<int>& members, const std::vector<int>& outputs);

}  // namespace wok::jit
