#include "wok/frontend/conv_args.h"

#include "wok/frontend/ops.h"
#include "wok/runtime/error.h"

namespace wok::detail {

namespace {

std::string describe(const Tensor& t) { return std::string(dtype_name(t.dtype())) + shape_str(t.shape()); }

std::string prefix(const char* op) { return std::string("wok::") + op + ": "; }

}  // namespace

std::string conv_inputs(const Tensor& x, const Tensor& w) {
  return " (inputs: x " + describe(x) + ", weight " + describe(w) + ")";
}

void check_conv_defined(const char* op, const Tensor& x, const Tensor& w) {
  if (!x.defined() || !w.defined()) throw Error(prefix(op) + "an input is an undefined wok::Tensor");
}

void check_conv_length(const char* op, const char* what, const std::vector<int64_t>& v, size_t dims, const Tensor& x,
                       const Tensor& w) {
  if (v.size() != dims)
    throw ShapeError(prefix(op) + what + " " + shape_str(v) + " must have " + std::to_string(dims) + " value" +
                     (dims == 1 ? "" : "s") + conv_inputs(x, w));
}

std::vector<int64_t> conv_full_padding(const char* op, const std::vector<int64_t>& padding, size_t dims,
                                       const Tensor& x, const Tensor& w) {
  if (padding.size() == dims) {
    std::vector<int64_t> out(padding);
    out.insert(out.end(), padding.begin(), padding.end());
    return out;
  }
  if (padding.size() == 2 * dims) return padding;
  throw ShapeError(prefix(op) + "padding " + shape_str(padding) + " must have " + std::to_string(dims) +
                   " values (one per spatial dim) or " + std::to_string(2 * dims) + " (all before, then all after)" +
                   conv_inputs(x, w));
}

DType conv_operand_dtype(const Tensor& x, const Tensor& w) {
  return float_result_type(promote_types(x.dtype(), w.dtype()));
}

Tensor add_conv_bias(const char* op, Tensor y, const Tensor& bias, const Tensor& x, const Tensor& w) {
  if (!bias.defined()) return y;
  const int64_t channels = y.shape()[1];
  if (bias.ndim() != 1 || bias.shape()[0] != channels)
    throw ShapeError(prefix(op) + "bias " + describe(bias) + " must have one value per output channel (" +
                     std::to_string(channels) + ")" + conv_inputs(x, w));
  Shape per_channel(static_cast<size_t>(y.ndim() - 1), 1);  // [O, 1, ...]: broadcast over the spatial dims
  per_channel[0] = channels;
  return y + reshape(bias.astype(y.dtype()), per_channel);
}

}  // namespace wok::detail
