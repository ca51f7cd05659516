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

#include <optional>
#include <string>
#include <vector>

#include "wok/jit/fused_kernel.h"
#include "wok/jit/plan_graph.h"

namespace wok::jit {

// The node's formula instantiated for its dtypes and attributes; for a
// reduction fused into a row kernel, its reduce instructions (with casts to
// the accumulation dtype, and the division of mean).
ScalarProgram node_program(const Fragment& f, int node);

// The space a row kernel iterates: `shape`, whose dims from `k` on form the
// row that reductions run along (k = ndim - 1: the last dim; k = 0: all).
struct RowSpace {
  Shape shape;
  int k = -1;
  friend bool operator==(const RowSpace&, const RowSpace&) = default;
};

// A reduction the JIT fuses into a row kernel (over the last axis, or over
// all axes): its row space. nullopt for other reductions and other ops.
std::optional<RowSpace> row_reduction_space(const PlanGraph& g, int node);

// Whether a value of shape v lives in row space s: a full row value (v
// equals s), or one value per row (v is s's leading dims, with or without
// the reduced dims kept as 1).
bool is_full_row_value(const Shape& v, const RowSpace& s);
bool is_row_scalar_value(const Shape& v, const RowSpace& s);
// Whether an input of shape v (broadcast to s) can be read by a row kernel:
// along the row it is either contiguous or constant.
bool is_row_readable_input(const Shape& v, const RowSpace& s);

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
  // Row kernels: rows (product of the outer dims) and the row length.
  int64_t rows = 0;
  int64_t row_length = 0;
};

// Lowers `members` (nodes in topological order, all of one output shape;
// may be empty when only constants are materialized) writing `outputs`.
LoweredKernel lower_group(const PlanGraph& g, const std::vector<int>& members, const std::vector<int>& outputs);

// Lowers a row group: members in topological order, at least one of them a
// row reduction of space `space`.
LoweredKernel lower_row_group(const PlanGraph& g, const std::vector<int>& members, const std::vector<int>& outputs,
                              const RowSpace& space);

}  // namespace wok::jit
