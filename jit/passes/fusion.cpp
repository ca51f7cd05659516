// Note [Fusion groups]
// A group is a set of elementwise nodes with the same output shape that the
// JIT computes in one kernel: one pass over the iteration space, each input
// read once, only the values needed outside the group written. Groups grow
// along producer -> consumer edges (union-find), and a merge is refused when
// some path leaves the two groups and comes back, which would make the
// fused kernel depend on its own output. Constants are not members: every
// kernel that needs one computes it itself. Nodes of other shapes are not
// pulled in (that would recompute them once per broadcast element), with
// one exception: a reduction over the last axis (or all axes) anchors a row
// group (Note [Row kernels]) whose members are values of its row space,
// either full rows or one value per row, so that softmax or layer_norm is
// one kernel. An argmax's index may leave its kernel but not be computed
// with inside it (Note [Generated argmax] in jit/x86/argmax_emitter.h).
//
// A matmul the target generates anchors a GEMM group: elementwise
// consumers of its product (of the product's shape) join it as its
// epilogue, applied to each tile of the product before it is stored. They
// join only from the consumer side (a producer of an operand would have to
// run inside the packing), never when they feed the matmul themselves, and
// only when every value they read from memory is readable by the tile loop
// (is_gemm_epilogue_input). A transpose feeding only the matmul joins too:
// the packing reads it in place (absorb_gemm_operand_views); so does an
// elementwise group only an operand reads, run block by block before the
// packing (absorb_gemm_prologues, Note [GEMM prologues]).
#include <algorithm>
#include <numeric>
#include <optional>

#include "wok/jit/lowering.h"
#include "wok/jit/passes/passes.h"
#include "wok/jit/union_find.h"
#include "wok/runtime/op_registry.h"

namespace wok::jit {


void fuse_elementwise(PlanGraph& g) {
  const auto& nodes = g.fragment.nodes;
  const size_t n_nodes = nodes.size();
  std::vector<bool> candidate(n_nodes, false);
  for (size_t n = 0; n < n_nodes; ++n) {
    if (!g.alive[n] || g.constant[n]) continue;
    std::string why = fusion_blocker(g, static_cast<int>(n));
    g.break_reason[n] = why;
    candidate[n] = why.empty();
  }
  // Consumers of each node, through canonical values.
  std::vector<std::vector<int>> users(n_nodes);
  for (size_t n = 0; n < n_nodes; ++n) {
    if (!g.alive[n]) continue;
    for (int v : g.inputs_of(static_cast<int>(n)))
      if (int p = g.producer[v]; p >= 0) users[p].push_back(static_cast<int>(n));
  }

  // The space each group lives in: an output shape (k = -1), or the space
  // of the reductions it holds.
  std::vector<ReduceSpace> space(n_nodes);
  for (size_t n = 0; n < n_nodes; ++n) {
    if (!candidate[n]) continue;
    if (auto rs = reduction_space(g, static_cast<int>(n))) {
      space[n] = *rs;
    } else {
      space[n] = {g.fragment.values[nodes[n].outputs[0]].shape, -1, -1};
    }
  }
  UnionFind uf(n_nodes);
  // Per group root: its GEMM node, or -1.
  std::vector<int> gemm_of(n_nodes, -1);
  for (size_t n = 0; n < n_nodes; ++n)
    if (candidate[n] && is_gemm_node(g, static_cast<int>(n))) gemm_of[n] = static_cast<int>(n);
  // Whether a consumer group b may join GEMM group a as its epilogue.
  auto joins_epilogue = [&](int a, int b) {
    const int mm = gemm_of[a];
    if (mm < 0 || gemm_of[b] >= 0 || space[b].k >= 0) return false;
    const FragmentNode& mmn = nodes[mm];
    const TensorMeta& product = g.fragment.values[mmn.outputs[0]];
    if (space[b].shape != product.shape) return false;
    // Nodes the matmul depends on (its operands' producers, transitively).
    std::vector<char> feeds(n_nodes, 0);
    std::vector<int> stack{mm};
    while (!stack.empty()) {
      int x = stack.back();
      stack.pop_back();
      for (int v : g.inputs_of(x))
        if (int p = g.producer[v]; p >= 0 && !feeds[p]) {
          feeds[p] = 1;
          stack.push_back(p);
        }
    }
    for (size_t n = 0; n < n_nodes; ++n) {
      if (!candidate[n] || uf.find(static_cast<int>(n)) != b) continue;
      if (feeds[n] || !fits_gemm_epilogue(g, static_cast<int>(n), mm)) return false;
      for (int v : g.inputs_of(static_cast<int>(n))) {
        const int p = g.producer[v];
        if (p >= 0 && (g.constant[p] || (candidate[p] && (uf.find(p) == a || uf.find(p) == b)))) continue;
        if (!is_gemm_epilogue_input(g, v, mm)) return false;
      }
    }
    return true;
  };
  // The row space two groups would share, if they can merge.
  auto combined = [&](int a, int b) -> std::optional<ReduceSpace> {
    const ReduceSpace &sa = space[a], &sb = space[b];
    if (sa.k < 0 && sb.k < 0) return sa.shape == sb.shape ? std::optional<ReduceSpace>(sa) : std::nullopt;
    if (sa.k >= 0 && sb.k >= 0) return sa == sb ? std::optional<ReduceSpace>(sa) : std::nullopt;
    const ReduceSpace& row = sa.k >= 0 ? sa : sb;
    int other = sa.k >= 0 ? b : a;
    const Shape& ew = space[other].shape;
    if (!is_full_value(ew, row) && !is_reduced_value(ew, row)) return std::nullopt;
    // Every input of the elementwise group must be readable along the row;
    // a group of reduced values reads only values constant along it.
    const bool reduced_group = !is_full_value(ew, row);
    // A group of values without the reduced dims (keepdims false) broadcasts
    // its inputs in its own frame; the kernel reads them against the space.
    const bool dropped_frame = reduced_group && ew.size() < row.shape.size();
    for (size_t n = 0; n < n_nodes; ++n)
      if (candidate[n] && uf.find(static_cast<int>(n)) == other)
        for (int v : g.inputs_of(static_cast<int>(n))) {
          const Shape& shape = g.fragment.values[v].shape;
          if (!is_readable_input(shape, row)) return std::nullopt;
          if (reduced_group && !is_constant_along_reduced_dims(shape, row)) return std::nullopt;
          // Values are read against the space: an input of a group in the
          // dropped frame, and a reduced value without its reduced dims that a
          // full group reads ([4] of a [4, 4] row sum broadcasts along the
          // row in its consumer's frame, not one per row), must line up.
          const int p = g.producer[v];
          const bool inside = p >= 0 && candidate[p] && (uf.find(p) == a || uf.find(p) == b);
          const bool from_row_group = inside && uf.find(p) != other;
          const bool must_align = dropped_frame ? !inside : from_row_group && !is_full_value(shape, row);
          if (must_align && !aligns_as_reduced_value(shape, row)) return std::nullopt;
        }
    return row;
  };
  // Whether groups a and b together fit a column kernel's single pass: at
  // most one reduction, and no full-size member computed from it.
  auto single_pass = [&](int a, int b, const ReduceSpace& sp) {
    std::vector<bool> member(n_nodes, false), after(n_nodes, false);
    int count = 0;
    for (size_t n = 0; n < n_nodes; ++n)
      if (candidate[n]) member[n] = uf.find(static_cast<int>(n)) == a || uf.find(static_cast<int>(n)) == b;
    for (size_t n = 0; n < n_nodes; ++n) {
      if (!member[n]) continue;
      bool reduction = reduction_space(g, static_cast<int>(n)).has_value();
      count += reduction;
      for (int v : g.inputs_of(static_cast<int>(n)))
        if (int p = g.producer[v]; p >= 0 && member[p] && after[p]) after[n] = true;
      if (after[n] && !reduction && g.fragment.values[nodes[n].outputs[0]].shape == sp.shape) return false;
      after[n] = after[n] || reduction;
    }
    return count <= 1;
  };
  // Whether a member of groups a and b together would read an argmax's
  // index computed by another member: the generators keep that index
  // outside the vector lanes, as one int64 per row.
  bool any_index = false;
  for (size_t n = 0; n < n_nodes; ++n) any_index = any_index || (candidate[n] && yields_index(g, static_cast<int>(n)));
  auto reads_index = [&](int a, int b) {
    if (!any_index) return false;
    auto member = [&](int n) {
      if (!candidate[n]) return false;
      int r = uf.find(n);
      return r == a || r == b;
    };
    for (size_t n = 0; n < n_nodes; ++n) {
      if (!member(static_cast<int>(n))) continue;
      for (int v : g.inputs_of(static_cast<int>(n)))
        if (int p = g.producer[v]; p >= 0 && member(p) && yields_index(g, p)) return true;
    }
    return false;
  };
  // True when some path from group a to group b passes outside both.
  auto detour = [&](int a, int b) {
    std::vector<char> seen(n_nodes, 0);
    std::vector<int> stack;
    for (size_t n = 0; n < n_nodes; ++n)
      if (g.alive[n] && uf.find(static_cast<int>(n)) == a)
        for (int u : users[n])
          if (int r = uf.find(u); r != a && r != b && !seen[u]) {
            seen[u] = 1;
            stack.push_back(u);
          }
    while (!stack.empty()) {
      int x = stack.back();
      stack.pop_back();
      for (int u : users[x]) {
        int r = uf.find(u);
        if (r == b) return true;
        if (r != a && !seen[u]) {
          seen[u] = 1;
          stack.push_back(u);
        }
      }
    }
    return false;
  };

  for (size_t n = 0; n < n_nodes; ++n) {
    if (!candidate[n]) continue;
    for (int v : g.inputs_of(static_cast<int>(n))) {
      int p = g.producer[v];
      if (p < 0 || !candidate[p]) continue;
      int a = uf.find(p), b = uf.find(static_cast<int>(n));
      if (a == b) continue;
      if (gemm_of[a] >= 0 || gemm_of[b] >= 0) {
        if (!joins_epilogue(a, b)) {
          g.break_reason[p] = gemm_of[b] >= 0 ? "a matmul's operands are not computed in its kernel"
                                              : "not an epilogue the GEMM kernel can apply";
          continue;
        }
        if (detour(a, b)) continue;
        uf.parent[a] = b;
        space[b] = space[a];
        gemm_of[b] = gemm_of[a];
        continue;
      }
      std::optional<ReduceSpace> s = combined(a, b);
      if (!s) {
        g.break_reason[p] = "its shape differs from its consumer's";
        continue;
      }
      // A column kernel makes one pass: one reduction, and no full-size
      // value computed from its result.
      if (s->k >= 0 && !s->is_row() && !single_pass(a, b, *s)) {
        g.break_reason[p] = "a column reduction's kernel makes a single pass";
        continue;
      }
      if (reads_index(a, b)) {
        g.break_reason[p] = "an argmax's index is not fused into its consumers";
        continue;
      }
      if (detour(a, b)) continue;
      uf.parent[a] = b;
      space[b] = *s;
    }
  }
  // Compact group ids in order of first member.
  std::vector<int> id(n_nodes, -1);
  int next = 0;
  for (size_t n = 0; n < n_nodes; ++n) {
    if (!candidate[n]) continue;
    int r = uf.find(static_cast<int>(n));
    if (id[r] < 0) id[r] = next++;
    g.group[n] = id[r];
  }
  absorb_gemm_prologues(g);
  absorb_gemm_operand_views(g);
}

}  // namespace wok::jit
