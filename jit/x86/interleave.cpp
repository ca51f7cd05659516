#include "wok/jit/x86/interleave.h"

#include <unordered_map>
#include <unordered_set>

#include "wok/runtime/error.h"

namespace wok::jit::x86 {

// Note [Interleaved copies]
// An unrolled loop body is emitted as U copies, one after another: copy 0's
// tanh, then copy 1's. Each copy is one long dependency chain (a
// transcendental is 30-50 dependent instructions, ~4 cycles each), and the
// CPU can only overlap the copies as far as its out-of-order window reaches:
// Zen 4's floating-point scheduler holds about 100 instructions, two copies
// of a GELU body, so a GELU kernel ran at twice its instruction count's
// cost, latency-bound (bench_jit_programs P3, AVX2: 34 cycles per vector).
// Emitting the copies' instructions alternately puts independent work next
// to each other, so every scheduler entry has a partner ready to issue.
//
// The copies are independent by construction (each loads, computes and
// stores its own vector of elements; stores of copy u never overlap loads
// of copy v). Registers from before the loop (the index, the pointers,
// per-call values) are only read; one written inside a copy stops the
// interleaving. A register made inside one copy may still be used by a
// later one (a constant materialised once), so the merge keeps the
// original order among all nodes that mention a register made inside the
// copies: a node waits until every earlier copy's nodes naming any of its
// registers are placed. The first unfinished copy never waits,
// so the merge always progresses. Register allocation runs after this
// reordering, on the interleaved order; memory is not tracked, which is
// why only bodies whose copies touch disjoint elements may be interleaved.

namespace {

template <typename Fn>
void for_each_virt_reg(const asmjit::InstNode* inst, Fn&& fn) {
  using asmjit::Operand;
  for (uint32_t i = 0; i < inst->opCount(); ++i) {
    const Operand& op = inst->op(i);
    if (op.isReg()) {
      if (op.as<asmjit::BaseReg>().isVirtReg()) fn(op.id());
    } else if (op.isMem()) {
      const auto& m = op.as<asmjit::BaseMem>();
      if (m.hasBaseReg() && Operand::isVirtId(m.baseId())) fn(m.baseId());
      if (m.hasIndexReg() && Operand::isVirtId(m.indexId())) fn(m.indexId());
    }
  }
  if (inst->hasExtraReg() && Operand::isVirtId(inst->extraReg().id())) fn(inst->extraReg().id());
}

// The register an instruction writes: its first operand, when that is a
// virtual register (AVX forms put the destination first; a store's first
// operand is memory). kIdBad when none.
uint32_t written_reg(const asmjit::InstNode* inst) {
  if (inst->opCount() == 0) return asmjit::BaseReg::kIdBad;
  const asmjit::Operand& op = inst->op(0);
  if (op.isReg() && op.as<asmjit::BaseReg>().isVirtReg()) return op.id();
  return asmjit::BaseReg::kIdBad;
}

}  // namespace

asmjit::BaseNode* interleave_copies(asmjit::x86::Compiler& cc, const std::vector<EmittedRange>& copies) {
  if (copies.empty()) return cc.cursor();
  std::vector<std::vector<asmjit::InstNode*>> nodes(copies.size());
  for (size_t c = 0; c < copies.size(); ++c) {
    if (copies[c].before == copies[c].last) continue;
    for (asmjit::BaseNode* n = copies[c].before->next();; n = n->next()) {
      if (!n || n->type() != asmjit::NodeType::kInst) return copies.back().last;
      nodes[c].push_back(n->as<asmjit::InstNode>());
      if (n == copies[c].last) break;
    }
  }
  if (copies.size() < 2) return copies.back().last;
  // Registers first mentioned as a destination are made inside the copies
  // and keep their order across copies; the rest come from before the loop
  // and must only be read (else the copies are not independent: bail out).
  const int n_copies = static_cast<int>(nodes.size());
  std::unordered_set<uint32_t> seen, outside;
  for (const auto& list : nodes)
    for (const asmjit::InstNode* n : list) {
      const uint32_t dest = written_reg(n);
      for_each_virt_reg(n, [&](uint32_t id) {
        if (seen.insert(id).second && id != dest) outside.insert(id);
      });
      if (outside.count(dest)) return copies.back().last;
    }
  // Per register made inside: the last node of each copy that mentions it.
  std::unordered_map<uint32_t, std::vector<int>> last_mention;
  for (int c = 0; c < n_copies; ++c)
    for (int i = 0; i < static_cast<int>(nodes[c].size()); ++i)
      for_each_virt_reg(nodes[c][i], [&](uint32_t id) {
        if (outside.count(id)) return;
        auto [it, fresh] = last_mention.try_emplace(id, std::vector<int>(n_copies, -1));
        it->second[c] = i;
      });

  asmjit::BaseNode* anchor = copies.front().before;
  for (auto& list : nodes)
    for (asmjit::InstNode* n : list) cc.removeNode(n);

  std::vector<int> placed(n_copies, 0);
  // A node of copy c waits for every node of an earlier copy that mentions
  // one of its registers: the original order among them is kept.
  auto ready = [&](int c) {
    bool ok = true;
    for_each_virt_reg(nodes[c][placed[c]], [&](uint32_t id) {
      if (outside.count(id)) return;
      const std::vector<int>& last = last_mention.find(id)->second;
      for (int d = 0; d < c; ++d) ok = ok && last[d] < placed[d];
    });
    return ok;
  };
  size_t left = 0;
  for (auto& list : nodes) left += list.size();
  while (left > 0) {
    bool progressed = false;
    for (int c = 0; c < n_copies; ++c) {
      if (placed[c] == static_cast<int>(nodes[c].size()) || !ready(c)) continue;
      asmjit::InstNode* n = nodes[c][placed[c]++];
      cc.addAfter(n, anchor);
      anchor = n;
      --left;
      progressed = true;
    }
    // The first unfinished copy waits for no other, so this cannot happen.
    if (!progressed) throw Error("interleave_copies: no copy can proceed (internal error)");
  }
  return anchor;
}

void CopyRecorder::interleave() {
  cc_.setCursor(interleave_copies(cc_, ranges_));
  ranges_.clear();
}

}  // namespace wok::jit::x86
