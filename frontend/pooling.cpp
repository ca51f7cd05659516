#include "wok/frontend/pooling.h"

#include <string>

#include "wok/frontend/dispatch.h"
#include "wok/frontend/ops.h"
#include "wok/runtime/error.h"

namespace wok {

using detail::positional_attrs;
using detail::record1;

namespace {

// "wok::<op>: <what> (inputs: x float32[1, 3, 8, 8])", as the op's own
// rules report through record1.
std::string message(const char* op, const std::string& what, const Tensor& x) {
  return std::string("wok::") + op + ": " + what + " (inputs: x " + std::string(dtype_name(x.dtype())) +
         shape_str(x.shape()) + ")";
}

void check_input(const char* op, const Tensor& x) {
  if (!x.defined()) throw ArgumentError(std::string("wok::") + op + ": x is an undefined wok::Tensor");
  if (x.ndim() != 4)
    throw ShapeError(message(op, "needs a 4-D input [N, C, H, W], got rank " + std::to_string(x.ndim()), x));
}

void check_length(const char* op, const char* what, const std::vector<int64_t>& v, const Tensor& x) {
  if (v.size() != 2) throw ShapeError(message(op, std::string(what) + " " + shape_str(v) + " must have 2 values", x));
}

// The op's attributes: stride defaults to the kernel, and padding has the
// four values {top, left, bottom, right}.
std::vector<int64_t> full_stride(const char* op, std::vector<int64_t> stride, const std::vector<int64_t>& kernel,
                                 const Tensor& x) {
  if (stride.empty()) return kernel;
  check_length(op, "stride", stride, x);
  return stride;
}

std::vector<int64_t> full_padding(const char* op, const std::vector<int64_t>& padding, const Tensor& x) {
  if (padding.size() == 2) return {padding[0], padding[1], padding[0], padding[1]};
  if (padding.size() == 4) return padding;
  throw ShapeError(message(op, "padding " + shape_str(padding) +
                                   " must have 2 values (one per spatial dim) or 4 (top, left, bottom, right)",
                           x));
}

// Integers are averaged in float64, as wok::mean does; bool reaches the op,
// which refuses it.
Tensor averaged(const Tensor& x) { return is_integral(x.dtype()) ? x.astype(float_result_type(x.dtype())) : x; }

}  // namespace

Tensor max_pool2d(const Tensor& x, std::vector<int64_t> kernel, std::vector<int64_t> stride,
                  std::vector<int64_t> padding, std::vector<int64_t> dilation, bool ceil_mode) {
  WOK_CALLER_SCOPE();
  static const RegisteredOp& op = WOK_BUILTIN_OP("max_pool2d");
  check_input("max_pool2d", x);
  check_length("max_pool2d", "kernel", kernel, x);
  check_length("max_pool2d", "dilation", dilation, x);
  std::vector<int64_t> s = full_stride("max_pool2d", std::move(stride), kernel, x);
  std::vector<int64_t> p = full_padding("max_pool2d", padding, x);
  return record1(op, {x}, positional_attrs(op, {std::move(kernel), std::move(s), std::move(p), std::move(dilation),
                                                ceil_mode}));
}

Tensor avg_pool2d(const Tensor& x, std::vector<int64_t> kernel, std::vector<int64_t> stride,
                  std::vector<int64_t> padding, bool ceil_mode, bool count_include_pad) {
  WOK_CALLER_SCOPE();
  static const RegisteredOp& op = WOK_BUILTIN_OP("avg_pool2d");
  check_input("avg_pool2d", x);
  check_length("avg_pool2d", "kernel", kernel, x);
  std::vector<int64_t> s = full_stride("avg_pool2d", std::move(stride), kernel, x);
  std::vector<int64_t> p = full_padding("avg_pool2d", padding, x);
  return record1(op, {averaged(x)},
                 positional_attrs(op, {std::move(kernel), std::move(s), std::move(p), ceil_mode, count_include_pad}));
}

Tensor adaptive_avg_pool2d(const Tensor& x, std::vector<int64_t> output_size) {
  WOK_CALLER_SCOPE();
  static const RegisteredOp& op = WOK_BUILTIN_OP("adaptive_avg_pool2d");
  check_input("adaptive_avg_pool2d", x);
  check_length("adaptive_avg_pool2d", "output_size", output_size, x);
  if (output_size[0] == 1 && output_size[1] == 1 && !is_bool(x.dtype()) && x.shape()[2] > 0 && x.shape()[3] > 0)
    return global_avg_pool2d(x);  // a mean, which fuses
  return record1(op, {averaged(x)}, positional_attrs(op, {std::move(output_size)}));
}

Tensor global_avg_pool2d(const Tensor& x) {
  WOK_CALLER_SCOPE();
  check_input("global_avg_pool2d", x);
  if (is_bool(x.dtype())) throw DTypeError(message("global_avg_pool2d", "not defined for bool tensors", x));
  if (x.shape()[2] == 0 || x.shape()[3] == 0)
    throw ShapeError(message("global_avg_pool2d",
                             "input spatial size " + std::to_string(x.shape()[2]) + "x" +
                                 std::to_string(x.shape()[3]) + " is empty",
                             x));
  return mean(x, {2, 3}, /*keepdims=*/true);
}

}  // namespace wok
