// The analysis behind a row kernel's schedule (row_schedule.h): phases,
// per-row and per-call values, and the spills of Note [Spilled values];
// separate from the emission in row_codegen.cpp.
#include "wok/jit/x86/row_schedule.h"

#include <algorithm>

#include "wok/jit/x86/instr_emitter.h"
#include "wok/jit/x86/row_tail.h"
#include "wok/runtime/error.h"

namespace wok::jit::x86 {

void RowSchedule::analyse() {
  const auto& ins = spec_.program.instrs;
  avail_.assign(ins.size(), 0);
  elem_.assign(ins.size(), false);
  per_call_.assign(ins.size(), false);
  accum_phase_.assign(ins.size(), -1);
  for (size_t i = 0; i < ins.size(); ++i) {
    const ScalarInstr& in = ins[i];
    if (in.op == ScalarOp::kInput) {
      bool param = in.index >= spec_.num_inputs();
      per_call_[i] = param;
      elem_[i] = !param && !spec_.inner_broadcast(in.index);
    } else if (in.op == ScalarOp::kConst || in.op == ScalarOp::kRowLength) {
      per_call_[i] = true;
    } else if (is_reduction(in.op)) {
      int a = in.args[0];
      if (ins[a].op == ScalarOp::kReduceArgmax)
        throw Error("row kernel: an instruction reads an argmax index (internal error)");
      accum_phase_[i] = avail_[a];
      avail_[i] = avail_[a] + 1;
      phases_ = std::max(phases_, avail_[a] + 1);
    } else {
      bool all_call = true;
      for (int a = 0; a < scalar_op_arity(in.op); ++a) {
        if (ins[in.args[a]].op == ScalarOp::kReduceArgmax)
          throw Error("row kernel: an instruction reads an argmax index (internal error)");
        avail_[i] = std::max(avail_[i], avail_[in.args[a]]);
        elem_[i] = elem_[i] || elem_[in.args[a]];
        all_call = all_call && per_call_[in.args[a]];
      }
      per_call_[i] = all_call;
    }
  }
  for (int o = 0; o < spec_.num_outputs(); ++o)
    if (!spec_.output_row_scalar[o]) phases_ = std::max(phases_, avail_[spec_.program.outputs[o]] + 1);
  choose_spills();
  choose_loops();
}

// Per-element values the sinks of `phase` (its reductions and full
// outputs) depend on; a value reloaded from a spill ends the walk, and so
// does a reduction: the phase reads its result, a row value, and its
// operand is needed where it accumulates (marked first). Walking on
// through it made layer_norm's last pass compute (x - mean)^2 again for
// the variance it no longer sums, a dead multiply per vector.
std::vector<bool> RowSchedule::phase_need(int phase) const {
  const auto& ins = spec_.program.instrs;
  std::vector<bool> need(ins.size(), false);
  for (size_t i = 0; i < ins.size(); ++i)
    if (is_reduction(ins[i].op) && accum_phase_[i] == phase) need[ins[i].args[0]] = true;
  for (int o = 0; o < spec_.num_outputs(); ++o)
    if (!spec_.output_row_scalar[o] && avail_[spec_.program.outputs[o]] == phase) need[spec_.program.outputs[o]] = true;
  for (size_t i = ins.size(); i-- > 0;)
    if (need[i] && !is_reduction(ins[i].op) && !reloaded(static_cast<int>(i), phase))
      for (int a = 0; a < scalar_op_arity(ins[i].op); ++a) need[ins[i].args[a]] = true;
  return need;
}

void RowSchedule::choose_spills() {
  const auto& ins = spec_.program.instrs;
  spill_to_.assign(ins.size(), -1);
  scratch_slot_.assign(ins.size(), -1);
  spill_phase_.assign(ins.size(), -1);
  if (phases_ < 2) return;
  std::vector<bool> costly(ins.size(), false);
  for (size_t i = 0; i < ins.size(); ++i) {
    if (!elem_[i] || is_reduction(ins[i].op) || ins[i].op == ScalarOp::kInput) continue;
    costly[i] = is_transcendental(ins[i].op);
    for (int a = 0; a < scalar_op_arity(ins[i].op); ++a) costly[i] = costly[i] || costly[ins[i].args[a]];
  }
  // A half-type input widened to float32, worth keeping for a phase that
  // computes a transcendental (Note [Spilled values]).
  std::vector<bool> widened(ins.size(), false);
  for (size_t i = 0; i < ins.size(); ++i) {
    const ScalarInstr& in = ins[i];
    widened[i] = elem_[i] && in.op == ScalarOp::kCast && ins[in.args[0]].op == ScalarOp::kInput &&
                 is_half(ins[in.args[0]].dtype);
  }
  std::vector<int> first(ins.size(), -1);  // the first phase computing each value
  for (int p = 0; p < phases_; ++p) {
    std::vector<bool> need = phase_need(p);
    for (size_t i = 0; i < ins.size(); ++i)
      if (need[i] && first[i] < 0) first[i] = p;
  }
  for (int o = 0; o < spec_.num_outputs(); ++o) {
    if (spec_.output_row_scalar[o]) continue;
    const int q = avail_[spec_.program.outputs[o]];
    std::vector<bool> need = phase_need(q);
    int best = -1;  // the latest qualifying value: it covers the most work
    for (size_t i = 0; i < ins.size(); ++i) {
      if (!need[i] || !costly[i] || spill_to_[i] >= 0 || first[i] < 0 || first[i] >= q) continue;
      if (itemsize(ins[i].dtype) != itemsize(spec_.output_dtype(o))) continue;
      best = static_cast<int>(i);
    }
    if (best < 0) continue;
    spill_to_[best] = o;
    spill_phase_[best] = first[best];
  }
  // What is still computed again goes to scratch rows, the latest value
  // first (it covers the most work). A spill cuts the walk of the phases
  // after its own, so each phase is searched again after each choice; the
  // scratch types are those with masked loads and stores (RowTail).
  for (int q = 1; q < phases_; ++q) {
    for (;;) {
      std::vector<bool> need = phase_need(q);
      const bool heavy = work_of(q).transcendentals > 0;
      int best = -1;
      for (size_t i = 0; i < ins.size(); ++i) {
        if (!need[i] || !(costly[i] || (heavy && widened[i])) || spilled(static_cast<int>(i)) || first[i] < 0 ||
            first[i] >= q)
          continue;
        if (!RowTail::masked(ins[i].dtype)) continue;
        best = static_cast<int>(i);
      }
      if (best < 0) break;
      scratch_slot_[best] = scratch_slots();
      scratch_offset_.push_back(scratch_bytes_per_column_);
      scratch_bytes_per_column_ += static_cast<int>(itemsize(ins[best].dtype));
      spill_phase_[best] = first[best];
    }
  }
}

// The per-element instructions `phase` computes (not those it reloads),
// and how many of them are transcendentals.
RowSchedule::PhaseWork RowSchedule::work_of(int phase) const {
  const auto& ins = spec_.program.instrs;
  const std::vector<bool> need = phase_need(phase);
  PhaseWork w;
  for (size_t i = 0; i < ins.size(); ++i) {
    if (!need[i] || !elem_[i] || reloaded(static_cast<int>(i), phase)) continue;
    ++w.instructions;
    if (is_transcendental(ins[i].op)) ++w.transcendentals;
  }
  return w;
}

// Note [Row loop unrolling]
// Each step of a phase's loop handles unroll(phase) vectors, with one
// accumulator per vector for each reduction: independent chains, so a
// phase whose work per vector is short is not held to one vector per
// latency of its accumulate (a nan-keeping max is three dependent
// instructions). A phase computing a transcendental has a long chain per
// vector already, which the out-of-order core overlaps across steps;
// unrolling it further only adds registers (on AVX2, spills). The phases
// of one kernel differ (softmax: a light max pass, a heavy exp pass), so
// this is decided per phase; it was decided per kernel, and softmax's max
// pass ran two vectors per step.
//
// Note [Next row prefetch] (row_codegen.cpp) picks the phase with the most
// work to fetch the next row in: its instructions, a transcendental
// counted as the dozen or so it expands to; ties go to the later phase.
void RowSchedule::choose_loops() {
  unroll_.assign(phases_, 4);
  pipelined_.assign(phases_, false);
  int most = -1;
  for (int p = 0; p < phases_; ++p) {
    const PhaseWork w = work_of(p);
    if (w.transcendentals > 0) unroll_[p] = 2;
    pipelined_[p] = w.transcendentals > 0;
    const int work = w.instructions + 11 * w.transcendentals;
    if (work >= most) {
      most = work;
      prefetch_phase_ = p;
    }
  }
  // An argmax's step keeps column positions of its own (pos vectors
  // advanced per step): its phase is not pipelined.
  const auto& ins = spec_.program.instrs;
  for (size_t i = 0; i < ins.size(); ++i)
    if (ins[i].op == ScalarOp::kReduceArgmax && accum_phase_[i] >= 0) pipelined_[accum_phase_[i]] = false;
  first_write_phase_.assign(spec_.num_outputs(), -1);
  for (int o = 0; o < spec_.num_outputs(); ++o)
    if (!spec_.output_row_scalar[o]) first_write_phase_[o] = avail_[spec_.program.outputs[o]];
  for (size_t i = 0; i < spec_.program.instrs.size(); ++i)
    if (spill_to_[i] >= 0) first_write_phase_[spill_to_[i]] = std::min(first_write_phase_[spill_to_[i]], spill_phase_[i]);
  // Note [Rows in flight] (row_codegen.cpp): kernels of several phases,
  // without an argmax (its partial results are kept per call), of a
  // program short enough that the path's code compiles quickly, whose rows
  // in flight fit in L1 for some length the path is worth taking at.
  bool in_flight = phases_ > 1 && spec_.rank > 1 && static_cast<int>(ins.size()) <= kInFlightMaxInstructions;
  for (const ScalarInstr& in : ins) in_flight = in_flight && in.op != ScalarOp::kReduceArgmax;
  row_bytes_per_column_ = scratch_bytes_per_column_;
  // An input the same for every row counts once, not per row in flight
  // (a rank-1 kernel has one row: no outer dim to ask about).
  for (int k = 0; k < spec_.num_inputs(); ++k)
    if (!spec_.inner_broadcast(k) && (spec_.rank < 2 || !spec_.input_broadcast[k][spec_.rank - 2]))
      row_bytes_per_column_ += static_cast<int>(itemsize(spec_.input_dtypes[k]));
  for (int o = 0; o < spec_.num_outputs(); ++o)
    if (!spec_.output_row_scalar[o]) row_bytes_per_column_ += static_cast<int>(itemsize(spec_.output_dtype(o)));
  in_flight = in_flight && row_bytes_per_column_ > 0;
  if (in_flight) in_flight_max_columns_ = kInFlightBytes / (phases_ * row_bytes_per_column_);
  rows_in_flight_ = in_flight && in_flight_max_columns_ >= kInFlightMinColumns ? phases_ : 1;
}

}  // namespace wok::jit::x86
