// Fragment plans by signature: a loop that traces the same program again
// skips the passes and compilation and only replays.
#pragma once

#include <memory>

#include "wok/jit/plan.h"
#include "wok/runtime/fragment_signature.h"

namespace wok::jit {

class PlanCache {
 public:
  static PlanCache& global();
  // An error when a kernel of the plan does not compile; every caller
  // waiting on the same key gets it, and the next call tries again.
  absl::StatusOr<std::shared_ptr<const Plan>> get_or_build(const Fragment& f, CpuIsa isa);
  // The cached plan (counted as a hit), or null; builds nothing and counts
  // no miss (async compile: the caller decides what a miss means).
  std::shared_ptr<const Plan> find(const Fragment& f, CpuIsa isa);
  size_t size() const;
  void clear();

 private:
  struct Impl;
  PlanCache();
  // Note [Signatures hashed while recording] in runtime/fragment.h.
  std::shared_ptr<const Plan> find_recorded(const Fragment& f, CpuIsa isa);
  void remember_recorded(const Fragment& f, CpuIsa isa, const Key128& signature_key,
                         std::shared_ptr<const Plan> plan);
  Impl* impl_;
};

}  // namespace wok::jit
