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
#include "wok/jit/x86/interleave.h"
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

// Note [Loop constants on AVX2] in vec_emitter.cpp: how many constants an
// AVX2 walk with a transcendental keeps in registers.
constexpr int kLoopConstantRegisters = 3;

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

// Note [Rows in flight]
// A row kernel's phases run one after another along a row: softmax's max
// pass, its exp pass, its division. Only the exp pass has much to do per
// element, and it is bound by its chain of dependent instructions, not by
// the pipes; the other two are a load, a conversion or two and a store. So a
// kernel of P phases given at least P rows works on P rows at once: each
// walk along the row does phase 0 of row r, phase 1 of row r - 1, ..., phase
// P-1 of row r - P + 1, and the light phases' instructions fill the heavy
// one's gaps. Each row has a slot (its operands' addresses, its scratch
// rows, its row values such as the max and the sum); after a walk every row
// moves one slot on, and the last slot's scratch rows go to the row entering
// slot 0. The walk is emitted once: in the first P - 1 walks the slots that
// have no row yet, and in the last P - 1 those whose rows have left, point
// their operands at a dummy row past the scratch rows and compute what
// nobody reads (walks of fewer phases, emitted for the first and last rows,
// made the kernel compile three times slower again). Each phase adds its
// vectors in the same order as when it walks alone (emit_walk), so a row
// gets the bits it gets alone (tests/jit_rows_in_flight_test.cpp). The path
// has its own hoisted constants and per-call values: sharing the one-row
// path's made them live through both, and the allocator spilled the one-row
// path's exp constants (float32 softmax over [4096, 4096], which never takes
// the path, went from 0.24 to 0.31 ns per element).
//
// Only where the rows in flight stay in L1: P rows of every operand that
// changes from row to row, and their scratch rows, within kInFlightBytes
// (row_schedule.h). Measured on a Zen 5 EPYC (AVX-512, 48 KiB of L1), paired
// with the library before in one probe (min of 30 rounds, 1 thread, ns per
// element): softmax over [64, 1024] float32 0.18-0.19 -> 0.14-0.15, float16
// 0.19-0.20 -> 0.155-0.17; over [64, 2048] float32 0.17-0.18 -> 0.14-0.15,
// float16 0.16-0.17 -> 0.14-0.16 (bfloat16 about as before: 0.21 -> 0.20 and
// 0.17 -> 0.17-0.18); layer_norm over [256, 1024] float32 0.114-0.129 ->
// 0.104-0.114, float16 0.106-0.116 -> 0.090-0.098. Over [64, 4096] (float32:
// 96 KiB in flight) rows in flight were no faster and float16 slower. Nor
// where the call's rows come from memory (over kInFlightCallBytes):
// layer_norm over [16384, 1024] went from 0.21 to 0.24 ns per element in
// float32, 0.10 to 0.12 in float16, with three rows' streams at once; those
// take one row at a time. On AVX2 a kernel with a transcendental does not
// take the path: its 16 registers spill and softmax ran no faster
// (layer_norm over [256, 1024]: float32 0.123-0.134 -> 0.114-0.117). The
// path costs code: the kernels of softmax, layer_norm, log_softmax and
// rms_norm (float32, float16, bfloat16) took 0.84, 0.75, 1.95 and 0.44 ms
// each to compile, from 0.29, 0.21, 0.54 and 0.14; hence
// kInFlightMaxInstructions.

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
  // One walk along the row doing phases lo..hi; in_flight: phase p works
  // on row slot p (Note [Rows in flight]), else all on slot 0.
  struct PhaseWalk;
  void emit_walk(int lo, int hi, bool in_flight);
  bool order_matters(const PhaseWalk& w) const;
  void emit_prefetches(int phase, const ax::Gp& j, int columns, bool inputs);
  // Note [Rows in flight]: makes slot s's row the one the members below
  // (run_ptr_, next_row_ptr_, scratch_row_, values_) describe; -1 puts
  // the active one back with the others.
  void select_slot(int s);
  // Moves each row one slot on (slot s + 1 takes slot s's row) and gives
  // the last slot's scratch rows to slot 0.
  void rotate_slots();
  // What each slot's row holds at the top of a walk: the values of every
  // call, and its persistent registers (none for slot 0, whose row is new).
  void reset_slot_values();
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
  // Note [Rows in flight]: the state of the slots not selected.
  struct RowSlot {
    std::vector<ax::Gp> run_ptr, next_row_ptr, scratch_row;
    std::vector<ax::Vec> values;
  };
  std::vector<RowSlot> slots_;
  int active_slot_ = 0;
  // Per slot and value: the register holding the slot's row's value at
  // the top of a walk; and the values of every call.
  std::vector<std::vector<ax::Vec>> persistent_;
  std::vector<ax::Vec> per_call_values_;
};

void RowKernelGenerator::select_slot(int s) {
  if (s == active_slot_) return;
  if (active_slot_ >= 0) {
    RowSlot& a = slots_[active_slot_];
    std::swap(a.run_ptr, run_ptr_);
    std::swap(a.next_row_ptr, next_row_ptr_);
    std::swap(a.scratch_row, scratch_row_);
    std::swap(a.values, values_);
  }
  active_slot_ = s;
  if (s < 0) return;
  RowSlot& b = slots_[s];
  std::swap(b.run_ptr, run_ptr_);
  std::swap(b.next_row_ptr, next_row_ptr_);
  std::swap(b.scratch_row, scratch_row_);
  std::swap(b.values, values_);
}

void RowKernelGenerator::rotate_slots() {
  select_slot(-1);
  const int n = static_cast<int>(slots_.size());
  std::vector<ax::Gp> ring;
  for (const ax::Gp& g : slots_[n - 1].scratch_row) {
    ring.push_back(cc_.newIntPtr("ring"));
    cc_.mov(ring.back(), g);
  }
  const auto& ins = spec_.program.instrs;
  for (int s = n - 1; s >= 1; --s) {
    RowSlot &to = slots_[s], &from = slots_[s - 1];
    for (size_t k = 0; k < to.run_ptr.size(); ++k) cc_.mov(to.run_ptr[k], from.run_ptr[k]);
    for (size_t k = 0; k < to.scratch_row.size(); ++k) cc_.mov(to.scratch_row[k], from.scratch_row[k]);
    // The row's values so far (not those of every call, nor per element).
    for (size_t i = 0; i < ins.size(); ++i)
      if (persistent_[s][i].isValid() && from.values[i].isValid()) cc_.vmovaps(persistent_[s][i], from.values[i]);
  }
  for (size_t k = 0; k < ring.size(); ++k) cc_.mov(slots_[0].scratch_row[k], ring[k]);
  reset_slot_values();
}

void RowKernelGenerator::reset_slot_values() {
  select_slot(-1);
  const size_t n = spec_.program.instrs.size();
  for (size_t s = 0; s < slots_.size(); ++s) {
    std::vector<ax::Vec>& v = slots_[s].values;
    v.assign(n, ax::Vec());
    for (size_t i = 0; i < n; ++i) v[i] = sched_.per_call(i) ? per_call_values_[i] : persistent_[s][i];
  }
  select_slot(0);
}

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
// columns from j on, of each operand this phase fetches ahead (the next
// row's inputs when `inputs`).
void RowKernelGenerator::emit_prefetches(int phase, const ax::Gp& j, int columns, bool inputs) {
  auto each_line = [&](int k, const ax::Gp& row, bool write) {
    const DType t = operand_dtype(k);
    const int bytes = columns * static_cast<int>(itemsize(t));
    for (int b = 0; b < bytes; b += 64) {
      const ax::Mem at = ax::ptr(row, j, shift_of(t), b);
      if (write) cc_.prefetchw(at);
      else cc_.prefetcht1(at);
    }
  };
  if (inputs)
    for (int k = 0; k < spec_.num_inputs(); ++k)
      if (next_row_ptr_[k].isValid()) each_line(k, next_row_ptr_[k], false);
  for (int o = 0; o < spec_.num_outputs(); ++o)
    if (!spec_.output_row_scalar[o] && sched_.first_write_phase(o) == phase + 1)
      each_line(spec_.num_inputs() + o, run_ptr_[spec_.num_inputs() + o], true);
}

// One phase's share of a walk along the row (emit_walk): its sinks, the
// per-element values they need, and its accumulators.
struct RowKernelGenerator::PhaseWalk {
  int phase = 0;
  int slot = 0;    // the row slot it works on (Note [Rows in flight])
  int unroll = 1;  // its vectors per step (Note [Row loop unrolling])
  std::vector<int> reductions, argmaxes, outputs, needed;
  std::map<int, std::vector<ax::Vec>> block_acc;  // `unroll` per reduction inside a block
  std::map<int, ax::Vec> row_acc;                 // one per reduction for the row
  // argmax: accumulators like the others, plus per index dtype a vector
  // of the columns of the current step (pos).
  std::map<int, ArgmaxEmitter> am;
  std::map<int, std::vector<ArgmaxAcc>> arg_block;
  std::map<int, ArgmaxAcc> arg_row;
  std::map<DType, ax::Vec> pos;
};

// Whether a phase's results depend on the order it takes its vectors in.
bool RowKernelGenerator::order_matters(const PhaseWalk& w) const {
  if (!w.argmaxes.empty()) return true;
  for (int r : w.reductions) {
    const ReduceKind k = reduce_kind(instr(r).op);
    if (k != ReduceKind::kMax && k != ReduceKind::kMin) return true;
  }
  return false;
}

void RowKernelGenerator::emit_walk(int lo, int hi, bool in_flight) {
  const auto& ins = spec_.program.instrs;
  const int lanes = e_.lanes();
  std::vector<PhaseWalk> walks;
  for (int phase = lo; phase <= hi; ++phase) {
    PhaseWalk w;
    w.phase = phase;
    w.slot = in_flight ? phase : 0;
    w.unroll = sched_.unroll(phase);
    for (size_t i = 0; i < ins.size(); ++i)
      if (is_reduction(ins[i].op) && sched_.accum_phase(i) == phase)
        (ins[i].op == ScalarOp::kReduceArgmax ? w.argmaxes : w.reductions).push_back(static_cast<int>(i));
    for (int o = 0; o < spec_.num_outputs(); ++o)  // full outputs written in this phase
      if (!spec_.output_row_scalar[o] && sched_.avail(spec_.program.outputs[o]) == phase) w.outputs.push_back(o);
    if (w.reductions.empty() && w.argmaxes.empty() && w.outputs.empty()) continue;
    // Per-element instructions the sinks depend on, in program order.
    const std::vector<bool> need = sched_.phase_need(phase);
    for (size_t i = 0; i < ins.size(); ++i)
      if (need[i] && sched_.elem(i) && !is_reduction(ins[i].op)) w.needed.push_back(static_cast<int>(i));
    walks.push_back(std::move(w));
  }
  // The row-level values each phase's results make available.
  auto emit_row_levels = [&]() {
    for (int phase = lo; phase <= hi; ++phase) {
      select_slot(in_flight ? phase : 0);
      emit_row_level(phase + 1);
    }
  };
  if (walks.empty()) {  // no phase here walks the row
    emit_row_levels();
    return;
  }
  // Phases sharing a walk share its step: the widest of those whose
  // results depend on the order they add in (a sum or a product), so that
  // each of them adds the same values in the same order as when it walks
  // alone (a phase of a narrower step takes its vectors into its
  // accumulators in turn, and the leftovers as its own loop would, below):
  // a row in flight gets the bits it gets alone. A max or a min is the
  // same in any order, and a phase without reductions has no order: with
  // no sum among them, the narrowest step, which keeps the fewest
  // registers live (softmax: its max pass and division walk with its exp
  // pass's step of two).
  int unroll = 0;
  for (const PhaseWalk& w : walks)
    if (order_matters(w)) unroll = std::max(unroll, w.unroll);
  if (unroll == 0)
    for (const PhaseWalk& w : walks) unroll = unroll == 0 ? w.unroll : std::min(unroll, w.unroll);
  auto enter = [&](const PhaseWalk& w) {
    select_slot(w.slot);
    phase_ = w.phase;
  };
  bool pipelined = false;
  for (const PhaseWalk& w : walks) pipelined = pipelined || sched_.pipelined(w.phase);
  // Note [Loop constants on AVX2] in vec_emitter.cpp: an AVX2 walk with a
  // transcendental interleaves its copies and keeps a few constants in
  // registers; AVX-512 pipelines its steps (constants are hoisted there).
  const bool interleaved = pipelined && !e_.avx512() && !in_flight;
  if (interleaved) {
    pipelined = false;
    e_.mark_loop_preamble();
  }

  for (PhaseWalk& w : walks) {
    enter(w);
    for (int r : w.reductions) {
      w.row_acc[r] = e_.new_vec(ins[r].dtype);
      cc_.vmovaps(w.row_acc[r], identity(ins[r].op, ins[r].dtype));
      for (int u = 0; u < w.unroll; ++u) w.block_acc[r].push_back(e_.new_vec(ins[r].dtype));
    }
    for (int r : w.argmaxes) {
      ArgmaxEmitter& a = w.am.emplace(r, ArgmaxEmitter(e_, argmax_input(r))).first->second;
      w.arg_row[r] = a.new_acc();
      a.reset(w.arg_row[r]);
      for (int u = 0; u < w.unroll; ++u) w.arg_block[r].push_back(a.new_acc());
      if (!w.pos.count(a.index_dtype())) w.pos[a.index_dtype()] = e_.new_vec(a.index_dtype());
    }
  }
  auto value_of = [&](int r) { return values_[ins[r].args[0]]; };
  auto add_id = [](DType it) { return it == DType::kInt64 ? ax::Inst::kIdVpaddq : ax::Inst::kIdVpaddd; };
  auto advance_pos = [&](int columns) {
    for (const PhaseWalk& w : walks)
      for (auto& [it, p] : w.pos) cc_.emit(add_id(it), p, p, e_.const_bits_operand(it, static_cast<uint64_t>(columns)));
  };
  // Steps each argmax of w with the vector at `offset` columns past pos,
  // into accumulator u of the block.
  auto step_argmaxes = [&](PhaseWalk& w, int offset, int u) {
    std::map<DType, ax::Vec> at;
    for (auto& [it, p] : w.pos) {
      if (offset == 0) {
        at[it] = p;
      } else {
        at[it] = e_.new_vec(it);
        cc_.emit(add_id(it), at[it], p, e_.const_bits_operand(it, static_cast<uint64_t>(offset)));
      }
    }
    for (int r : w.argmaxes) {
      ArgmaxEmitter& a = w.am.at(r);
      a.step(w.arg_block.at(r)[u], value_of(r), at.at(a.index_dtype()));
    }
  };
  auto store_outputs = [&](const PhaseWalk& w, const ax::Gp& j, int offset) {
    for (int o : w.outputs) {
      int k = spec_.num_inputs() + o;
      DType t = operand_dtype(k);
      e_.store(t, ax::ptr(run_ptr_[k], j, shift_of(t), offset * static_cast<int>(itemsize(t))),
               values_[spec_.program.outputs[o]]);
    }
  };

  ax::Gp j = cc_.newInt64("j"), limit = cc_.newInt64("limit"), block_end = cc_.newInt64("block_end");
  auto set_pos = [&]() {
    // The columns of the step at j, counted from the row's start.
    for (const PhaseWalk& w : walks) {
      if (w.pos.empty()) continue;
      ax::Gp at = cc_.newInt64("at");
      cc_.mov(at, j);
      cc_.add(at, col0_);
      for (auto& [it, p] : w.pos) cc_.emit(add_id(it), p, e_.broadcast_gpr(it, at), e_.lane_index(it));
    }
  };
  cc_.xor_(j, j);
  Label block = cc_.newLabel(), tail = cc_.newLabel();
  // A row shorter than a vector is all tail: skip the block's setup and fold.
  set_pos();
  cc_.cmp(len_, lanes);
  cc_.jl(tail);
  cc_.bind(block);
  for (PhaseWalk& w : walks) {
    for (int r : w.reductions)
      for (int u = 0; u < w.unroll; ++u) cc_.vmovaps(w.block_acc[r][u], identity(ins[r].op, ins[r].dtype));
    for (int r : w.argmaxes)
      for (int u = 0; u < w.unroll; ++u) w.am.at(r).reset(w.arg_block[r][u]);
  }
  set_pos();
  cc_.mov(block_end, j);
  cc_.add(block_end, kBlockColumns);
  cc_.cmp(block_end, len_);
  cc_.cmovg(block_end, len_);
  const int step = unroll * lanes;
  // Vector u of a step (offset u * lanes) of phase w, into its
  // accumulators `acc`.
  auto emit_phase_copy = [&](PhaseWalk& w, int u, int acc) {
    enter(w);
    emit_elements(w.needed, j, u * lanes, false);
    for (int r : w.reductions) accumulate(r, w.block_acc[r][acc], value_of(r));
    if (!w.argmaxes.empty()) step_argmaxes(w, u * lanes, acc);
    store_outputs(w, j, u * lanes);
  };
  auto emit_step_copy = [&](int u) {
    for (PhaseWalk& w : walks) emit_phase_copy(w, u, u % w.unroll);
  };
  auto prefetch = [&](int columns) {
    for (const PhaseWalk& w : walks) {
      enter(w);
      // Rows in flight: the row entering phase 0 is read by demand; its
      // successor is fetched while it is (Note [Rows in flight]).
      emit_prefetches(w.phase, j, columns, in_flight ? w.phase == 0 : w.phase == sched_.prefetch_phase());
    }
  };
  if (pipelined) {
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
    prefetch(step);
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
    CopyRecorder copies(cc_);
    if (interleaved) e_.open_loop_constants(kLoopConstantRegisters);
    for (int u = 0; u < unroll; ++u) {
      copies.begin_copy();
      emit_step_copy(u);
      copies.end_copy();
    }
    e_.close_loop_constants();
    if (interleaved) copies.interleave();
    prefetch(step);
    advance_pos(step);
    cc_.add(j, step);
    cc_.jmp(loop);
    cc_.bind(exit);
  }
  // What a phase of a narrower step would do with the vectors left: one
  // more step of its own (at most one: its step is half the walk's); the
  // others take them one by one, into their first accumulators.
  int half = 0;
  for (const PhaseWalk& w : walks)
    if (w.unroll < unroll && order_matters(w)) half = w.unroll;
  if (half > 0) {
    if (2 * half != unroll) throw Error("row kernel: phases of steps " + std::to_string(half) + " and " +
                                        std::to_string(unroll) + " in one walk (internal error)");
    Label skip = cc_.newLabel();
    cc_.mov(limit, block_end);
    cc_.sub(limit, half * lanes);
    cc_.cmp(j, limit);
    cc_.jg(skip);
    for (int u = 0; u < half; ++u)
      for (PhaseWalk& w : walks) emit_phase_copy(w, u, w.unroll == half ? u : 0);
    advance_pos(half * lanes);
    cc_.add(j, half * lanes);
    cc_.bind(skip);
  }
  {
    Label loop = cc_.newLabel(), exit = cc_.newLabel();
    cc_.mov(limit, block_end);
    cc_.sub(limit, lanes);
    cc_.bind(loop);
    cc_.cmp(j, limit);
    cc_.jg(exit);
    for (PhaseWalk& w : walks) emit_phase_copy(w, 0, 0);
    advance_pos(lanes);
    cc_.add(j, lanes);
    cc_.jmp(loop);
    cc_.bind(exit);
  }
  // Fold the block into the row's accumulator.
  for (PhaseWalk& w : walks) {
    enter(w);
    for (int r : w.reductions) {
      for (int u = 1; u < w.unroll; ++u) accumulate(r, w.block_acc[r][0], w.block_acc[r][u]);
      accumulate(r, w.row_acc[r], w.block_acc[r][0]);
    }
    if (w.argmaxes.empty()) continue;
    // A row too short for the unrolled loop left accumulators 1.. as they
    // were reset, and merging those is a no-op: skip the merges, about 14
    // instructions each (a row of 17 float32s spent most of its time here).
    Label merged = cc_.newLabel();
    if (w.unroll > 1) {
      cc_.cmp(len_, w.unroll * lanes);
      cc_.jl(merged);
    }
    for (int r : w.argmaxes)
      for (int u = 1; u < w.unroll; ++u) w.am.at(r).merge(w.arg_block[r][0], w.arg_block[r][u]);
    cc_.bind(merged);
    for (int r : w.argmaxes) w.am.at(r).merge(w.arg_row[r], w.arg_block[r][0]);
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
  for (PhaseWalk& w : walks) {
    enter(w);
    // Operand k's tail through its bounce buffer, as `t` (a spilled
    // value's type for its output's row), where t has no masked form.
    auto copy = [&](BounceCopy direction, int k, DType t) {
      if (RowTail::masked(t)) return;
      emit_bounce_copy(cc_, direction, bounce_[k], ax::ptr(run_ptr_[k], j, shift_of(t)), rem, t);
    };
    for (int k = 0; k < spec_.num_inputs(); ++k)
      if (streams(k)) copy(BounceCopy::kIn, k, operand_dtype(k));
    // Values spilled to an output's row (scratch rows need no bounce).
    auto spilled_to_output = [&](int v) { return sched_.spill_to(v) >= 0; };
    for (int v : w.needed)
      if (spilled_to_output(v) && sched_.reloaded(v, w.phase))
        copy(BounceCopy::kIn, spec_.num_inputs() + sched_.spill_to(v), instr(v).dtype);
    emit_elements(w.needed, j, 0, true);
    for (int v : w.needed)
      if (spilled_to_output(v) && sched_.spill_phase(v) == w.phase)
        copy(BounceCopy::kOut, spec_.num_inputs() + sched_.spill_to(v), instr(v).dtype);
    for (int r : w.reductions) {
      DType t = ins[r].dtype;
      accumulate(r, w.row_acc[r], e_.blend(t, row_tail.valid(t), value_of(r), identity(ins[r].op, t)));
    }
    for (int r : w.argmaxes) {
      // pos is at column j: lanes at rem and past take the identity, which
      // never wins.
      ArgmaxEmitter& a = w.am.at(r);
      DType t = argmax_compare_dtype(argmax_input(r)), it = a.index_dtype();
      a.step(w.arg_row[r], e_.blend(t, row_tail.valid(t), value_of(r), a.identity()), w.pos.at(it));
    }
    for (int o : w.outputs) {
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
  }
  cc_.bind(done);
  if (interleaved) e_.end_loop_constants();
  for (PhaseWalk& w : walks) {
    enter(w);
    for (int r : w.reductions) values_[r] = finish_reduction(r, w.row_acc[r]);
    for (int r : w.argmaxes) values_[r] = finish_argmax(r, w.am.at(r), w.arg_row[r]);
  }
  emit_row_levels();
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
  // Per-call values.
  const auto& ins = spec_.program.instrs;
  auto emit_per_call_values = [&]() {
    values_.assign(ins.size(), ax::Vec());
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
    per_call_values_ = values_;
  };
  emit_per_call_values();

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

  // The current row's operands, and where the next row's inputs are.
  auto point_at_row = [&]() {
    for (int k = 0; k < num_operands(); ++k) {
      cc_.mov(t, row_off[k]);
      if (streams(k)) cc_.add(t, col0);
      cc_.lea(run_ptr_[k], ax::ptr(base_[k], t, shift_of(operand_dtype(k))));
      if (next_row_ptr_[k].isValid()) cc_.lea(next_row_ptr_[k], ax::ptr(run_ptr_[k], row_step[k]));
    }
  };
  // The outer multi-index and the operands' offsets one row on; continues
  // at `next` (the index of the row itself is the caller's).
  auto advance_indices = [&](const Label& next) {
    for (int d = outer - 1; d >= 0; --d) {
      cc_.inc(idx[d]);
      for (int k = 0; k < num_operands(); ++k) cc_.add(row_off[k], stride_of(k, d));
      if (d == 0) break;
      cc_.cmp(idx[d], dim(d));
      cc_.jl(next);
      cc_.xor_(idx[d], idx[d]);
      for (int k = 0; k < num_operands(); ++k) {
        cc_.mov(t, dim(d));
        cc_.imul(t, stride_of(k, d));
        cc_.sub(row_off[k], t);
      }
    }
    cc_.jmp(next);
  };

  // Note [Rows in flight]: enough rows, and long enough, take that path;
  // on AVX2 not with a transcendental (its 16 registers spill).
  int flight = sched_.rows_in_flight();
  for (int p = 0; p < sched_.phases() && !e_.avx512(); ++p)
    if (sched_.pipelined(p)) flight = 1;
  Label next_row = cc_.newLabel(), in_flight = cc_.newLabel();
  if (flight > 1) {
    cc_.mov(t, end);
    cc_.sub(t, begin);
    cc_.cmp(t, flight);
    cc_.jl(next_row);
    cc_.cmp(len_, RowSchedule::kInFlightMinColumns);
    cc_.jl(next_row);
    cc_.cmp(len_, sched_.in_flight_max_columns());
    cc_.jg(next_row);
    cc_.imul(t, len_);
    cc_.cmp(t, RowSchedule::kInFlightCallBytes / sched_.row_bytes_per_column());
    cc_.jle(in_flight);
  }
  cc_.bind(next_row);
  point_at_row();
  Label short_row = cc_.newLabel(), row_done = cc_.newLabel();
  const bool short_path = has_short_path();
  if (short_path) {
    cc_.cmp(len_, e_.lanes());
    cc_.jl(short_row);
  }
  emit_row_level(0);
  for (int p = 0; p < sched_.phases(); ++p) emit_walk(p, p, false);
  if (short_path) {
    cc_.jmp(row_done);
    cc_.bind(short_row);
    emit_short_row();  // Note [Short rows]
    cc_.bind(row_done);
  }
  cc_.inc(row);
  cc_.cmp(row, end);
  cc_.jge(done);
  advance_indices(next_row);

  if (flight > 1) {
    cc_.bind(in_flight);
    // Its own constants and per-call values (Note [Rows in flight]).
    e_.mark_preamble();
    emit_per_call_values();
    // Slot 0 is the members' own registers; slots 1.. get theirs, and
    // scratch rows past slot 0's. A slot without a row points its
    // operands at the dummy row past the scratch rows.
    ax::Gp dummy = cc_.newIntPtr("dummy_row");
    cc_.imul(dummy, len_, flight * sched_.scratch_bytes_per_column());
    cc_.add(dummy, ax::ptr(args, offsetof(KernelArgs, row_scratch)));
    slots_.assign(flight, RowSlot());
    persistent_.assign(flight, std::vector<ax::Vec>(ins.size()));
    for (int q = 1; q < flight; ++q) {
      RowSlot& slot = slots_[q];
      for (int k = 0; k < num_operands(); ++k) {
        slot.run_ptr.push_back(cc_.newIntPtr("run%d_slot%d", k, q));
        cc_.mov(slot.run_ptr[k], dummy);
      }
      slot.next_row_ptr.assign(num_operands(), ax::Gp());
      for (int s = 0; s < sched_.scratch_slots(); ++s) {
        slot.scratch_row.push_back(cc_.newIntPtr("scratch%d_slot%d", s, q));
        cc_.imul(slot.scratch_row[s], len_, q * sched_.scratch_bytes_per_column() + sched_.scratch_offset(s));
        cc_.add(slot.scratch_row[s], ax::ptr(args, offsetof(KernelArgs, row_scratch)));
      }
      // The row values its phase reads; a slot without a row reads zeros.
      for (size_t i = 0; i < ins.size(); ++i) {
        if (sched_.per_call(i) || sched_.elem(i) || sched_.avail(i) > q) continue;
        persistent_[q][i] = e_.new_vec(ins[i].dtype);
        cc_.vxorps(persistent_[q][i], persistent_[q][i], persistent_[q][i]);
      }
    }
    reset_slot_values();
    // One walk per row and P - 1 more: row r enters slot 0 at walk r, and
    // once the rows run out, the dummy row does.
    ax::Gp walks_left = cc_.newInt64("walks_left");
    cc_.mov(walks_left, end);
    cc_.sub(walks_left, begin);
    cc_.add(walks_left, flight - 1);
    Label walk = cc_.newLabel(), no_row = cc_.newLabel(), entered = cc_.newLabel(), indexed = cc_.newLabel();
    cc_.bind(walk);
    cc_.cmp(row, end);
    cc_.jge(no_row);
    point_at_row();
    cc_.inc(row);
    advance_indices(indexed);
    cc_.bind(indexed);
    cc_.jmp(entered);
    cc_.bind(no_row);
    for (int k = 0; k < num_operands(); ++k) {
      cc_.mov(run_ptr_[k], dummy);
      if (next_row_ptr_[k].isValid()) cc_.mov(next_row_ptr_[k], dummy);
    }
    cc_.bind(entered);
    emit_row_level(0);
    emit_walk(0, flight - 1, true);
    rotate_slots();
    cc_.dec(walks_left);
    cc_.jnz(walk);
    cc_.jmp(done);
  }
  cc_.bind(done);
  cc_.endFunc();
}

}  // namespace

void generate_row_kernel(const FusedKernelSpec& spec, ax::Compiler& cc, bool avx512) {
  RowKernelGenerator(spec, cc, avx512).generate();
}

}  // namespace wok::jit::x86
