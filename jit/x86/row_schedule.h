// The schedule of a row kernel (Note [Row kernels] in jit/fused_kernel.h):
// which values vary along the row or are the same for every row, the phase
// each exists from, and which are spilled; row_codegen.cpp emits the code.
//
// Note [Spilled values]
// A later phase may need a per-element value an earlier phase computed:
// softmax's exp(x - max) feeds the sum in phase 1 and the output in phase 2.
// Recomputing it doubles the kernel's transcendental work, so when the value
// is costly (has a transcendental in it) and a full output of the later
// phase has its width, the earlier phase also stores it into that output's
// row, and the later phase loads it back from there: the row is still in
// cache, and the output's own store at each position comes after the load.
// The bits are the same either way. Once the output's own phase has stored
// it, the row no longer holds the value.
//
// A costly value that no output row can hold goes to a scratch row instead:
// a float32 exp(x - max) of a float16 softmax (two bytes per column in the
// output, four needed), or a value a phase needs after its output's phase
// has overwritten the row (softmax of a softmax). The launcher hands each
// call a per-thread buffer of scratch_bytes_per_column() bytes per column
// (KernelArgs::row_scratch); value s of the scratch occupies its own
// stretch of it. Without it the float16 softmax computed exp twice per
// element and ran at 0.77x float32's speed on a Zen 5 EPYC, where float32
// softmax is compute bound. A scratch row costs a store and a load per
// element, from L1 or L2 for rows up to some 100K columns; for longer rows
// the bytes come from memory, about what computing the value again would
// have cost.
//
// A float16 or bfloat16 input is loaded and widened to float32 in every
// phase that reads it, and the widening costs: vcvtph2ps is about a cycle
// and a half per 16 values on a Zen 5 EPYC, bfloat16's shift and
// zero-extension two instructions. So for a later phase that computes a
// transcendental (softmax's exp pass), the widened input is kept like a
// costly value: the first phase stores it as float32 into a scratch row,
// and that phase loads it back. In cache (softmax over [128, 4096], 1
// thread, paired with float32 in one run) time(float32) / time(half) went
// from 0.91 to 1.05 for float16 and from 0.86 to 0.95 for bfloat16. A
// light phase is bound by memory, not by the conversion, and keeping it
// cost: layer_norm's float16 kernel over [4096, 4096] went from 0.15 to
// 0.18 ns per element.
#pragma once

#include <cstdint>
#include <vector>

#include "wok/jit/fused_kernel.h"

namespace wok::jit::x86 {

class RowSchedule {
 public:
  // Analyses spec's program; throws Error when an instruction reads an
  // argmax index (internal error).
  explicit RowSchedule(const FusedKernelSpec& spec) : spec_(spec) { analyse(); }

  // Per value (instruction index); see the fields below.
  int avail(int v) const { return avail_[v]; }
  bool elem(int v) const { return elem_[v]; }
  bool per_call(int v) const { return per_call_[v]; }
  int accum_phase(int v) const { return accum_phase_[v]; }
  int spill_to(int v) const { return spill_to_[v]; }            // output row, or -1
  int scratch_slot(int v) const { return scratch_slot_[v]; }    // scratch row, or -1
  bool spilled(int v) const { return spill_to_[v] >= 0 || scratch_slot_[v] >= 0; }
  int spill_phase(int v) const { return spill_phase_[v]; }
  // Bytes per column of the scratch rows, and where row s starts, in
  // bytes per column before it (Note [Spilled values]).
  int scratch_bytes_per_column() const { return scratch_bytes_per_column_; }
  int scratch_offset(int slot) const { return scratch_offset_[slot]; }
  int scratch_slots() const { return static_cast<int>(scratch_offset_.size()); }
  int phases() const { return phases_; }
  // Note [Next row prefetch] (row_codegen.cpp): the phase that fetches the
  // next row's inputs, and the first phase writing full output o's row (its
  // own phase, or an earlier one spilling a value there).
  int prefetch_phase() const { return prefetch_phase_; }
  int first_write_phase(int o) const { return first_write_phase_[o]; }
  // Vectors per step of `phase`'s row loop (Note [Row loop unrolling]).
  int unroll(int phase) const { return unroll_[phase]; }
  // Whether `phase`'s row loop is software-pipelined (Note
  // [Software-pipelined steps] in jit/x86/step_pipeline.h): a phase
  // computing a transcendental, without an argmax.
  bool pipelined(int phase) const { return pipelined_[phase]; }
  // Rows the kernel works on at once (Note [Rows in flight] in
  // row_codegen.cpp): the phases, or 1. Each has its own scratch rows:
  // the launcher's buffer holds this many times scratch_bytes_per_column.
  int rows_in_flight() const { return rows_in_flight_; }
  // The row lengths that path takes, and the most bytes a call may touch
  // (rows times row_bytes_per_column) for it to.
  static constexpr int kInFlightMinColumns = 256;
  int in_flight_max_columns() const { return in_flight_max_columns_; }
  static constexpr int64_t kInFlightCallBytes = 4 << 20;
  // Bytes per column of a row: of its row operands and scratch rows.
  int row_bytes_per_column() const { return row_bytes_per_column_; }
  // The bytes of the rows in flight (their operands and scratch rows) the
  // path keeps within, about L1's 48 KiB on a Zen 5 EPYC and its
  // neighbours in the set.
  static constexpr int kInFlightBytes = 80 << 10;
  // The longest program (in its compute dtypes) that takes the path: its
  // walk adds the code of every phase again, and compile time grows faster
  // than the code (Note [Rows in flight]). float16 layer_norm with weight
  // and bias has 20 instructions.
  static constexpr int kInFlightMaxInstructions = 24;

  // Note [Spilled values].
  std::vector<bool> phase_need(int phase) const;
  // A spilled value is read back in the phases after the one computing it:
  // from a scratch row in all of them; from its output's row up to the
  // phase that stores the output there (from the next phase on, the row
  // holds the output, and the value is computed again).
  bool reloaded(int v, int phase) const {
    if (scratch_slot_[v] >= 0) return spill_phase_[v] < phase;
    return spill_to_[v] >= 0 && spill_phase_[v] < phase && phase <= avail_[spec_.program.outputs[spill_to_[v]]];
  }

 private:
  void analyse();
  void choose_spills();
  void choose_loops();
  struct PhaseWork {
    int instructions = 0;
    int transcendentals = 0;
  };
  PhaseWork work_of(int phase) const;

  const FusedKernelSpec& spec_;
  std::vector<int> avail_;      // phase from which a value exists
  std::vector<bool> elem_;      // varies along the row
  std::vector<bool> per_call_;  // the same for every row
  std::vector<int> accum_phase_;
  std::vector<int> spill_to_;     // per value: the output whose row holds it, or -1
  std::vector<int> scratch_slot_;  // per value: the scratch row holding it, or -1
  std::vector<int> spill_phase_;   // ... from this phase (the one computing it) on
  std::vector<int> scratch_offset_;
  int scratch_bytes_per_column_ = 0;
  int phases_ = 1;
  std::vector<int> unroll_;  // per phase
  std::vector<bool> pipelined_;  // per phase
  int rows_in_flight_ = 1;
  int in_flight_max_columns_ = 0;
  int row_bytes_per_column_ = 0;
  int prefetch_phase_ = 0;
  std::vector<int> first_write_phase_;  // per output; -1 for row scalars
};

}  // namespace wok::jit::x86
