// Fragment plans by signature: a loop that traces the same program again
// skips the passes and compilation and only replays.
#pragma once

#include <memory>

#include "wok/jit/plan.h"

namespace wok::jit {

// The canonical bytes of a fragment: ops, attributes, wiring, dtypes and
// shapes; not the values of constants (Note [Constants are parameters]).
std::string fragment_signature(const Fragment& f);

// The value count, then the program's wiring as signature bytes: each node's
// op and value ids (with its attributes when `with_attrs`; a constant's value
// never), then the fragment's inputs and outputs. fragment_signature puts the
// values' dtypes, devices and shapes between the two; recompile reasons key a
// program by the wiring alone (jit/recompile_reason.cpp).
void append_fragment_wiring(std::string& s, const Fragment& f, bool with_attrs);

class PlanCache {
 public:
  static PlanCache& global();
  std::shared_ptr<const Plan> get_or_build(const Fragment& f, CpuIsa isa);
  // The cached plan (counted as a hit), or null; builds nothing and counts
  // no miss (async compile: the caller decides what a miss means).
  std::shared_ptr<const Plan> find(const Fragment& f, CpuIsa isa);
  size_t size() const;
  void clear();

 private:
  struct Impl;
  PlanCache();
  Impl* impl_;
};

}  // namespace wok::jit
