// ONNX ops that move, reshape, create or describe tensors.
#include <algorithm>
#include <cmath>
#include <limits>
#include "wok/frontend/creation.h"
#include "wok/frontend/ops.h"
#include "wok/frontend/shape_ops.h"
#include "wok/onnx/converters.h"
#include "wok/onnx/host_fold.h"
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

Outputs convert_squeeze(const NodeContext& c) { return {squeeze(c.input(0), axes_input_or_attr(c))}; }

Outputs convert_unsqueeze(const NodeContext& c) { return {unsqueeze(c.input(0), axes_input_or_attr(c))}; }

Outputs convert_flatten(const NodeContext& c) { return {flatten(c.input(0), c.attr_int("axis", 1))}; }

Outputs convert_expand(const NodeContext& c) { return {expand(c.input(0), Shape(c.int_values(1)))}; }

Outputs convert_shape(const NodeContext& c) { return {int64_vector(shape_values(c))}; }

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

// Range in start's dtype; integers are exact.
Outputs convert_range(const NodeContext& c) {
  const Tensor& start = c.input(0);
  auto value = [&](size_t i) {
    const Scalar v = is_floating(start.dtype()) ? Scalar(c.double_values(i).at(0)) : Scalar(c.int_values(i).at(0));
    return v.cast(start.dtype());
  };
  return {range(value(0), value(1), value(2), start.dtype())};
}

// Split: sizes from an input (opset 13) or attribute, else equal parts,
// one per output (the last smaller, opset 18).
Outputs convert_split(const NodeContext& c) {
  const Tensor& x = c.input(0);
  const int64_t axis = c.attr_int("axis", 0);
  std::vector<int64_t> sizes;
  if (c.opset() >= 13 && c.has_input(1)) sizes = c.int_values(1);
  else if (c.opset() < 13) sizes = c.attr_ints("split");
  if (sizes.empty()) return split(x, c.attr_int("num_outputs", c.num_outputs()), axis);
  return split(x, sizes, axis);
}

Outputs convert_tile(const NodeContext& c) { return {tile(c.input(0), c.int_values(1))}; }

Outputs convert_trilu(const NodeContext& c) {
  const int64_t k = c.has_input(1) ? c.int_values(1).at(0) : 0;
  return {c.attr_int("upper", 1) ? triu(c.input(0), k) : tril(c.input(0), k)};
}

// Pad: pads (and the constant) from inputs since opset 11, attributes
// before; ONNX's order [begin..., end...].
Outputs convert_pad(const NodeContext& c) {
  const Tensor& x = c.input(0);
  const std::string mode = c.attr_string("mode", "constant");
  std::vector<int64_t> pads;
  Scalar value(0.0);
  if (c.opset() < 11) {
    pads = c.attr_ints("pads");
    value = Scalar(c.attr_float("value", 0.0));
  } else {
    pads = c.int_values(1);
    if (c.has_input(2)) value = Scalar(c.double_values(2).at(0));
    if (c.has_input(3)) c.fail("the axes input is not supported");
  }
  return {pad(x, pads, mode, value.cast(x.dtype()))};
}

Outputs convert_depth_to_space(const NodeContext& c) {
  return {depth_to_space(c.input(0), c.attr_int("blocksize", 0), c.attr_string("mode", "DCR"))};
}

Outputs convert_space_to_depth(const NodeContext& c) {
  return {space_to_depth(c.input(0), c.attr_int("blocksize", 0))};
}

std::string check_resize(const ::onnx::NodeProto& node, int64_t) {
  const std::string mode = proto_attr_string(node, "mode", "nearest");
  if (mode != "nearest" && mode != "linear" && mode != "cubic") return "mode " + mode;
  if (proto_attr_int(node, "antialias", 0)) return "antialias=1";
  return "";
}

// Resize (opset 10: X, scales; 11+: X, roi, scales, sizes) and Upsample
// (scales as an attribute before opset 9, an input after; asymmetric
// coordinates). The roi is read in tf_crop_and_resize mode only, as ONNX
// says; elsewhere models often pass a placeholder.
Outputs convert_resize(const NodeContext& c) {
  const Tensor& x = c.input(0);
  const bool upsample = c.node().op_type() == "Upsample";
  const bool v11 = !upsample && c.opset() >= 11;
  ResizeOptions o;
  o.mode = c.attr_string("mode", "nearest");
  o.coordinate_transformation_mode = v11 ? c.attr_string("coordinate_transformation_mode", "half_pixel") : "asymmetric";
  o.nearest_mode = v11 ? c.attr_string("nearest_mode", "round_prefer_floor") : "floor";
  if (v11) {
    o.cubic_coeff_a = c.attr_float("cubic_coeff_a", -0.75);
    o.exclude_outside = c.attr_int("exclude_outside", 0) != 0;
    o.extrapolation_value = c.attr_float("extrapolation_value", 0.0);
    if (o.coordinate_transformation_mode == "tf_crop_and_resize" && c.has_input(1) && c.input(1).numel() > 0)
      o.roi = c.double_values(1);
  }
  std::vector<double> scales;
  if (upsample && c.opset() < 9) {
    for (float f : c.attr_floats("scales")) scales.push_back(f);
  } else {
    const size_t scales_input = v11 ? 2 : 1;
    if (c.has_input(scales_input) && c.input(scales_input).numel() > 0) scales = c.double_values(scales_input);
  }
  if (!scales.empty()) return {resize(x, scales, o)};
  if (!c.has_input(3)) c.fail("neither scales nor sizes is given");
  return {resize_to(x, Shape(c.int_values(3)), o)};
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
  t.add("Tile", convert_tile);
  t.add("Trilu", convert_trilu);
  t.add("Pad", convert_pad);
  t.add("DepthToSpace", convert_depth_to_space);
  t.add("SpaceToDepth", convert_space_to_depth);
  t.add("Resize", convert_resize, check_resize);
  t.add("Upsample", convert_resize, check_resize);
}

}  // namespace wok::onnx
