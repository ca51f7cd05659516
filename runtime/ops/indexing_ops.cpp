// Ops that read or write elements at positions given by a tensor of
// indices: gather, gather_elements, gather_nd, scatter_elements,
// scatter_nd (ONNX semantics) and one_hot. Their kernels are in
// runtime/kernels/cpu/indexing_kernels.cpp.
//
// Note [Indices are data]
// The shape rules below see only the indices' shape; their values are
// checked by the kernel when it runs (runtime/kernels/cpu/
// indexing_kernels.cpp): an index outside [-n, n) raises wok::ArgumentError
// naming the op, the index and the dim's size, from wherever the pending
// work is evaluated (to_vector, wok::eval, or a later read after
// eval_async). Negative indices count from the end, as in ONNX.
#include "wok/runtime/op_registry.h"
#include "wok/runtime/ops/op_rules.h"

namespace wok::ops {

namespace {

void require_indices(DType t, const char* what = "indices") {
  if (t != DType::kInt32 && t != DType::kInt64)
    throw DTypeError(std::string(what) + " must be int32 or int64, got " + std::string(dtype_name(t)));
}

void check_axis(int64_t axis, size_t rank) {
  if (axis < 0 || axis >= static_cast<int64_t>(rank))
    throw ShapeError("axis " + std::to_string(axis) + " is out of range for a tensor of rank " + std::to_string(rank));
}

// out = x's dtype; indices int32 or int64; any further inputs (updates)
// share x's dtype (the frontend casts them).
DTypeFn data_and_indices_dtype() {
  return [](std::span<const DType> in, const Attrs&) {
    require_indices(in[1]);
    for (size_t i = 2; i < in.size(); ++i)
      if (in[i] != in[0])
        throw DTypeError("updates must have x's dtype " + std::string(dtype_name(in[0])) + ", got " +
                         std::string(dtype_name(in[i])));
    return one(in[0]);
  };
}

// indices and x have one rank, and indices fit inside x off the axis
// (GatherElements / ScatterElements address x by the index's own position
// along every other dim).
void check_elementwise_indices(const Shape& x, const Shape& idx, int64_t axis) {
  if (x.empty()) throw ShapeError("x must have at least one dimension");
  check_axis(axis, x.size());
  if (idx.size() != x.size())
    throw ShapeError("indices of rank " + std::to_string(idx.size()) + " do not match x of rank " +
                     std::to_string(x.size()));
  for (size_t d = 0; d < x.size(); ++d)
    if (static_cast<int64_t>(d) != axis && idx[d] > x[d])
      throw ShapeError("indices " + shape_str(idx) + " are larger than x " + shape_str(x) + " along dim " +
                       std::to_string(d) + " (only the axis " + std::to_string(axis) + " may differ)");
}

// GatherND / ScatterND: the leading batch dims agree, and an index tuple of
// indices.shape[-1] values addresses x's dims after them.
int64_t check_nd_indices(const Shape& x, const Shape& idx, int64_t batch_dims) {
  if (idx.empty()) throw ShapeError("indices must have at least one dimension (the last holds the index tuples)");
  if (batch_dims < 0 || batch_dims >= static_cast<int64_t>(std::min(x.size(), idx.size())))
    throw ShapeError("batch_dims " + std::to_string(batch_dims) + " must be below the ranks of x and indices");
  const int64_t k = idx.back();
  if (k < 0 || k > static_cast<int64_t>(x.size()) - batch_dims)
    throw ShapeError("index tuples of " + std::to_string(k) + " values address more dims than x " + shape_str(x) +
                     " has after " + std::to_string(batch_dims) + " batch dims");
  for (int64_t d = 0; d < batch_dims; ++d)
    if (x[d] != idx[d])
      throw ShapeError("batch dim " + std::to_string(d) + " differs: x " + shape_str(x) + ", indices " +
                       shape_str(idx));
  return k;
}

Shape gather_nd_shape(const Shape& x, const Shape& idx, int64_t batch_dims) {
  const int64_t k = check_nd_indices(x, idx, batch_dims);
  Shape out(idx.begin(), idx.end() - 1);
  out.insert(out.end(), x.begin() + batch_dims + k, x.end());
  return out;
}

const AttrSpec kReductionAttr{"reduction", AttrType::kString, std::string("none")};

void check_reduction(const Attrs& a) {
  const std::string& r = a.get_string("reduction");
  if (r != "none" && r != "add" && r != "mul" && r != "max" && r != "min")
    throw ArgumentError("reduction '" + r + "' is not one of none, add, mul, max, min");
}

OpDef gather_op() {
  OpDef def;
  def.name = "gather";
  def.inputs = {"x", "indices"};
  def.attrs = {{"axis", AttrType::kInt, int64_t{0}}};
  def.infer_shape = [](std::span<const Shape> in, const Attrs& a) {
    const Shape& x = in[0];
    const int64_t axis = a.get_int("axis");
    if (x.empty()) throw ShapeError("x must have at least one dimension");
    check_axis(axis, x.size());
    Shape out(x.begin(), x.begin() + axis);
    out.insert(out.end(), in[1].begin(), in[1].end());
    out.insert(out.end(), x.begin() + axis + 1, x.end());
    return std::vector<Shape>{out};
  };
  def.infer_dtype = data_and_indices_dtype();
  def.doc = "ONNX Gather: out[..., j..., ...] = x[..., indices[j...], ...] along axis; "
            "out.shape = x.shape[:axis] + indices.shape + x.shape[axis+1:]";
  return def;
}

OpDef gather_elements_op() {
  OpDef def;
  def.name = "gather_elements";
  def.inputs = {"x", "indices"};
  def.attrs = {{"axis", AttrType::kInt, int64_t{0}}};
  def.infer_shape = [](std::span<const Shape> in, const Attrs& a) {
    check_elementwise_indices(in[0], in[1], a.get_int("axis"));
    return std::vector<Shape>{in[1]};
  };
  def.infer_dtype = data_and_indices_dtype();
  def.doc = "ONNX GatherElements (torch.gather): out[i] = x[i with i[axis] replaced by indices[i]]";
  return def;
}

OpDef gather_nd_op() {
  OpDef def;
  def.name = "gather_nd";
  def.inputs = {"x", "indices"};
  def.attrs = {{"batch_dims", AttrType::kInt, int64_t{0}}};
  def.infer_shape = [](std::span<const Shape> in, const Attrs& a) {
    return std::vector<Shape>{gather_nd_shape(in[0], in[1], a.get_int("batch_dims"))};
  };
  def.infer_dtype = data_and_indices_dtype();
  def.doc = "ONNX GatherND: each tuple in the last dim of indices picks a slice of x after batch_dims";
  return def;
}

OpDef scatter_elements_op() {
  OpDef def;
  def.name = "scatter_elements";
  def.inputs = {"x", "indices", "updates"};
  def.attrs = {{"axis", AttrType::kInt, int64_t{0}}, kReductionAttr};
  def.infer_shape = [](std::span<const Shape> in, const Attrs& a) {
    check_reduction(a);
    check_elementwise_indices(in[0], in[1], a.get_int("axis"));
    if (in[2] != in[1])
      throw ShapeError("updates " + shape_str(in[2]) + " must have the shape of indices " + shape_str(in[1]));
    return std::vector<Shape>{in[0]};
  };
  def.infer_dtype = data_and_indices_dtype();
  def.doc = "ONNX ScatterElements: a copy of x where out[i with i[axis] = indices[i]] (op)= updates[i]; "
            "reduction none, add, mul, max or min, applied in row-major order of indices";
  return def;
}

OpDef scatter_nd_op() {
  OpDef def;
  def.name = "scatter_nd";
  def.inputs = {"x", "indices", "updates"};
  def.attrs = {kReductionAttr};
  def.infer_shape = [](std::span<const Shape> in, const Attrs& a) {
    check_reduction(a);
    const Shape want = gather_nd_shape(in[0], in[1], 0);
    if (in[2] != want)
      throw ShapeError("updates " + shape_str(in[2]) + " must have shape " + shape_str(want) +
                       " (indices.shape[:-1] + x.shape[indices.shape[-1]:])");
    return std::vector<Shape>{in[0]};
  };
  def.infer_dtype = data_and_indices_dtype();
  def.doc = "ONNX ScatterND: a copy of x where the slice at each index tuple (op)= its updates; "
            "reduction none, add, mul, max or min, applied in row-major order of indices";
  return def;
}

// depth and the two values are attributes: depth fixes the output's shape,
// which must be known when the op is recorded.
OpDef one_hot_op() {
  OpDef def;
  def.name = "one_hot";
  def.inputs = {"indices"};
  def.attrs = {{"depth", AttrType::kInt, std::nullopt},
               {"axis", AttrType::kInt, int64_t{-1}},
               {"off", AttrType::kScalar, Scalar(int64_t{0})},
               {"on", AttrType::kScalar, Scalar(int64_t{1})}};
  def.infer_shape = [](std::span<const Shape> in, const Attrs& a) {
    const int64_t depth = a.get_int("depth");
    if (depth < 0) throw ShapeError("depth " + std::to_string(depth) + " is negative");
    const int64_t rank = static_cast<int64_t>(in[0].size()) + 1;
    int64_t axis = a.get_int("axis");
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank)
      throw ShapeError("axis " + std::to_string(a.get_int("axis")) + " is out of range for an output of rank " +
                       std::to_string(rank));
    Shape out = in[0];
    out.insert(out.begin() + axis, depth);
    return std::vector<Shape>{out};
  };
  def.infer_dtype = [](std::span<const DType> in, const Attrs& a) {
    require_indices(in[0]);
    return one(promote_types(a.get_scalar("off").dtype(), a.get_scalar("on").dtype()));
  };
  def.doc = "ONNX OneHot: `on` where the position along axis equals the index (negative indices wrap), "
            "`off` elsewhere, and all `off` for an index outside [-depth, depth)";
  return def;
}

}  // namespace

void register_indexing_ops(OpRegistry& r) {
  r.add(gather_op());
  r.add(gather_elements_op());
  r.add(gather_nd_op());
  r.add(scatter_elements_op());
  r.add(scatter_nd_op());
  r.add(one_hot_op());
}

}  // namespace wok::ops
