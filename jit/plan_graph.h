// PlanGraph: the JIT's working view of a Fragment while its passes run.
// The fragment itself is never modified: passes record their decisions
// here (dead nodes, replaced values, constant nodes, fusion groups), and
// the plan builder reads them.
#pragma once

#include <string>
#include <vector>

#include "wok/jit/target.h"
#include "wok/runtime/fragment.h"

namespace wok::jit {

struct PlanGraph {
  // Plans `fragment` for `target`: what may fuse is the target's to say.
  explicit PlanGraph(const Fragment& fragment, const Target& target = x86_target());

  const Fragment& fragment;
  const Target& target;
  std::vector<int> producer;                // value -> node index, -1 for fragment inputs
  std::vector<int> canonical;               // value -> the value that stands for it (CSE)
  std::vector<bool> alive;                  // node is still needed
  std::vector<bool> constant;               // node computes a value known without reading data
  std::vector<int> group;                   // node -> fusion group id, -1 if not fused
  std::vector<std::string> break_reason;    // node -> why it was not fused ("" if fused)

  int value_of(int v) const { return canonical[v]; }
  // Canonical inputs of node n.
  std::vector<int> inputs_of(int n) const;
  // Alive nodes reading value v (canonical), in order.
  std::vector<int> users_of(int v) const;
  // Fragment outputs, canonical.
  std::vector<int> outputs() const;
  bool is_output(int v) const;

  std::string str() const;  // listing with groups and constants, for dumps
};

}  // namespace wok::jit
