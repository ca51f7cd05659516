// A scalar program in its compute dtypes: what a code generator emits for
// a program that stores half types or narrow integers (Note [Programs in
// their compute dtypes]). The x86 JIT (jit/x86/) and the CUDA renderers
// (runtime/cuda/formula_source.cpp) both work from it, so the two agree on
// where a value is rounded or wrapped.
#pragma once

#include <cstdint>

#include "wok/runtime/scalar_formula.h"

namespace wok {

// Note [Programs in their compute dtypes]
// A value of a storage dtype (float16, bfloat16, int8, uint8, int16,
// uint16, uint32) is computed in its compute dtype (compute_dtype in
// runtime/dtype.h), as the widening adapter computes a precompiled op
// (Note [The widening adapter] in runtime/widening.h):
//  - Half types: an input is read, then widened to float32 (exact); every
//    op is its float32 op; a cast to a half type rounds there (the cast,
//    then a cast back to float32); an output is rounded once, when stored.
//    So a fused chain rounds its outputs only (docs/numerics.md).
//  - Integers narrower than their compute dtype: an input is widened
//    (sign- or zero-extended); every op is its int32 (uint32: int64) op,
//    followed by a wrap to the narrow type (the cast to it and back), so a
//    fused chain gives the bits of the same ops run one at a time.
// In the result, a storage dtype appears only as the dtype of an input, of
// a cast, or of a cast's operand; every other value is a compute dtype.
// An output of a storage dtype is a cast marked kCastRoundedByTheStore.
ScalarProgram compute_program(const ScalarProgram& program);

// ScalarInstr::index of the cast compute_program puts before an output of
// a storage dtype: a cast that only feeds the store. The x86 generator lets
// the store do its rounding (each conversion costs: vcvtps2ph on a zmm is a
// two-cycle instruction on Zen 4); a CUDA kernel stores the cast's value.
inline constexpr int32_t kCastRoundedByTheStore = 1;

// Whether `program` has a value of a dtype compute_program changes.
bool has_storage_dtype(const ScalarProgram& program);

}  // namespace wok
