// Transcendental functions as inline vector code: the same sequences as
// runtime/kernels/cpu/vec_math.h, instruction for operation, from the same
// constants, so JIT and precompiled kernels agree bitwise.
#pragma once

#include "wok/jit/x86/vec_emitter.h"

namespace wok::jit::x86 {

// nonpositive: x is known to be <= 0 or nan (Note [Nonpositive exp
// arguments] in instr_emitter.cpp), so the upper clamp is skipped.
ax::Vec emit_exp(VecEmitter& e, DType t, const ax::Vec& x, bool nonpositive = false);
ax::Vec emit_log(VecEmitter& e, DType t, const ax::Vec& x);
ax::Vec emit_tanh(VecEmitter& e, DType t, const ax::Vec& x);
ax::Vec emit_sin(VecEmitter& e, DType t, const ax::Vec& x);  // float32 computes in float64
ax::Vec emit_cos(VecEmitter& e, DType t, const ax::Vec& x);
ax::Vec emit_erf(VecEmitter& e, DType t, const ax::Vec& x);
ax::Vec emit_pow(VecEmitter& e, DType t, const ax::Vec& a, const ax::Vec& b);  // float32 via float64


}  // namespace wok::jit::x86
