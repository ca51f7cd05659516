// Neural-network functions written as compositions of the primitive ops, so
// the JIT sees (and fuses) their parts.
#pragma once

#include "wok/frontend/tensor.h"

namespace wok {

// exp(x - max) / sum(exp(x - max)) along `axis`.
Tensor softmax(const Tensor& x, int64_t axis = -1);
// x - max - log(sum(exp(x - max))) along `axis`.
Tensor log_softmax(const Tensor& x, int64_t axis = -1);
// (x - mean) / sqrt(var + eps) over the last dim, then * weight + bias when
// they are defined (shape [last dim]).
Tensor layer_norm(const Tensor& x, const Tensor& weight = {}, const Tensor& bias = {}, double eps = 1e-5);
// x / sqrt(mean(x^2) + eps) over the last dim, then * weight when defined.
Tensor rms_norm(const Tensor& x, const Tensor& weight = {}, double eps = 1e-6);

// Normalizations of x [N, C, ...] (rank >= 2) with per-channel vectors of
// shape [C]; weight and bias, when defined, scale and shift each channel
// after normalizing. Integer inputs compute in floating point as in
// layer_norm; the result's dtype is the promotion of that and the vectors'.
//
// Batch normalization in inference mode (ONNX BatchNormalization, PyTorch
// batch_norm with training=false), computed as x * scale + shift with
//   scale = weight / sqrt(running_var + eps), shift = bias - running_mean * scale
// per channel, so each element costs one multiply-add, which the JIT fuses
// into the epilogue of what produced x (a convolution, a matmul).
Tensor batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight = {},
                  const Tensor& bias = {}, double eps = 1e-5);
// Mean and variance over each group of C / num_groups consecutive channels
// and all their spatial positions (PyTorch group_norm, ONNX
// GroupNormalization-21); weight and bias are per channel.
Tensor group_norm(const Tensor& x, int64_t num_groups, const Tensor& weight = {}, const Tensor& bias = {},
                  double eps = 1e-5);
// Mean and variance per (n, c) over the spatial dims: group_norm with one
// channel per group (ONNX InstanceNormalization, PyTorch instance_norm
// without running statistics).
Tensor instance_norm(const Tensor& x, const Tensor& weight = {}, const Tensor& bias = {}, double eps = 1e-5);
// Local response normalization across channels (ONNX LRN, PyTorch
// local_response_norm): x / (k + alpha / size * s)^beta with s the sum of
// x^2 over channels [c - floor((size - 1) / 2), c + ceil((size - 1) / 2)]
// (ONNX's window; PyTorch centres an even window one channel later).
Tensor local_response_norm(const Tensor& x, int64_t size, double alpha = 1e-4, double beta = 0.75, double k = 1.0);

}  // namespace wok
