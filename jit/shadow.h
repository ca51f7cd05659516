// Shadow mode (WOK_SHADOW=N, wok::set_shadow): one JIT evaluation in every
// N is run again on the precompiled kernels, and each fused kernel's
// outputs are compared with theirs. The max abs and max ulp difference per
// kernel go out as kShadow events (wok::report() lists the worst kernels,
// with the fused group and the fragment serialized as a reproducer);
// differences beyond the documented bounds (Note [Shadow-mode bounds] in
// shadow.cpp) are printed as warnings, once per kernel.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "wok/jit/plan.h"

namespace wok::jit {

// 0: off. From set_shadow, else WOK_SHADOW.
int shadow_every();
void set_shadow(int every_n);
// Counts a JIT evaluation; true for the ones to shadow.
bool shadow_due();

// What one shadowed evaluation found for one fused kernel.
struct ShadowDiff {
  std::string kernel;  // kernel name
  std::string group;   // the fused group's ops
  double max_abs = 0;
  double max_ulp = 0;  // floats: distance in representable values; integers: = max_abs
  bool reduces = false;  // the kernel has a reduction (a looser bound)
  bool float64 = false;  // some output is float64
  double half_unit = 0;  // some output is float16 (2^-11) or bfloat16 (2^-8): its unit roundoff
  int rounding_ops = 0;  // the kernel's ops that the op-by-op replay rounds after
  std::string bound;     // the bound applied, in words
  bool beyond_bound = false;
};

// Runs `f` on the precompiled kernels over `inputs` and compares with
// `jit_outputs` (replay_plan's results for `plan`). Emits the events and
// warnings; returns the comparisons, one per fused kernel that wrote an
// output of the fragment.
std::vector<ShadowDiff> shadow_compare(const Plan& plan, const Fragment& f, std::span<const StoragePtr> inputs,
                                       const std::vector<StoragePtr>& jit_outputs);

// Distance between two values of one float type in units in the last place
// (0 for equal, both nan, or +0/-0; infinite when only one is nan).
double ulp_distance(double a, double b);
double ulp_distance(float a, float b);
double ulp_distance(half a, half b);  // in the type's own ulps
double ulp_distance(bfloat16 a, bfloat16 b);

}  // namespace wok::jit
