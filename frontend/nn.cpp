#include "wok/frontend/nn.h"

#include "wok/frontend/dispatch.h"

#include "wok/frontend/ops.h"

namespace wok {

namespace {
Tensor as_float(const Tensor& x) {
  if (!x.defined()) throw Error("operation on an undefined wok::Tensor");
  return x.astype(float_result_type(x.dtype()));
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

}  // namespace wok
