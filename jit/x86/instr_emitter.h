// Emits one instruction of a scalar program that computes from values
// already in registers: every op except inputs (which each generator loads
// its own way), reductions and the row length (row kernels).
#pragma once

#include <vector>

#include "wok/jit/fused_kernel.h"
#include "wok/jit/x86/vec_emitter.h"
#include "wok/runtime/compute_program.h"

namespace wok::jit::x86 {

ax::Vec emit_value_instr(VecEmitter& e, const ScalarProgram& program, const ScalarInstr& in,
                         const std::vector<ax::Vec>& values);

// Whether instruction v, an exp, may take the half-grade exp (Note
// [Half-grade exp] in instr_emitter.cpp): it is summed along the row and
// its value reaches only casts to a half type through products and
// quotients.
bool half_grade_exp(const ScalarProgram& program, int32_t v);

// Whether the emitter of `op` handles results of dtype t (the rest run on
// the precompiled kernels: integer pow, float fmod, int64 division), and
// whether it computes them in float64 lanes (a half type as float32 does).
bool emits(ScalarOp op, DType t);
bool computes_in_float64(ScalarOp op, DType t);

// Elements per vector step for `spec` (Note [Lanes and registers]).
int choose_lanes(const FusedKernelSpec& spec, bool avx512);

// Copies nbytes bytes from src to dst, eight at a time, then one at a time
// (kernel tails only: at most a vector).
void emit_byte_copy(ax::Compiler& cc, const ax::Gp& dst, const ax::Gp& src, const ax::Gp& nbytes);

// A tail's `count` elements of `t` between memory at `at` and a stack bounce
// buffer: into the buffer before the tail's loads (kIn), out of it after its
// stores (kOut).
enum class BounceCopy { kIn, kOut };
void emit_bounce_copy(ax::Compiler& cc, BounceCopy direction, const ax::Mem& bounce, const ax::Mem& at,
                      const ax::Gp& count, DType t);

// Reductions of the row and column kernels (sum, prod, max, min): the
// identity to start an accumulator from, and acc = op(acc, v) in place
// (max and min propagate nan; `acc` is a register the caller owns).
ax::Vec reduction_identity(VecEmitter& e, ScalarOp op, DType t);
void emit_accumulate(VecEmitter& e, ScalarOp op, DType t, const ax::Vec& acc, const ax::Vec& v);

// log2 of the element size: the index scale for addressing.
inline int shift_of(DType t) { return itemsize(t) == 1 ? 0 : itemsize(t) == 2 ? 1 : itemsize(t) == 4 ? 2 : 3; }

}  // namespace wok::jit::x86
