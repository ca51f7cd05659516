// Parameterised activations with ONNX's semantics (and defaults), written
// as compositions of the elementwise ops, so that under the JIT each one
// fuses with its neighbours into one kernel: a chain such as
// matmul -> + bias -> leaky_relu costs the matmul alone (all but
// thresholded_relu, shrink and hardmax, which compare, run in a GEMM's
// epilogue: Note [Activations without compares] in activations.cpp).
//
// Integer and bool inputs compute in floating point as softmax does (int32
// and int64 in float64, bool in float32), except in prelu and hardmax,
// which keep their inputs' dtypes. A float32 input stays float32: the
// parameters, given as double, are rounded to it. nan stays nan, except in
// shrink and thresholded_relu (ONNX's formulas map it to 0) and in hardmax
// (a nan counts as the maximum, as in argmax). `clip` is wok::clamp.
#pragma once

#include <cstdint>

#include "wok/frontend/tensor.h"

namespace wok {

// x >= 0 ? x : alpha x  (ONNX LeakyRelu).
Tensor leaky_relu(const Tensor& x, double alpha = 0.01);
// x >= 0 ? x : slope x, where slope broadcasts to x one way, right-aligned
// as NumPy does (ONNX PRelu): its shape may not widen x's. A per-channel
// slope of an NCHW x has shape [C, 1, 1] (PyTorch's [C] is aligned with
// the channels instead). The result's dtype is the promotion of both.
// Computed as max(x, 0) + min(x, 0) slope, so a nan slope gives nan for
// x >= 0 too (ONNX: x).
Tensor prelu(const Tensor& x, const Tensor& slope);
// x > 0 ? x : alpha (e^x - 1)  (ONNX Elu). e^x - 1 is computed without
// cancellation near 0 (within 2.2 ulp of it measured, float32 and
// float64), so tiny negative inputs keep their digits; -alpha at x = -inf.
Tensor elu(const Tensor& x, double alpha = 1.0);
// gamma (x > 0 ? x : alpha (e^x - 1))  (ONNX Selu), e^x - 1 as in elu.
Tensor selu(const Tensor& x, double alpha = 1.67326319217681884765625, double gamma = 1.05070102214813232421875);
// max(0, x) + min(0, alpha (e^(x / alpha) - 1))  (ONNX Celu), e^x - 1 as in
// elu. alpha must be positive.
Tensor celu(const Tensor& x, double alpha = 1.0);
// max(0, min(1, alpha x + beta))  (ONNX HardSigmoid; PyTorch's hardsigmoid
// is alpha = 1/6).
Tensor hard_sigmoid(const Tensor& x, double alpha = 0.2, double beta = 0.5);
// x > alpha ? x : 0  (ONNX ThresholdedRelu).
Tensor thresholded_relu(const Tensor& x, double alpha = 1.0);
// x < -lambd ? x + bias : x > lambd ? x - bias : 0  (ONNX Shrink; PyTorch's
// hardshrink is bias = 0, softshrink bias = lambd).
Tensor shrink(const Tensor& x, double bias = 0.0, double lambd = 0.5);
// 1 at the first maximum along `axis` and 0 elsewhere, in x's dtype (ONNX
// Hardmax-13): an argmax compared with the positions along the axis, two
// kernels under the JIT. The positions are data made for the axis's size,
// so a wok::compile'd function traces again when that size changes.
Tensor hardmax(const Tensor& x, int64_t axis = -1);

}  // namespace wok
