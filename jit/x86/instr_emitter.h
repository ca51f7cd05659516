// Emits one instruction of a scalar program that computes from values
// already in registers: every op except inputs (which each generator loads
// its own way), reductions and the row length (row kernels).
#pragma once

#include <vector>

#include "wok/jit/fused_kernel.h"
#include "wok/jit/x86/vec_emitter.h"

namespace wok::jit::x86 {

ax::Vec emit_value_instr(VecEmitter& e, const ScalarProgram& program, const ScalarInstr& in,
                         const std::vector<ax::Vec>& values);

bool is_transcendental(ScalarOp op);

// Elements per vector step for `spec` (Note [Lanes and registers]).
int choose_lanes(const FusedKernelSpec& spec, bool avx512);

// Copies nbytes bytes from src to dst, eight at a time, then one at a time
// (kernel tails only: at most a vector).
void emit_byte_copy(ax::Compiler& cc, const ax::Gp& dst, const ax::Gp& src, const ax::Gp& nbytes);

// log2 of the element size: the index scale for addressing.
inline int shift_of(DType t) { return itemsize(t) == 1 ? 0 : itemsize(t) == 4 ? 2 : 3; }

}  // namespace wok::jit::x86
