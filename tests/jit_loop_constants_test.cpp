// Note [Loop constants on AVX2] (jit/x86/vec_emitter.cpp): while a loop's
// budget is open, the constants an instruction needs in a register are
// loaded once at the loop's mark and read from that register after; no
// more than the budget are; none are claimed with the budget closed; after
// the end every constant is the pool's memory again; and AVX-512, which
// hoists every constant to the function's entry, ignores them. Checked on
// the emitted nodes (register allocation is not needed for that order).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "wok/jit/x86/vec_emitter.h"

namespace {

namespace ax = asmjit::x86;
using wok::DType;
using wok::jit::x86::VecEmitter;

struct Shell {
  explicit Shell(bool avx512) {
    code.init(asmjit::Environment::host());
    code.attach(&cc);
    asmjit::FuncNode* f = cc.addFunc(asmjit::FuncSignatureT<void, float*>());
    out = cc.newIntPtr("out");
    f->setArg(0, out);
    e = std::make_unique<VecEmitter>(cc, avx512, avx512 ? 16 : 8);
  }
  asmjit::CodeHolder code;
  ax::Compiler cc;
  ax::Gp out;
  std::unique_ptr<VecEmitter> e;
};

// The instructions after `from`, by name.
std::vector<std::string> names_after(asmjit::BaseNode* from) {
  std::vector<std::string> names;
  for (asmjit::BaseNode* n = from->next(); n; n = n->next()) {
    if (n->type() != asmjit::NodeType::kInst) continue;
    asmjit::String text;
    asmjit::InstAPI::instIdToString(asmjit::Arch::kX64, n->as<asmjit::InstNode>()->id(), text);
    names.emplace_back(text.data());
  }
  return names;
}

TEST(JitLoopConstants, AClaimRightAtTheMarkIsLoadedBeforeWhatFollows) {
  // The first claim comes before anything else is emitted after the mark:
  // the load goes in at the mark, and the code after it comes after it.
  Shell s(false);
  asmjit::BaseNode* mark = s.cc.cursor();
  s.e->mark_loop_preamble();
  s.e->open_loop_constants(1);
  ax::Vec c = s.e->const_vec(DType::kFloat32, 2.0);
  s.cc.vmovups(ax::ptr(s.out), c);
  EXPECT_EQ(names_after(mark), (std::vector<std::string>{"vmovups", "vmovups"}));
  asmjit::BaseNode* last = s.cc.lastNode();
  while (last->type() != asmjit::NodeType::kInst) last = last->prev();
  EXPECT_TRUE(last->as<asmjit::InstNode>()->op(0).isMem()) << "the store comes after the load";
}

TEST(JitLoopConstants, LoadedOnceAtTheMarkUpToTheBudget) {
  Shell s(false);
  s.e->mark_loop_preamble();
  s.cc.nop();  // the loop's entry
  asmjit::BaseNode* body = s.cc.cursor();
  s.e->open_loop_constants(2);
  asmjit::Operand a = s.e->const_addend(DType::kFloat32, 1.5);
  asmjit::Operand b = s.e->const_addend(DType::kFloat32, 2.5);
  asmjit::Operand c = s.e->const_addend(DType::kFloat32, 3.5);  // past the budget
  EXPECT_TRUE(a.isReg());
  EXPECT_TRUE(b.isReg());
  EXPECT_TRUE(c.isMem());
  // Later uses read the same registers, whatever asks for them.
  EXPECT_EQ(s.e->const_addend(DType::kFloat32, 1.5), a);
  EXPECT_EQ(s.e->const_operand(DType::kFloat32, 2.5), b);
  EXPECT_EQ(s.e->const_vec(DType::kFloat32, 1.5), a);
  // Both loads sit before the loop's entry; nothing was emitted in the body.
  std::vector<std::string> before_body = names_after(body);
  EXPECT_TRUE(before_body.empty()) << before_body.size() << " instructions in the body";
  s.e->close_loop_constants();
  EXPECT_TRUE(s.e->const_addend(DType::kFloat32, 4.5).isMem()) << "claimed with the budget closed";
  EXPECT_EQ(s.e->const_operand(DType::kFloat32, 1.5), a) << "held until the end";
  s.e->end_loop_constants();
  EXPECT_TRUE(s.e->const_operand(DType::kFloat32, 1.5).isMem());
  EXPECT_TRUE(s.e->const_addend(DType::kFloat32, 2.5).isMem());
}

TEST(JitLoopConstants, WithoutAMarkConstantsAreLoadedWhereUsed) {
  Shell s(false);
  s.e->open_loop_constants(3);  // no mark: nothing to load at
  asmjit::BaseNode* here = s.cc.cursor();
  EXPECT_TRUE(s.e->const_addend(DType::kFloat32, 1.5).isMem());
  ax::Vec v = s.e->const_vec(DType::kFloat32, 1.5);
  EXPECT_TRUE(v.isReg());
  EXPECT_EQ(names_after(here), std::vector<std::string>{"vmovups"});
}

TEST(JitLoopConstants, Avx512KeepsItsOwnHoisting) {
  Shell s(true);
  s.e->mark_preamble();
  s.e->mark_loop_preamble();
  s.e->open_loop_constants(3);
  asmjit::Operand a = s.e->const_addend(DType::kFloat32, 1.5);
  ASSERT_TRUE(a.isReg());
  s.e->end_loop_constants();
  EXPECT_EQ(s.e->const_operand(DType::kFloat32, 1.5), a) << "hoisted at the function's entry, for good";
}

}  // namespace
