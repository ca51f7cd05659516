// Convolutions in NCHW, with ONNX's semantics (Conv, ConvTranspose), which
// PyTorch shares; the names and argument order follow PyTorch.
//
// `padding` holds either one value per spatial dim (the same before and
// after) or, for asymmetric padding, all the values before, then all the
// values after: {top, left, bottom, right} for 2-D, ONNX's `pads` order.
// The output size of each spatial dim is
//   (in + pad_before + pad_after - dilation * (kernel - 1) - 1) / stride + 1.
// A bias, when defined, has one value per output channel and is added as an
// ordinary broadcast add, so the JIT fuses it (and what follows: relu, a
// residual add) into the convolution's epilogue.
#pragma once

#include <cstdint>
#include <vector>

#include "wok/frontend/tensor.h"

namespace wok {

// x [N, C, H, W], weight [O, C / groups, KH, KW] -> [N, O, OH, OW].
Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias = {}, std::vector<int64_t> stride = {1, 1},
              std::vector<int64_t> padding = {0, 0}, std::vector<int64_t> dilation = {1, 1}, int64_t groups = 1);

// x [N, C, L], weight [O, C / groups, K] -> [N, O, OL]: a conv2d of height 1.
Tensor conv1d(const Tensor& x, const Tensor& weight, const Tensor& bias = {}, std::vector<int64_t> stride = {1},
              std::vector<int64_t> padding = {0}, std::vector<int64_t> dilation = {1}, int64_t groups = 1);

// The gradient of conv2d with respect to its input, used as a layer:
// x [N, C, H, W], weight [C, O / groups, KH, KW] -> [N, O, OH, OW] with
//   OH = (H - 1) * stride - pad_top - pad_bottom + dilation * (KH - 1) + output_padding + 1.
// output_padding (one value per dim) is smaller than the stride or the dilation.
Tensor conv_transpose2d(const Tensor& x, const Tensor& weight, const Tensor& bias = {},
                        std::vector<int64_t> stride = {1, 1}, std::vector<int64_t> padding = {0, 0},
                        std::vector<int64_t> output_padding = {0, 0}, int64_t groups = 1,
                        std::vector<int64_t> dilation = {1, 1});

// x [N, C, D, H, W], weight [O, C / groups, KD, KH, KW] -> [N, O, OD, OH, OW],
// lowered onto conv2d (Note [3-D convolution as 2-D], frontend/conv3d.cpp).
// padding: 3 values, or 6 {front, top, left, back, bottom, right}.
Tensor conv3d(const Tensor& x, const Tensor& weight, const Tensor& bias = {}, std::vector<int64_t> stride = {1, 1, 1},
              std::vector<int64_t> padding = {0, 0, 0}, std::vector<int64_t> dilation = {1, 1, 1}, int64_t groups = 1);

// The transpose of conv3d: x [N, C, D, H, W], weight [C, O / groups, KD, KH,
// KW] -> [N, O, OD, OH, OW], each size as in conv_transpose2d; lowered onto
// conv_transpose2d.
Tensor conv_transpose3d(const Tensor& x, const Tensor& weight, const Tensor& bias = {},
                        std::vector<int64_t> stride = {1, 1, 1}, std::vector<int64_t> padding = {0, 0, 0},
                        std::vector<int64_t> output_padding = {0, 0, 0}, int64_t groups = 1,
                        std::vector<int64_t> dilation = {1, 1, 1});

}  // namespace wok
