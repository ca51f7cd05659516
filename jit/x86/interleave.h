// Interleaving the unrolled copies of a loop body, instruction by
// instruction, so the CPU sees independent work side by side.
#pragma once

#include <vector>

#include <asmjit/x86.h>

namespace wok::jit::x86 {

// Nodes (first, last], as BaseBuilder::cursor() reads before and after a
// copy was emitted.
struct EmittedRange {
  asmjit::BaseNode* before = nullptr;
  asmjit::BaseNode* last = nullptr;
};

// Records the node ranges of the copies a generator emits one after another.
class CopyRecorder {
 public:
  explicit CopyRecorder(asmjit::x86::Compiler& cc) : cc_(cc) {}
  void begin_copy() { start_ = cc_.cursor(); }
  void end_copy() { ranges_.push_back({start_, cc_.cursor()}); }
  // Reorders the recorded copies round-robin (see Note [Interleaved copies])
  // and leaves the cursor after the last node.
  void interleave();

 private:
  asmjit::x86::Compiler& cc_;
  asmjit::BaseNode* start_ = nullptr;
  std::vector<EmittedRange> ranges_;
};

// Reorders the nodes of `copies`, emitted one after another and
// independent except that a copy may read registers an earlier copy set,
// so that their instructions alternate. Returns the last node placed.
// Leaves the order alone (returns the last copy's last node) if a range
// holds anything but plain instructions.
asmjit::BaseNode* interleave_copies(asmjit::x86::Compiler& cc, const std::vector<EmittedRange>& copies);

}  // namespace wok::jit::x86
