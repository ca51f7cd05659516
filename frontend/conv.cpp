#include "wok/frontend/conv.h"

#include "wok/frontend/conv_args.h"
#include "wok/frontend/dispatch.h"
#include "wok/frontend/ops.h"
#include "wok/runtime/error.h"

namespace wok {

using detail::add_conv_bias;
using detail::check_conv_defined;
using detail::check_conv_length;
using detail::conv_full_padding;
using detail::conv_operand_dtype;
using detail::positional_attrs;
using detail::record1;

namespace {

// conv2d and conv1d: the op over `dims` spatial dims, then the bias.
Tensor convolution(const RegisteredOp& op, const char* name, size_t dims, const Tensor& x, const Tensor& weight,
                   const Tensor& bias, std::vector<int64_t> stride, const std::vector<int64_t>& padding,
                   std::vector<int64_t> dilation, int64_t groups) {
  check_conv_defined(name, x, weight);
  check_conv_length(name, "stride", stride, dims, x, weight);
  check_conv_length(name, "dilation", dilation, dims, x, weight);
  const DType t = conv_operand_dtype(x, weight);
  Tensor y = record1(op, {x.astype(t), weight.astype(t)},
                     positional_attrs(op, {std::move(stride), conv_full_padding(name, padding, dims, x, weight),
                                           std::move(dilation), groups}));
  return add_conv_bias(name, y, bias, x, weight);
}

}  // namespace

Tensor conv2d(const Tensor& x, const Tensor& weight, const Tensor& bias, std::vector<int64_t> stride,
              std::vector<int64_t> padding, std::vector<int64_t> dilation, int64_t groups) {
  WOK_CALLER_SCOPE();
  static const RegisteredOp& op = WOK_BUILTIN_OP("conv2d");
  return convolution(op, "conv2d", 2, x, weight, bias, std::move(stride), padding, std::move(dilation), groups);
}

Tensor conv1d(const Tensor& x, const Tensor& weight, const Tensor& bias, std::vector<int64_t> stride,
              std::vector<int64_t> padding, std::vector<int64_t> dilation, int64_t groups) {
  WOK_CALLER_SCOPE();
  static const RegisteredOp& op = WOK_BUILTIN_OP("conv1d");
  return convolution(op, "conv1d", 1, x, weight, bias, std::move(stride), padding, std::move(dilation), groups);
}

Tensor conv_transpose2d(const Tensor& x, const Tensor& weight, const Tensor& bias, std::vector<int64_t> stride,
                        std::vector<int64_t> padding, std::vector<int64_t> output_padding, int64_t groups,
                        std::vector<int64_t> dilation) {
  WOK_CALLER_SCOPE();
  static const RegisteredOp& op = WOK_BUILTIN_OP("conv_transpose2d");
  check_conv_defined("conv_transpose2d", x, weight);
  check_conv_length("conv_transpose2d", "stride", stride, 2, x, weight);
  check_conv_length("conv_transpose2d", "dilation", dilation, 2, x, weight);
  check_conv_length("conv_transpose2d", "output_padding", output_padding, 2, x, weight);
  const DType t = conv_operand_dtype(x, weight);
  Tensor y = record1(op, {x.astype(t), weight.astype(t)},
                     positional_attrs(op, {std::move(stride), conv_full_padding("conv_transpose2d", padding, 2, x, weight),
                                           std::move(dilation), groups, std::move(output_padding)}));
  return add_conv_bias("conv_transpose2d", y, bias, x, weight);
}

}  // namespace wok
