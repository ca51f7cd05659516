#include "wok/jit/x86/step_pipeline.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <set>

namespace wok::jit::x86 {

namespace {

using asmjit::BaseNode;
using asmjit::BaseReg;
using asmjit::InstNode;
using asmjit::Operand;
using asmjit::RegGroup;

bool is_local(uint32_t id, uint32_t first_local) {
  return Operand::isVirtId(id) && Operand::virtIdToIndex(id) >= first_local;
}

// A register an instruction names, wherever it is: an operand, a memory
// operand's base or index, or the extra (mask) register.
struct RegUse {
  uint32_t id;
  RegGroup group;
  BaseReg reg;  // its signature and id (for memory bases and indexes: a general register)
};

template <typename F>
void for_each_reg(InstNode* n, F&& f) {
  for (uint32_t i = 0; i < n->opCount(); ++i) {
    Operand& op = n->op(i);
    if (op.isReg()) {
      BaseReg& r = op.as<BaseReg>();
      f(RegUse{r.id(), r.group(), r}, [&r](uint32_t id) { r.setId(id); });
    } else if (op.isMem()) {
      ax::Mem& m = op.as<ax::Mem>();
      if (m.hasBaseReg()) f(RegUse{m.baseId(), RegGroup::kGp, ax::Gp()}, [&m](uint32_t id) { m.setBaseId(id); });
      if (m.hasIndexReg()) f(RegUse{m.indexId(), RegGroup::kGp, ax::Gp()}, [&m](uint32_t id) { m.setIndexId(id); });
    }
  }
  if (n->hasExtraReg()) {
    asmjit::RegOnly& x = n->extraReg();
    f(RegUse{x.id(), x.group(), x.toReg<BaseReg>()}, [&x](uint32_t id) { x.setId(id); });
  }
}

// The nodes of a step as one copy-ordered list, each with its copy and
// whether it is in stage B (at or past its copy's cut).
struct Placed {
  InstNode* node;
  size_t copy;
  bool stage_b;
};

bool flatten(const EmittedStep& s, const std::vector<size_t>& cuts, std::vector<Placed>* out) {
  for (size_t c = 0; c < s.copies.size(); ++c)
    for (size_t i = 0; i < s.copies[c].size(); ++i) {
      BaseNode* n = s.copies[c][i];
      if (!n->isInst()) return false;  // a label, an alignment: control flow or data in the step
      out->push_back({n->as<InstNode>(), c, i >= cuts[c]});
    }
  return true;
}

bool same_shape(const EmittedStep& a, const EmittedStep& b) {
  if (a.copies.size() != b.copies.size()) return false;
  for (size_t c = 0; c < a.copies.size(); ++c) {
    if (a.copies[c].size() != b.copies[c].size()) return false;
    for (size_t i = 0; i < a.copies[c].size(); ++i) {
      BaseNode* x = a.copies[c][i];
      BaseNode* y = b.copies[c][i];
      if (x->isInst() != y->isInst()) return false;
      if (x->isInst() && (x->as<InstNode>()->id() != y->as<InstNode>()->id() ||
                          x->as<InstNode>()->opCount() != y->as<InstNode>()->opCount()))
        return false;
    }
  }
  return true;
}

// Registers of `body` in `want`, mapped to the registers at the same
// places of `other` (the same code, emitted again).
std::map<uint32_t, uint32_t> match_registers(const std::vector<Placed>& body, const std::vector<Placed>& other,
                                             const std::set<uint32_t>& want) {
  std::map<uint32_t, uint32_t> to;
  for (size_t i = 0; i < body.size(); ++i) {
    std::vector<uint32_t> ids;
    for_each_reg(body[i].node, [&](const RegUse& u, auto&&) { ids.push_back(u.id); });
    size_t k = 0;
    for_each_reg(other[i].node, [&](const RegUse& u, auto&&) {
      if (k < ids.size() && want.count(ids[k])) to.emplace(ids[k], u.id);
      ++k;
    });
  }
  return to;
}

void emit_copy(ax::Compiler& cc, const BaseReg& dst, const BaseReg& src) { cc.vmovaps(dst.as<ax::Vec>(), src.as<ax::Vec>()); }

// Emits `emit` right after `pos`, leaving the cursor where it was.
template <typename F>
void emit_after(ax::Compiler& cc, BaseNode* pos, F&& emit) {
  BaseNode* saved = cc.cursor();
  cc.setCursor(pos);
  emit();
  if (saved != pos) cc.setCursor(saved);
}

}  // namespace

void StepRecorder::start() {
  step_ = EmittedStep{};
  step_.first_local = static_cast<uint32_t>(cc_.virtRegs().size());
  mark_ = cc_.cursor();
}

void StepRecorder::copy_done() {
  std::vector<BaseNode*> nodes;
  BaseNode* end = cc_.cursor();
  if (end != mark_)  // else the copy emitted nothing (and pipeline_step declines)
    for (BaseNode* n = mark_->next(); n; n = n->next()) {
      nodes.push_back(n);
      if (n == end) break;
    }
  step_.copies.push_back(std::move(nodes));
  mark_ = cc_.cursor();
}

EmittedStep StepRecorder::finish() { return std::move(step_); }

void remove_step(ax::Compiler& cc, const EmittedStep& step) {
  for (const auto& copy : step.copies)
    for (BaseNode* n : copy) cc.removeNode(n);
}

bool pipeline_step(ax::Compiler& cc, const EmittedStep& prologue, const EmittedStep& body, const EmittedStep& epilogue,
                   const ax::Gp& column, int columns) {
  if (body.copies.empty() || !same_shape(body, prologue) || !same_shape(body, epilogue)) return false;
  std::vector<size_t> cuts;
  for (const auto& copy : body.copies) {
    if (copy.size() < 2) return false;
    cuts.push_back(copy.size() / 2);
  }
  std::vector<Placed> b, p, e;
  if (!flatten(body, cuts, &b) || !flatten(prologue, cuts, &p) || !flatten(epilogue, cuts, &e)) return false;

  // The body's step-local registers: where each first appears, which
  // stages name it.
  struct Seen {
    bool in_a = false, in_b = false;
    size_t first_b_copy = SIZE_MAX;  // the first copy whose stage B names it
    BaseReg reg;
  };
  std::map<uint32_t, Seen> seen;
  std::vector<uint32_t> order;  // local registers by first appearance
  bool ok = true;
  for (const Placed& pl : b)
    for_each_reg(pl.node, [&](const RegUse& u, auto&&) {
      if (!is_local(u.id, body.first_local)) return;
      auto [it, fresh] = seen.try_emplace(u.id);
      if (fresh) order.push_back(u.id);
      Seen& s = it->second;
      if (u.group != RegGroup::kGp) s.reg = u.reg;
      if (pl.stage_b) {
        s.in_b = true;
        s.first_b_copy = std::min(s.first_b_copy, pl.copy);
      } else {
        s.in_a = true;
        // A later copy's stage A naming a register an earlier copy's
        // stage B names (and may write): moving every A ahead of every B
        // would change what it reads.
        if (s.first_b_copy < pl.copy) ok = false;
      }
    });
  if (!ok) return false;
  // A register from outside the step that the step writes (an
  // accumulator: read, added to, written back) must stay in one stage:
  // written in one and named in the other, the next step's stage A would
  // run between them.
  std::map<uint32_t, std::pair<unsigned, bool>> outside;  // stages naming it (bits), written
  for (const Placed& pl : b) {
    const Operand& dst = pl.node->op(0);
    for_each_reg(pl.node, [&](const RegUse& u, auto&&) {
      if (is_local(u.id, body.first_local) || !Operand::isVirtId(u.id)) return;
      auto& [stages, written] = outside[u.id];
      stages |= pl.stage_b ? 2u : 1u;
      written = written || (dst.isReg() && dst.id() == u.id);
    });
  }
  for (const auto& [id, use] : outside)
    if (use.second && use.first == 3u) return false;
  std::vector<uint32_t> carried;
  std::set<uint32_t> carried_set;
  for (uint32_t id : order) {
    const Seen& s = seen.at(id);
    if (!s.in_a || !s.in_b) continue;
    if (s.reg.group() != RegGroup::kVec) return false;  // vector registers only
    carried.push_back(id);
    carried_set.insert(id);
  }
  std::map<uint32_t, uint32_t> in_prologue = match_registers(b, p, carried_set);
  std::map<uint32_t, uint32_t> in_epilogue = match_registers(b, e, carried_set);
  for (uint32_t id : carried)
    if (!in_prologue.count(id) || !in_epilogue.count(id)) return false;

  // The carried values' own registers, live from one iteration to the next.
  std::map<uint32_t, BaseReg> own;
  for (uint32_t id : carried) {
    BaseReg r;
    cc._newReg(&r, seen.at(id).reg);
    own.emplace(id, r);
  }
  auto reg_with_id = [&](uint32_t carried_id, uint32_t id) {
    BaseReg r = seen.at(carried_id).reg;
    r.setId(id);
    return r;
  };

  // Body: stage A one step further along the row, ahead of every stage B;
  // stage B reading the copies; the copies refreshed after it.
  for (const Placed& pl : b) {
    if (pl.stage_b) {
      for_each_reg(pl.node, [&](const RegUse& u, auto&& set_id) {
        if (auto it = own.find(u.id); it != own.end()) set_id(it->second.id());
      });
      continue;
    }
    for (uint32_t i = 0; i < pl.node->opCount(); ++i) {
      Operand& op = pl.node->op(i);
      if (!op.isMem()) continue;
      ax::Mem& m = op.as<ax::Mem>();
      if (m.hasIndexReg() && m.indexId() == column.id()) m.addOffset(int64_t{columns} << m.shift());
    }
  }
  BaseNode* anchor = b.front().node->prev();
  BaseNode* last_b = nullptr;
  for (const Placed& pl : b) {
    if (pl.stage_b) {
      last_b = pl.node;
      continue;
    }
    cc.removeNode(pl.node);
    cc.addAfter(pl.node, anchor);
    anchor = pl.node;
  }
  emit_after(cc, last_b, [&] {
    for (uint32_t id : carried) emit_copy(cc, own.at(id), reg_with_id(id, id));
  });

  // Prologue: stage A, then the copies.
  BaseNode* last_a = nullptr;
  for (const Placed& pl : p) {
    if (pl.stage_b) cc.removeNode(pl.node);
    else last_a = pl.node;
  }
  emit_after(cc, last_a, [&] {
    for (uint32_t id : carried) emit_copy(cc, own.at(id), reg_with_id(id, in_prologue.at(id)));
  });

  // Epilogue: stage B, reading the copies.
  std::map<uint32_t, uint32_t> epilogue_to_own;
  for (uint32_t id : carried) epilogue_to_own.emplace(in_epilogue.at(id), own.at(id).id());
  for (const Placed& pl : e) {
    if (!pl.stage_b) {
      cc.removeNode(pl.node);
      continue;
    }
    for_each_reg(pl.node, [&](const RegUse& u, auto&& set_id) {
      if (auto it = epilogue_to_own.find(u.id); it != epilogue_to_own.end()) set_id(it->second);
    });
  }
  return true;
}

}  // namespace wok::jit::x86
