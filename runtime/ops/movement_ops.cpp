// Ops that move or select elements without arithmetic.
#include "wok/runtime/op_registry.h"
#include "wok/runtime/ops/op_rules.h"

namespace wok::ops {

namespace {

DTypeFn same_dtype() {
  return [](std::span<const DType> in, const Attrs&) { return one(in[0]); };
}

OpDef reshape_op() {
  OpDef def;
  def.name = "reshape";
  def.inputs = {"x"};
  def.attrs = {{"shape", AttrType::kInts, std::nullopt}};
  def.kind = OpKind::kMovement;
  def.infer_shape = [](std::span<const Shape> in, const Attrs& a) {
    const Shape& to = a.get_ints("shape");
    for (int64_t d : to)
      if (d < 0) throw ShapeError("reshape target " + shape_str(to) + " has a negative dimension");
    if (numel(to) != numel(in[0]))
      throw ShapeError("cannot reshape " + std::to_string(numel(in[0])) + " elements into " + shape_str(to));
    return std::vector<Shape>{to};
  };
  def.infer_dtype = same_dtype();
  def.output_aliases_input = true;  // tensors are contiguous: same bytes, new shape
  def.doc = "same elements, new shape";
  return def;
}

OpDef permute_op() {
  OpDef def;
  def.name = "permute";
  def.inputs = {"x"};
  def.attrs = {{"dims", AttrType::kInts, std::nullopt}};
  def.kind = OpKind::kMovement;
  def.infer_shape = [](std::span<const Shape> in, const Attrs& a) {
    const auto& dims = a.get_ints("dims");
    if (dims.size() != in[0].size())
      throw ShapeError("permutation " + shape_str(dims) + " does not match rank " + std::to_string(in[0].size()));
    check_axes(dims, static_cast<int>(dims.size()));
    Shape out;
    for (int64_t d : dims) out.push_back(in[0][d]);
    return std::vector<Shape>{out};
  };
  def.infer_dtype = same_dtype();
  def.doc = "out.shape[i] = x.shape[dims[i]]";
  return def;
}

OpDef broadcast_to_op() {
  OpDef def;
  def.name = "broadcast_to";
  def.inputs = {"x"};
  def.attrs = {{"shape", AttrType::kInts, std::nullopt}};
  def.kind = OpKind::kMovement;
  def.infer_shape = [](std::span<const Shape> in, const Attrs& a) {
    const Shape& to = a.get_ints("shape");
    std::optional<Shape> b = broadcast_shapes(in[0], to);
    if (!b || *b != to) throw ShapeError("cannot broadcast " + shape_str(in[0]) + " to " + shape_str(to));
    return std::vector<Shape>{to};
  };
  def.infer_dtype = same_dtype();
  def.doc = "repeat along size-1 and new leading dims";
  return def;
}

// Python-style slices with every axis spelled out: starts, stops and steps
// are already clamped by the frontend, steps are non-zero.
OpDef slice_op() {
  OpDef def;
  def.name = "slice";
  def.inputs = {"x"};
  def.attrs = {{"starts", AttrType::kInts, std::nullopt},
               {"stops", AttrType::kInts, std::nullopt},
               {"steps", AttrType::kInts, std::nullopt}};
  def.kind = OpKind::kMovement;
  def.infer_shape = [](std::span<const Shape> in, const Attrs& a) {
    const auto& starts = a.get_ints("starts");
    const auto& stops = a.get_ints("stops");
    const auto& steps = a.get_ints("steps");
    size_t n = in[0].size();
    if (starts.size() != n || stops.size() != n || steps.size() != n)
      throw ShapeError("slice needs one start, stop and step per axis (rank " + std::to_string(n) + ")");
    Shape out(n);
    for (size_t i = 0; i < n; ++i) {
      int64_t step = steps[i];
      if (step == 0) throw ShapeError("slice step of axis " + std::to_string(i) + " is 0");
      int64_t len = step > 0 ? (stops[i] - starts[i] + step - 1) / step : (starts[i] - stops[i] - step - 1) / -step;
      out[i] = std::max<int64_t>(len, 0);
      if (out[i] > 0) {
        int64_t last = starts[i] + (out[i] - 1) * step;
        if (starts[i] < 0 || starts[i] >= in[0][i] || last < 0 || last >= in[0][i])
          throw ShapeError("slice of axis " + std::to_string(i) + " reads outside [0, " + std::to_string(in[0][i]) +
                           ")");
      }
    }
    return std::vector<Shape>{out};
  };
  def.infer_dtype = same_dtype();
  def.doc = "x[start:stop:step] along each axis";
  return def;
}

OpDef concat_op() {
  OpDef def;
  def.name = "concat";
  def.inputs = {"xs"};
  def.variadic_inputs = true;
  def.attrs = {{"axis", AttrType::kInt, std::nullopt}};
  def.kind = OpKind::kMovement;
  def.infer_shape = [](std::span<const Shape> in, const Attrs& a) {
    if (in.empty()) throw ShapeError("concat needs at least one tensor");
    int64_t axis = a.get_int("axis");
    if (axis < 0 || axis >= static_cast<int64_t>(in[0].size()))
      throw ShapeError("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(in[0].size()));
    Shape out = in[0];
    for (size_t k = 1; k < in.size(); ++k) {
      bool fits = in[k].size() == out.size();
      for (size_t i = 0; fits && i < out.size(); ++i) fits = static_cast<int64_t>(i) == axis || in[k][i] == out[i];
      if (!fits)
        throw ShapeError("tensor " + std::to_string(k) + " of shape " + shape_str(in[k]) +
                         " does not match " + shape_str(in[0]) + " outside axis " + std::to_string(axis));
      out[axis] += in[k][axis];
    }
    return std::vector<Shape>{out};
  };
  def.infer_dtype = [](std::span<const DType> in, const Attrs&) { return one(common_dtype(in)); };
  def.doc = "join tensors along an existing axis";
  return def;
}

}  // namespace

void register_movement_ops(OpRegistry& r) {
  r.add(reshape_op());
  r.add(permute_op());
  r.add(broadcast_to_op());
  r.add(slice_op());
  r.add(concat_op());
}

}  // namespace wok::ops
