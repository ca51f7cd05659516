// Code generation for row kernels (Note [Row kernels] in jit/fused_kernel.h).
//
// void kernel(const KernelArgs* args, int64 row_begin, int64 row_end):
//   per-call values (constants, params, the row length)
//   split row_begin into a multi-index over the outer dims once
//   per row:
//     point each operand at column col_begin of the row
//     per-row values (inputs broadcast along the row)
//     per phase: walk the row in blocks of vectors, computing what the
//       phase's reductions and full outputs need; fold each block's vector
//       accumulators into a running one (blocked summation); reduce across
//       lanes; then the values that needed the reductions, and one-per-row
//       outputs
// The schedule (phases, per-row values, spills) is computed in
// row_schedule.cpp; this file emits the machine code for it. A phase that
// computes a transcendental runs its loop software-pipelined (Note
// [Software-pipelined steps] in step_pipeline.h).
#include <algorithm>
#include <map>
#include <memory>
#include <set>

#include "wok/jit/x86/argmax_emitter.h"
#include "wok/jit/x86/instr_emitter.h"
#include "wok/jit/x86/row_schedule.h"
#include "wok/jit/x86/row_tail.h"
#include "wok/jit/x86/step_pipeline.h"
#include "wok/jit/x86/x86_codegen.h"
#include "wok/runtime/error.h"

namespace wok::jit::x86 {

namespace {

using asmjit::Label;

// Columns per block: vector accumulators never add up more than this many
// values before they are folded into the row's running total.
constexpr int kBlockColumns = 1024;

// Note [Next row prefetch]
// A kernel of several phases (softmax: max, exp and sum, division;
// layer_norm: mean, variance, output) reads its row from memory in phase 0
// and works in cache after that; the hardware prefetcher follows demand
// reads, so once phase 0 is done nothing fetches the next row until the
// kernel asks for it, and the later phases do not overlap with memory. So
// one phase asks for the next row of each input that differs from row to
// row, one prefetcht1 per 64 bytes it walks: into L2, since prefetcht0
// made the next row compete with the current one and its output for L1
// (float32 layer_norm over [4096, 4096] got 14% slower). The phase is the
// one with the most work (RowSchedule::choose_loops): its time is what the
// fetch hides behind. It was the last phase, which in softmax is a
// multiply per element, too short for a row's worth of misses.
//
// Stores miss too: a row's first store to a line of the output reads that
// line from memory first, and the stores of a phase wait on those reads.
// So the phase before the first one to write an output's row (the phase
// that spills into it, Note [Spilled values], or the output's own) asks
// for the same columns of that row with prefetchw, and the reads overlap
// that phase's work.
//
// Measured on a Zen 5 EPYC (AVX-512), softmax over [4096, 4096], ns per
// element, 1 / 2 threads, the old and new library alternating in one
// probe: float32 0.34 / 0.25 -> 0.27 / 0.21, float16 0.30 / 0.18 -> 0.21 /
// 0.13, bfloat16 0.28 / 0.17 -> 0.23 / 0.14. The address past the last
// row is never loaded: a prefetch does not fault.

class RowKernelGenerator {
 public:
  RowKernelGenerator(const FusedKernelSpec& spec, ax::Compiler& cc, bool avx512)
      : spec_(spec), cc_(cc), e_(cc, avx512, choose_lanes(spec, avx512)), sched_(spec) {}

  void generate();

 private:
  const ScalarInstr& instr(int i) const { return spec_.program.instrs[i]; }
  int num_operands() const { return spec_.num_inputs() + spec_.num_outputs(); }
  DType operand_dtype(int k) const {
    return k < spec_.num_inputs() ? spec_.input_dtypes[k] : spec_.output_dtype(k - spec_.num_inputs());
  }
  bool streams(int k) const {
    if (k < spec_.num_inputs()) return !spec_.inner_broadcast(k);
    return !spec_.output_row_scalar[k - spec_.num_inputs()];
  }

  ax::Vec load_input(const ScalarInstr& in, const ax::Gp& j, int offset, bool bounce);
  void emit_row_level(int avail);
  void emit_phase(int phase);
  void emit_prefetches(int phase, const ax::Gp& j, int columns);
  bool has_short_path() const;
  void emit_short_row();
  void emit_elements(const std::vector<int>& needed, const ax::Gp& j, int offset, bool bounce);
  ax::Mem spill_slot(int v, const ax::Gp& j, int offset, bool bounce) const;
  ax::Vec identity(ScalarOp op, DType t) { return reduction_identity(e_, op, t); }
  // acc (a register this generator owns) = op(acc, v), nan-propagating.
  void accumulate(int r, const ax::Vec& acc, const ax::Vec& v) {
    emit_accumulate(e_, instr(r).op, instr(r).dtype, acc, v);
  }
  ax::Vec finish_reduction(int r, const ax::Vec& acc);
  // argmax (Note [Generated argmax]): the type it compares, and its result
  // (the index, in lane 0 as int64) from the row's accumulator.
  DType argmax_input(int r) const { return instr(instr(r).args[0]).dtype; }
  ax::Vec finish_argmax(int r, ArgmaxEmitter& am, const ArgmaxAcc& acc);

  const FusedKernelSpec& spec_;
  ax::Compiler& cc_;
  VecEmitter e_;
  const RowSchedule sched_;
  int phase_ = 0;  // the phase being emitted
  std::vector<ax::Vec> values_;
  std::vector<ax::Gp> base_, run_ptr_;
  // Per input, the next row's address where it is prefetched (Note [Next
  // row prefetch]), else an invalid register.
  std::vector<ax::Gp> next_row_ptr_;
  std::vector<ax::Gp> scratch_row_;  // per scratch slot: the column-0 address of its row
  std::vector<ax::Mem> bounce_;
  std::unique_ptr<RowTail> tail_;  // the call's tail masks (Note [Masked row tails])
  ax::Gp args_, params_, shape_, len_, col0_;
  std::map<int, ax::Vec> argmax_best_;  // per argmax: the winning value, lane 0
};

ax::Mem RowKernelGenerator::spill_slot(int v, const ax::Gp& j, int offset, bool bounce) const {
  const DType t = instr(v).dtype;
  const int disp = offset * static_cast<int>(itemsize(t));
  // Scratch types load and store masked: no bounce buffer.
  if (sched_.scratch_slot(v) >= 0) return ax::ptr(scratch_row_[sched_.scratch_slot(v)], j, shift_of(t), disp);
  const int k = spec_.num_inputs() + sched_.spill_to(v);
  if (bounce && !RowTail::masked(t)) return bounce_[k];
  return ax::ptr(run_ptr_[k], j, shift_of(t), disp);
}

ax::Vec RowKernelGenerator::load_input(const ScalarInstr& in, const ax::Gp& j, int offset, bool bounce) {
  const DType t = in.dtype;
  if (in.index >= spec_.num_inputs()) return e_.broadcast_load(t, ax::ptr(params_, 8 * (in.index - spec_.num_inputs())));
  if (spec_.inner_broadcast(in.index)) return e_.broadcast_load(t, ax::ptr(run_ptr_[in.index]));
  if (bounce && !RowTail::masked(t)) return e_.load(t, bounce_[in.index]);
  if (bounce) return tail_->load(t, ax::ptr(run_ptr_[in.index], j, shift_of(t)));
  return e_.load(t, ax::ptr(run_ptr_[in.index], j, shift_of(t), offset * static_cast<int>(itemsize(t))));
}

// Row-level values (not varying along the row) that exist from phase
// `avail` on, in program order.
void RowKernelGenerator::emit_row_level(int avail) {
  const auto& ins = spec_.program.instrs;
  for (size_t i = 0; i < ins.size(); ++i) {
    if (sched_.elem(i) || sched_.per_call(i) || is_reduction(ins[i].op) || sched_.avail(i) != avail) continue;
    values_[i] = ins[i].op == ScalarOp::kInput ? load_input(ins[i], ax::Gp(), 0, false)
                                               : emit_value_instr(e_, spec_.program, ins[i], values_);
  }
  for (int o = 0; o < spec_.num_outputs(); ++o) {
    int v = spec_.program.outputs[o];
    if (!spec_.output_row_scalar[o] || sched_.avail(v) != avail) continue;
    // An unset register here would be encoded as an invalid one and fault
    // at run time (random program 2002482, a row of length 1): refuse.
    if (!values_[v].isValid())
      throw Error("row kernel: output " + std::to_string(o) + " is one value per row but varies along it (internal error)");
    e_.store_lane0(spec_.output_dtype(o), ax::ptr(run_ptr_[spec_.num_inputs() + o]), values_[v]);
    if (instr(v).op == ScalarOp::kReduceArgmax) {
      // A chunk of a split row: the runtime compares the chunks' values.
      Label skip = cc_.newLabel();
      ax::Gp slots = cc_.newIntPtr("partial_values");
      cc_.mov(slots, ax::ptr(args_, offsetof(KernelArgs, partial_values)));
      cc_.test(slots, slots);
      cc_.jz(skip);
      e_.store_lane0(argmax_input(v), ax::ptr(slots, 8 * o), argmax_best_.at(v));
      cc_.bind(skip);
    }
  }
}

void RowKernelGenerator::emit_elements(const std::vector<int>& needed, const ax::Gp& j, int offset, bool bounce) {
  for (int i : needed) {
    const DType t = instr(i).dtype;
    const bool masked = bounce && RowTail::masked(t);
    if (sched_.reloaded(i, phase_)) values_[i] = masked ? tail_->load(t, spill_slot(i, j, offset, bounce))
                                                        : e_.load(t, spill_slot(i, j, offset, bounce));
    else if (instr(i).op == ScalarOp::kInput) values_[i] = load_input(instr(i), j, offset, bounce);
    else values_[i] = emit_value_instr(e_, spec_.program, instr(i), values_);
    if (sched_.spilled(i) && sched_.spill_phase(i) == phase_) {
      if (masked) tail_->store(t, spill_slot(i, j, offset, bounce), values_[i]);
      else e_.store(t, spill_slot(i, j, offset, bounce), values_[i]);
    }
  }
}

ax::Vec RowKernelGenerator::finish_reduction(int r, const ax::Vec& acc) {
  const ScalarInstr& in = instr(r);
  DType t = in.dtype;
  ax::Vec v = e_.reduce_lanes(in.op, t, acc);
  if (is_floating(t) && (in.op == ScalarOp::kReduceMax || in.op == ScalarOp::kReduceMin)) {
    // The lane instructions drop nans; a nan in any lane makes the result
    // nan. A test and a rarely taken branch, not a second lane reduction:
    // on short rows the finish is a large part of the row's work.
    Mask nan = e_.is_nan(t, acc);
    Label clean = cc_.newLabel();
    if (e_.avx512()) cc_.kortestq(nan.k, nan.k);
    else cc_.vptest(nan.v, nan.v);
    cc_.jz(clean);
    cc_.vmovaps(v, e_.const_vec(t, std::numeric_limits<double>::quiet_NaN()));
    cc_.bind(clean);
  }
  return v;
}

ax::Vec RowKernelGenerator::finish_argmax(int r, ArgmaxEmitter& am, const ArgmaxAcc& acc) {
  ArgmaxAcc w = am.reduce_lanes(acc);
  argmax_best_[r] = w.best;
  // No lane took an element: every element equals the identity, and the
  // first one (column col0) wins.
  ax::Gp i = cc_.newInt64("argmax");
  if (am.index_dtype() == DType::kInt32) {
    e_.lane0_to_gpr(i.r32(), w.index);
    cc_.cmp(i.r32(), static_cast<int32_t>(argmax_no_index(argmax_input(r))));
  } else {
    ax::Gp none = cc_.newInt64("no_index");
    e_.lane0_to_gpr(i, w.index);
    cc_.mov(none, argmax_no_index(argmax_input(r)));
    cc_.cmp(i, none);
  }
  cc_.cmove(i, col0_);
  ax::Xmm out = cc_.newXmm();
  cc_.vmovq(out, i);
  return out;
}

// Note [Next row prefetch]: one prefetch per 64 bytes of the `columns`
// columns from j on, of each operand this phase fetches ahead.
void RowKernelGenerator::emit_prefetches(int phase, const ax::Gp& j, int columns) {
  auto each_line = [&](int k, const ax::Gp& row, bool write) {
    const DType t = operand_dtype(k);
    const int bytes = columns * static_cast<int>(itemsize(t));
    for (int b = 0; b < bytes; b += 64) {
      const ax::Mem at = ax::ptr(row, j, shift_of(t), b);
      if (write) cc_.prefetchw(at);
      else cc_.prefetcht1(at);
    }
  };
  if (phase == sched_.prefetch_phase())
    for (int k = 0; k < spec_.num_inputs(); ++k)
      if (next_row_ptr_[k].isValid()) each_line(k, next_row_ptr_[k], false);
  for (int o = 0; o < spec_.num_outputs(); ++o)
    if (!spec_.output_row_scalar[o] && sched_.first_write_phase(o) == phase + 1)
      each_line(spec_.num_inputs() + o, run_ptr_[spec_.num_inputs() + o], true);
}

void RowKernelGenerator::emit_phase(int phase) {
  const auto& ins = spec_.program.instrs;
  const int lanes = e_.lanes();
  std::vector<int> reductions, argmaxes;
  for (size_t i = 0; i < ins.size(); ++i)
    if (is_reduction(ins[i].op) && sched_.accum_phase(i) == phase)
      (ins[i].op == ScalarOp::kReduceArgmax ? argmaxes : reductions).push_back(static_cast<int>(i));
  std::vector<int> outputs;  // full outputs written in this phase
  for (int o = 0; o < spec_.num_outputs(); ++o)
    if (!spec_.output_row_scalar[o] && sched_.avail(spec_.program.outputs[o]) == phase) outputs.push_back(o);
  if (reductions.empty() && argmaxes.empty() && outputs.empty()) return;

  // Per-element instructions the sinks depend on, in program order.
  phase_ = phase;
  const std::vector<bool> need = sched_.phase_need(phase);
  std::vector<int> needed;
  for (size_t i = 0; i < ins.size(); ++i)
    if (need[i] && sched_.elem(i) && !is_reduction(ins[i].op)) needed.push_back(static_cast<int>(i));

  // Accumulators: `unroll` per reduction inside a block, one for the row.
  const int unroll = sched_.unroll(phase);
  std::map<int, std::vector<ax::Vec>> block_acc;
  std::map<int, ax::Vec> row_acc;
  for (int r : reductions) {
    row_acc[r] = e_.new_vec(ins[r].dtype);
    cc_.vmovaps(row_acc[r], identity(ins[r].op, ins[r].dtype));
    for (int u = 0; u < unroll; ++u) block_acc[r].push_back(e_.new_vec(ins[r].dtype));
  }
  auto value_of = [&](int r) { return values_[ins[r].args[0]]; };
  // argmax: accumulators like the others, plus per index dtype a vector
  // of the columns of the current step (pos).
  std::map<int, ArgmaxEmitter> am;
  std::map<int, std::vector<ArgmaxAcc>> arg_block;
  std::map<int, ArgmaxAcc> arg_row;
  std::map<DType, ax::Vec> pos;
  for (int r : argmaxes) {
    ArgmaxEmitter& a = am.emplace(r, ArgmaxEmitter(e_, argmax_input(r))).first->second;
    arg_row[r] = a.new_acc();
    a.reset(arg_row[r]);
    for (int u = 0; u < unroll; ++u) arg_block[r].push_back(a.new_acc());
    if (!pos.count(a.index_dtype())) pos[a.index_dtype()] = e_.new_vec(a.index_dtype());
  }
  auto add_id = [](DType it) { return it == DType::kInt64 ? ax::Inst::kIdVpaddq : ax::Inst::kIdVpaddd; };
  auto advance_pos = [&](int columns) {
    for (auto& [it, p] : pos) cc_.emit(add_id(it), p, p, e_.const_bits_operand(it, static_cast<uint64_t>(columns)));
  };
  // Steps each argmax with the vector at `offset` columns past pos.
  auto step_argmaxes = [&](int offset, const std::map<int, ArgmaxAcc>& into) {
    std::map<DType, ax::Vec> at;
    for (auto& [it, p] : pos) {
      if (offset == 0) {
        at[it] = p;
      } else {
        at[it] = e_.new_vec(it);
        cc_.emit(add_id(it), at[it], p, e_.const_bits_operand(it, static_cast<uint64_t>(offset)));
      }
    }
    for (int r : argmaxes) {
      ArgmaxEmitter& a = am.at(r);
      a.step(into.at(r), value_of(r), at.at(a.index_dtype()));
    }
  };
  auto block_accs = [&](int u) {
    std::map<int, ArgmaxAcc> m;
    for (int r : argmaxes) m[r] = arg_block[r][u];
    return m;
  };
  auto store_outputs = [&](const ax::Gp& j, int offset) {
    for (int o : outputs) {
      int k = spec_.num_inputs() + o;
      DType t = operand_dtype(k);
      e_.store(t, ax::ptr(run_ptr_[k], j, shift_of(t), offset * static_cast<int>(itemsize(t))),
               values_[spec_.program.outputs[o]]);
    }
  };

  ax::Gp j = cc_.newInt64("j"), limit = cc_.newInt64("limit"), block_end = cc_.newInt64("block_end");
  auto set_pos = [&]() {
    // The columns of the step at j, counted from the row's start.
    ax::Gp at = cc_.newInt64("at");
    cc_.mov(at, j);
    cc_.add(at, col0_);
    for (auto& [it, p] : pos) cc_.emit(add_id(it), p, e_.broadcast_gpr(it, at), e_.lane_index(it));
  };
  cc_.xor_(j, j);
  Label block = cc_.newLabel(), tail = cc_.newLabel();
  // A row shorter than a vector is all tail: skip the block's setup and fold.
  if (!pos.empty()) set_pos();
  cc_.cmp(len_, lanes);
  cc_.jl(tail);
  cc_.bind(block);
  for (int r : reductions)
    for (int u = 0; u < unroll; ++u) cc_.vmovaps(block_acc[r][u], identity(ins[r].op, ins[r].dtype));
  for (int r : argmaxes)
    for (int u = 0; u < unroll; ++u) am.at(r).reset(arg_block[r][u]);
  if (!pos.empty()) set_pos();
  cc_.mov(block_end, j);
  cc_.add(block_end, kBlockColumns);
  cc_.cmp(block_end, len_);
  cc_.cmovg(block_end, len_);
  const int step = unroll * lanes;
  auto emit_step_copy = [&](int u) {
    emit_elements(needed, j, u * lanes, false);
    for (int r : reductions) accumulate(r, block_acc[r][u], value_of(r));
    if (!argmaxes.empty()) step_argmaxes(u * lanes, block_accs(u));
    store_outputs(j, u * lanes);
  };
  if (sched_.pipelined(phase)) {
    // Note [Software-pipelined steps] in jit/x86/step_pipeline.h: entered
    // with two steps left in the block; the epilogue finishes the step the
    // last iteration began, and the loop below takes what is left.
    Label loop = cc_.newLabel(), skip = cc_.newLabel();
    StepRecorder recorder(cc_);
    auto record = [&] {
      recorder.start();
      for (int u = 0; u < unroll; ++u) {
        emit_step_copy(u);
        recorder.copy_done();
      }
      return recorder.finish();
    };
    cc_.mov(limit, block_end);
    cc_.sub(limit, 2 * step);
    cc_.cmp(j, limit);
    cc_.jg(skip);
    EmittedStep prologue = record();
    cc_.bind(loop);
    EmittedStep body = record();
    emit_prefetches(phase, j, step);
    cc_.add(j, step);
    cc_.cmp(j, limit);
    cc_.jle(loop);
    EmittedStep epilogue = record();
    cc_.add(j, step);
    cc_.bind(skip);
    if (!pipeline_step(cc_, prologue, body, epilogue, j, step)) remove_step(cc_, prologue);
  }
  {
    Label loop = cc_.newLabel(), exit = cc_.newLabel();
    cc_.mov(limit, block_end);
    cc_.sub(limit, step);
    cc_.bind(loop);
    cc_.cmp(j, limit);
    cc_.jg(exit);
    for (int u = 0; u < unroll; ++u) emit_step_copy(u);
    emit_prefetches(phase, j, step);
    advance_pos(step);
    cc_.add(j, step);
    cc_.jmp(loop);
    cc_.bind(exit);
  }
  {
    Label loop = cc_.newLabel(), exit = cc_.newLabel();
    cc_.mov(limit, block_end);
    cc_.sub(limit, lanes);
    cc_.bind(loop);
    cc_.cmp(j, limit);
    cc_.jg(exit);
    emit_elements(needed, j, 0, false);
    for (int r : reductions) accumulate(r, block_acc[r][0], value_of(r));
    if (!argmaxes.empty()) step_argmaxes(0, block_accs(0));
    store_outputs(j, 0);
    advance_pos(lanes);
    cc_.add(j, lanes);
    cc_.jmp(loop);
    cc_.bind(exit);
  }
  // Fold the block into the row's accumulator.
  for (int r : reductions) {
    for (int u = 1; u < unroll; ++u) accumulate(r, block_acc[r][0], block_acc[r][u]);
    accumulate(r, row_acc[r], block_acc[r][0]);
  }
  if (!argmaxes.empty()) {
    // A row too short for the unrolled loop left accumulators 1.. as they
    // were reset, and merging those is a no-op: skip the merges, about 14
    // instructions each (a row of 17 float32s spent most of its time here).
    Label merged = cc_.newLabel();
    if (unroll > 1) {
      cc_.cmp(len_, step);
      cc_.jl(merged);
    }
    for (int r : argmaxes)
      for (int u = 1; u < unroll; ++u) am.at(r).merge(arg_block[r][0], arg_block[r][u]);
    cc_.bind(merged);
    for (int r : argmaxes) am.at(r).merge(arg_row[r], arg_block[r][0]);
  }
  cc_.mov(limit, len_);
  cc_.sub(limit, lanes);
  cc_.cmp(j, limit);
  cc_.jle(block);  // at least one more full vector

  // Tail: fewer than `lanes` columns, masked (Note [Masked row tails]);
  // lanes past the end are replaced by the reductions' identities.
  cc_.bind(tail);
  Label done = cc_.newLabel();
  const ax::Gp& rem = tail_->rem();
  cc_.test(rem, rem);
  cc_.jz(done);
  RowTail& row_tail = *tail_;
  // Operand k's tail through its bounce buffer, as `t` (a spilled value's
  // type for its output's row), where t has no masked form.
  auto copy = [&](BounceCopy direction, int k, DType t) {
    if (RowTail::masked(t)) return;
    emit_bounce_copy(cc_, direction, bounce_[k], ax::ptr(run_ptr_[k], j, shift_of(t)), rem, t);
  };
  for (int k = 0; k < spec_.num_inputs(); ++k)
    if (streams(k)) copy(BounceCopy::kIn, k, operand_dtype(k));
  // Values spilled to an output's row (scratch rows need no bounce).
  auto spilled_to_output = [&](int v) { return sched_.spill_to(v) >= 0; };
  for (int v : needed)
    if (spilled_to_output(v) && sched_.reloaded(v, phase))
      copy(BounceCopy::kIn, spec_.num_inputs() + sched_.spill_to(v), instr(v).dtype);
  emit_elements(needed, j, 0, true);
  for (int v : needed)
    if (spilled_to_output(v) && sched_.spill_phase(v) == phase)
      copy(BounceCopy::kOut, spec_.num_inputs() + sched_.spill_to(v), instr(v).dtype);
  for (int r : reductions) {
    DType t = ins[r].dtype;
    accumulate(r, row_acc[r], e_.blend(t, row_tail.valid(t), value_of(r), identity(ins[r].op, t)));
  }
  for (int r : argmaxes) {
    // pos is at column j: lanes at rem and past take the identity, which
    // never wins.
    ArgmaxEmitter& a = am.at(r);
    DType t = argmax_compare_dtype(argmax_input(r)), it = a.index_dtype();
    a.step(arg_row[r], e_.blend(t, row_tail.valid(t), value_of(r), a.identity()), pos.at(it));
  }
  for (int o : outputs) {
    int k = spec_.num_inputs() + o;
    DType t = operand_dtype(k);
    const ax::Vec& v = values_[spec_.program.outputs[o]];
    if (RowTail::masked(t)) {
      row_tail.store(t, ax::ptr(run_ptr_[k], j, shift_of(t)), v);
    } else {
      e_.store(t, bounce_[k], v);
      copy(BounceCopy::kOut, k, t);
    }
  }
  cc_.bind(done);
  for (int r : reductions) values_[r] = finish_reduction(r, row_acc[r]);
  for (int r : argmaxes) values_[r] = finish_argmax(r, am.at(r), arg_row[r]);
}

// Note [Short rows]
// A row shorter than a vector is one masked vector (Note [Masked row
// tails]). Walking it through every phase's block loop still costs the
// loop setup, the fold, the spill of Note [Spilled values] (a masked store
// that a masked load of the next phase must wait for: no store forwarding
// across masked accesses) and a reload of the inputs per phase. Such rows
// take a path of their own instead: the inputs are loaded once, every
// per-element value stays in its register from the phase that first
// computes it to the last that needs it, each reduction reduces its one
// vector (the row's accumulator would have been the identity, and
// identity op v is v: the lanes are the same bits), and the outputs are
// stored once. Kernels with a bool operand (no masked form) keep the loop.
bool RowKernelGenerator::has_short_path() const {
  for (int k = 0; k < num_operands(); ++k)
    if (streams(k) && !RowTail::masked(operand_dtype(k))) return false;
  return true;
}

void RowKernelGenerator::emit_short_row() {
  const auto& ins = spec_.program.instrs;
  std::vector<bool> have(ins.size(), false);  // per-element values already in registers
  RowTail& tail = *tail_;
  emit_row_level(0);
  for (int p = 0; p < sched_.phases(); ++p) {
    phase_ = p;
    const std::vector<bool> need = sched_.phase_need(p);
    for (size_t i = 0; i < ins.size(); ++i) {
      if (!need[i] || !sched_.elem(i) || is_reduction(ins[i].op) || have[i]) continue;
      if (sched_.reloaded(i, p)) throw Error("row kernel: a spilled value was never computed (internal error)");
      if (ins[i].op == ScalarOp::kInput) values_[i] = tail.load(ins[i].dtype, ax::ptr(run_ptr_[ins[i].index]));
      else values_[i] = emit_value_instr(e_, spec_.program, ins[i], values_);
      have[i] = true;
    }
    for (size_t i = 0; i < ins.size(); ++i) {
      if (!is_reduction(ins[i].op) || sched_.accum_phase(i) != p) continue;
      const int r = static_cast<int>(i);
      const ax::Vec& v = values_[ins[r].args[0]];
      if (ins[r].op == ScalarOp::kReduceArgmax) {
        ArgmaxEmitter a(e_, argmax_input(r));
        DType ct = argmax_compare_dtype(argmax_input(r)), it = a.index_dtype();
        ArgmaxAcc acc = a.new_acc();
        a.reset(acc);
        ax::Vec pos = e_.new_vec(it);
        cc_.emit(it == DType::kInt64 ? ax::Inst::kIdVpaddq : ax::Inst::kIdVpaddd, pos, e_.broadcast_gpr(it, col0_),
                 e_.lane_index(it));
        a.step(acc, e_.blend(ct, tail.valid(ct), v, a.identity()), pos);
        values_[r] = finish_argmax(r, a, acc);
      } else {
        DType t = ins[r].dtype;
        values_[r] = finish_reduction(r, e_.blend(t, tail.valid(t), v, identity(ins[r].op, t)));
      }
    }
    for (int o = 0; o < spec_.num_outputs(); ++o) {
      const int v = spec_.program.outputs[o];
      if (spec_.output_row_scalar[o] || sched_.avail(v) != p) continue;
      tail.store(spec_.output_dtype(o), ax::ptr(run_ptr_[spec_.num_inputs() + o]), values_[v]);
    }
    emit_row_level(p + 1);
  }
}

void RowKernelGenerator::generate() {
  const int rank = spec_.rank;
  asmjit::FuncNode* fn = cc_.addFunc(asmjit::FuncSignatureT<void, const void*, int64_t, int64_t>());
  fn->frame().setAvxEnabled();
  if (e_.avx512()) fn->frame().setAvx512Enabled();
  ax::Gp args = cc_.newIntPtr("args"), begin = cc_.newInt64("begin"), end = cc_.newInt64("end");
  args_ = args;
  fn->setArg(0, args);
  fn->setArg(1, begin);
  fn->setArg(2, end);
  e_.mark_preamble();
  Label done = cc_.newLabel();
  cc_.cmp(begin, end);
  cc_.jge(done);

  ax::Gp ptrs = cc_.newIntPtr("ptrs"), strides = cc_.newIntPtr("strides");
  col0_ = cc_.newInt64("col0");
  const ax::Gp& col0 = col0_;
  cc_.mov(ptrs, ax::ptr(args, offsetof(KernelArgs, ptrs)));
  shape_ = cc_.newIntPtr("shape");
  cc_.mov(shape_, ax::ptr(args, offsetof(KernelArgs, shape)));
  cc_.mov(strides, ax::ptr(args, offsetof(KernelArgs, strides)));
  cc_.mov(col0, ax::ptr(args, offsetof(KernelArgs, col_begin)));
  len_ = cc_.newInt64("len");
  cc_.mov(len_, ax::ptr(args, offsetof(KernelArgs, col_end)));
  cc_.sub(len_, col0);
  if (sched_.scratch_slots() > 0) {
    // Slot s's row starts at scratch + len * (bytes per column of the slots before s).
    ax::Gp scratch = cc_.newIntPtr("scratch");
    cc_.mov(scratch, ax::ptr(args, offsetof(KernelArgs, row_scratch)));
    for (int s = 0; s < sched_.scratch_slots(); ++s) {
      scratch_row_.push_back(cc_.newIntPtr("scratch%d", s));
      cc_.imul(scratch_row_[s], len_, sched_.scratch_offset(s));
      cc_.add(scratch_row_[s], scratch);
    }
  }
  for (int k = 0; k < num_operands(); ++k) {
    base_.push_back(cc_.newIntPtr("base%d", k));
    cc_.mov(base_[k], ax::ptr(ptrs, 8 * k));
    run_ptr_.push_back(cc_.newIntPtr("run%d", k));
    // Only operands without a masked tail need one (Note [Masked row tails]).
    const bool bounced = streams(k) && !RowTail::masked(operand_dtype(k));
    bounce_.push_back(bounced ? cc_.newStack(64, 64) : ax::Mem());
  }
  {
    ax::Gp rem = cc_.newInt64("rem");
    cc_.mov(rem, len_);
    cc_.and_(rem, e_.lanes() - 1);
    std::set<int> widths;
    for (const ScalarInstr& in : spec_.program.instrs)  // an argmax's int64 index is never loaded or stored masked
      if (in.op != ScalarOp::kReduceArgmax) widths.insert(VecEmitter::lane_width(in.dtype));
    tail_ = std::make_unique<RowTail>(e_, rem, widths);
  }
  if (spec_.num_params() > 0) {
    params_ = cc_.newIntPtr("params");
    cc_.mov(params_, ax::ptr(args, offsetof(KernelArgs, params)));
  }
  values_.resize(spec_.program.instrs.size());
  // Per-call values.
  const auto& ins = spec_.program.instrs;
  for (size_t i = 0; i < ins.size(); ++i) {
    if (!sched_.per_call(i)) continue;
    if (ins[i].op == ScalarOp::kInput) {
      values_[i] = load_input(ins[i], ax::Gp(), 0, false);
    } else if (ins[i].op == ScalarOp::kRowLength) {
      ax::Gp n = cc_.newInt64("row_length");
      cc_.mov(n, ax::qword_ptr(shape_, 8 * (rank - 1)));
      values_[i] = e_.broadcast_int_as(ins[i].dtype, n);
    } else {
      values_[i] = emit_value_instr(e_, spec_.program, ins[i], values_);
    }
  }

  auto stride_of = [&](int k, int d) { return ax::qword_ptr(strides, 8 * (k * rank + d)); };
  auto dim = [&](int d) { return ax::qword_ptr(shape_, 8 * d); };
  // Outer multi-index of `begin`, and each operand's offset to that row.
  const int outer = rank - 1;
  std::vector<ax::Gp> idx(outer), row_off(num_operands());
  ax::Gp quot = cc_.newInt64("quot"), remd = cc_.newInt64("remd"), t = cc_.newInt64("t");
  cc_.mov(quot, begin);
  for (int d = outer - 1; d >= 0; --d) {
    idx[d] = cc_.newInt64("idx%d", d);
    cc_.xor_(remd, remd);
    cc_.div(remd, quot, dim(d));
    cc_.mov(idx[d], remd);
  }
  for (int k = 0; k < num_operands(); ++k) {
    row_off[k] = cc_.newInt64("row_off%d", k);
    cc_.xor_(row_off[k], row_off[k]);
    for (int d = 0; d < outer; ++d) {
      cc_.mov(t, idx[d]);
      cc_.imul(t, stride_of(k, d));
      cc_.add(row_off[k], t);
    }
  }
  ax::Gp row = cc_.newInt64("row");
  cc_.mov(row, begin);
  // Note [Next row prefetch]: the byte step to the next row of each input
  // that streams along the row and differs from row to row.
  std::vector<ax::Gp> row_step(num_operands());
  next_row_ptr_.assign(num_operands(), ax::Gp());
  if (outer > 0 && sched_.phases() > 1)
    for (int k = 0; k < spec_.num_inputs(); ++k) {
      if (!streams(k) || spec_.input_broadcast[k][outer - 1]) continue;
      row_step[k] = cc_.newInt64("row_step%d", k);
      cc_.mov(row_step[k], stride_of(k, outer - 1));
      cc_.shl(row_step[k], shift_of(operand_dtype(k)));
      next_row_ptr_[k] = cc_.newIntPtr("next_row%d", k);
    }

  Label next_row = cc_.newLabel();
  cc_.bind(next_row);
  for (int k = 0; k < num_operands(); ++k) {
    cc_.mov(t, row_off[k]);
    if (streams(k)) cc_.add(t, col0);
    cc_.lea(run_ptr_[k], ax::ptr(base_[k], t, shift_of(operand_dtype(k))));
    if (next_row_ptr_[k].isValid()) cc_.lea(next_row_ptr_[k], ax::ptr(run_ptr_[k], row_step[k]));
  }
  Label short_row = cc_.newLabel(), row_done = cc_.newLabel();
  const bool short_path = has_short_path();
  if (short_path) {
    cc_.cmp(len_, e_.lanes());
    cc_.jl(short_row);
  }
  emit_row_level(0);
  for (int p = 0; p < sched_.phases(); ++p) {
    emit_phase(p);
    emit_row_level(p + 1);
  }
  if (short_path) {
    cc_.jmp(row_done);
    cc_.bind(short_row);
    emit_short_row();  // Note [Short rows]
    cc_.bind(row_done);
  }
  cc_.inc(row);
  cc_.cmp(row, end);
  cc_.jge(done);
  for (int d = outer - 1; d >= 0; --d) {
    cc_.inc(idx[d]);
    for (int k = 0; k < num_operands(); ++k) cc_.add(row_off[k], stride_of(k, d));
    if (d == 0) break;
    cc_.cmp(idx[d], dim(d));
    cc_.jl(next_row);
    cc_.xor_(idx[d], idx[d]);
    for (int k = 0; k < num_operands(); ++k) {
      cc_.mov(t, dim(d));
      cc_.imul(t, stride_of(k, d));
      cc_.sub(row_off[k], t);
    }
  }
  cc_.jmp(next_row);
  cc_.bind(done);
  cc_.endFunc();
}

}  // namespace

void generate_row_kernel(const FusedKernelSpec& spec, ax::Compiler& cc, bool avx512) {
  RowKernelGenerator(spec, cc, avx512).generate();
}

}  // namespace wok::jit::x86
