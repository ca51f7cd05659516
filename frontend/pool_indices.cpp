// max_pool2d_with_indices: the maximum of each window and where it is;
// max_unpool2d, which puts the maxima back.
//
// The values are max_pool2d's. The positions come from the window's taps:
// the input, padded with the dtype's lowest value (so padding never wins
// over an input position, except against an input of that lowest value
// itself), is read at KH * KW strided offsets, one [N, C, OH, OW] tap each;
// argmax over the stacked taps (its first maximum, nan winning as in max)
// picks the tap, and the tap's offset within its window gives the row and
// column. KH * KW copies of the output's size are written: windows are small.
#include <limits>
#include <string>

#include "wok/frontend/creation.h"
#include "wok/frontend/dispatch.h"
#include "wok/frontend/indexing.h"
#include "wok/frontend/ops.h"
#include "wok/frontend/pooling.h"
#include "wok/frontend/shape_ops.h"

namespace wok {

namespace {

Scalar lowest_of(DType t) {
  switch (t) {
    case DType::kInt32: return Scalar(std::numeric_limits<int32_t>::lowest());
    case DType::kInt64: return Scalar(std::numeric_limits<int64_t>::lowest());
    default: return Scalar(-std::numeric_limits<double>::infinity());
  }
}

}  // namespace

std::pair<Tensor, Tensor> max_pool2d_with_indices(const Tensor& x, std::vector<int64_t> kernel,
                                                  std::vector<int64_t> stride, std::vector<int64_t> padding,
                                                  std::vector<int64_t> dilation, bool ceil_mode) {
  WOK_CALLER_SCOPE();
  // The values first: max_pool2d checks every argument and names them.
  Tensor values = max_pool2d(x, kernel, stride, padding, dilation, ceil_mode);
  if (stride.empty()) stride = kernel;
  if (padding.size() == 2) padding = {padding[0], padding[1], padding[0], padding[1]};
  const Shape& s = x.shape();
  const int64_t h = s[2], w = s[3], oh = values.shape()[2], ow = values.shape()[3];
  // Rows and columns the taps read, past the bottom and right padding in
  // ceil mode.
  const int64_t rows = (oh - 1) * stride[0] + (kernel[0] - 1) * dilation[0] + 1;
  const int64_t cols = (ow - 1) * stride[1] + (kernel[1] - 1) * dilation[1] + 1;
  const int64_t bottom = std::max<int64_t>(0, rows - h - padding[0]), right = std::max<int64_t>(0, cols - w - padding[1]);
  const Tensor padded = pad(x, {0, 0, padding[0], padding[1], 0, 0, bottom, right}, "constant", lowest_of(x.dtype()));
  std::vector<Tensor> taps;
  for (int64_t i = 0; i < kernel[0]; ++i)
    for (int64_t j = 0; j < kernel[1]; ++j) {
      const int64_t r0 = i * dilation[0], c0 = j * dilation[1];
      const Tensor tap = slice(slice(padded, 2, r0, r0 + (oh - 1) * stride[0] + 1, stride[0]), 3, c0,
                               c0 + (ow - 1) * stride[1] + 1, stride[1]);
      taps.push_back(unsqueeze(tap, {4}));
    }
  const Tensor which = argmax(taps.size() == 1 ? taps[0] : concat(taps, 4), {4});  // [N, C, OH, OW], int64
  const Tensor tap_row = floor_divide(which, Scalar(kernel[1])), tap_col = remainder(which, Scalar(kernel[1]));
  const Tensor out_row = reshape(arange(0, static_cast<double>(oh), 1, DType::kInt64), {oh, 1});
  const Tensor out_col = reshape(arange(0, static_cast<double>(ow), 1, DType::kInt64), {1, ow});
  const Tensor row = out_row * stride[0] - padding[0] + tap_row * dilation[0];
  const Tensor col = out_col * stride[1] - padding[1] + tap_col * dilation[1];
  return {std::move(values), row * w + col};
}

Tensor max_unpool2d(const Tensor& x, const Tensor& indices, std::vector<int64_t> output_size) {
  WOK_CALLER_SCOPE();
  auto fail = [&](const std::string& what) {
    throw ShapeError("wok::max_unpool2d: " + what + " (inputs: x " + std::string(dtype_name(x.dtype())) +
                     shape_str(x.shape()) + ", indices " + std::string(dtype_name(indices.dtype())) +
                     shape_str(indices.shape()) + ")");
  };
  if (x.ndim() != 4) fail("x must be 4-D [N, C, H, W]");
  if (indices.shape() != x.shape()) fail("indices must have x's shape");
  if (output_size.size() != 2 || output_size[0] < 0 || output_size[1] < 0)
    fail("output_size " + shape_str(output_size) + " must be two sizes {OH, OW}");
  const int64_t planes = x.shape()[0] * x.shape()[1], plane_size = output_size[0] * output_size[1];
  // Per-plane indices made global, then one scatter into the flat output.
  const Tensor plane = reshape(arange(0, static_cast<double>(planes), 1, DType::kInt64), {x.shape()[0], x.shape()[1], 1, 1});
  const Tensor local = indices.astype(DType::kInt64);
  const Tensor in_range = logical_and(ge(local, Scalar(int64_t{0})), lt(local, Scalar(plane_size)));
  // An index outside its plane lands outside every plane: scatter_elements
  // then names it.
  const Tensor global = where(in_range, local + plane * plane_size, Scalar(planes * plane_size));
  const Tensor flat = scatter_elements(zeros({planes * plane_size}, x.dtype()), 0, reshape(global, {-1}), reshape(x, {-1}));
  return reshape(flat, {x.shape()[0], x.shape()[1], output_size[0], output_size[1]});
}

}  // namespace wok
