// conv3d and conv_transpose3d, lowered onto the 2-D ops.
//
// Note [3-D convolution as 2-D]
// wok's convolution kernels (precompiled and the JIT's implicit GEMM) are
// 2-D. A 3-D convolution is a 2-D one whose channels are (channel, depth
// tap) pairs: output depth z reads input depths z * sd - pd + kd * dd for
// kd in [0, KD), so stacking those KD depth slices of the (depth-padded)
// input as channels c * KD + kd and reshaping the weight [O, C/g, KD, KH,
// KW] to [O, C/g * KD, KH, KW] gives one conv2d over a batch of N * OD
// images, with one GEMM of depth C/g * KD * KH * KW per group, the depth
// im2col written out (KD copies of the input) and the other two dims read
// by the 2-D kernels as usual. Channel c * KD + kd stays inside c's group,
// so groups carry over unchanged.
// The transpose runs the other way: one conv_transpose2d over the N * D
// depth slices with output channels (o, kd), whose KD results are then
// folded along depth, slice d of tap kd landing at depth d * sd + kd * dd
// of the uncropped output, before the padding is cropped and the
// output_padding appended (as zeros, plus the bias like every position).
#include <string>

#include "wok/frontend/conv.h"
#include "wok/frontend/conv_args.h"
#include "wok/frontend/dispatch.h"
#include "wok/frontend/ops.h"
#include "wok/frontend/shape_ops.h"
#include "wok/runtime/error.h"

namespace wok {

using detail::add_conv_bias;
using detail::check_conv_defined;
using detail::check_conv_length;
using detail::conv_full_padding;
using detail::conv_inputs;
using detail::conv_operand_dtype;

namespace {

// The checks both ops share, with 3-D wording, so nothing the 2-D ops would
// refuse reaches them with the reshaped operands in its message.
struct Conv3dArgs {
  std::vector<int64_t> pads;  // {front, top, left, back, bottom, right}
};

Conv3dArgs check_conv3d(const char* op, const Tensor& x, const Tensor& w, const std::vector<int64_t>& stride,
                        const std::vector<int64_t>& padding, const std::vector<int64_t>& dilation, int64_t groups) {
  check_conv_defined(op, x, w);
  auto fail = [&](const std::string& what) { throw ShapeError(std::string("wok::") + op + ": " + what + conv_inputs(x, w)); };
  if (x.ndim() != 5) fail("x must be 5-D [N, C, D, H, W], got rank " + std::to_string(x.ndim()));
  if (w.ndim() != 5) fail("weight must be 5-D, got rank " + std::to_string(w.ndim()));
  check_conv_length(op, "stride", stride, 3, x, w);
  check_conv_length(op, "dilation", dilation, 3, x, w);
  Conv3dArgs a{conv_full_padding(op, padding, 3, x, w)};
  if (groups < 1) fail("groups must be positive, got " + std::to_string(groups));
  for (size_t i = 0; i < 3; ++i) {
    if (stride[i] < 1) fail("stride " + shape_str(stride) + " must be positive");
    if (dilation[i] < 1) fail("dilation " + shape_str(dilation) + " must be positive");
    if (a.pads[i] < 0 || a.pads[i + 3] < 0) fail("padding " + shape_str(a.pads) + " must be non-negative");
    if (w.shape()[2 + i] < 1) fail("the kernel must be at least 1 along every spatial dim");
  }
  return a;
}

}  // namespace

Tensor conv3d(const Tensor& x, const Tensor& weight, const Tensor& bias, std::vector<int64_t> stride,
              std::vector<int64_t> padding, std::vector<int64_t> dilation, int64_t groups) {
  WOK_CALLER_SCOPE();
  const char* op = "conv3d";
  const Conv3dArgs a = check_conv3d(op, x, weight, stride, padding, dilation, groups);
  const Shape& xs = x.shape();
  const Shape& ws = weight.shape();
  const int64_t n = xs[0], c = xs[1], d = xs[2], o = ws[0], kd = ws[2];
  auto fail = [&](const std::string& what) {
    throw ShapeError(std::string("wok::conv3d: ") + what + conv_inputs(x, weight));
  };
  if (c % groups != 0 || ws[1] * groups != c)
    fail("x has " + std::to_string(c) + " channels, but the weight expects " + std::to_string(ws[1]) + " per group x " +
         std::to_string(groups) + " groups");
  if (o % groups != 0)
    fail(std::to_string(o) + " output channels do not split into " + std::to_string(groups) + " groups");
  for (size_t i = 0; i < 3; ++i) {
    const int64_t padded = xs[2 + i] + a.pads[i] + a.pads[i + 3], span = dilation[i] * (ws[2 + i] - 1) + 1;
    if (padded < span)
      fail("the input padded by " + shape_str(a.pads) + " is smaller than the kernel (dilated to " +
           std::to_string(span) + ") along spatial dim " + std::to_string(i));
  }
  const int64_t od = (d + a.pads[0] + a.pads[3] - dilation[0] * (kd - 1) - 1) / stride[0] + 1;

  const DType t = conv_operand_dtype(x, weight);
  Tensor xt = x.astype(t);
  if (a.pads[0] != 0 || a.pads[3] != 0) xt = pad(xt, {0, 0, a.pads[0], 0, 0, 0, 0, a.pads[3], 0, 0});
  std::vector<Tensor> taps;  // Note [3-D convolution as 2-D]
  taps.reserve(static_cast<size_t>(kd));
  for (int64_t k = 0; k < kd; ++k) {
    const int64_t first = k * dilation[0];
    taps.push_back(unsqueeze(slice(xt, 2, first, first + (od - 1) * stride[0] + 1, stride[0]), {2}));
  }
  Tensor cols = kd == 1 ? taps[0] : concat(taps, 2);  // [N, C, KD, OD, H, W]
  cols = reshape(permute(cols, {0, 3, 1, 2, 4, 5}), {n * od, c * kd, xs[3], xs[4]});
  const Tensor w2 = reshape(weight.astype(t), {o, ws[1] * kd, ws[3], ws[4]});
  Tensor y = conv2d(cols, w2, {}, {stride[1], stride[2]}, {a.pads[1], a.pads[2], a.pads[4], a.pads[5]},
                    {dilation[1], dilation[2]}, groups);  // [N * OD, O, OH, OW]
  y = permute(reshape(y, {n, od, o, y.shape()[2], y.shape()[3]}), {0, 2, 1, 3, 4});
  return add_conv_bias(op, y, bias, x, weight);
}

Tensor conv_transpose3d(const Tensor& x, const Tensor& weight, const Tensor& bias, std::vector<int64_t> stride,
                        std::vector<int64_t> padding, std::vector<int64_t> output_padding, int64_t groups,
                        std::vector<int64_t> dilation) {
  WOK_CALLER_SCOPE();
  const char* op = "conv_transpose3d";
  const Conv3dArgs a = check_conv3d(op, x, weight, stride, padding, dilation, groups);
  check_conv_length(op, "output_padding", output_padding, 3, x, weight);
  const Shape& xs = x.shape();
  const Shape& ws = weight.shape();
  const int64_t n = xs[0], c = xs[1], d = xs[2], o_per_group = ws[1], kd = ws[2];
  auto fail = [&](const std::string& what) {
    throw ShapeError(std::string("wok::conv_transpose3d: ") + what + conv_inputs(x, weight));
  };
  if (ws[0] != c) fail("the weight's first dim must be x's " + std::to_string(c) + " channels");
  if (c % groups != 0) fail(std::to_string(c) + " channels do not split into " + std::to_string(groups) + " groups");
  for (size_t i = 0; i < 3; ++i) {
    if (xs[2 + i] < 1) fail("the input is empty along spatial dim " + std::to_string(i));
    if (output_padding[i] < 0 || (output_padding[i] >= stride[i] && output_padding[i] >= dilation[i]))
      fail("output_padding " + shape_str(output_padding) + " must be non-negative and smaller than the stride or the dilation");
    const int64_t full = (xs[2 + i] - 1) * stride[i] + dilation[i] * (ws[2 + i] - 1) + 1 + output_padding[i];
    if (full - a.pads[i] - a.pads[i + 3] < 1)
      fail("padding " + shape_str(a.pads) + " crops the whole output along spatial dim " + std::to_string(i));
  }

  // One conv_transpose2d over the depth slices; output channel (o, kd).
  const DType t = conv_operand_dtype(x, weight);
  const Tensor slices = reshape(permute(x.astype(t), {0, 2, 1, 3, 4}), {n * d, c, xs[3], xs[4]});
  const Tensor w2 = reshape(weight.astype(t), {c, o_per_group * kd, ws[3], ws[4]});
  const Tensor planes = conv_transpose2d(slices, w2, {}, {stride[1], stride[2]},
                                         {a.pads[1], a.pads[2], a.pads[4], a.pads[5]},
                                         {output_padding[1], output_padding[2]}, groups, {dilation[1], dilation[2]});
  const int64_t o = o_per_group * groups, oh = planes.shape()[2], ow = planes.shape()[3];
  const Tensor by_tap = reshape(planes, {n, d, o, kd, oh, ow});

  // The fold along depth (Note [3-D convolution as 2-D]).
  const int64_t sd = stride[0], spread = (d - 1) * sd + 1, full = spread + dilation[0] * (kd - 1);
  Tensor y;
  for (int64_t k = 0; k < kd; ++k) {
    Tensor tap = reshape(slice(by_tap, 3, k, k + 1), {n, d, o, oh, ow});
    if (sd > 1)  // slice i to depth i * sd, zeros between
      tap = slice(reshape(pad(unsqueeze(tap, {2}), {0, 0, 0, 0, 0, 0, 0, 0, sd - 1, 0, 0, 0}), {n, d * sd, o, oh, ow}),
                  1, 0, spread);
    const int64_t front = k * dilation[0];
    tap = pad(tap, {0, front, 0, 0, 0, 0, full - spread - front, 0, 0, 0});
    y = k == 0 ? tap : y + tap;
  }
  // Crop the padding; append output_padding.
  if (a.pads[0] != 0 || a.pads[3] != 0 || output_padding[0] != 0)
    y = pad(y, {0, -a.pads[0], 0, 0, 0, 0, output_padding[0] - a.pads[3], 0, 0, 0});
  y = permute(y, {0, 2, 1, 3, 4});
  return add_conv_bias(op, y, bias, x, weight);
}

}  // namespace wok
