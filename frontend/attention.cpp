#include "wok/frontend/attention.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "wok/frontend/creation.h"
#include "wok/frontend/dispatch.h"
#include "wok/frontend/ops.h"

namespace wok {

namespace {

constexpr const char* kOp = "wok::scaled_dot_product_attention";

std::string described(const char* name, const Tensor& t) {
  return std::string(name) + " " + std::string(dtype_name(t.dtype())) + shape_str(t.shape());
}

std::string inputs_str(const Tensor& q, const Tensor& k, const Tensor& v) {
  return " (inputs: " + described("q", q) + ", " + described("k", k) + ", " + described("v", v) + ")";
}

Shape batch_of(const Tensor& t) { return Shape(t.shape().begin(), t.shape().end() - 2); }

// The scores' shape [..., L, S], after checking that q, k and v fit.
Shape scores_shape(const Tensor& q, const Tensor& k, const Tensor& v) {
  if (q.ndim() < 2 || k.ndim() < 2 || v.ndim() < 2)
    throw ShapeError(std::string(kOp) + ": q, k and v need rank 2 or more ([..., L, E], [..., S, E], [..., S, Ev])" +
                     inputs_str(q, k, v));
  if (q.size(-1) != k.size(-1))
    throw ShapeError(std::string(kOp) + ": q and k differ in their last dim (E: " + std::to_string(q.size(-1)) +
                     " vs " + std::to_string(k.size(-1)) + ")" + inputs_str(q, k, v));
  if (k.size(-2) != v.size(-2))
    throw ShapeError(std::string(kOp) + ": k and v differ in their number of keys (S: " + std::to_string(k.size(-2)) +
                     " vs " + std::to_string(v.size(-2)) + ")" + inputs_str(q, k, v));
  std::optional<Shape> batch = broadcast_shapes(batch_of(q), batch_of(k));
  if (batch) batch = broadcast_shapes(*batch, batch_of(v));
  if (!batch) throw ShapeError(std::string(kOp) + ": batch dims cannot be broadcast together" + inputs_str(q, k, v));
  batch->push_back(q.size(-2));
  batch->push_back(k.size(-2));
  return *batch;
}

// Key j of query i is kept where j <= i: [L, S], true on and below the
// diagonal. Made here as data (a ready input, like any other mask) rather
// than as a compare of two ranges: wok::arange is data too, cast to int64
// by a kernel of its own.
Tensor causal_keep(int64_t l, int64_t s, Device device) {
  std::vector<bool> keep(static_cast<size_t>(l * s));
  for (int64_t i = 0; i < l; ++i)
    for (int64_t j = 0; j <= i && j < s; ++j) keep[static_cast<size_t>(i * s + j)] = true;
  return from_vector(keep, {l, s}, device);
}

// softmax(scores, -1), but a row of all -inf (every key masked out) gives
// 0s rather than nan, as PyTorch's SDPA kernels do since 2.5 (its
// _safe_softmax; the formula in its documentation gives nan). The row max
// is floored at the lowest finite value and the row sum at the smallest
// normal one: neither floor moves a row that has a finite score (its max
// is above the first, its sum at least 1), and in a masked row each
// exp(-inf - lowest) is 0, so the row is 0 * (1 / tiny). A nan or +inf
// score still gives nan, as in wok::softmax. Both floors are per row, in
// the same row kernel.
Tensor safe_softmax(const Tensor& scores) {
  const bool f32 = scores.dtype() == DType::kFloat32;
  const double lowest = f32 ? std::numeric_limits<float>::lowest() : std::numeric_limits<double>::lowest();
  const double tiny = f32 ? std::numeric_limits<float>::min() : std::numeric_limits<double>::min();
  Tensor e = exp(scores - maximum(max(scores, {-1}, true), lowest));
  return e * reciprocal(maximum(sum(e, {-1}, true), tiny));
}

}  // namespace

Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask,
                                    bool is_causal, std::optional<double> scale) {
  WOK_CALLER_SCOPE();
  if (!q.defined() || !k.defined() || !v.defined())
    throw Error(std::string(kOp) + ": q, k or v is an undefined wok::Tensor");
  const Shape shape = scores_shape(q, k, v);
  if (is_causal && mask.defined())
    throw ArgumentError(std::string(kOp) + ": is_causal makes its own mask; pass either a mask or is_causal, not both");
  if (mask.defined()) {
    std::optional<Shape> both = broadcast_shapes(mask.shape(), shape);
    if (!both || *both != shape)
      throw ShapeError(std::string(kOp) + ": " + described("mask", mask) + " does not broadcast to the scores' shape " +
                       shape_str(shape) + " ([..., L, S])" + inputs_str(q, k, v));
    if (mask.dtype() != DType::kBool && !is_floating(mask.dtype()))
      throw DTypeError(std::string(kOp) +
                       ": mask must be bool (true = attend) or floating (added to the scores), got " +
                       described("mask", mask));
  }

  Tensor qf = q.astype(float_result_type(q.dtype()));
  Tensor kf = k.astype(float_result_type(k.dtype()));
  Tensor vf = v.astype(float_result_type(v.dtype()));
  const double s = scale.value_or(1.0 / std::sqrt(static_cast<double>(q.size(-1))));
  // k^T is read in place by the GEMM, and the scaling and the mask below
  // run in its epilogue.
  Tensor scores = matmul(qf, transpose(kf, -2, -1)) * s;
  constexpr double kNegInf = -std::numeric_limits<double>::infinity();
  if (is_causal) scores = where(causal_keep(shape[shape.size() - 2], shape.back(), q.device()), scores, kNegInf);
  if (mask.defined())
    scores = mask.dtype() == DType::kBool ? where(mask, scores, kNegInf) : scores + mask.astype(scores.dtype());
  return matmul(safe_softmax(scores), vf);
}

}  // namespace wok
