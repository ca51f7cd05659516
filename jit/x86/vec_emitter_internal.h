// Helpers shared by VecEmitter's definitions, which are split by job over
// vec_emitter.cpp (constants, memory, arithmetic, bits),
// vec_emitter_masks.cpp and vec_emitter_lanes.cpp; not part of its interface.
#pragma once

#include "wok/jit/x86/vec_emitter.h"

namespace wok::jit::x86 {

using asmjit::Operand;
using Id = ax::Inst::Id;
namespace I = ax::Inst;

namespace vec_internal {
// float16 and bfloat16 values are float32 in registers (Note [Half types in registers]).
inline bool is_f32(DType t) { return t == DType::kFloat32 || is_half(t); }
inline bool is_f64(DType t) { return t == DType::kFloat64; }
inline bool wide(DType t) { return VecEmitter::lane_width(t) == 8; }

// Picks the instruction for a dtype: float32, float64, 32-bit int, 64-bit int.
inline Id pick(DType t, Id ps, Id pd, Id d, Id q) {
  if (is_f32(t)) return ps;
  if (is_f64(t)) return pd;
  return wide(t) ? q : d;
}
}  // namespace vec_internal

}  // namespace wok::jit::x86
