// ONNX's neural-network ops: matrix products, convolutions, pooling,
// normalizations, softmax.
#include <algorithm>

#include "wok/frontend/activations.h"
#include "wok/frontend/conv.h"
#include "wok/frontend/einsum.h"
#include "wok/frontend/creation.h"
#include "wok/frontend/losses.h"
#include "wok/frontend/nn.h"
#include "wok/frontend/ops.h"
#include "wok/frontend/pooling.h"
#include "wok/frontend/shape_ops.h"
#include "wok/frontend/windows.h"
#include "wok/onnx/converters.h"
#include "wok/onnx/tensor_proto.h"

namespace wok::onnx {

namespace {

Outputs convert_matmul(const NodeContext& c) { return {matmul(c.input(0), c.input(1))}; }

Outputs convert_gemm(const NodeContext& c) {
  Tensor a = c.input(0), b = c.input(1);
  if (c.attr_int("transA", 0)) a = transpose(a);
  if (c.attr_int("transB", 0)) b = transpose(b);
  Tensor y = matmul(a, b);
  const double alpha = c.attr_float("alpha", 1.0), beta = c.attr_float("beta", 1.0);
  if (alpha != 1.0) y = mul(y, Scalar(alpha)).astype(a.dtype());
  if (c.has_input(2)) {
    Tensor bias = c.input(2);
    y = add(y, beta == 1.0 ? bias : mul(bias, Scalar(beta)).astype(bias.dtype()));
  }
  return {y};
}

// Softmax, LogSoftmax and Hardmax before opset 13 flatten the input to 2-D
// at `axis` (default 1) and normalise each row; from 13 they normalise
// along `axis` (default -1).
template <Tensor (*Fn)(const Tensor&, int64_t)>
Outputs convert_softmax(const NodeContext& c) {
  const Tensor& x = c.input(0);
  if (c.opset() >= 13) return {Fn(x, normalize_axis(c, c.attr_int("axis", -1), x.ndim()))};
  int64_t axis = c.attr_int("axis", 1);
  if (axis < 0) axis += x.ndim();
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < x.ndim(); ++d) (d < axis ? outer : inner) *= x.shape()[d];
  return {Fn(reshape(x, {outer, inner}), 1).reshape(x.shape())};
}
Tensor softmax_of(const Tensor& x, int64_t axis) { return softmax(x, axis); }
Tensor log_softmax_of(const Tensor& x, int64_t axis) { return log_softmax(x, axis); }

// LayerNormalization normalises over the dims from `axis` on: wok's
// layer_norm (one fused row kernel) on the input with those dims flattened
// into one. Mean and InvStdDev, when asked for, are computed beside it.
Outputs convert_layer_norm(const NodeContext& c) {
  const Tensor& x = c.input(0);
  const int64_t rank = x.ndim();
  const int64_t axis = normalize_axis(c, c.attr_int("axis", -1), rank);
  const double eps = c.attr_float("epsilon", 1e-5);
  std::vector<int64_t> rows(x.shape().begin(), x.shape().begin() + axis);
  int64_t inner = 1;
  for (int64_t d = axis; d < rank; ++d) inner *= x.shape()[d];
  rows.push_back(inner);
  // Over the last dim alone (the usual case) nothing is reshaped.
  const bool last_dim = axis == rank - 1;
  auto flat = [&](const Tensor& t) { return last_dim ? t : reshape(t, {inner}); };
  Tensor weight = c.has_input(1) ? flat(c.input(1)) : Tensor();
  Tensor bias = c.has_input(2) ? flat(c.input(2)) : Tensor();
  Outputs out{last_dim ? layer_norm(x, weight, bias, eps)
                       : layer_norm(reshape(x, Shape(rows)), weight, bias, eps).reshape(x.shape())};
  if (c.wants_output(1) || c.wants_output(2)) {
    std::vector<int64_t> axes;
    for (int64_t d = axis; d < rank; ++d) axes.push_back(d);
    Tensor m = mean(x, axes, true);
    Tensor var = mean(square(x - m), axes, true);
    out.push_back(m);
    out.push_back(rsqrt(add(var, Scalar(eps))).astype(x.dtype()));
  }
  return out;
}

// The axes a per-channel statistic reduces: all but dim 1.
std::vector<int64_t> all_but_channels(const Tensor& x) {
  std::vector<int64_t> axes{0};
  for (int64_t d = 2; d < x.ndim(); ++d) axes.push_back(d);
  return axes;
}

// Inference uses the running statistics (wok::batch_norm, one multiply-add
// per element); training_mode=1 normalises with the batch's own and also
// returns the updated running mean and variance.
Outputs convert_batch_norm(const NodeContext& c) {
  const Tensor& x = c.input(0);
  const double eps = c.attr_float("epsilon", 1e-5);
  if (!c.attr_int("training_mode", 0))
    return {batch_norm(x, c.input(3), c.input(4), c.input(1), c.input(2), eps)};
  const std::vector<int64_t> axes = all_but_channels(x);
  Shape channel_shape(static_cast<size_t>(x.ndim()), 1);
  channel_shape[1] = x.shape()[1];
  const Tensor m = mean(x, axes, true), var = mean(square(x - m), axes, true);
  const Tensor y = (x - m) * rsqrt(add(var, Scalar(eps))) * reshape(c.input(1), channel_shape) +
                   reshape(c.input(2), channel_shape);
  const double momentum = c.attr_float("momentum", 0.9);
  auto running = [&](const Tensor& old, const Tensor& batch) {
    return add(mul(old, Scalar(momentum)), mul(reshape(batch, old.shape()), Scalar(1 - momentum))).astype(old.dtype());
  };
  return {y, running(c.input(3), m), running(c.input(4), var)};
}

// MeanVarianceNormalization: (x - E[x]) / (sqrt(E[x^2] - E[x]^2) + 1e-9)
// over `axes` (default [0, 2, 3]), as ONNX's function body computes it.
Outputs convert_mvn(const NodeContext& c) {
  const Tensor& x = c.input(0);
  const std::vector<int64_t> axes = normalize_axes(c, c.attr_ints("axes", {0, 2, 3}), x.ndim());
  const Tensor m = mean(x, axes, true);
  const Tensor std_dev = sqrt(mean(square(x), axes, true) - square(m));
  return {(x - m) / add(std_dev, Scalar(1e-9))};
}

Outputs convert_instance_norm(const NodeContext& c) {
  return {instance_norm(c.input(0), c.input(1), c.input(2), c.attr_float("epsilon", 1e-5))};
}

// The begin and end padding of each spatial dim: `pads` ([b0, b1, ..,
// e0, e1, ..]) or what auto_pad asks for.
struct SpatialPads {
  std::vector<int64_t> begin, end;
};

SpatialPads spatial_pads(const NodeContext& c, const Shape& in, const std::vector<int64_t>& kernel,
                         const std::vector<int64_t>& strides, const std::vector<int64_t>& dilations) {
  const size_t n = kernel.size();
  SpatialPads p{std::vector<int64_t>(n, 0), std::vector<int64_t>(n, 0)};
  const std::string auto_pad = c.attr_string("auto_pad", "NOTSET");
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (size_t i = 0; i < n; ++i) {
      const int64_t size = in[2 + i];
      const int64_t out = (size + strides[i] - 1) / strides[i];
      const int64_t total = std::max<int64_t>((out - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 - size, 0);
      p.begin[i] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      p.end[i] = total - p.begin[i];
    }
  } else if (auto_pad == "NOTSET") {
    std::vector<int64_t> pads = c.attr_ints("pads", std::vector<int64_t>(2 * n, 0));
    if (pads.size() != 2 * n) c.fail("pads must have " + std::to_string(2 * n) + " entries");
    for (size_t i = 0; i < n; ++i) {
      p.begin[i] = pads[i];
      p.end[i] = pads[n + i];
    }
  } else if (auto_pad != "VALID") {
    c.fail("unknown auto_pad '" + auto_pad + "'");
  }
  return p;
}

// wok's padding argument: all the begins, then all the ends (ONNX's order,
// which conv2d and the pools take as is).
std::vector<int64_t> begin_then_end(const SpatialPads& p) {
  std::vector<int64_t> pads = p.begin;
  pads.insert(pads.end(), p.end.begin(), p.end.end());
  return pads;
}

std::vector<int64_t> ints_or(const NodeContext& c, const std::string& name, size_t n, int64_t fallback) {
  return c.attr_ints(name, std::vector<int64_t>(n, fallback));
}

Outputs convert_conv(const NodeContext& c) {
  const Tensor& x = c.input(0);
  const Tensor& w = c.input(1);
  const Tensor bias = c.has_input(2) ? c.input(2) : Tensor();
  const size_t n = static_cast<size_t>(x.ndim()) - 2;
  if (n < 1 || n > 3) c.fail("only 1-D, 2-D and 3-D convolutions are supported, input " + shape_str(x.shape()));
  std::vector<int64_t> kernel(w.shape().begin() + 2, w.shape().end());
  const auto strides = ints_or(c, "strides", n, 1), dilations = ints_or(c, "dilations", n, 1);
  const auto pads = begin_then_end(spatial_pads(c, x.shape(), kernel, strides, dilations));
  const int64_t group = c.attr_int("group", 1);
  if (n == 1) return {conv1d(x, w, bias, strides, pads, dilations, group)};
  if (n == 2) return {conv2d(x, w, bias, strides, pads, dilations, group)};
  return {conv3d(x, w, bias, strides, pads, dilations, group)};
}

// Python's floor division, which ONNX's padding formulas use: a negative
// total padding (an output_shape larger than the full transposed
// convolution) then extends the end, not the begin.
int64_t floor_div2(int64_t v) { return v >= 0 ? v / 2 : -((-v + 1) / 2); }

// ConvTranspose, 1-D (as 2-D of height 1), 2-D or 3-D. wok's transposed
// convolutions take one non-negative padding per dim, the same on both
// sides: uneven begin and end padding runs with the smaller of the two (or
// 0) and then crops what the larger would, and negative padding (an
// output_shape beyond the full result) appends zeros, plus the bias.
Outputs convert_conv_transpose(const NodeContext& c) {
  Tensor x = c.input(0);
  Tensor w = c.input(1);
  const size_t n = static_cast<size_t>(x.ndim()) - 2;
  if (n < 1 || n > 3)
    c.fail("only 1-D, 2-D and 3-D transposed convolutions are supported, input " + shape_str(x.shape()));
  std::vector<int64_t> kernel(w.shape().begin() + 2, w.shape().end());
  auto strides = ints_or(c, "strides", n, 1), dilations = ints_or(c, "dilations", n, 1);
  auto output_padding = ints_or(c, "output_padding", n, 0);
  const std::string auto_pad = c.attr_string("auto_pad", "NOTSET");
  const std::vector<int64_t> output_shape = c.attr_ints("output_shape");
  SpatialPads p{std::vector<int64_t>(n, 0), std::vector<int64_t>(n, 0)};
  if (!output_shape.empty() || auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    // The padding that gives the requested size: output_shape, or
    // input * stride for SAME (ONNX ConvTranspose); SAME_UPPER pads the
    // begin less.
    for (size_t i = 0; i < n; ++i) {
      const int64_t in = x.shape()[2 + i];
      const int64_t out = output_shape.empty() ? in * strides[i] : output_shape[output_shape.size() - n + i];
      const int64_t total = strides[i] * (in - 1) + output_padding[i] + (kernel[i] - 1) * dilations[i] + 1 - out;
      p.begin[i] = auto_pad == "SAME_UPPER" ? floor_div2(total) : total - floor_div2(total);
      p.end[i] = total - p.begin[i];
    }
  } else {
    p = spatial_pads(c, x.shape(), kernel, strides, dilations);
  }
  std::vector<int64_t> pads(n), adjust(2 * (n + 2), 0);  // adjust: wok::pad's pads, crop < 0 < extend
  bool extends = false;
  for (size_t i = 0; i < n; ++i) {
    pads[i] = std::max<int64_t>(0, std::min(p.begin[i], p.end[i]));
    adjust[2 + i] = pads[i] - p.begin[i];
    adjust[n + 4 + i] = pads[i] - p.end[i];
    extends = extends || adjust[2 + i] > 0 || adjust[n + 4 + i] > 0;
  }
  const Tensor bias = c.has_input(2) ? c.input(2) : Tensor();
  const int64_t group = c.attr_int("group", 1);
  Tensor y;
  if (n == 3) {
    y = conv_transpose3d(x, w, extends ? Tensor() : bias, strides, pads, output_padding, group, dilations);
  } else {
    if (n == 1) {
      x = reshape(x, {x.shape()[0], x.shape()[1], 1, x.shape()[2]});
      w = reshape(w, {w.shape()[0], w.shape()[1], 1, w.shape()[2]});
      strides.insert(strides.begin(), 1);
      dilations.insert(dilations.begin(), 1);
      output_padding.insert(output_padding.begin(), 0);
      pads.insert(pads.begin(), 0);
    }
    y = conv_transpose2d(x, w, extends ? Tensor() : bias, strides, pads, output_padding, group, dilations);
    if (n == 1) y = reshape(y, {y.shape()[0], y.shape()[1], y.shape()[3]});
  }
  if (std::any_of(adjust.begin(), adjust.end(), [](int64_t a) { return a != 0; })) y = pad(y, adjust);
  if (extends && bias.defined()) {  // [O, 1, ...]: every position, the appended zeros too
    Shape per_channel(n + 1, 1);
    per_channel[0] = y.shape()[1];
    y = y + reshape(bias.astype(y.dtype()), per_channel);
  }
  return {y};
}

// MaxPool's Indices output: flat positions in the whole input [N, C, H, W]
// (row-major planes, or column-major with storage_order=1), from
// max_pool2d_with_indices' per-plane ones.
// The index of each [N, C] plane of `x`, as [N, C, 1, 1] int64: ONNX's
// pooling indices count the planes before their own.
Tensor plane_numbers(const Shape& x) {
  return reshape(arange(0, static_cast<double>(x[0] * x[1]), 1, DType::kInt64), {x[0], x[1], 1, 1});
}

Tensor global_indices(const Tensor& plane_index, const Shape& x, bool column_major) {
  const int64_t h = x[2], w = x[3];
  Tensor in_plane = plane_index;
  if (column_major) in_plane = remainder(plane_index, Scalar(w)) * h + floor_divide(plane_index, Scalar(w));
  return plane_numbers(x) * (h * w) + in_plane;
}

// MaxPool and AveragePool on 1-D, 2-D or 3-D windows; a 1-D pool is a 2-D
// one of height 1.
template <bool kMax>
Outputs convert_pool(const NodeContext& c) {
  Tensor x = c.input(0);
  const size_t n = static_cast<size_t>(x.ndim()) - 2;
  if (n < 1 || n > 3) c.fail("only 1-D, 2-D and 3-D pooling is supported, input " + shape_str(x.shape()));
  const std::vector<int64_t> kernel = c.attr_ints("kernel_shape");
  if (kernel.size() != n) c.fail("kernel_shape must have " + std::to_string(n) + " entries");
  auto strides = ints_or(c, "strides", n, 1), dilations = ints_or(c, "dilations", n, 1);
  const SpatialPads spatial = spatial_pads(c, x.shape(), kernel, strides, dilations);
  std::vector<int64_t> pads = begin_then_end(spatial);
  const bool ceil_mode = c.attr_int("ceil_mode", 0) != 0;
  const bool count_include_pad = c.attr_int("count_include_pad", 0) != 0;
  if (!kMax)
    for (int64_t d : dilations)
      if (d != 1) c.fail("dilated average pooling is not supported");
  if (n == 3) {
    if (kMax) return {max_pool3d(x, kernel, strides, pads, dilations, ceil_mode)};
    return {avg_pool3d(x, kernel, strides, pads, ceil_mode, count_include_pad).astype(x.dtype())};
  }
  const bool with_indices = kMax && c.wants_output(1);
  if (n == 3) {
    if (with_indices) c.fail("the Indices output is supported for 1-D and 2-D pooling, input " + shape_str(x.shape()));
    if (kMax) return {max_pool3d(x, kernel, strides, pads, dilations, ceil_mode)};
    return {avg_pool3d(x, kernel, strides, pads, ceil_mode, count_include_pad).astype(x.dtype())};
  }
  auto k2 = kernel;
  if (n == 1) {
    x = reshape(x, {x.shape()[0], x.shape()[1], 1, x.shape()[2]});
    k2.insert(k2.begin(), 1);
    strides.insert(strides.begin(), 1);
    dilations.insert(dilations.begin(), 1);
    pads = {0, spatial.begin[0], 0, spatial.end[0]};
  }
  Outputs out;
  if (with_indices) {
    auto [values, where] = max_pool2d_with_indices(x, k2, strides, pads, dilations, ceil_mode);
    out = {values, global_indices(where, x.shape(), c.attr_int("storage_order", 0) != 0)};
  } else {
    out = {kMax ? max_pool2d(x, k2, strides, pads, dilations, ceil_mode)
                : avg_pool2d(x, k2, strides, pads, ceil_mode, count_include_pad).astype(x.dtype())};
  }
  if (n == 1)
    for (Tensor& t : out) t = reshape(t, {t.shape()[0], t.shape()[1], t.shape()[3]});
  return out;
}

// MaxUnpool: X's values at the flat indices MaxPool's Indices output gives
// (over the whole [N, C, ...] output of the default size (in - 1) * stride +
// kernel - pads per dim), 1-D (as 2-D of height 1) or 2-D.
Outputs convert_max_unpool(const NodeContext& c) {
  Tensor x = c.input(0);
  Tensor indices = c.input(1);
  const size_t n = static_cast<size_t>(x.ndim()) - 2;
  if (n < 1 || n > 2) c.fail("only 1-D and 2-D unpooling is supported, input " + shape_str(x.shape()));
  const std::vector<int64_t> kernel = c.attr_ints("kernel_shape");
  if (kernel.size() != n) c.fail("kernel_shape must have " + std::to_string(n) + " entries");
  const auto strides = ints_or(c, "strides", n, 1);
  const auto pads = c.attr_ints("pads", std::vector<int64_t>(2 * n, 0));
  if (pads.size() != 2 * n) c.fail("pads must have " + std::to_string(2 * n) + " entries");
  std::vector<int64_t> size(n), requested;
  for (size_t i = 0; i < n; ++i) size[i] = (x.shape()[2 + i] - 1) * strides[i] + kernel[i] - pads[i] - pads[n + i];
  if (c.has_input(2)) {
    const std::vector<int64_t> shape = c.int_values(2);
    if (shape.size() != n + 2) c.fail("output_shape must have " + std::to_string(n + 2) + " entries");
    requested.assign(shape.begin() + 2, shape.end());
  }
  if (n == 1) {
    x = reshape(x, {x.shape()[0], x.shape()[1], 1, x.shape()[2]});
    indices = reshape(indices, x.shape());
    size.insert(size.begin(), 1);
  }
  // ONNX's indices count whole planes before theirs; max_unpool2d's do not.
  Tensor y = max_unpool2d(x, indices.astype(DType::kInt64) - plane_numbers(x.shape()) * (size[0] * size[1]), size);
  if (n == 1) y = reshape(y, {y.shape()[0], y.shape()[1], y.shape()[3]});
  // The indices address the default size; a requested output_shape pads
  // (or crops) at the end of each dim, as ONNX's reference does.
  if (!requested.empty()) {
    std::vector<int64_t> grow(2 * (n + 2), 0);
    for (size_t i = 0; i < n; ++i) grow[n + 4 + i] = requested[i] - y.shape()[2 + i];
    y = pad(y, grow);
  }
  return {y};
}

template <bool kMax>
Outputs convert_global_pool(const NodeContext& c) {
  const Tensor& x = c.input(0);
  std::vector<int64_t> axes;
  for (int64_t d = 2; d < x.ndim(); ++d) axes.push_back(d);
  return {kMax ? max(x, axes, true) : mean(x, axes, true).astype(x.dtype())};
}

// Dropout is the identity when not training; the mask is then all true.
Outputs convert_dropout(const NodeContext& c) {
  const Tensor& x = c.input(0);
  bool training = false;
  if (c.opset() >= 12 && c.has_input(2)) training = c.input(2).item<bool>();
  double ratio = c.opset() >= 12 ? (c.has_input(1) ? c.double_values(1).at(0) : 0.5) : c.attr_float("ratio", 0.5);
  if (training && ratio != 0) c.fail("training-mode dropout (random) is not supported");
  Outputs out{x};
  if (c.wants_output(1)) out.push_back(full(x.shape(), Scalar(true)));
  return out;
}

LossReduction loss_reduction(const NodeContext& c) {
  const std::string r = c.attr_string("reduction", "mean");
  if (r == "mean") return LossReduction::kMean;
  if (r == "sum") return LossReduction::kSum;
  if (r == "none") return LossReduction::kNone;
  c.fail("unknown reduction '" + r + "'");
}

std::optional<int64_t> ignore_index(const NodeContext& c) {
  if (!c.has_attr("ignore_index")) return std::nullopt;
  return c.attr_int("ignore_index", 0);
}

Outputs convert_nll_loss(const NodeContext& c) {
  return {nll_loss(c.input(0), c.input(1), c.has_input(2) ? c.input(2) : Tensor(), loss_reduction(c), ignore_index(c))};
}

// SoftmaxCrossEntropyLoss's second output is the log-probabilities.
Outputs convert_softmax_cross_entropy(const NodeContext& c) {
  const Tensor log_prob = log_softmax(c.input(0), 1);
  return {nll_loss(log_prob, c.input(1), c.has_input(2) ? c.input(2) : Tensor(), loss_reduction(c), ignore_index(c)),
          log_prob};
}

std::string check_window(const ::onnx::NodeProto& node, int64_t) {
  const int64_t dtype = proto_attr_int(node, "output_datatype", 1);
  if (!dtype_from_onnx(static_cast<int32_t>(dtype))) return "output_datatype " + onnx_dtype_name(static_cast<int32_t>(dtype));
  return "";
}

enum class Window { kHann, kHamming, kBlackman };

template <Window kWindow>
Outputs convert_window(const NodeContext& c) {
  const int64_t size = c.int_values(0).at(0);
  const bool periodic = c.attr_int("periodic", 1) != 0;
  const DType dtype = *dtype_from_onnx(static_cast<int32_t>(c.attr_int("output_datatype", 1)));
  switch (kWindow) {
    case Window::kHann: return {hann_window(size, periodic, dtype)};
    case Window::kHamming: return {hamming_window(size, periodic, dtype, 25.0 / 46.0, 21.0 / 46.0)};
    case Window::kBlackman: return {blackman_window(size, periodic, dtype)};
  }
  c.fail("unknown window");
}

Tensor hardmax_of(const Tensor& x, int64_t axis) { return hardmax(x, axis); }

Outputs convert_einsum(const NodeContext& c) { return {einsum(c.attr_string("equation", ""), c.inputs())}; }

}  // namespace

void add_nn_converters(ConverterTable& t) {
  t.add("MatMul", convert_matmul);
  t.add("Gemm", convert_gemm);
  t.add("Softmax", convert_softmax<softmax_of>);
  t.add("LogSoftmax", convert_softmax<log_softmax_of>);
  t.add("Hardmax", convert_softmax<hardmax_of>);
  t.add("Einsum", convert_einsum);
  t.add("LeakyRelu", [](const NodeContext& c) -> Outputs { return {leaky_relu(c.input(0), c.attr_float("alpha", 0.01))}; });
  t.add("PRelu", [](const NodeContext& c) -> Outputs { return {prelu(c.input(0), c.input(1))}; });
  t.add("Elu", [](const NodeContext& c) -> Outputs { return {elu(c.input(0), c.attr_float("alpha", 1.0))}; });
  t.add("Selu", [](const NodeContext& c) -> Outputs {
    return {selu(c.input(0), c.attr_float("alpha", 1.67326319217681884765625), c.attr_float("gamma", 1.05070102214813232421875))};
  });
  t.add("Celu", [](const NodeContext& c) -> Outputs { return {celu(c.input(0), c.attr_float("alpha", 1.0))}; });
  t.add("HardSigmoid", [](const NodeContext& c) -> Outputs {
    return {hard_sigmoid(c.input(0), c.attr_float("alpha", 0.2), c.attr_float("beta", 0.5))};
  });
  t.add("HardSwish", [](const NodeContext& c) -> Outputs { return {hard_swish(c.input(0))}; });
  t.add("ThresholdedRelu", [](const NodeContext& c) -> Outputs {
    return {thresholded_relu(c.input(0), c.attr_float("alpha", 1.0))};
  });
  t.add("Shrink", [](const NodeContext& c) -> Outputs {
    return {shrink(c.input(0), c.attr_float("bias", 0.0), c.attr_float("lambd", 0.5))};
  });
  t.add("LayerNormalization", convert_layer_norm);
  t.add("BatchNormalization", convert_batch_norm);
  t.add("MeanVarianceNormalization", convert_mvn);
  t.add("InstanceNormalization", convert_instance_norm);
  t.add("Conv", convert_conv);
  t.add("ConvTranspose", convert_conv_transpose);
  t.add("MaxPool", convert_pool<true>);
  t.add("MaxUnpool", convert_max_unpool);
  t.add("Det", [](const NodeContext& c) -> Outputs { return {det(c.input(0))}; });
  t.add("LRN", [](const NodeContext& c) -> Outputs {
    return {local_response_norm(c.input(0), c.attr_int("size", 1), c.attr_float("alpha", 1e-4),
                                c.attr_float("beta", 0.75), c.attr_float("bias", 1.0))
                .astype(c.input(0).dtype())};
  });
  t.add("AveragePool", convert_pool<false>);
  t.add("GlobalAveragePool", convert_global_pool<false>);
  t.add("GlobalMaxPool", convert_global_pool<true>);
  t.add("Dropout", convert_dropout);
  t.add("NegativeLogLikelihoodLoss", convert_nll_loss);
  t.add("SoftmaxCrossEntropyLoss", convert_softmax_cross_entropy);
  t.add("HannWindow", convert_window<Window::kHann>, check_window);
  t.add("HammingWindow", convert_window<Window::kHamming>, check_window);
  t.add("BlackmanWindow", convert_window<Window::kBlackman>, check_window);
}

}  // namespace wok::onnx
