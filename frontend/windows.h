// Window functions for spectral analysis (PyTorch's hann_window,
// hamming_window, blackman_window; ONNX's HannWindow, HammingWindow,
// BlackmanWindow). `periodic` windows have period `size` (for use with an
// FFT); symmetric ones are symmetric over `size` points.
#pragma once
#include "wok/frontend/tensor.h"

namespace wok {

Tensor hann_window(int64_t size, bool periodic = true, DType dtype = DType::kFloat32);
// alpha - beta cos(...): PyTorch's defaults; ONNX's HammingWindow uses
// 25/46 and 21/46.
Tensor hamming_window(int64_t size, bool periodic = true, DType dtype = DType::kFloat32, double alpha = 0.54,
                      double beta = 0.46);
Tensor blackman_window(int64_t size, bool periodic = true, DType dtype = DType::kFloat32);

}  // namespace wok
