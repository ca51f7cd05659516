// Why a fragment plan had to be built: the answer to "why did it compile
// (again)?". Programs are told apart by their ops and wiring alone; each
// new signature of a known program is compared with the last one seen.
#pragma once

#include <cstdint>
#include <string>

#include "wok/runtime/cpu_features.h"
#include "wok/runtime/fragment.h"

namespace wok::jit {

struct PlanMiss {
  uint64_t program = 0;  // hash of the program's ops and wiring
  std::string name;      // "exp,mul,add (5 nodes) #1a2b3c4d"
  std::string reason;    // "first trace of this program", "dtype of input 0 changed: float32 -> float64", ...
};

// Explains a plan-cache miss for `f` and remembers `f` as the program's
// latest signature. Thread-safe.
PlanMiss explain_plan_miss(const Fragment& f, CpuIsa isa);

}  // namespace wok::jit
