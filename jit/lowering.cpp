// Lowering of fused groups to kernels: their programs (program_splice.cpp)
// and their iteration layouts, elementwise, row and column; the fusion
// policy is in fusion_policy.cpp.
#include "wok/jit/lowering.h"

#include "wok/jit/program_splice.h"

namespace wok::jit {

LoweredKernel lower_group(const PlanGraph& g, const std::vector<int>& members, const std::vector<int>& outputs) {
  const Fragment& f = g.fragment;
  LoweredKernel k;
  build_program(g, members, outputs, k);

  // Layout over the outputs' shape.
  const Shape& iter = f.values[outputs[0]].shape;
  std::vector<const Shape*> in_shapes;
  for (int v : k.input_values) in_shapes.push_back(&f.values[v].shape);
  CollapsedLayout layout = collapse_layout(iter, in_shapes);
  k.shape = layout.shape;
  k.numel = numel(iter);
  k.spec.rank = static_cast<int>(layout.shape.size());
  for (size_t i = 0; i < k.input_values.size(); ++i) {
    std::vector<bool> b;
    for (size_t d = 0; d < layout.shape.size(); ++d) b.push_back(layout.strides[1 + i][d] == 0);
    k.spec.input_broadcast.push_back(std::move(b));
  }
  for (size_t i = 0; i < k.input_values.size(); ++i)
    k.strides.insert(k.strides.end(), layout.strides[1 + i].begin(), layout.strides[1 + i].end());
  for (size_t o = 0; o < outputs.size(); ++o)
    k.strides.insert(k.strides.end(), layout.strides[0].begin(), layout.strides[0].end());
  return k;
}

namespace {

// Column kernels see the space as [P, R, C]: kept leading dims, reduced
// dims, kept trailing dims. Every operand is contiguous along each block or
// constant along it (is_readable_input).
void lower_column_layout(const PlanGraph& g, const std::vector<int>& outputs, const ReduceSpace& space,
                         LoweredKernel& k) {
  const Fragment& f = g.fragment;
  const Shape& S = space.shape;
  const int nd = static_cast<int>(S.size());
  auto prod = [](const Shape& s, int lo, int hi) {
    int64_t p = 1;
    for (int d = lo; d < hi; ++d) p *= s[d];
    return p;
  };
  const int64_t P = prod(S, 0, space.k), R = prod(S, space.k, space.end), C = prod(S, space.end, nd);
  k.spec.kind = KernelKind::kColumn;
  k.spec.rank = 3;
  k.shape = {P, R, C};
  for (int v : k.input_values) {
    const Shape& shape = f.values[v].shape;
    Shape w(nd - shape.size(), 1);
    w.insert(w.end(), shape.begin(), shape.end());
    int64_t c = prod(w, space.end, nd), r = prod(w, space.k, space.end), p = prod(w, 0, space.k);
    int64_t sc = c == 1 ? 0 : 1;
    int64_t sr = r == 1 ? 0 : c;
    int64_t sp = p == 1 ? 0 : r * c;
    k.strides.insert(k.strides.end(), {sp, sr, sc});
    // A dim of the space that is 1 is "broadcast" for every operand.
    k.spec.input_broadcast.push_back({sp == 0, sr == 0, sc == 0});
  }
  // An output is reduced (one value per (p, c)) when its value comes from a
  // reduction, or when it has the reduced shape: a prologue value computed
  // from inputs constant along R. Its shape alone cannot tell when the
  // reduced dims are all 1.
  const auto& ins = k.spec.program.instrs;
  std::vector<bool> after(ins.size(), false);
  for (size_t i = 0; i < ins.size(); ++i) {
    after[i] = is_reduction(ins[i].op);
    for (int a = 0; a < scalar_op_arity(ins[i].op); ++a) after[i] = after[i] || after[ins[i].args[a]];
  }
  for (size_t o = 0; o < outputs.size(); ++o) {
    bool reduced = after[k.spec.program.outputs[o]] || !is_full_value(f.values[outputs[o]].shape, space);
    k.spec.output_row_scalar.push_back(reduced);
    if (reduced) k.strides.insert(k.strides.end(), {C, 0, 1});
    else k.strides.insert(k.strides.end(), {R * C, C, 1});
  }
  k.rows = P;
  k.row_length = R;
  k.numel = P * R * C;
}

}  // namespace

LoweredKernel lower_reduction_group(const PlanGraph& g, const std::vector<int>& members, const std::vector<int>& outputs,
                              const ReduceSpace& space) {
  const Fragment& f = g.fragment;
  LoweredKernel k;
  build_program(g, members, outputs, k);
  if (!space.is_row()) {
    lower_column_layout(g, outputs, space, k);
    return k;
  }
  k.spec.kind = KernelKind::kRow;
  const Shape& S = space.shape;
  const int nd = static_cast<int>(S.size());
  const int kk = space.k;

  // Each operand's strides over (outer dims..., row): outer dims are S's
  // first k, the row is the rest flattened (contiguous or constant).
  std::vector<Strides> st;  // per operand, [k + 1]
  for (int v : k.input_values) {
    const Shape& shape = f.values[v].shape;
    Shape w(nd - shape.size(), 1);
    w.insert(w.end(), shape.begin(), shape.end());
    Strides b = broadcast_strides(w, S);
    Strides s(b.begin(), b.begin() + kk);
    bool along_row = false;
    for (int d = kk; d < nd; ++d) along_row = along_row || w[d] != 1;
    s.push_back(along_row ? 1 : 0);
    st.push_back(std::move(s));
  }
  Strides full = contiguous_strides(S);
  Shape lead(S.begin(), S.begin() + kk);
  Strides lead_strides = contiguous_strides(lead);
  for (int v : outputs) {
    bool row_scalar = !is_full_value(f.values[v].shape, space);
    k.spec.output_row_scalar.push_back(row_scalar);
    Strides s = row_scalar ? lead_strides : Strides(full.begin(), full.begin() + kk);
    s.push_back(row_scalar ? 0 : 1);
    st.push_back(std::move(s));
  }
  // Merge outer dims every operand steps through as one; drop dims of 1.
  Shape outer;
  std::vector<Strides> merged(st.size());
  for (int d = 0; d < kk; ++d) {
    if (S[d] == 1) continue;
    bool mergeable = !outer.empty();
    for (size_t o = 0; o < st.size() && mergeable; ++o) mergeable = st[o][d] * S[d] == merged[o].back();
    if (mergeable) {
      outer.back() *= S[d];
      for (size_t o = 0; o < st.size(); ++o) merged[o].back() = st[o][d];
      continue;
    }
    outer.push_back(S[d]);
    for (size_t o = 0; o < st.size(); ++o) merged[o].push_back(st[o][d]);
  }
  int64_t row_length = 1;
  for (int d = kk; d < nd; ++d) row_length *= S[d];
  k.shape = outer;
  k.shape.push_back(row_length);
  k.spec.rank = static_cast<int>(k.shape.size());
  for (size_t o = 0; o < st.size(); ++o) merged[o].push_back(st[o].back());
  for (size_t i = 0; i < k.input_values.size(); ++i) {
    std::vector<bool> b;
    for (int64_t x : merged[i]) b.push_back(x == 0);
    k.spec.input_broadcast.push_back(std::move(b));
  }
  for (const Strides& m : merged) k.strides.insert(k.strides.end(), m.begin(), m.end());
  k.rows = numel(outer);
  k.row_length = row_length;
  k.numel = k.rows * row_length;
  return k;
}

}  // namespace wok::jit
