#include "wok/frontend/activations.h"

#include <numeric>
#include <string>
#include <vector>

#include "wok/frontend/creation.h"
#include "wok/frontend/dispatch.h"
#include "wok/frontend/ops.h"

namespace wok {

namespace {

Tensor as_float(const Tensor& x) { return x.astype(float_result_type(x.dtype())); }

// Note [Activations without compares]
// Under the JIT an elementwise chain after a matmul runs in the GEMM's
// epilogue, on each finished tile, but not a compare: its bool result is
// stored as bytes, which the epilogue's registers do not hold
// (fits_gemm_epilogue in jit/gemm_lowering.cpp). So the
// continuous activations are written with maximum and minimum instead of
// where(x < 0, ...): x >= 0 ? x : f(x) with f(0) = 0 is
// max(x, 0) + f(min(x, 0)), one of the two terms being an exact 0, and
// matmul + bias + elu is one kernel. Only thresholded_relu, shrink and
// hardmax, which jump, compare.

// e^x - 1 for x <= 0 (or nan), as 2t / (1 - t) with t = tanh(x / 2): exp(x)
// - 1 keeps none of the digits of a tiny x (e^x rounds to 1), while tanh is
// accurate near 0 and 1 - t lies in [1, 2), so nothing cancels (a few ulp
// over the whole range); t = -1 gives exactly -1 at x = -inf.
Tensor expm1_nonpositive(const Tensor& x) {
  Tensor t = tanh(x * 0.5);
  return t * 2.0 / (1.0 - t);
}

// x >= 0 ? scale x : alpha (e^(x / divisor) - 1) (Note [Activations without compares]).
Tensor exponential_linear(const Tensor& x, double alpha, double scale, double divisor = 1.0) {
  Tensor pos = maximum(x, 0.0), neg = minimum(x, 0.0);
  if (scale != 1.0) pos = pos * scale;
  if (divisor != 1.0) neg = neg / divisor;
  Tensor e = expm1_nonpositive(neg);
  return pos + (alpha == 1.0 ? e : e * alpha);
}

}  // namespace

Tensor leaky_relu(const Tensor& x, double alpha) {
  WOK_CALLER_SCOPE();
  Tensor xf = as_float(x);
  // alpha x lies beyond x on the side x < 0 selects (Note [Activations without
  // compares]); at alpha = 0, x * alpha is nan for x = inf, so the split form.
  if (alpha == 0) return maximum(xf, 0.0) + minimum(xf, 0.0) * alpha;
  return alpha <= 1 ? maximum(xf, xf * alpha) : minimum(xf, xf * alpha);
}

Tensor prelu(const Tensor& x, const Tensor& slope) {
  WOK_CALLER_SCOPE();
  if (!x.defined() || !slope.defined()) throw Error("wok::prelu: an input is an undefined wok::Tensor");
  std::optional<Shape> both = broadcast_shapes(x.shape(), slope.shape());
  if (!both || *both != x.shape())
    throw ShapeError("wok::prelu: slope " + std::string(dtype_name(slope.dtype())) + shape_str(slope.shape()) +
                     " does not broadcast to x " + std::string(dtype_name(x.dtype())) + shape_str(x.shape()) +
                     " (right-aligned, as ONNX PRelu; a per-channel slope of [N, C, H, W] has shape [C, 1, 1])");
  // The slope's sign is not known here: the split form (Note [Activations
  // without compares]).
  return maximum(x, 0) + minimum(x, 0) * slope;
}

Tensor elu(const Tensor& x, double alpha) {
  WOK_CALLER_SCOPE();
  return exponential_linear(as_float(x), alpha, 1.0);
}

Tensor selu(const Tensor& x, double alpha, double gamma) {
  WOK_CALLER_SCOPE();
  // gamma alpha is one constant: a multiply per element fewer.
  return exponential_linear(as_float(x), alpha * gamma, gamma);
}

Tensor celu(const Tensor& x, double alpha) {
  WOK_CALLER_SCOPE();
  if (!(alpha > 0)) throw ArgumentError("wok::celu: alpha must be positive, got " + Scalar(alpha).str());
  return exponential_linear(as_float(x), alpha, 1.0, alpha);
}

Tensor hard_sigmoid(const Tensor& x, double alpha, double beta) {
  WOK_CALLER_SCOPE();
  return clamp(as_float(x) * alpha + beta, 0.0, 1.0);
}

Tensor thresholded_relu(const Tensor& x, double alpha) {
  WOK_CALLER_SCOPE();
  Tensor xf = as_float(x);
  return where(xf > alpha, xf, 0.0);
}

Tensor shrink(const Tensor& x, double bias, double lambd) {
  WOK_CALLER_SCOPE();
  Tensor xf = as_float(x);
  return where(xf < -lambd, xf + bias, where(xf > lambd, xf - bias, 0.0));
}

Tensor hardmax(const Tensor& x, int64_t axis) {
  WOK_CALLER_SCOPE();
  if (!x.defined()) throw Error("wok::hardmax: x is an undefined wok::Tensor");
  std::optional<int> a = normalize_axis(axis, x.ndim());
  if (!a)
    throw ShapeError("wok::hardmax: axis " + std::to_string(axis) + " is out of range for " +
                     std::string(dtype_name(x.dtype())) + shape_str(x.shape()));
  const int64_t n = x.shape()[*a];
  if (x.numel() == 0) return x;
  // The positions along the axis, [n, 1, ..., 1], against the argmax.
  Shape iota_shape(static_cast<size_t>(x.ndim() - *a), 1);
  iota_shape[0] = n;
  // Made as int64 data: wok::arange holds float64 and casts.
  std::vector<int64_t> positions(static_cast<size_t>(n));
  std::iota(positions.begin(), positions.end(), int64_t{0});
  Tensor iota = from_vector(positions, std::move(iota_shape), x.device());
  return cast(iota == argmax(x, {*a}, /*keepdims=*/true), x.dtype());
}

}  // namespace wok
