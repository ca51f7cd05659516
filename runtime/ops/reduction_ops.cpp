// Reductions over a list of axes: sum, mean, max, min, prod, argmax.
#include "wok/runtime/op_registry.h"
#include "wok/runtime/ops/op_rules.h"

namespace wok::ops {

// Axes are canonical by the time they reach an op: sorted, non-negative,
// and all axes spelled out when the user reduces everything.
Shape reduced_shape(const Shape& in, const std::vector<int64_t>& axes, bool keepdims) {
  std::vector<bool> reduce(in.size(), false);
  for (int64_t a : axes) reduce[a] = true;
  Shape out;
  for (size_t i = 0; i < in.size(); ++i) {
    if (!reduce[i]) out.push_back(in[i]);
    else if (keepdims) out.push_back(1);
  }
  return out;
}

namespace {

enum class ReduceResult { kAccumulate, kMean, kSame, kIndex };

OpDef reduction(std::string name, ReduceResult result, bool needs_identity, ReductionSchema schema, std::string doc) {
  OpDef def;
  def.name = std::move(name);
  def.reduction = schema;
  def.inputs = {"x"};
  def.attrs = {{"axes", AttrType::kInts, std::nullopt}, {"keepdims", AttrType::kBool, false}};
  def.kind = OpKind::kReduction;
  def.infer_shape = [needs_identity, op = def.name](std::span<const Shape> in, const Attrs& a) {
    const auto& axes = a.get_ints("axes");
    check_axes(axes, static_cast<int>(in[0].size()));
    if (needs_identity)
      for (int64_t ax : axes)
        if (in[0][ax] == 0)
          throw ShapeError("cannot reduce over axis " + std::to_string(ax) + " of size 0: " + op +
                           " has no identity");
    return std::vector<Shape>{reduced_shape(in[0], axes, a.get_bool("keepdims"))};
  };
  def.infer_dtype = [result](std::span<const DType> in, const Attrs&) {
    DType t = in[0];
    switch (result) {
      // uint64 keeps its type (NumPy); no wider type holds its sums either way.
      case ReduceResult::kAccumulate: return one(is_floating(t) || t == DType::kUInt64 ? t : DType::kInt64);
      case ReduceResult::kMean: return one(float_result_type(t));
      case ReduceResult::kSame: return one(t);
      case ReduceResult::kIndex: return one(DType::kInt64);
    }
    return one(t);
  };
  def.doc = std::move(doc);
  return def;
}

}  // namespace

void register_reduction_ops(OpRegistry& r) {
  r.add(reduction("sum", ReduceResult::kAccumulate, false, {ScalarOp::kReduceSum},
                  "sum; integers accumulate in int64 (uint64 in uint64); 0 over zero elements"));
  r.add(reduction("mean", ReduceResult::kMean, false, {ScalarOp::kReduceSum, /*divides_by_count=*/true}, "arithmetic mean; nan over zero elements"));
  // Over zero elements max and min give their identity (ONNX): -inf and
  // +inf, an integer dtype's lowest and highest value, false and true.
  r.add(reduction("max", ReduceResult::kSame, false, {ScalarOp::kReduceMax},
                  "maximum, nan-propagating; -inf (integers: the lowest value) over zero elements"));
  r.add(reduction("min", ReduceResult::kSame, false, {ScalarOp::kReduceMin},
                  "minimum, nan-propagating; +inf (integers: the highest value) over zero elements"));
  r.add(reduction("prod", ReduceResult::kAccumulate, false, {ScalarOp::kReduceProd},
                  "product; integers accumulate in int64 (uint64 in uint64); 1 over zero elements"));
  r.add(reduction("argmax", ReduceResult::kIndex, true, {ScalarOp::kReduceArgmax},
                  "row-major index of the first maximum within the reduced axes (nan counts as maximum)"));
}

}  // namespace wok::ops
