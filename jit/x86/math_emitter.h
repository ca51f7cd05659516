// Transcendental functions as inline vector code: the same sequences as
// runtime/kernels/cpu/vec_math.h, instruction for operation, from the same
// constants, so JIT and precompiled kernels agree bitwise.
#pragma once

#include "wok/jit/x86/vec_emitter.h"

namespace wok::jit::x86 {

// What the emitter knows of an exp's argument and result.
struct ExpUse {
  // x is known to be <= 0 or nan (Note [Nonpositive exp arguments] in
  // instr_emitter.cpp): the upper clamp is skipped, and on AVX2 2^n is one
  // factor (Note [One-factor exp scaling] in math_emitter.cpp).
  bool nonpositive = false;
  // The result reaches only half-type outputs (Note [Half-grade exp] in
  // instr_emitter.cpp): the shorter reduction and polynomial (float32 only).
  bool half_grade = false;
};
ax::Vec emit_exp(VecEmitter& e, DType t, const ax::Vec& x, ExpUse use = {});
ax::Vec emit_log(VecEmitter& e, DType t, const ax::Vec& x);
ax::Vec emit_tanh(VecEmitter& e, DType t, const ax::Vec& x);
ax::Vec emit_sin(VecEmitter& e, DType t, const ax::Vec& x);  // float32 computes in float64
ax::Vec emit_cos(VecEmitter& e, DType t, const ax::Vec& x);
ax::Vec emit_erf(VecEmitter& e, DType t, const ax::Vec& x);
ax::Vec emit_pow(VecEmitter& e, DType t, const ax::Vec& a, const ax::Vec& b);  // float32 via float64


}  // namespace wok::jit::x86
