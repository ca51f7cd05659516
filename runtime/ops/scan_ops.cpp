// Ops along one axis that are neither elementwise nor reductions: the
// running sums and products (ONNX CumSum, and its product), and the
// selections topk and sort, which return values and int64 indices. Their
// kernels are in runtime/kernels/cpu/scan_kernels.cpp and sort_kernels.cpp.
//
// Note [Order of values in topk and sort]
// Values are ordered as numbers, with nan above +inf (as argmax counts it
// the maximum), and -0 equal to +0. Equal values keep their order along the
// axis: the lower index comes first in an ascending and in a descending
// order alike (a stable sort; ONNX TopK's tie rule). So a descending sort
// or topk with largest puts the nans first, an ascending sort or topk of
// the smallest puts them last.
#include "wok/runtime/op_registry.h"
#include "wok/runtime/ops/op_rules.h"

namespace wok::ops {

namespace {

void check_axis(int64_t axis, size_t rank) {
  if (axis < 0 || axis >= static_cast<int64_t>(rank))
    throw ShapeError("axis " + std::to_string(axis) + " is out of range for a tensor of rank " + std::to_string(rank));
}

OpDef scan_op(std::string name, std::string doc) {
  OpDef def;
  def.name = std::move(name);
  def.inputs = {"x"};
  def.attrs = {{"axis", AttrType::kInt, std::nullopt},
               {"exclusive", AttrType::kBool, false},
               {"reverse", AttrType::kBool, false}};
  def.infer_shape = [](std::span<const Shape> in, const Attrs& a) {
    check_axis(a.get_int("axis"), in[0].size());
    return std::vector<Shape>{in[0]};
  };
  // As wok::sum and wok::prod accumulate: integers and bool in int64.
  def.infer_dtype = [](std::span<const DType> in, const Attrs&) {
    return one(is_floating(in[0]) ? in[0] : DType::kInt64);
  };
  def.doc = std::move(doc);
  return def;
}

OpDef topk_op() {
  OpDef def;
  def.name = "topk";
  def.inputs = {"x"};
  def.outputs = {"values", "indices"};
  def.attrs = {{"k", AttrType::kInt, std::nullopt},
               {"axis", AttrType::kInt, std::nullopt},
               {"largest", AttrType::kBool, true}};
  def.infer_shape = [](std::span<const Shape> in, const Attrs& a) {
    const int64_t axis = a.get_int("axis"), k = a.get_int("k");
    check_axis(axis, in[0].size());
    if (k < 0 || k > in[0][axis])
      throw ShapeError("k = " + std::to_string(k) + " is outside [0, " + std::to_string(in[0][axis]) +
                       "], the size of axis " + std::to_string(axis));
    Shape out = in[0];
    out[axis] = k;
    return std::vector<Shape>{out, out};
  };
  def.infer_dtype = [](std::span<const DType> in, const Attrs&) { return std::vector<DType>{in[0], DType::kInt64}; };
  def.doc = "ONNX TopK: the k largest (or smallest) values along axis, sorted, and their int64 indices; "
            "equal values by lower index first, nan above every number";
  return def;
}

OpDef sort_op() {
  OpDef def;
  def.name = "sort";
  def.inputs = {"x"};
  def.outputs = {"values", "indices"};
  def.attrs = {{"axis", AttrType::kInt, std::nullopt}, {"descending", AttrType::kBool, false}};
  def.infer_shape = [](std::span<const Shape> in, const Attrs& a) {
    check_axis(a.get_int("axis"), in[0].size());
    return std::vector<Shape>{in[0], in[0]};
  };
  def.infer_dtype = [](std::span<const DType> in, const Attrs&) { return std::vector<DType>{in[0], DType::kInt64}; };
  def.doc = "stable sort along axis: the sorted values and their int64 indices; nan above every number";
  return def;
}

}  // namespace

void register_scan_ops(OpRegistry& r) {
  r.add(scan_op("cumsum", "ONNX CumSum: running sums along axis (exclusive: without the element itself; "
                          "reverse: from the end); integers and bool accumulate in int64"));
  r.add(scan_op("cumprod", "running products along axis, with cumsum's exclusive and reverse; "
                           "integers and bool accumulate in int64"));
  r.add(topk_op());
  r.add(sort_op());
}

}  // namespace wok::ops
