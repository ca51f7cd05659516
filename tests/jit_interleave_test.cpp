// interleave_copies (jit/x86/interleave.h): the unrolled copies of a loop
// body alternate instruction by instruction, a register one copy shares
// with a later one keeps its order, and a body that writes a register from
// before the loop is left as it was.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "wok/jit/x86/interleave.h"

namespace {

namespace ax = asmjit::x86;

// A function shell to emit into; the nodes are read back without
// finalizing (register allocation is not needed to check the order).
struct Shell {
  Shell() {
    code.init(asmjit::Environment::host());
    code.attach(&cc);
    cc.addFunc(asmjit::FuncSignatureT<void, const float*, float*>());
    in = cc.newIntPtr("in");
    out = cc.newIntPtr("out");
    cc.setArg(0, in);
    cc.setArg(1, out);
  }
  asmjit::CodeHolder code;
  ax::Compiler cc;
  ax::Gp in, out;
};

// Instruction names and the element offset of their memory operand, in
// list order after `from`.
std::vector<std::string> listing(asmjit::BaseNode* from, asmjit::BaseNode* to) {
  std::vector<std::string> out;
  for (asmjit::BaseNode* n = from->next(); n; n = n->next()) {
    auto* inst = n->as<asmjit::InstNode>();
    asmjit::String text;
    asmjit::InstAPI::instIdToString(asmjit::Arch::kX64, inst->id(), text);
    std::string name(text.data());
    for (uint32_t i = 0; i < inst->opCount(); ++i)
      if (inst->op(i).isMem()) name += "@" + std::to_string(inst->op(i).as<ax::Mem>().offset());
    out.push_back(name);
    if (n == to) break;
  }
  return out;
}

// One copy: load element block u, add it to itself, store it.
void emit_copy(Shell& s, int u) {
  ax::Ymm v = s.cc.newYmm(), w = s.cc.newYmm();
  s.cc.vmovups(v, ax::ptr(s.in, 32 * u));
  s.cc.vaddps(w, v, v);
  s.cc.vmovups(ax::ptr(s.out, 32 * u), w);
}

TEST(JitInterleave, CopiesAlternate) {
  Shell s;
  asmjit::BaseNode* start = s.cc.cursor();
  wok::jit::x86::CopyRecorder copies(s.cc);
  for (int u = 0; u < 3; ++u) {
    copies.begin_copy();
    emit_copy(s, u);
    copies.end_copy();
  }
  copies.interleave();
  std::vector<std::string> want = {"vmovups@0", "vmovups@32", "vmovups@64", "vaddps",     "vaddps",
                                   "vaddps",    "vmovups@0",  "vmovups@32", "vmovups@64"};
  EXPECT_EQ(listing(start, s.cc.cursor()), want);
}

TEST(JitInterleave, RegisterSharedWithALaterCopyKeepsItsOrder) {
  Shell s;
  asmjit::BaseNode* start = s.cc.cursor();
  wok::jit::x86::CopyRecorder copies(s.cc);
  // Copy 0 makes `c` late in its body; copy 1 reads it first thing. A
  // plain alternation would put the read before the write.
  ax::Ymm c = s.cc.newYmm();
  copies.begin_copy();
  ax::Ymm v = s.cc.newYmm(), w = s.cc.newYmm();
  s.cc.vmovups(v, ax::ptr(s.in, 0));
  s.cc.vaddps(w, v, v);
  s.cc.vxorps(c, c, c);
  s.cc.vmovups(ax::ptr(s.out, 0), w);
  copies.end_copy();
  copies.begin_copy();
  ax::Ymm x = s.cc.newYmm();
  s.cc.vaddps(x, c, ax::ptr(s.in, 32));
  s.cc.vmovups(ax::ptr(s.out, 32), x);
  copies.end_copy();
  copies.interleave();
  std::vector<std::string> got = listing(start, s.cc.cursor());
  std::vector<std::string> want = {"vmovups@0", "vaddps", "vxorps", "vaddps@32", "vmovups@0", "vmovups@32"};
  EXPECT_EQ(got, want);
}

TEST(JitInterleave, WritingARegisterFromBeforeTheLoopKeepsTheOrder) {
  Shell s;
  ax::Ymm acc = s.cc.newYmm();
  s.cc.vxorps(acc, acc, acc);  // made before the copies: a loop-carried value
  asmjit::BaseNode* start = s.cc.cursor();
  wok::jit::x86::CopyRecorder copies(s.cc);
  for (int u = 0; u < 2; ++u) {
    copies.begin_copy();
    s.cc.vaddps(acc, acc, ax::ptr(s.in, 32 * u));
    s.cc.vmovups(ax::ptr(s.out, 32 * u), acc);
    copies.end_copy();
  }
  copies.interleave();
  std::vector<std::string> want = {"vaddps@0", "vmovups@0", "vaddps@32", "vmovups@32"};
  EXPECT_EQ(listing(start, s.cc.cursor()), want);
}

}  // namespace
