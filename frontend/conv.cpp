#include "wok/frontend/conv.h"

#include <string>

#include "wok/frontend/dispatch.h"
#include "wok/frontend/ops.h"
#include "wok/runtime/error.h"

namespace wok {

using detail::positional_attrs;
using detail::record1;

namespace {

std::string describe(const Tensor& t) { return std::string(dtype_name(t.dtype())) + shape_str(t.shape()); }

// One value per spatial dim, or before-then-after: the 2 * dims values the
// op takes.
std::string inputs_of(const Tensor& x, const Tensor& w) {
  return " (inputs: x " + describe(x) + ", weight " + describe(w) + ")";
}

std::vector<int64_t> full_padding(const char* op, const std::vector<int64_t>& padding, size_t dims, const Tensor& x,
                                  const Tensor& w) {
  if (padding.size() == dims) {
    std::vector<int64_t> out(padding);
    out.insert(out.end(), padding.begin(), padding.end());
    return out;
  }
  if (padding.size() == 2 * dims) return padding;
  throw ShapeError(std::string("wok::") + op + ": padding " + shape_str(padding) + " must have " +
                   std::to_string(dims) + " values (one per spatial dim) or " + std::to_string(2 * dims) +
                   " (all before, then all after)" + inputs_of(x, w));
}

void check_length(const char* op, const char* what, const std::vector<int64_t>& v, size_t dims, const Tensor& x,
                  const Tensor& w) {
  if (v.size() != dims)
    throw ShapeError(std::string("wok::") + op + ": " + what + " " + shape_str(v) + " must have " +
                     std::to_string(dims) + " value" + (dims == 1 ? "" : "s") + inputs_of(x, w));
}

// Both operands in one float dtype (integers promote as for the other
// float ops, float_result_type).
DType operand_dtype(const Tensor& x, const Tensor& w) {
  return float_result_type(promote_types(x.dtype(), w.dtype()));
}

Tensor add_bias(const char* op, Tensor y, const Tensor& bias, const Tensor& x, const Tensor& w) {
  if (!bias.defined()) return y;
  const int64_t channels = y.shape()[1];
  if (bias.ndim() != 1 || bias.shape()[0] != channels)
    throw ShapeError(std::string("wok::") + op + ": bias " + describe(bias) + " must have one value per output channel (" +
                     std::to_string(channels) + ")" + inputs_of(x, w));
  Shape per_channel(static_cast<size_t>(y.ndim() - 1), 1);  // [O, 1, ...]: broadcast over the spatial dims
  per_channel[0] = channels;
  return y + reshape(bias.astype(y.dtype()), per_channel);
}

void check_defined(const char* op, const Tensor& x, const Tensor& w) {
  if (!x.defined() || !w.defined()) throw Error(std::string("wok::") + op + ": an input is an undefined wok::Tensor");
}

// conv2d and conv1d: the op over `dims` spatial dims, then the bias.
Tensor convolution(const RegisteredOp& op, const char* name, size_t dims, const Tensor& x, const Tensor& weight,
                   const Tensor& bias, std::vector<int64_t> stride, const std::vector<int64_t>& padding,
                   std::vector<int64_t> dilation, int64_t groups) {
  check_defined(name, x, weight);
  check_length(name, "stride", stride, dims, x, weight);
  check_length(name, "dilation", dilation, dims, x, weight);
  const DType t = operand_dtype(x, weight);
  Tensor y = record1(op, {x.astype(t), weight.astype(t)},
                     positional_attrs(op, {std::move(stride), full_padding(name, padding, dims, x, weight),
                                           std::move(dilation), groups}));
  return add_bias(name, y, bias, x, weight);
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
  check_defined("conv_transpose2d", x, weight);
  check_length("conv_transpose2d", "stride", stride, 2, x, weight);
  check_length("conv_transpose2d", "dilation", dilation, 2, x, weight);
  check_length("conv_transpose2d", "output_padding", output_padding, 2, x, weight);
  const DType t = operand_dtype(x, weight);
  Tensor y = record1(op, {x.astype(t), weight.astype(t)},
                     positional_attrs(op, {std::move(stride), full_padding("conv_transpose2d", padding, 2, x, weight),
                                           std::move(dilation), groups, std::move(output_padding)}));
  return add_bias("conv_transpose2d", y, bias, x, weight);
}

}  // namespace wok
