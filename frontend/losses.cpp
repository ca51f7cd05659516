#include "wok/frontend/losses.h"

#include "wok/frontend/creation.h"
#include "wok/frontend/dispatch.h"
#include "wok/frontend/nn.h"
#include "wok/frontend/ops.h"

namespace wok {

// The class of each position is picked with a one-hot mask over the class
// dim (target == 0..C-1) and a sum along it: elementwise work the JIT fuses
// with the reduction, and no gather, so any target value is safe to read.
Tensor nll_loss(const Tensor& input, const Tensor& target, const Tensor& weight, LossReduction reduction,
                std::optional<int64_t> ignore_index) {
  WOK_CALLER_SCOPE();
  if (input.ndim() < 2)
    throw ShapeError("nll_loss: input must be [N, C, ...], got " + shape_str(input.shape()));
  if (!is_floating(input.dtype()))
    throw DTypeError("nll_loss: input must be float32 or float64, got " + std::string(dtype_name(input.dtype())));
  if (target.dtype() != DType::kInt32 && target.dtype() != DType::kInt64)
    throw DTypeError("nll_loss: target must be int32 or int64, got " + std::string(dtype_name(target.dtype())));
  Shape expected_target = input.shape();
  expected_target.erase(expected_target.begin() + 1);
  if (target.shape() != expected_target)
    throw ShapeError("nll_loss: target " + shape_str(target.shape()) + " does not fit input " +
                     shape_str(input.shape()) + " (expected " + shape_str(expected_target) + ")");
  const int64_t classes = input.shape()[1];
  if (weight.defined() && weight.shape() != Shape{classes})
    throw ShapeError("nll_loss: weight " + shape_str(weight.shape()) + " must be [" + std::to_string(classes) + "]");

  // [1, C, 1, ..] so that it broadcasts against the input.
  Shape class_shape(static_cast<size_t>(input.ndim()), 1);
  class_shape[1] = classes;
  Shape target_shape = target.shape();
  target_shape.insert(target_shape.begin() + 1, 1);
  const Tensor classes_iota = arange(0, static_cast<double>(classes), 1, DType::kInt64).reshape(class_shape);
  const Tensor onehot = eq(target.astype(DType::kInt64).reshape(target_shape), classes_iota);
  const Tensor picked = sum(where(onehot, input, Scalar(0.0)), {1});
  Tensor w = weight.defined() ? sum(where(onehot, weight.astype(input.dtype()).reshape(class_shape), Scalar(0.0)), {1})
                              : ones(expected_target, input.dtype());
  if (ignore_index) w = where(ne(target, Scalar(*ignore_index)), w, Scalar(0.0));
  const Tensor loss = neg(picked * w);
  switch (reduction) {
    case LossReduction::kNone: return loss;
    case LossReduction::kSum: return sum(loss);
    case LossReduction::kMean: return sum(loss) / sum(w);
  }
  throw ArgumentError("nll_loss: unknown reduction");
}

Tensor cross_entropy(const Tensor& scores, const Tensor& target, const Tensor& weight, LossReduction reduction,
                     std::optional<int64_t> ignore_index) {
  WOK_CALLER_SCOPE();
  if (scores.ndim() < 2)
    throw ShapeError("cross_entropy: scores must be [N, C, ...], got " + shape_str(scores.shape()));
  return nll_loss(log_softmax(scores, 1), target, weight, reduction, ignore_index);
}

}  // namespace wok
