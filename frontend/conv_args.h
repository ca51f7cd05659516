// Argument checks shared by the convolution functions (conv.cpp, conv3d.cpp):
// every message starts "wok::<op>:" and ends with the caller's operands, so
// a 3-D convolution lowered onto the 2-D ops still reports what its caller
// passed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "wok/frontend/tensor.h"

namespace wok::detail {

// " (inputs: x float32[1, 3, 8, 8], weight float32[4, 3, 3, 3])"
std::string conv_inputs(const Tensor& x, const Tensor& w);

void check_conv_defined(const char* op, const Tensor& x, const Tensor& w);
// `v` has `dims` values.
void check_conv_length(const char* op, const char* what, const std::vector<int64_t>& v, size_t dims, const Tensor& x,
                       const Tensor& w);
// One value per spatial dim (the same before and after), or all the values
// before, then all after: the 2 * dims values the ops take.
std::vector<int64_t> conv_full_padding(const char* op, const std::vector<int64_t>& padding, size_t dims,
                                       const Tensor& x, const Tensor& w);
// Both operands in one float dtype (integers promote as for the other float
// ops, float_result_type).
DType conv_operand_dtype(const Tensor& x, const Tensor& w);
// y + bias per output channel (dim 1), broadcast over the spatial dims, so
// the JIT fuses it into the convolution's epilogue; y itself when bias is
// undefined.
Tensor add_conv_bias(const char* op, Tensor y, const Tensor& bias, const Tensor& x, const Tensor& w);

}  // namespace wok::detail
