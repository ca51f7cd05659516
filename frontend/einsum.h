// Einstein summation with ONNX Einsum's (and NumPy's) semantics.
#pragma once

#include <string_view>
#include <vector>

#include "wok/frontend/tensor.h"

namespace wok {

// einsum("ij,jk->ik", {a, b}) is matmul(a, b). The equation names each
// operand's dims with letters (a-z, A-Z), one term per operand separated
// by commas, and optionally the output's after "->":
//  - without "->" the output has the letters that appear exactly once, in
//    alphabetical order (upper case first), after the "..." dims;
//  - a letter repeated within one term takes that operand's diagonal
//    ("ii->i", "...ii->...i");
//  - letters missing from the output are summed over;
//  - "..." stands for the dims no letter names; those of all operands
//    broadcast together (NumPy's rules) and lead the implicit output. An
//    explicit output without "..." sums them.
// Dims of size 1 broadcast against the other operands' sizes of the same
// letter. Lowering (Note [Einsum lowering] in frontend/einsum.cpp): letters
// only one operand has and the output lacks are summed first; two operands
// with a summed letter in common contract through one matmul, batched over
// the letters they share and keep, with operands in transposed order read
// in place by the GEMM; pairs that keep no letter of their own (dot
// products) multiply and sum, and pairs with nothing to sum multiply. With
// more than two operands, the pair whose result is smallest contracts
// first. The result's dtype is the operands' promotion (bool: int32, as in
// matmul; integer sums wrap in it). Spaces are ignored. Errors name the
// equation and the operands' shapes.
Tensor einsum(std::string_view equation, const std::vector<Tensor>& operands);

}  // namespace wok
