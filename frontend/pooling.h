// Pooling over NCHW tensors with ONNX's semantics (MaxPool, AveragePool,
// GlobalAveragePool), which PyTorch shares; the names, argument order and
// defaults follow PyTorch (torch.nn.functional).
//
// `padding` follows frontend/conv.h: one value per spatial dim (the same
// before and after) or {top, left, bottom, right}, ONNX's `pads` order. An
// empty `stride` is the kernel size. The output size of each spatial dim is
//   (in + pad_before + pad_after - dilation * (kernel - 1) - 1) / stride + 1,
// rounded down, or up with ceil_mode, where a last window that would start
// in the padding after the input is dropped. Padding must be smaller than
// the effective kernel dilation * (kernel - 1) + 1. The windows and the
// average's divisor are spelled out in Note [Pooling windows]
// (runtime/ops/pool_ops.cpp).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "wok/frontend/tensor.h"

namespace wok {

// x [N, C, H, W] -> [N, C, OH, OW], the maximum of each window (positions
// in padding never win; nan does). int32, int64, float32 and float64.
Tensor max_pool2d(const Tensor& x, std::vector<int64_t> kernel, std::vector<int64_t> stride = {},
                  std::vector<int64_t> padding = {0, 0}, std::vector<int64_t> dilation = {1, 1},
                  bool ceil_mode = false);

// max_pool2d and, for each output, where its maximum is: an int64 index
// h * W + w into its [H, W] plane (PyTorch's return_indices), the first
// such position in the window when there are ties.
std::pair<Tensor, Tensor> max_pool2d_with_indices(const Tensor& x, std::vector<int64_t> kernel,
                                                  std::vector<int64_t> stride = {},
                                                  std::vector<int64_t> padding = {0, 0},
                                                  std::vector<int64_t> dilation = {1, 1}, bool ceil_mode = false);

// The inverse of max_pool2d_with_indices (PyTorch max_unpool2d, ONNX
// MaxUnpool): [N, C, OH, OW] zeros with x's values written at `indices`
// (h * W + w in each [H, W] = output_size plane; the same shape as x).
// Out-of-range indices are an error naming the index.
Tensor max_unpool2d(const Tensor& x, const Tensor& indices, std::vector<int64_t> output_size);

// x [N, C, H, W] -> [N, C, OH, OW], the mean of each window: over the
// positions inside the input, or, with count_include_pad, divided by the
// window's size within the padded input. Integers are averaged in float64,
// as wok::mean does.
Tensor avg_pool2d(const Tensor& x, std::vector<int64_t> kernel, std::vector<int64_t> stride = {},
                  std::vector<int64_t> padding = {0, 0}, bool ceil_mode = false, bool count_include_pad = true);

// The 3-D forms: x [N, C, D, H, W] -> [N, C, OD, OH, OW], each dim as in
// the 2-D pools; padding has 3 values or 6 {front, top, left, back, bottom,
// right}. Separable: a 2-D pool of each depth plane, then a pool over depth
// (Note [Separable 3-D pooling], frontend/pool3d.cpp).
Tensor max_pool3d(const Tensor& x, std::vector<int64_t> kernel, std::vector<int64_t> stride = {},
                  std::vector<int64_t> padding = {0, 0, 0}, std::vector<int64_t> dilation = {1, 1, 1},
                  bool ceil_mode = false);
Tensor avg_pool3d(const Tensor& x, std::vector<int64_t> kernel, std::vector<int64_t> stride = {},
                  std::vector<int64_t> padding = {0, 0, 0}, bool ceil_mode = false, bool count_include_pad = true);

// x [N, C, H, W] -> [N, C, OH, OW] for output_size {OH, OW}: output i
// averages rows [floor(i * H / OH), ceil((i + 1) * H / OH)), and likewise
// for columns, so windows may overlap when the sizes do not divide.
Tensor adaptive_avg_pool2d(const Tensor& x, std::vector<int64_t> output_size);

// x [N, C, H, W] -> [N, C, 1, 1]: wok::mean over dims 2 and 3, so it fuses
// with what comes before and after it.
Tensor global_avg_pool2d(const Tensor& x);

}  // namespace wok
