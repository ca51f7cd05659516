#include "wok/jit/lowering.h"

#include <functional>
#include <map>
#include <tuple>

#include "wok/jit/x86/x86_codegen.h"
#include "wok/runtime/op_registry.h"

namespace wok::jit {

namespace {
// The reduce instructions standing for a reduction node in a row kernel.
// argmax compares its input as it is (no cast); its instruction's dtype is
// that of the index, int64.
ScalarProgram reduction_program(const Fragment& f, const FragmentNode& n) {
  const ReductionSchema& schema = *n.op->def().reduction;
  DType in_t = f.values[n.inputs[0]].dtype, out_t = f.values[n.outputs[0]].dtype;
  ScalarProgram p;
  ScalarInstr input(ScalarOp::kInput, in_t);
  input.index = 0;
  p.instrs.push_back(input);
  if (schema.yields_index()) {
    ScalarInstr red(ScalarOp::kReduceArgmax, out_t);
    red.args[0] = 0;
    p.instrs.push_back(red);
    p.outputs.push_back(1);
    return p;
  }
  int32_t x = 0;
  if (in_t != out_t) {
    ScalarInstr c(ScalarOp::kCast, out_t);
    c.args[0] = x;
    p.instrs.push_back(c);
    x = static_cast<int32_t>(p.instrs.size() - 1);
  }
  ScalarInstr red(schema.combine, out_t);
  red.args[0] = x;
  p.instrs.push_back(red);
  int32_t result = static_cast<int32_t>(p.instrs.size() - 1);
  if (schema.divides_by_count) {
    p.instrs.push_back(ScalarInstr(ScalarOp::kRowLength, out_t));
    ScalarInstr d(ScalarOp::kDiv, out_t);
    d.args[0] = result;
    d.args[1] = static_cast<int32_t>(p.instrs.size() - 1);
    p.instrs.push_back(d);
    result = static_cast<int32_t>(p.instrs.size() - 1);
  }
  p.outputs.push_back(result);
  return p;
}
}  // namespace

ScalarProgram node_program(const Fragment& f, int node) {
  const FragmentNode& n = f.nodes[node];
  if (n.op->def().reduction) return reduction_program(f, n);
  std::vector<DType> in, out;
  for (int v : n.inputs) in.push_back(f.values[v].dtype);
  for (int v : n.outputs) out.push_back(f.values[v].dtype);
  FormulaBuilder b(in, out, *n.attrs);
  n.op->def().formula(b);
  return b.finish();
}

std::optional<ReduceSpace> reduction_space(const PlanGraph& g, int node) {
  const FragmentNode& n = g.fragment.nodes[node];
  const OpDef& def = n.op->def();
  if (!def.reduction || !g.target.fuses_reductions) return std::nullopt;
  const Shape& in = g.fragment.values[n.inputs[0]].shape;
  int nd = static_cast<int>(in.size());
  if (nd == 0 || numel(in) == 0) return std::nullopt;
  const auto& axes = n.attrs->get_ints("axes");
  // Axes are canonical (sorted); they must form one block [k, end).
  if (axes.empty()) return std::nullopt;
  int k = static_cast<int>(axes.front()), end = static_cast<int>(axes.back()) + 1;
  if (end - k != static_cast<int>(axes.size())) return std::nullopt;
  // A column kernel walks each tile of one vector's columns down the reduced
  // rows, one cache line per row. Up to 128 columns that beats the unfused
  // pair (a prologue kernel, then the precompiled outer-axis reduction) by
  // 1.4-2x; from 256 columns the strided walk is bound by memory latency and
  // loses (bench_norm_programs: col_exp_sum, and col_sum on [4096, 4096]).
  int64_t columns = 1;
  for (int d = end; d < nd; ++d) columns *= in[d];
  if (columns > kMaxColumnKernelColumns) return std::nullopt;
  if (def.reduction->yields_index()) {
    // Generated argmax keeps indices in lanes as wide as its input's, so
    // 4-byte inputs index at most kMaxArgmaxIndex32 elements. Over one
    // element the index is 0 and the result has the input's shape, which a
    // row kernel would take for a full row (a value it cannot broadcast).
    int64_t reduced = 1;
    for (int d = k; d < end; ++d) reduced *= in[d];
    DType t = g.fragment.values[n.inputs[0]].dtype;
    if (reduced == 1 || (itemsize(t) < 8 && reduced > x86::kMaxArgmaxIndex32)) return std::nullopt;
  }
  if (!g.target.can_compile(node_program(g.fragment, node))) return std::nullopt;
  return ReduceSpace{in, k, end};
}

bool yields_index(const PlanGraph& g, int node) {
  const OpDef& def = g.fragment.nodes[node].op->def();
  return def.reduction && def.reduction->yields_index();
}

bool is_full_value(const Shape& v, const ReduceSpace& s) { return v == s.shape; }

bool is_reduced_value(const Shape& v, const ReduceSpace& s) {
  Shape dropped, kept = s.shape;
  for (int d = 0; d < static_cast<int>(s.shape.size()); ++d) {
    if (d >= s.k && d < s.end) kept[d] = 1;
    else dropped.push_back(s.shape[d]);
  }
  return v == dropped || v == kept;
}

namespace {
// Dims [lo, hi) of w are all 1 or all equal to s's.
bool uniform_block(const Shape& w, const Shape& s, int lo, int hi) {
  bool all_one = true, all_equal = true;
  for (int d = lo; d < hi; ++d) {
    all_one = all_one && w[d] == 1;
    all_equal = all_equal && w[d] == s[d];
  }
  return all_one || all_equal;
}
}  // namespace

bool is_readable_input(const Shape& v, const ReduceSpace& s) {
  if (v.size() > s.shape.size()) return false;
  const int nd = static_cast<int>(s.shape.size());
  Shape w(nd - v.size(), 1);
  w.insert(w.end(), v.begin(), v.end());
  // Row kernels walk outer dims with an odometer (any broadcast); column
  // kernels see each of their three blocks as one dim.
  if (s.is_row()) return uniform_block(w, s.shape, s.k, nd);
  return uniform_block(w, s.shape, 0, s.k) && uniform_block(w, s.shape, s.k, s.end) &&
         uniform_block(w, s.shape, s.end, nd);
}

bool is_jit_elementwise(const PlanGraph& g, int node) {
  const OpDef& def = g.fragment.nodes[node].op->def();
  return def.kind == OpKind::kElementwise && def.formula && g.target.can_compile(node_program(g.fragment, node));
}

std::string fusion_blocker(const PlanGraph& g, int node) {
  const FragmentNode& n = g.fragment.nodes[node];
  const OpDef& def = n.op->def();
  if (def.kind == OpKind::kReduction && !g.target.fuses_reductions)
    return "the " + std::string(g.target.name) + " generator fuses no reductions";
  if (def.kind == OpKind::kReduction)
    return reduction_space(g, node)
               ? ""
               : "reduction over other axes, of a dtype, or of more columns than the JIT generates";
  if (def.kind != OpKind::kElementwise) return std::string(op_kind_name(def.kind)) + " op";
  if (!def.formula) return "no scalar formula";
  if (!g.target.can_compile(node_program(g.fragment, node)))
    return "no " + std::string(g.target.name) + " emitter for its dtype (integer pow)";
  const Shape& out = g.fragment.values[n.outputs[0]].shape;
  if (numel(out) == 0) return "empty output";
  std::vector<const Shape*> ins;
  for (int v : g.inputs_of(node)) ins.push_back(&g.fragment.values[v].shape);
  if (collapse_layout(out, ins).shape.size() > static_cast<size_t>(g.target.max_rank)) return "too many broadcast dims";
  return "";
}

namespace {

// Builds one ScalarProgram from several, deduplicating identical
// instructions as it goes.
class ProgramSplicer {
 public:
  int32_t add(ScalarInstr in) {
    auto key = std::make_tuple(static_cast<int>(in.op), static_cast<int>(in.dtype), in.args[0], in.args[1], in.args[2],
                               in.index, in.op == ScalarOp::kConst ? in.constant.str() : std::string());
    if (auto it = seen_.find(key); it != seen_.end()) return it->second;
    program_.instrs.push_back(in);
    int32_t id = static_cast<int32_t>(program_.instrs.size() - 1);
    seen_.emplace(key, id);
    return id;
  }
  // Copies `p` with kInput(i) replaced by args[i]; returns p's outputs.
  std::vector<int32_t> splice(const ScalarProgram& p, const std::vector<int32_t>& args) {
    std::vector<int32_t> map(p.instrs.size());
    for (size_t i = 0; i < p.instrs.size(); ++i) {
      const ScalarInstr& in = p.instrs[i];
      if (in.op == ScalarOp::kInput) {
        map[i] = args[in.index];
        continue;
      }
      ScalarInstr copy = in;
      for (int a = 0; a < scalar_op_arity(in.op); ++a) copy.args[a] = map[in.args[a]];
      map[i] = add(copy);
    }
    std::vector<int32_t> outs;
    for (int32_t o : p.outputs) outs.push_back(map[o]);
    return outs;
  }
  ScalarProgram& program() { return program_; }

 private:
  ScalarProgram program_;
  std::map<std::tuple<int, int, int32_t, int32_t, int32_t, int32_t, std::string>, int32_t> seen_;
};

}  // namespace

namespace {

// Splices the formulas of `members` (and of the constants they read) into
// k.spec.program, numbering kernel inputs and params, and writing `outputs`.
void build_program(const PlanGraph& g, const std::vector<int>& members, const std::vector<int>& outputs,
                   LoweredKernel& k) {
  const Fragment& f = g.fragment;
  ProgramSplicer sp;
  std::map<int, int32_t> instr_of;  // fragment value -> instruction
  // Inputs are numbered 0.. and params from kParamBase until the end, when
  // their final index (after the inputs) is known.
  constexpr int32_t kParamBase = 1 << 20;

  std::function<int32_t(int)> value = [&](int v) -> int32_t {
    if (auto it = instr_of.find(v); it != instr_of.end()) return it->second;
    int p = g.producer[v];
    int32_t id;
    if (p >= 0 && g.constant[p]) {
      const FragmentNode& node = f.nodes[p];
      if (node.op->def().kind == OpKind::kCreation) {
        ScalarInstr in(ScalarOp::kInput, f.values[v].dtype);
        in.index = kParamBase + static_cast<int32_t>(k.param_nodes.size());
        k.param_nodes.push_back(p);
        k.spec.param_dtypes.push_back(f.values[v].dtype);
        id = sp.add(in);
      } else {
        std::vector<int32_t> args;
        for (int in : g.inputs_of(p)) args.push_back(value(in));
        std::vector<int32_t> outs = sp.splice(node_program(f, p), args);
        for (size_t o = 0; o < node.outputs.size(); ++o) instr_of[g.canonical[node.outputs[o]]] = outs[o];
        return instr_of.at(v);
      }
    } else {
      ScalarInstr in(ScalarOp::kInput, f.values[v].dtype);
      in.index = static_cast<int32_t>(k.input_values.size());
      k.input_values.push_back(v);
      k.spec.input_dtypes.push_back(f.values[v].dtype);
      id = sp.add(in);
    }
    instr_of[v] = id;
    return id;
  };

  for (int n : members) {
    std::vector<int32_t> args;
    for (int in : g.inputs_of(n)) args.push_back(value(in));
    std::vector<int32_t> outs = sp.splice(node_program(f, n), args);
    const FragmentNode& node = f.nodes[n];
    for (size_t o = 0; o < node.outputs.size(); ++o) instr_of[g.canonical[node.outputs[o]]] = outs[o];
  }
  ScalarProgram& prog = sp.program();
  for (int v : outputs) {
    prog.outputs.push_back(value(v));
    k.output_values.push_back(v);
  }
  const int32_t n_inputs = static_cast<int32_t>(k.input_values.size());
  for (ScalarInstr& in : prog.instrs)
    if (in.op == ScalarOp::kInput && in.index >= kParamBase) in.index = in.index - kParamBase + n_inputs;

  // Drop instructions no output needs, renumbering the rest.
  std::vector<bool> used(prog.instrs.size(), false);
  for (int32_t o : prog.outputs) used[o] = true;
  for (size_t i = prog.instrs.size(); i-- > 0;)
    if (used[i])
      for (int a = 0; a < scalar_op_arity(prog.instrs[i].op); ++a) used[prog.instrs[i].args[a]] = true;
  std::vector<int32_t> renumber(prog.instrs.size(), -1);
  ScalarProgram compact;
  for (size_t i = 0; i < prog.instrs.size(); ++i) {
    if (!used[i]) continue;
    ScalarInstr in = prog.instrs[i];
    for (int a = 0; a < scalar_op_arity(in.op); ++a) in.args[a] = renumber[in.args[a]];
    renumber[i] = static_cast<int32_t>(compact.instrs.size());
    compact.instrs.push_back(in);
  }
  for (int32_t o : prog.outputs) compact.outputs.push_back(renumber[o]);
  k.spec.program = std::move(compact);
}

}  // namespace

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
