// ONNX ops that move, reshape, create or describe tensors.
#include <algorithm>
#include <cmath>
#include <limits>
#include "wok/frontend/creation.h"
#include "wok/frontend/ops.h"
#include "wok/onnx/converters.h"
#include "wok/onnx/tensor_proto.h"

namespace wok::onnx {

namespace {

Tensor int64_vector(const std::vector<int64_t>& values) {
  return from_vector<int64_t>(values, {static_cast<int64_t>(values.size())});
}

// Reshape's shape: 0 copies the input's dim (unless allowzero), one -1 is
// inferred by wok::reshape.
Outputs convert_reshape(const NodeContext& c) {
  const Tensor& x = c.input(0);
  std::vector<int64_t> shape = c.int_values(1);
  const bool allowzero = c.attr_int("allowzero", 0) != 0;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 0 && !allowzero) {
      if (static_cast<int64_t>(i) >= x.ndim()) c.fail("shape entry " + std::to_string(i) + " is 0 (copy) past the input's rank");
      shape[i] = x.shape()[i];
    }
  }
  return {reshape(x, Shape(shape))};
}

Outputs convert_transpose(const NodeContext& c) {
  const Tensor& x = c.input(0);
  std::vector<int64_t> perm = c.attr_ints("perm");
  if (perm.empty())
    for (int64_t d = x.ndim() - 1; d >= 0; --d) perm.push_back(d);
  return {permute(x, perm)};
}

Outputs convert_concat(const NodeContext& c) {
  std::vector<Tensor> xs;
  for (size_t i = 0; i < c.num_inputs(); ++i)
    if (c.has_input(i)) xs.push_back(c.input(i));
  return {concat(xs, c.attr_int("axis", 0))};
}

Outputs convert_slice(const NodeContext& c) {
  Tensor x = c.input(0);
  std::vector<int64_t> starts, ends, axes, steps;
  if (c.opset() < 10) {
    starts = c.attr_ints("starts");
    ends = c.attr_ints("ends");
    axes = c.attr_ints("axes");
  } else {
    starts = c.int_values(1);
    ends = c.int_values(2);
    if (c.has_input(3)) axes = c.int_values(3);
    if (c.has_input(4)) steps = c.int_values(4);
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
    c.fail("starts, ends, axes and steps must have one entry per sliced axis");
  for (size_t i = 0; i < starts.size(); ++i) {
    if (steps[i] == 0) c.fail("step 0 on axis " + std::to_string(axes[i]));
    x = slice(x, normalize_axis(c, axes[i], x.ndim()), starts[i], ends[i], steps[i]);
  }
  return {x};
}

std::vector<int64_t> axes_input_or_attr(const NodeContext& c) {
  if (c.opset() >= 13) return c.has_input(1) ? c.int_values(1) : std::vector<int64_t>{};
  return c.attr_ints("axes");
}

Outputs convert_squeeze(const NodeContext& c) {
  const Tensor& x = c.input(0);
  std::vector<int64_t> axes = normalize_axes(c, axes_input_or_attr(c), x.ndim());
  std::vector<int64_t> shape;
  for (int64_t d = 0; d < x.ndim(); ++d) {
    const bool listed = std::find(axes.begin(), axes.end(), d) != axes.end();
    if (listed && x.shape()[d] != 1)
      c.fail("cannot squeeze axis " + std::to_string(d) + " of shape " + shape_str(x.shape()));
    if (listed || (axes.empty() && x.shape()[d] == 1)) continue;
    shape.push_back(x.shape()[d]);
  }
  return {reshape(x, Shape(shape))};
}

Outputs convert_unsqueeze(const NodeContext& c) {
  const Tensor& x = c.input(0);
  const int64_t rank = x.ndim() + static_cast<int64_t>(axes_input_or_attr(c).size());
  std::vector<int64_t> axes = normalize_axes(c, axes_input_or_attr(c), rank);
  std::vector<int64_t> shape;
  int64_t next = 0;
  for (int64_t d = 0; d < rank; ++d) {
    if (std::count(axes.begin(), axes.end(), d) > 1) c.fail("axis " + std::to_string(d) + " is listed twice");
    if (std::find(axes.begin(), axes.end(), d) != axes.end()) shape.push_back(1);
    else shape.push_back(x.shape()[next++]);
  }
  return {reshape(x, Shape(shape))};
}

Outputs convert_flatten(const NodeContext& c) {
  const Tensor& x = c.input(0);
  int64_t axis = c.attr_int("axis", 1);
  if (axis < 0) axis += x.ndim();
  if (axis < 0 || axis > x.ndim()) c.fail("axis " + std::to_string(axis) + " out of range for rank " + std::to_string(x.ndim()));
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < x.ndim(); ++d) (d < axis ? outer : inner) *= x.shape()[d];
  return {reshape(x, Shape{outer, inner})};
}

// Expand broadcasts both ways: the result's dim is the larger where one of
// the two is 1.
Outputs convert_expand(const NodeContext& c) {
  const Tensor& x = c.input(0);
  const std::vector<int64_t> target = c.int_values(1);
  const size_t rank = std::max(target.size(), static_cast<size_t>(x.ndim()));
  std::vector<int64_t> shape(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t a = i + x.ndim() >= rank ? x.shape()[i + x.ndim() - rank] : 1;
    const int64_t b = i + target.size() >= rank ? target[i + target.size() - rank] : 1;
    if (a != b && a != 1 && b != 1)
      c.fail("cannot expand shape " + shape_str(x.shape()) + " to " + shape_str(Shape(target)));
    shape[i] = a == 1 ? b : a;
  }
  return {broadcast_to(x, Shape(shape))};
}

Outputs convert_shape(const NodeContext& c) {
  const Tensor& x = c.input(0);
  const int64_t rank = x.ndim();
  auto clamp_index = [&](int64_t i) { return std::clamp(i < 0 ? i + rank : i, int64_t{0}, rank); };
  const int64_t start = clamp_index(c.attr_int("start", 0));
  const int64_t end = clamp_index(c.attr_int("end", rank));
  std::vector<int64_t> dims;
  for (int64_t d = start; d < end; ++d) dims.push_back(x.shape()[d]);
  return {int64_vector(dims)};
}

Outputs convert_size(const NodeContext& c) { return {scalar_tensor(Scalar(c.input(0).numel()))}; }

std::string check_constant(const ::onnx::NodeProto& node, int64_t) {
  for (const auto& a : node.attribute()) {
    if (a.name() == "sparse_value") return "sparse constants are not supported";
    if (a.name() == "value_string" || a.name() == "value_strings") return "string constants are not supported";
    if (a.name() == "value" && !dtype_from_onnx(a.t().data_type()))
      return "a constant of dtype " + onnx_dtype_name(a.t().data_type()) + ", which wok does not have";
  }
  return "";
}

Outputs convert_constant(const NodeContext& c) {
  if (c.has_attr("value")) return {c.attr_tensor("value")};
  if (c.has_attr("value_float")) return {scalar_tensor(Scalar(static_cast<float>(c.attr_float("value_float", 0))))};
  if (c.has_attr("value_int")) return {scalar_tensor(Scalar(c.attr_int("value_int", 0)))};
  if (c.has_attr("value_floats")) {
    std::vector<float> v = c.attr_floats("value_floats");
    return {from_vector<float>(v, {static_cast<int64_t>(v.size())})};
  }
  if (c.has_attr("value_ints")) return {int64_vector(c.attr_ints("value_ints"))};
  c.fail("has no value attribute");
}

std::string check_constant_of_shape(const ::onnx::NodeProto& node, int64_t) {
  for (const auto& a : node.attribute())
    if (a.name() == "value" && !dtype_from_onnx(a.t().data_type()))
      return "a value of dtype " + onnx_dtype_name(a.t().data_type()) + ", which wok does not have";
  return "";
}

Outputs convert_constant_of_shape(const NodeContext& c) {
  const std::vector<int64_t> shape = c.int_values(0);
  Scalar value(0.0f);
  if (c.has_attr("value")) {
    Tensor v = c.attr_tensor("value");
    if (v.numel() != 1) c.fail("value must hold one element, got " + shape_str(v.shape()));
    value = v.item_scalar();
  }
  return {full(Shape(shape), value)};
}

// Range: start + i * delta for i < max(ceil((limit - start) / delta), 0),
// in start's dtype; integers are exact.
Outputs convert_range(const NodeContext& c) {
  const Tensor& start = c.input(0);
  const double s = c.double_values(0).at(0), limit = c.double_values(1).at(0), delta = c.double_values(2).at(0);
  if (delta == 0) c.fail("delta is 0");
  const int64_t n = std::max<int64_t>(static_cast<int64_t>(std::ceil((limit - s) / delta)), 0);
  const DType dtype = start.dtype();
  Tensor i = n == 0 ? zeros({0}, dtype) : arange(0, static_cast<double>(n), 1, dtype);
  return {add(mul(i, c.input(2).astype(dtype)), start.astype(dtype))};
}

Outputs convert_split(const NodeContext& c) {
  const Tensor& x = c.input(0);
  const int64_t axis = normalize_axis(c, c.attr_int("axis", 0), x.ndim());
  const int64_t dim = x.shape()[axis];
  std::vector<int64_t> sizes;
  if (c.opset() >= 13 && c.has_input(1)) sizes = c.int_values(1);
  else if (c.opset() < 13) sizes = c.attr_ints("split");
  if (sizes.empty()) {
    const int64_t parts = c.attr_int("num_outputs", c.num_outputs());
    const int64_t chunk = (dim + parts - 1) / parts;  // the last part is smaller (opset 18)
    for (int64_t p = 0, left = dim; p < parts; ++p, left -= chunk) sizes.push_back(std::min(chunk, std::max<int64_t>(left, 0)));
  }
  int64_t total = 0;
  for (int64_t s : sizes) total += s;
  if (total != dim)
    c.fail("split sizes add up to " + std::to_string(total) + ", not the axis's " + std::to_string(dim));
  Outputs out;
  int64_t begin = 0;
  for (int64_t s : sizes) {
    out.push_back(slice(x, axis, begin, begin + s));
    begin += s;
  }
  return out;
}

std::string check_eye_like(const ::onnx::NodeProto& node, int64_t) {
  const int64_t dtype = proto_attr_int(node, "dtype", 1);
  if (!dtype_from_onnx(static_cast<int32_t>(dtype))) return "dtype " + onnx_dtype_name(static_cast<int32_t>(dtype));
  return "";
}

// EyeLike: ones where column - row == k, zeros elsewhere.
Outputs convert_eye_like(const NodeContext& c) {
  const Tensor& x = c.input(0);
  if (x.ndim() != 2) c.fail("input must be 2-D, got " + shape_str(x.shape()));
  const DType dtype = c.has_attr("dtype") ? *dtype_from_onnx(static_cast<int32_t>(c.attr_int("dtype", 1))) : x.dtype();
  const int64_t rows = x.shape()[0], cols = x.shape()[1];
  if (rows == 0 || cols == 0) return {zeros(x.shape(), dtype)};
  Tensor r = arange(0, static_cast<double>(rows), 1, DType::kInt64).reshape({rows, 1});
  Tensor col = arange(0, static_cast<double>(cols), 1, DType::kInt64).reshape({1, cols});
  return {eq(col - r, Scalar(c.attr_int("k", 0))).astype(dtype)};
}

}  // namespace

void add_shape_converters(ConverterTable& t) {
  t.add("Reshape", convert_reshape);
  t.add("Transpose", convert_transpose);
  t.add("Concat", convert_concat);
  t.add("Slice", convert_slice);
  t.add("Squeeze", convert_squeeze);
  t.add("Unsqueeze", convert_unsqueeze);
  t.add("Flatten", convert_flatten);
  t.add("Expand", convert_expand);
  t.add("Shape", convert_shape);
  t.add("Size", convert_size);
  t.add("Constant", convert_constant, check_constant);
  t.add("ConstantOfShape", convert_constant_of_shape, check_constant_of_shape);
  t.add("Range", convert_range);
  t.add("Split", convert_split);
  t.add("EyeLike", convert_eye_like, check_eye_like);
}

}  // namespace wok::onnx
