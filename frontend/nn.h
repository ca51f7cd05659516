// Neural-network functions written as compositions of the primitive ops, so
// the JIT sees (and fuses) their parts.
#pragma once

#include "wok/frontend/tensor.h"

namespace wok {

// exp(x - max) / sum(exp(x - max)) along `axis`.
Tensor softmax(const Tensor& x, int64_t axis = -1);
// x - max - log(sum(exp(x - max))) along `axis`.
Tensor log_softmax(const Tensor& x, int64_t axis = -1);
// (x - mean) / sqrt(var + eps) over the last dim, then * weight + bias when
// they are defined (shape [last dim]).
Tensor layer_norm(const Tensor& x, const Tensor& weight = {}, const Tensor& bias = {}, double eps = 1e-5);
// x / sqrt(mean(x^2) + eps) over the last dim, then * weight when defined.
Tensor rms_norm(const Tensor& x, const Tensor& weight = {}, double eps = 1e-6);

}  // namespace wok
