// ONNX's Reduce* ops and ArgMax/ArgMin.
#include "wok/frontend/ops.h"
#include "wok/frontend/shape_ops.h"
#include "wok/onnx/converters.h"

namespace wok::onnx {

namespace {

// The axes a Reduce* node reduces: an input from opset 13 (ReduceSum) or 18
// (the others), an attribute before; none given means all axes, or none at
// all with noop_with_empty_axes. Returns false for "reduce nothing".
bool reduced_axes(const NodeContext& c, std::vector<int64_t>& axes) {
  const int64_t rank = c.input(0).ndim();
  if (c.has_input(1)) axes = c.int_values(1);
  else axes = c.attr_ints("axes");
  if (axes.empty()) {
    if (c.attr_int("noop_with_empty_axes", 0)) return false;
    for (int64_t a = 0; a < rank; ++a) axes.push_back(a);
  }
  axes = normalize_axes(c, axes, rank);
  return true;
}

// One Reduce* op; the result keeps the input's dtype, as ONNX's do. With
// noop_with_empty_axes and no axes the input passes through.
template <Tensor (*Reduce)(const Tensor&, std::vector<int64_t>, bool)>
Outputs reduce_op(const NodeContext& c) {
  const Tensor& x = c.input(0);
  std::vector<int64_t> axes;
  if (!reduced_axes(c, axes)) return {x};
  return {Reduce(x, axes, c.attr_int("keepdims", 1) != 0).astype(x.dtype())};
}

Tensor sum_of(const Tensor& x, std::vector<int64_t> axes, bool keepdims) { return sum(x, axes, keepdims); }
Tensor mean_of(const Tensor& x, std::vector<int64_t> axes, bool keepdims) { return mean(x, axes, keepdims); }
Tensor max_of(const Tensor& x, std::vector<int64_t> axes, bool keepdims) { return max(x, axes, keepdims); }
Tensor min_of(const Tensor& x, std::vector<int64_t> axes, bool keepdims) { return min(x, axes, keepdims); }
Tensor prod_of(const Tensor& x, std::vector<int64_t> axes, bool keepdims) { return prod(x, axes, keepdims); }
Tensor l1_of(const Tensor& x, std::vector<int64_t> axes, bool keepdims) { return reduce_l1(x, axes, keepdims); }
Tensor l2_of(const Tensor& x, std::vector<int64_t> axes, bool keepdims) { return reduce_l2(x, axes, keepdims); }
Tensor sum_square_of(const Tensor& x, std::vector<int64_t> axes, bool keepdims) {
  return reduce_sum_square(x, axes, keepdims);
}
Tensor log_sum_of(const Tensor& x, std::vector<int64_t> axes, bool keepdims) { return reduce_log_sum(x, axes, keepdims); }
Tensor log_sum_exp_of(const Tensor& x, std::vector<int64_t> axes, bool keepdims) {
  return reduce_log_sum_exp(x, axes, keepdims);
}

// ArgMax and ArgMin along one axis.
template <bool kMin>
Outputs convert_arg(const NodeContext& c) {
  const Tensor& x = c.input(0);
  const int64_t axis = normalize_axis(c, c.attr_int("axis", 0), x.ndim());
  const bool keepdims = c.attr_int("keepdims", 1) != 0;
  const bool last = c.attr_int("select_last_index", 0) != 0;
  return {kMin ? argmin(x, {axis}, keepdims, last) : argmax(x, {axis}, keepdims, last)};
}

}  // namespace

void add_reduction_converters(ConverterTable& t) {
  t.add("ReduceSum", reduce_op<sum_of>);
  t.add("ReduceMean", reduce_op<mean_of>);
  t.add("ReduceMax", reduce_op<max_of>);
  t.add("ReduceMin", reduce_op<min_of>);
  t.add("ReduceProd", reduce_op<prod_of>);
  t.add("ReduceL1", reduce_op<l1_of>);
  t.add("ReduceL2", reduce_op<l2_of>);
  t.add("ReduceSumSquare", reduce_op<sum_square_of>);
  t.add("ReduceLogSum", reduce_op<log_sum_of>);
  t.add("ReduceLogSumExp", reduce_op<log_sum_exp_of>);
  t.add("ArgMax", convert_arg<false>);
  t.add("ArgMin", convert_arg<true>);
}

}  // namespace wok::onnx
