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

// The space a reduction kernel iterates: `shape`, of which dims [k, end)
// are reduced. end == ndim: a row kernel (the trailing dims form the row);
// end < ndim: a column kernel (reduced dims followed by kept ones, viewed as
// [P, R, C]).
struct ReduceSpace {
  Shape shape;
  int k = -1;
  int end = -1;
  bool is_row() const { return end == static_cast<int>(shape.size()); }
  friend bool operator==(const ReduceSpace&, const ReduceSpace&) = default;
};

// Widest outer-axis reduction (columns kept after the reduced dims) the JIT
// generates; wider ones run on the precompiled kernel (see reduction_space).
inline constexpr int64_t kMaxColumnKernelColumns = 128;

// A reduction the JIT fuses (over one contiguous block of axes): its space.
// nullopt for other reductions and other ops.
std::optional<ReduceSpace> reduction_space(const PlanGraph& g, int node);

// A reduction whose result is an index (argmax), not a value of its input:
// a kernel can write it but not compute with it (Note [Generated argmax]
// in jit/x86/argmax_emitter.h).
bool yields_index(const PlanGraph& g, int node);

// Whether a value of shape v lives in space s: a full value (v equals s),
// or a reduced one (s with the reduced dims dropped or kept as 1).
bool is_full_value(const Shape& v, const ReduceSpace& s);
bool is_reduced_value(const Shape& v, const ReduceSpace& s);
// Whether an input of shape v (broadcast to s) can be read by the kernel:
// each block of dims it is contiguous along or constant along.
bool is_readable_input(const Shape& v, const ReduceSpace& s);
// Whether an input of shape v, right-aligned to s, is constant along the
// reduced dims: what an input of a reduced value's elementwise consumers
// must be. A reduced value without the reduced dims ([2] of a sum of
// [2, 1, 2] over its last two) broadcasts with its own inputs in its own
// frame; right-aligned to s, such an input would land on the reduced dims.
bool is_constant_along_reduced_dims(const Shape& v, const ReduceSpace& s);

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

// Lowers a reduction group: members in topological order, at least one of
// them a reduction of space `space`; a row or a column kernel.
LoweredKernel lower_reduction_group(const PlanGraph& g, const std::vector<int>& members, const std::vector<int>& outputs,
                              const ReduceSpace& space);

}  // namespace wok::jit
