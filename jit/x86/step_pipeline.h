// Software pipelining of a loop's step across two iterations, on the
// emitted instructions (row_codegen.cpp uses it for its exp passes).
//
// Note [Software-pipelined steps]
// A float32 exp is a chain of about 50 cycles of dependent instructions
// (a clamp, the reduction by ln2, six multiply-adds of the polynomial, the
// scaling). In a loop of exps (softmax's second pass) the out-of-order
// core must keep many vectors' chains in flight to use its two FMA pipes,
// and its scheduler holds only a few: on a Zen 5 EPYC the pass ran at 6.6
// cycles per 16 values where the pipes alone allow 4.5. Reordering the
// loop's body so that each iteration starts the next step's first half
// (the loads and the reduction) and finishes the current step's second
// half (the polynomial, the stores, the accumulations) puts instructions
// whose inputs are already computed first in program order: the same
// standalone loop took 5.1 cycles. The arithmetic is the same instructions
// on the same values, so the results are the same bits. In the JIT, softmax
// over [128, 4096] in cache went from 0.171-0.183 to 0.152-0.162 ns per
// element (float16, 1 thread) and float32 from 0.174-0.188 to 0.165-0.169
// (old and new library alternating in one probe).
//
// On AVX2 a row kernel interleaves its copies instead (Note [Loop
// constants on AVX2] in vec_emitter.cpp): with 16 registers the pipelined
// loop used all of them, and the copies that carry values to the next
// iteration and the constants it reloaded every vector cost more than the
// reordering gained (the float16 softmax's exp loop: 22.5 vector
// instructions per vector pipelined, 18 interleaved, and 15% fewer cycles).
//
// The generator emits the step three times, each recorded by a
// StepRecorder, copy by copy (the unrolled vectors of a step): before the
// loop (the prologue), as the loop's body, and after it (the epilogue).
// pipeline_step then cuts each copy in the middle of its instructions
// (stage A, then stage B) and rewrites:
//   prologue: stage A only, then copies of the values B needs (the carried
//             registers) into registers of their own;
//   body:     every copy's stage A, reading `columns` further along the row
//             (memory operands indexed by the column register), then every
//             copy's stage B reading the carried copies, then the new
//             values copied into them for the next iteration;
//   epilogue: stage B only, reading the carried copies.
// So the loop must be entered only with two steps left (the prologue's and
// the body's first), and the epilogue finishes the last step begun. The
// three emissions are the same code, so their instructions match one to
// one; registers are matched by position.
//
// It declines (returns false and changes nothing) when the step has
// control flow, when the emissions differ, when a register other than a
// vector register would be carried (a general register, or an AVX-512 mask:
// asmjit's allocator refused the copies of those), when a copy's stage A
// reads a value an earlier copy's stage B computes, or when a register
// from outside the step that it writes (an accumulator) is named in both
// stages: a step of several row phases (Note [Rows in flight] in
// row_codegen.cpp) can put an accumulator's add in stage A and its
// write-back in stage B, and the next step's add would read the sum
// before the write-back (its sums came out near double). The caller then deletes the prologue and keeps
// the body and epilogue as ordinary steps, which is correct as they are.
#pragma once

#include <asmjit/x86.h>

#include <vector>

namespace wok::jit::x86 {

namespace ax = asmjit::x86;

// One emission of a step: each copy's instruction nodes in order, and the
// first virtual register index the emission could have created.
struct EmittedStep {
  std::vector<std::vector<asmjit::BaseNode*>> copies;
  uint32_t first_local = 0;
};

// Records what the emitter adds between start() and finish(), split at
// each copy_done().
class StepRecorder {
 public:
  explicit StepRecorder(ax::Compiler& cc) : cc_(cc) {}
  void start();
  void copy_done();
  EmittedStep finish();

 private:
  ax::Compiler& cc_;
  asmjit::BaseNode* mark_ = nullptr;
  EmittedStep step_;
};

// Note [Software-pipelined steps]. `column` indexes the memory operands
// that move with the step; `columns` is the step's width in elements.
bool pipeline_step(ax::Compiler& cc, const EmittedStep& prologue, const EmittedStep& body, const EmittedStep& epilogue,
                   const ax::Gp& column, int columns);

// Removes an emission's nodes (the prologue when pipeline_step declines).
void remove_step(ax::Compiler& cc, const EmittedStep& step);

}  // namespace wok::jit::x86
