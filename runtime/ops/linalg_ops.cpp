// Matrix multiplication, 2-D and batched with broadcast batch dims, and
// the determinant of batched square matrices.
#include "wok/runtime/op_registry.h"
#include "wok/runtime/ops/op_rules.h"

namespace wok::ops {

void register_linalg_ops(OpRegistry& r) {
  OpDef def;
  def.name = "matmul";
  def.inputs = {"a", "b"};
  def.kind = OpKind::kOpaque;
  def.infer_shape = [](std::span<const Shape> in, const Attrs&) {
    const Shape& a = in[0];
    const Shape& b = in[1];
    if (a.size() < 2 || b.size() < 2) throw ShapeError("matmul needs inputs of rank 2 or more");
    int64_t k = a[a.size() - 1];
    if (b[b.size() - 2] != k)
      throw ShapeError("inner dimensions differ: " + std::to_string(k) + " vs " + std::to_string(b[b.size() - 2]));
    Shape batch_a(a.begin(), a.end() - 2);
    Shape batch_b(b.begin(), b.end() - 2);
    std::optional<Shape> batch = broadcast_shapes(batch_a, batch_b);
    if (!batch) throw ShapeError("batch dimensions cannot be broadcast together");
    Shape out = *batch;
    out.push_back(a[a.size() - 2]);
    out.push_back(b[b.size() - 1]);
    return std::vector<Shape>{out};
  };
  def.infer_dtype = [](std::span<const DType> in, const Attrs&) {
    DType t = common_dtype(in);
    require_not_bool(t, "matmul");
    return one(t);
  };
  def.doc = "a @ b over the last two dims";
  r.add(std::move(def));

  OpDef det;
  det.name = "det";
  det.inputs = {"x"};
  det.kind = OpKind::kOpaque;
  det.infer_shape = [](std::span<const Shape> in, const Attrs&) {
    const Shape& x = in[0];
    if (x.size() < 2 || x[x.size() - 1] != x[x.size() - 2])
      throw ShapeError("det needs square matrices in the last two dims [..., n, n], got " + shape_str(x));
    return std::vector<Shape>{Shape(x.begin(), x.end() - 2)};
  };
  det.infer_dtype = [](std::span<const DType> in, const Attrs&) {
    if (!is_floating(in[0]))
      throw DTypeError("det takes float32 or float64, got " + std::string(dtype_name(in[0])) +
                       " (the frontend casts integers to float64)");
    return one(in[0]);
  };
  det.doc = "the determinant of each [n, n] matrix (LU with partial pivoting, in float64)";
  r.add(std::move(det));
}

void register_creation_ops(OpRegistry& r) {
  OpDef def;
  def.name = "full";
  def.fills_constant = true;
  def.attrs = {{"value", AttrType::kScalar, std::nullopt}, {"shape", AttrType::kInts, Shape{}}};
  def.kind = OpKind::kCreation;
  def.infer_shape = [](std::span<const Shape>, const Attrs& a) {
    const Shape& s = a.get_ints("shape");
    for (int64_t d : s)
      if (d < 0) throw ShapeError("shape " + shape_str(s) + " has a negative dimension");
    return std::vector<Shape>{s};
  };
  def.infer_dtype = [](std::span<const DType>, const Attrs& a) { return one(a.get_scalar("value").dtype()); };
  def.doc = "a tensor filled with one value (scalar constants in expressions are 0-d fulls)";
  r.add(std::move(def));
}

}  // namespace wok::ops
