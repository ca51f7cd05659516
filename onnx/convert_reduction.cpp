// ONNX's Reduce* ops and ArgMax/ArgMin.
#include "wok/frontend/ops.h"
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

// One Reduce* op: `pre` maps the input, `reduce` reduces, `post` maps the
// result; the result keeps the input's dtype, as ONNX's do.
template <Tensor (*Pre)(const Tensor&), Tensor (*Reduce)(const Tensor&, std::vector<int64_t>, bool),
          Tensor (*Post)(const Tensor&)>
Outputs reduce_op(const NodeContext& c) {
  const Tensor& x = c.input(0);
  std::vector<int64_t> axes;
  if (!reduced_axes(c, axes)) return {Post(Pre(x)).astype(x.dtype())};
  const bool keepdims = c.attr_int("keepdims", 1) != 0;
  return {Post(Reduce(Pre(x), axes, keepdims)).astype(x.dtype())};
}

Tensor same(const Tensor& x) { return x; }
Tensor abs_of(const Tensor& x) { return abs(x); }
Tensor square_of(const Tensor& x) { return square(x); }
Tensor sqrt_of(const Tensor& x) { return sqrt(x); }
Tensor log_of(const Tensor& x) { return log(x); }
Tensor sum_of(const Tensor& x, std::vector<int64_t> axes, bool keepdims) { return sum(x, axes, keepdims); }
Tensor mean_of(const Tensor& x, std::vector<int64_t> axes, bool keepdims) { return mean(x, axes, keepdims); }
Tensor max_of(const Tensor& x, std::vector<int64_t> axes, bool keepdims) { return max(x, axes, keepdims); }
Tensor min_of(const Tensor& x, std::vector<int64_t> axes, bool keepdims) { return min(x, axes, keepdims); }
Tensor prod_of(const Tensor& x, std::vector<int64_t> axes, bool keepdims) { return prod(x, axes, keepdims); }

// log(sum(exp(x))) computed as m + log(sum(exp(x - m))) with m the max, so
// large inputs do not overflow.
Tensor logsumexp_of(const Tensor& x, std::vector<int64_t> axes, bool keepdims) {
  Tensor m = max(x, axes, true);
  Tensor r = log(sum(exp(x - m), axes, true)) + m;
  if (keepdims) return r;
  return sum(r, axes, false);  // drops the kept size-1 dims
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
  t.add("ReduceSum", reduce_op<same, sum_of, same>);
  t.add("ReduceMean", reduce_op<same, mean_of, same>);
  t.add("ReduceMax", reduce_op<same, max_of, same>);
  t.add("ReduceMin", reduce_op<same, min_of, same>);
  t.add("ReduceProd", reduce_op<same, prod_of, same>);
  t.add("ReduceL1", reduce_op<abs_of, sum_of, same>);
  t.add("ReduceL2", reduce_op<square_of, sum_of, sqrt_of>);
  t.add("ReduceSumSquare", reduce_op<square_of, sum_of, same>);
  t.add("ReduceLogSum", reduce_op<same, sum_of, log_of>);
  t.add("ReduceLogSumExp", reduce_op<same, logsumexp_of, same>);
  t.add("ArgMax", convert_arg<false>);
  t.add("ArgMin", convert_arg<true>);
}

}  // namespace wok::onnx
