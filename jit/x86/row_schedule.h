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
// it, the row no longer holds the value: a phase after that (softmax of a
// softmax, rms_norm of a softmax) computes the value again.
#pragma once

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
  int spill_to(int v) const { return spill_to_[v]; }
  int spill_phase(int v) const { return spill_phase_[v]; }
  int phases() const { return phases_; }
  int unroll() const { return unroll_; }  // vectors per step of the row loop

  // Note [Spilled values].
  std::vector<bool> phase_need(int phase) const;
  // A spilled value is read back from its output's row in the phases after
  // the one computing it, up to the phase that stores the output there: from
  // the next phase on, the row holds the output, and the value is computed
  // again.
  bool reloaded(int v, int phase) const {
    return spill_to_[v] >= 0 && spill_phase_[v] < phase && phase <= avail_[spec_.program.outputs[spill_to_[v]]];
  }

 private:
  void analyse();
  void choose_spills();

  const FusedKernelSpec& spec_;
  std::vector<int> avail_;      // phase from which a value exists
  std::vector<bool> elem_;      // varies along the row
  std::vector<bool> per_call_;  // the same for every row
  std::vector<int> accum_phase_;
  std::vector<int> spill_to_;     // per value: the output whose row holds it, or -1
  std::vector<int> spill_phase_;  // ... from this phase (the one computing it) on
  int phases_ = 1;
  int unroll_ = 1;
};

}  // namespace wok::jit::x86
