// Classification losses (PyTorch's nll_loss and cross_entropy, ONNX's
// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss).
#pragma once
#include <optional>
#include "wok/frontend/tensor.h"

namespace wok {

enum class LossReduction { kNone, kMean, kSum };

// input [N, C, d1, ..] holds log-probabilities, target [N, d1, ..] class
// indices (int32 or int64). Each position's loss is
//   -input[n, target, d..] * weight[target]
// (weight [C] defaults to ones), and 0 where target == ignore_index. kMean
// divides the sum by the sum of the weights used (PyTorch and ONNX), so a
// batch that ignores every position gives nan. A target outside [0, C)
// that is not ignore_index selects nothing (loss 0).
Tensor nll_loss(const Tensor& input, const Tensor& target, const Tensor& weight = {},
                LossReduction reduction = LossReduction::kMean, std::optional<int64_t> ignore_index = std::nullopt);

// nll_loss of log_softmax(scores) over the class dim (dim 1).
Tensor cross_entropy(const Tensor& scores, const Tensor& target, const Tensor& weight = {},
                     LossReduction reduction = LossReduction::kMean,
                     std::optional<int64_t> ignore_index = std::nullopt);

}  // namespace wok
