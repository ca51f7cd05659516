// What an operator is: its schema, shape and dtype rules and, for
// elementwise ops, its scalar formula. No kernel lives here; kernels are
// registered per device in runtime/op_registry.h.
//
// Note [One formula per op]
// An elementwise op states its math once, as a FormulaFn over the
// primitives of runtime/scalar_primitives.h, and every backend derives from
// that one program: the x86 JIT compiles it (fused with its neighbours), the
// precompiled CPU kernel evaluates it (runtime/kernels/cpu/
// formula_kernel.cpp, with the vector math of vec_math.h), and the CUDA JIT
// and the precompiled CUDA kernel (runtime/cuda/cuda_formula_kernel.cpp)
// render it with the device functions of templates/wok_device.cuh. No
// backend spells a composite op (gelu, sigmoid, silu) by hand, so a new one
// is its formula, its frontend function and its tests. The primitives are
// where backends differ, and each is one row per backend table (Note [One
// table per primitive]); JIT and precompiled agree bitwise on + - * / min
// max and stay within the ulp bounds of docs/numerics.md elsewhere. A user
// op with a formula fuses with its neighbours and runs precompiled like a
// built-in one.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "wok/runtime/attrs.h"
#include "wok/runtime/dtype.h"
#include "wok/runtime/scalar_formula.h"
#include "wok/runtime/shape.h"

namespace wok {

// How the runtime may treat an op; passes read this, never the op's name.
enum class OpKind : uint8_t {
  kElementwise,  // out[i] = formula(in[i]...), inputs broadcast to the output
  kReduction,    // reduces along `axes`
  kMovement,     // reshape, permute, slice, concat, broadcast_to
  kCreation,     // no tensor inputs (full, ...)
  kOpaque,       // anything else (matmul): a kernel call and nothing more
};

std::string_view op_kind_name(OpKind kind);

// What a reduction op computes, for passes and code generators (which read
// this, never the op's name). The combining instruction fixes the identity
// (0 for sum, 1 for prod, -inf for max and +inf for min (an integer's
// lowest and highest value), none for argmax: an empty axis is an error
// there) and how partial results merge.
struct ReductionSchema {
  ScalarOp combine = ScalarOp::kReduceSum;  // kReduceSum, kReduceProd, kReduceMax, kReduceMin, kReduceArgmax
  bool divides_by_count = false;            // mean: the combined value over the count
  bool yields_index() const { return combine == ScalarOp::kReduceArgmax; }
};

// Shape and dtype rules. They throw wok::ShapeError / wok::DTypeError with a
// short reason; the caller adds the op name, shapes and dtypes.
using ShapeFn = std::function<std::vector<Shape>(std::span<const Shape> inputs, const Attrs& attrs)>;
using DTypeFn = std::function<std::vector<DType>(std::span<const DType> inputs, const Attrs& attrs)>;
// Builds the formula for the dtypes in `b` (see runtime/scalar_formula.h).
using FormulaFn = std::function<void(FormulaBuilder& b)>;

struct OpDef {
  std::string name;
  std::vector<std::string> inputs;         // input names, for messages
  bool variadic_inputs = false;            // the last input repeats one or more times (concat)
  std::vector<std::string> outputs = {"out"};
  std::vector<AttrSpec> attrs;
  OpKind kind = OpKind::kOpaque;
  ShapeFn infer_shape;                     // required
  DTypeFn infer_dtype;                     // required
  FormulaFn formula;                       // elementwise ops
  std::optional<ReductionSchema> reduction;  // reductions the JIT may fuse
  // A creation op whose output holds one value everywhere (attribute
  // "value"): constant folding inlines it as a launch parameter.
  bool fills_constant = false;
  // The output is input 0's buffer, unchanged (reshape of a contiguous
  // tensor); the kernel is not called.
  bool output_aliases_input = false;
  // A collective of wok::dist: every rank of its group runs it in the same
  // order. Passes never merge two calls (CSE) or fold one, and plans run it
  // on their communication lane (Note [The communication lane] in
  // jit/plan_lanes.cpp).
  bool communicates = false;
  // Among steps ready to run, lower goes first (the order of a plan's steps
  // is also the order its collectives are issued in). dist.send is -1: a
  // send returns without its receiver, so issuing every ready send before
  // any receive keeps a ring of sends and receives in one plan from
  // waiting on itself.
  int schedule_priority = 0;
  std::string doc;
};

// Shape rule of elementwise ops: NumPy broadcasting of all inputs.
std::vector<Shape> broadcast_all_inputs(std::span<const Shape> inputs, const Attrs& attrs);

// An elementwise op from its formula alone: inputs broadcast, one output
// whose dtype is `rule` applied to the inputs' common dtype (the frontend
// promotes them to one), bool inputs refused unless `takes_bool`. Every
// backend derives its kernel from the formula (docs/adding-an-op.md).
// Defined in runtime/ops/elementwise_ops.cpp.
OpDef elementwise_op_def(std::string name, std::vector<std::string> inputs, ResultRule rule, FormulaFn formula,
                         std::string doc = "", bool takes_bool = true);

}  // namespace wok
