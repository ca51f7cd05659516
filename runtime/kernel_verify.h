// WOK_VERIFY_KERNELS=1: every CPU node kernel writes into guarded scratch
// outputs, and wok checks that it wrote exactly the bytes of the shape the
// op's shape rule inferred (Note [Verifying kernel outputs]).
#pragma once

#include "wok/runtime/kernel.h"

namespace wok {

struct FragmentNode;

// Whether kernel outputs are verified: set_verify_kernels_enabled's value,
// else WOK_VERIFY_KERNELS's (on when set, non-empty and not "0"). One
// relaxed load; executors test it once per node.
bool verify_kernels_enabled();
void set_verify_kernels_enabled(bool on);

// Runs `kernel` on `ctx` as Note [Verifying kernel outputs] describes and
// leaves its results at ctx.outputs' addresses. Throws wok::CheckError
// naming the op, the output, its inferred dtype and shape, the first bad
// offset and `node`'s call site (when given and known). CPU only: for any
// other device it just runs the kernel. Ops whose output aliases an input
// never get here (they run no kernel).
void run_kernel_verified(const KernelFn& kernel, const KernelContext& ctx, const FragmentNode* node);

// Note [Verifying kernel outputs]
// ~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~
// The first row of docs/troubleshooting.md: an output whose shape is not
// what you expected means a shape rule is wrong. The JIT trusts shape rules
// completely (it plans the arena from them), so a custom op whose rule and
// kernel disagree corrupts a neighbouring buffer or hands out garbage, and
// the symptom shows up far from the cause. Verification makes it fail at
// the node, naming the op.
//
// For each output with at least one element, run_kernel_verified allocates
// a scratch block from the caching allocator: a 64-byte canary zone, the
// interior (exactly the inferred nbytes, starting 64-byte aligned like any
// buffer), and a 64-byte canary zone right after the last byte, so a write
// one byte past the end already lands in it. Canaries are filled with one
// byte, the interior with pattern P1 (every byte 0xA5), and the kernel runs
// with its output refs pointing at the interiors. Then:
//   * a changed canary byte is a write outside the output: reported with the
//     offset of the first bad byte relative to the output's start (negative
//     before it, >= nbytes past it);
//   * an element (itemsize bytes) still equal to P1 may be unwritten, or the
//     kernel may really have produced those bits (0xA5A5A5A5 is a valid
//     float and int). Only then the interiors are refilled with P2 (0x5A),
//     the canaries with another byte, and the kernel runs again; an element
//     equal to P1 after the first run and to P2 after the second was written
//     by neither, so it is reported. Kernels are pure functions of their
//     inputs, and inputs are never the scratch blocks, so the second run
//     computes the same values; an in-place plan (output planned over an
//     input) is safe too, since the real outputs are written only at the end.
// Patterns and canaries are per byte and none is 0x00 or 0x01, so bool
// outputs (one byte, 0 or 1) never match them by accident. Finally the
// interiors are copied to the real output addresses, so results are the
// same as without verification.
//
// Covered: CPU node kernels in both executors, the precompiled one
// (run_node_kernel in runtime/executor.cpp) and the JIT's unfused node steps
// (run_node_step in jit/plan_replay.cpp), built-in and custom alike. Not
// covered: fused JIT kernels, which are wok's own generated code over shapes
// the planner computed and are checked against the precompiled kernels by
// shadow mode (WOK_SHADOW) and the test suite instead; CUDA kernels, whose
// outputs are device memory this host-side check cannot fill or read without
// copies and a sync per node; zero-element outputs (nothing to write); ops
// with output_aliases_input (no kernel runs). A write further than 64 bytes
// outside the output that skips the canary zones is not seen.
//
// Cost when off: one relaxed load per node. When on: the scratch blocks, a
// fill and a scan of every output, a copy, and a second kernel run only for
// outputs holding P1 elements.

}  // namespace wok
