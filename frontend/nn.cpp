#include "wok/frontend/nn.h"

#include <algorithm>
#include <string>

#include "wok/frontend/dispatch.h"
#include "wok/frontend/ops.h"
#include "wok/frontend/pooling.h"

namespace wok {

namespace {
Tensor as_float(const Tensor& x) {
  if (!x.defined()) throw Error("operation on an undefined wok::Tensor");
  return x.astype(float_result_type(x.dtype()));
}

// The per-channel normalizations take x [N, C, ...].
void check_channels_first(const char* op, const Tensor& x) {
  if (x.ndim() < 2)
    throw ShapeError(std::string("wok::") + op + ": x must have shape [N, C, ...] (rank >= 2), got " +
                     shape_str(x.shape()));
}

// A per-channel vector has shape [C]; `required` ones must be defined.
void check_channel_vector(const char* op, const char* name, const Tensor& v, const Tensor& x, bool required) {
  if (!v.defined()) {
    if (required) throw ArgumentError(std::string("wok::") + op + ": " + name + " is undefined");
    return;
  }
  const int64_t c = x.shape()[1];
  if (v.shape() != Shape{c})
    throw ShapeError(std::string("wok::") + op + ": " + name + " must have shape [" + std::to_string(c) +
                     "] (one value per channel of x " + shape_str(x.shape()) + "), got " + shape_str(v.shape()));
}

// v [C] as [C, 1, ..., 1], which broadcasts along x's channel dim.
Tensor per_channel(const Tensor& v, int x_ndim) {
  Shape shape(static_cast<size_t>(x_ndim - 1), 1);
  shape[0] = v.size(0);
  return v.reshape(std::move(shape));
}

// Mean and variance over [N, groups, C / groups * spatial], then the
// per-channel affine: group_norm, and instance_norm with groups = C.
Tensor normalize_groups(const Tensor& x, int64_t groups, const Tensor& weight, const Tensor& bias, double eps) {
  const Shape& shape = x.shape();
  const int64_t spatial = numel(Shape(shape.begin() + 2, shape.end()));
  Tensor g = x.reshape({shape[0], groups, shape[1] / groups * spatial});
  Tensor centered = g - mean(g, {-1}, true);
  Tensor var = mean(centered * centered, {-1}, true);
  Tensor y = (centered * rsqrt(var + eps)).reshape(shape);
  if (weight.defined()) y = y * per_channel(weight, x.ndim());
  if (bias.defined()) y = y + per_channel(bias, x.ndim());
  return y;
}
}  // namespace

Tensor softmax(const Tensor& x, int64_t axis) {
  WOK_CALLER_SCOPE();
  Tensor xf = as_float(x);
  Tensor e = exp(xf - max(xf, {axis}, true));
  // One reciprocal per row and a multiply per element, as PyTorch's CPU
  // softmax does: a divide per element costs several times more.
  return e * reciprocal(sum(e, {axis}, true));
}

Tensor log_softmax(const Tensor& x, int64_t axis) {
  WOK_CALLER_SCOPE();
  Tensor xf = as_float(x);
  Tensor shifted = xf - max(xf, {axis}, true);
  return shifted - log(sum(exp(shifted), {axis}, true));
}

Tensor layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps) {
  WOK_CALLER_SCOPE();
  Tensor xf = as_float(x);
  Tensor centered = xf - mean(xf, {-1}, true);
  Tensor var = mean(centered * centered, {-1}, true);
  Tensor y = centered * rsqrt(var + eps);
  if (weight.defined()) y = y * weight;
  if (bias.defined()) y = y + bias;
  return y;
}

Tensor rms_norm(const Tensor& x, const Tensor& weight, double eps) {
  WOK_CALLER_SCOPE();
  Tensor xf = as_float(x);
  Tensor y = xf * rsqrt(mean(xf * xf, {-1}, true) + eps);
  if (weight.defined()) y = y * weight;
  return y;
}

Tensor batch_norm(const Tensor& x, const Tensor& running_mean, const Tensor& running_var, const Tensor& weight,
                  const Tensor& bias, double eps) {
  WOK_CALLER_SCOPE();
  Tensor xf = as_float(x);
  check_channels_first("batch_norm", xf);
  check_channel_vector("batch_norm", "running_mean", running_mean, xf, true);
  check_channel_vector("batch_norm", "running_var", running_var, xf, true);
  check_channel_vector("batch_norm", "weight", weight, xf, false);
  check_channel_vector("batch_norm", "bias", bias, xf, false);
  // Folded per channel first: the work per element is one multiply-add.
  Tensor scale = rsqrt(running_var + eps);
  if (weight.defined()) scale = scale * weight;
  Tensor shift = bias.defined() ? bias - running_mean * scale : -(running_mean * scale);
  return xf * per_channel(scale, xf.ndim()) + per_channel(shift, xf.ndim());
}

Tensor group_norm(const Tensor& x, int64_t num_groups, const Tensor& weight, const Tensor& bias, double eps) {
  WOK_CALLER_SCOPE();
  Tensor xf = as_float(x);
  check_channels_first("group_norm", xf);
  if (num_groups <= 0)
    throw ArgumentError("wok::group_norm: num_groups must be positive, got " + std::to_string(num_groups));
  if (xf.shape()[1] % num_groups != 0)
    throw ShapeError("wok::group_norm: " + std::to_string(xf.shape()[1]) + " channels of x " + shape_str(xf.shape()) +
                     " do not divide into " + std::to_string(num_groups) + " groups");
  check_channel_vector("group_norm", "weight", weight, xf, false);
  check_channel_vector("group_norm", "bias", bias, xf, false);
  return normalize_groups(xf, num_groups, weight, bias, eps);
}

Tensor instance_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps) {
  WOK_CALLER_SCOPE();
  Tensor xf = as_float(x);
  check_channels_first("instance_norm", xf);
  check_channel_vector("instance_norm", "weight", weight, xf, false);
  check_channel_vector("instance_norm", "bias", bias, xf, false);
  // One group per channel (one group in all when there are no channels).
  return normalize_groups(xf, std::max<int64_t>(xf.shape()[1], 1), weight, bias, eps);
}

Tensor local_response_norm(const Tensor& x, int64_t size, double alpha, double beta, double k) {
  WOK_CALLER_SCOPE();
  Tensor xf = as_float(x);
  check_channels_first("local_response_norm", xf);
  if (size < 1) throw ArgumentError("wok::local_response_norm: size must be positive, got " + std::to_string(size));
  const Shape& s = xf.shape();
  const int64_t n = s[0], c = s[1], rest = c == 0 ? 0 : xf.numel() / std::max<int64_t>(n * c, 1);
  // The window sum over channels is a (size x 1) average pool of x^2 over
  // [N, 1, C, rest] with the padding counted, times size.
  const Tensor squares = reshape(xf * xf, {n, 1, c, rest});
  const int64_t front = (size - 1) / 2, back = size - 1 - front;
  const Tensor sums = avg_pool2d(squares, {size, 1}, {1, 1}, {front, 0, back, 0}, false, true) * static_cast<double>(size);
  return xf / pow(reshape(sums, s) * (alpha / static_cast<double>(size)) + k, beta);
}

}  // namespace wok
