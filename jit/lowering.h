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
#include <span>
#include <string>
#include <vector>

#include "wok/jit/fused_kernel.h"
#include "wok/jit/gemm_driver.h"
#include "wok/jit/plan_graph.h"
#include "wok/runtime/op_def.h"

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
// generates when there is no elementwise prologue to fuse; wider bare ones
// run on the precompiled kernel (Note [Wide column reductions] in
// jit/fusion_policy.cpp).
inline constexpr int64_t kMaxBareColumnKernelColumns = 128;

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
// Whether an input of shape v of a value without the reduced dims reads the
// same elements right-aligned to s (how kernels read their inputs) as in the
// value's own frame: [2, 4, 1] beside a mean of [2, 4, 1, 1] over its last
// dim does not ([1, 2, 4, 1] against [2, 4, 1, 1]); [4, 1] beside a sum of
// [4, 3] over its last does.
bool aligns_as_reduced_value(const Shape& v, const ReduceSpace& s);

// Whether the precompiled kernel of an op on these input dtypes computes at
// another result dtype than the op's own (Note [Narrow integers read as
// floats] in jit/fusion_policy.cpp): such nodes are not generated.
bool widening_changes_result(const OpDef& def, std::span<const DType> inputs, const Attrs& attrs);

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
  // GEMM kernels: the operands' layouts and the blocking's inputs.
  GemmLayout gemm;
};

// Lowers `members` (nodes in topological order, all of one output shape;
// may be empty when only constants are materialized) writing `outputs`.
LoweredKernel lower_group(const PlanGraph& g, const std::vector<int>& members, const std::vector<int>& outputs);

// Lowers a reduction group: members in topological order, at least one of
// them a reduction of space `space`; a row or a column kernel.
LoweredKernel lower_reduction_group(const PlanGraph& g, const std::vector<int>& members, const std::vector<int>& outputs,
                              const ReduceSpace& space);

// The ops the GEMM generator lowers: matmul, and conv2d / conv1d as an
// implicit GEMM (Note [Convolution as a GEMM]). Whether one node of them is
// generated is is_gemm_node's call (dtypes, depthwise convolutions).
bool is_gemm_op(const OpDef& def);
// A matmul the target generates (float32 or float64, operands of its dtype).
bool is_gemm_node(const PlanGraph& g, int node);
// Whether `value` can be read by the epilogue of GEMM node `gemm_node`:
// of the product's register width, broadcast to the product's shape with
// its last two dims each contiguous or constant.
bool is_gemm_epilogue_input(const PlanGraph& g, int value, int gemm_node);
// Whether elementwise node `node` can run in the epilogue of GEMM node
// `gemm_node`: its values fit the product's register width (no float64
// inside a float32 kernel, nor float32 sin, cos or pow, which run in
// float64), and what it writes is stored like the product (not bool).
bool fits_gemm_epilogue(const PlanGraph& g, int node, int gemm_node);
// A permute swapping the last two dims: a transpose the GEMM's packing
// reads in place when it feeds only the matmul.
bool is_gemm_operand_view(const PlanGraph& g, int node);
// The members of GEMM node `gemm_node`'s group that compute its operand
// `side` (0: a, 1: b): the operand's prologue, in node order.
std::vector<int> gemm_prologue_members(const PlanGraph& g, int gemm_node, int side);
// Puts an elementwise group that only a matmul's operand reads into the
// matmul's group, as that operand's prologue (after fusion).
void absorb_gemm_prologues(PlanGraph& g);
// Puts each such transpose into its matmul's group (after fusion).
void absorb_gemm_operand_views(PlanGraph& g);
// Lowers a group holding a GEMM node: the matmul, absorbed transposes of
// its operands, and its epilogue (members computed from the product).
LoweredKernel lower_gemm_group(const PlanGraph& g, const std::vector<int>& members, const std::vector<int>& outputs);

}  // namespace wok::jit
