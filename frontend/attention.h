// Scaled dot-product attention as PyTorch's
// torch.nn.functional.scaled_dot_product_attention defines it, written as
// matmul, softmax and a mask, so that under the JIT it is three kernels:
// q k^T with the scaling (and a floating mask) in its epilogue, the
// softmax row kernel (which applies a bool mask), and the matmul with v.
// The causal mask is made as data for the call's L and S, so a
// wok::compile'd function traces again for each new length rather than
// deriving its plan (pass a mask as an input to keep the sizes symbolic).
#pragma once

#include <optional>

#include "wok/frontend/tensor.h"

namespace wok {

// softmax(q k^T * scale + bias, -1) v for q [..., L, E], k [..., S, E],
// v [..., S, Ev] -> [..., L, Ev]; the batch dims broadcast as in matmul.
// scale defaults to 1 / sqrt(E). The bias comes from
//  - `mask`, broadcast (one way) to [..., L, S]: a bool mask keeps the
//    scores where it is true (true = attend) and sets the others to -inf;
//    a floating mask is added to the scores (in their dtype);
//  - or is_causal: query i attends to keys j <= i (the mask's top-left
//    corner, PyTorch's tril, also when L != S); not with a mask.
// A query whose keys are all masked out (its scores all -inf) gets 0s, as
// PyTorch's kernels give since 2.5 (the formula in PyTorch's documentation,
// and wok::softmax, give nan there); a nan or +inf score still gives nan.
// Integer inputs compute in floating point as softmax does.
Tensor scaled_dot_product_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& mask = {},
                                    bool is_causal = false, std::optional<double> scale = std::nullopt);

}  // namespace wok
