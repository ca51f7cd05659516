// ONNX's indexing, scan and selection ops: gathers, scatters, OneHot,
// NonZero, Compress, CumSum, TopK.
#include "wok/frontend/creation.h"
#include "wok/frontend/indexing.h"
#include "wok/frontend/ops.h"
#include "wok/frontend/scans.h"
#include "wok/onnx/converters.h"

namespace wok::onnx {

namespace {

Outputs convert_gather(const NodeContext& c) { return {gather(c.input(0), c.attr_int("axis", 0), c.input(1))}; }

Outputs convert_gather_elements(const NodeContext& c) {
  return {gather_elements(c.input(0), c.attr_int("axis", 0), c.input(1))};
}

Outputs convert_gather_nd(const NodeContext& c) {
  return {gather_nd(c.input(0), c.input(1), c.attr_int("batch_dims", 0))};
}

ScatterReduction scatter_reduction(const NodeContext& c) {
  const std::string r = c.attr_string("reduction", "none");
  if (r == "none") return ScatterReduction::kNone;
  if (r == "add") return ScatterReduction::kAdd;
  if (r == "mul") return ScatterReduction::kMul;
  if (r == "max") return ScatterReduction::kMax;
  if (r == "min") return ScatterReduction::kMin;
  c.fail("unknown reduction '" + r + "'");
}

// Scatter (opset 9-10) is ScatterElements without a reduction.
Outputs convert_scatter_elements(const NodeContext& c) {
  return {scatter_elements(c.input(0), c.attr_int("axis", 0), c.input(1), c.input(2), scatter_reduction(c))};
}

Outputs convert_scatter_nd(const NodeContext& c) {
  return {scatter_nd(c.input(0), c.input(1), c.input(2), scatter_reduction(c))};
}

// OneHot's indices may be of any numeric type (truncated to integers); its
// result has the dtype of `values` ([off, on]).
Outputs convert_one_hot(const NodeContext& c) {
  const Tensor& values = c.input(2);
  if (values.numel() != 2) c.fail("values must hold [off, on], got " + shape_str(values.shape()));
  const std::vector<double> depth = c.double_values(1);
  if (depth.size() != 1) c.fail("depth must hold one value");
  Tensor indices = c.input(0);
  if (indices.dtype() != DType::kInt32 && indices.dtype() != DType::kInt64) indices = indices.astype(DType::kInt64);
  const Tensor flat = reshape(values, {2});
  const Scalar off = slice(flat, 0, 0, 1).item_scalar(), on = slice(flat, 0, 1, 2).item_scalar();
  return {one_hot(indices, static_cast<int64_t>(depth[0]), {off, on}, c.attr_int("axis", -1)).astype(values.dtype())};
}

Outputs convert_nonzero(const NodeContext& c) { return {nonzero(c.input(0))}; }

// Compress keeps the slices along `axis` (of x flattened, without one)
// where `condition` is true; a condition shorter than the axis keeps
// nothing past its end.
Outputs convert_compress(const NodeContext& c) {
  Tensor x = c.input(0);
  Tensor condition = c.input(1);
  if (condition.ndim() != 1) c.fail("condition must be 1-D, got " + shape_str(condition.shape()));
  int64_t axis = 0;
  if (c.has_attr("axis")) axis = normalize_axis(c, c.attr_int("axis", 0), x.ndim());
  else x = reshape(x, {x.numel()});
  if (condition.shape()[0] > x.shape()[axis]) condition = slice(condition, 0, 0, x.shape()[axis]);
  const Tensor positions = reshape(nonzero(condition), {-1});
  return {gather(x, axis, positions)};
}

// CumSum keeps the input's dtype (wok accumulates integers in int64).
Outputs convert_cumsum(const NodeContext& c) {
  const Tensor& x = c.input(0);
  const std::vector<int64_t> axis = c.int_values(1);
  if (axis.size() != 1) c.fail("axis must hold one value");
  return {cumsum(x, axis[0], c.attr_int("exclusive", 0) != 0, c.attr_int("reverse", 0) != 0).astype(x.dtype())};
}

Outputs convert_topk(const NodeContext& c) {
  int64_t k;
  if (c.opset() < 10) {
    k = c.attr_int("k", 0);
  } else {
    const std::vector<int64_t> ks = c.int_values(1);
    if (ks.size() != 1) c.fail("K must hold one value");
    k = ks[0];
  }
  const ValuesIndices r =
      topk(c.input(0), k, c.attr_int("axis", -1), c.attr_int("largest", 1) != 0, c.attr_int("sorted", 1) != 0);
  return {r.values, r.indices};
}

// ReverseSequence reverses the first sequence_lens[b] steps of each batch
// entry b: a gather along the time axis with index
//   t < len[b] ? len[b] - 1 - t : t.
Outputs convert_reverse_sequence(const NodeContext& c) {
  const Tensor& x = c.input(0);
  const int64_t time_axis = c.attr_int("time_axis", 0), batch_axis = c.attr_int("batch_axis", 1);
  if (x.ndim() < 2 || (time_axis != 0 && time_axis != 1) || batch_axis != 1 - time_axis)
    c.fail("time_axis and batch_axis must be 0 and 1 (either way round) of a tensor of rank >= 2, got " +
           shape_str(x.shape()));
  const int64_t steps = x.shape()[time_axis], batch = x.shape()[batch_axis];
  Shape t_shape(static_cast<size_t>(x.ndim()), 1), len_shape(static_cast<size_t>(x.ndim()), 1);
  t_shape[time_axis] = steps;
  len_shape[batch_axis] = batch;
  const Tensor t = arange(0, static_cast<double>(steps), 1, DType::kInt64).reshape(t_shape);
  const Tensor len = c.input(1).astype(DType::kInt64).reshape(len_shape);
  const Tensor source = where(lt(t, len), len - 1 - t, t);
  return {gather_elements(x, time_axis, broadcast_to(source, x.shape()))};
}

}  // namespace

void add_indexing_converters(ConverterTable& t) {
  t.add("Gather", convert_gather);
  t.add("GatherElements", convert_gather_elements);
  t.add("GatherND", convert_gather_nd);
  t.add("ScatterElements", convert_scatter_elements);
  t.add("Scatter", convert_scatter_elements);
  t.add("ScatterND", convert_scatter_nd);
  t.add("OneHot", convert_one_hot);
  t.add("NonZero", convert_nonzero);
  t.add("Compress", convert_compress);
  t.add("CumSum", convert_cumsum);
  t.add("TopK", convert_topk);
  t.add("Unique", [](const NodeContext& c) -> Outputs {
    std::optional<int64_t> axis;
    if (c.has_attr("axis")) axis = c.attr_int("axis", 0);
    UniqueResult u = unique(c.input(0), c.attr_int("sorted", 1) != 0, axis);
    return {u.values, u.indices, u.inverse, u.counts};
  });
  t.add("ReverseSequence", convert_reverse_sequence);
}

}  // namespace wok::onnx
