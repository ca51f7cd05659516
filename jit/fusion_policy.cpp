// Fusion policy: which nodes the JIT fuses (elementwise formulas it can
// compile, reductions over one block of axes and, for bare reductions, not
// too many columns), and
// why others are left out; separate from how the fused kernels are built.
#include "wok/jit/lowering.h"

#include "wok/jit/x86/x86_codegen.h"
#include "wok/runtime/op_registry.h"

namespace wok::jit {

// Note [Narrow integers read as floats]
// The precompiled kernel of an op on int8, uint8, int16 or uint16 runs at
// the operands' compute dtype, int32 (uint32's: int64; Note [The widening
// adapter] in runtime/widening.h), so where int32 operands give the op
// another result dtype, it computes in that one: rsqrt(int8) is float32, rsqrt(int32)
// float64, and the precompiled rsqrt of an int8 computes in float64 and
// rounds to float32 once, where the node's formula (which the JIT runs)
// computes in float32. The random-program test found an ulp of difference
// (seeds 3000229, 3000513, 3000012). Such nodes stay with the precompiled
// kernels; int8 * 0.5f, float32 at either width, fuses.
bool widening_changes_result(const OpDef& def, std::span<const DType> inputs, const Attrs& attrs) {
  std::vector<DType> widened;
  bool narrow = false;
  for (DType t : inputs) {
    narrow = narrow || is_widened_int(t);
    widened.push_back(is_widened_int(t) ? compute_dtype(t) : t);
  }
  if (!narrow) return false;
  try {
    // An integer result wraps back either way; a float one must match.
    const std::vector<DType> at_widened = def.infer_dtype(widened, attrs), own = def.infer_dtype(inputs, attrs);
    if (at_widened.size() != own.size()) return true;
    for (size_t k = 0; k < own.size(); ++k)
      if (is_floating(own[k]) && at_widened[k] != own[k]) return true;
    return false;
  } catch (...) {
    return true;  // widened operands it refuses: not the same op
  }
}

namespace {

bool node_widening_changes_result(const Fragment& f, int node) {
  const FragmentNode& n = f.nodes[node];
  std::vector<DType> inputs;
  for (int v : n.inputs) inputs.push_back(f.values[v].dtype);
  return widening_changes_result(n.op->def(), inputs, *n.attrs);
}

// Whether the target compiles node's own program (and the precompiled
// kernel computes what it would: Note [Narrow integers read as floats]).
bool node_compiles(const PlanGraph& g, int node) {
  return !node_widening_changes_result(g.fragment, node) && g.target.can_compile(node_program(g.fragment, node));
}

}  // namespace

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
  // Note [Wide column reductions]
  // Wide column kernels stream rows (Note [Streaming column kernel] in
  // jit/x86/column_codegen.cpp), but a thread still owns a run of columns
  // across all the rows. At 1 thread that beats the precompiled outer-axis
  // kernel 1.7-3x from 256 columns; at 2 threads, where the precompiled
  // kernel gives each thread its own block of rows and merges the partial
  // results, the column split runs at 0.6-0.8x of it (bench_norm_programs,
  // col_sum). What the generated kernel always wins is a fused prologue:
  // sum(exp(x)) read once, without writing and re-reading exp(x) (1.0-1.5x
  // at 2 threads, 1.9-2.6x at 1). So a reduction of more than
  // kMaxBareColumnKernelColumns columns is generated only when its input
  // is computed by an elementwise node it can fuse; a bare reduction of a
  // tensor already in memory runs on the precompiled kernel.
  int64_t columns = 1;
  for (int d = end; d < nd; ++d) columns *= in[d];
  if (columns > kMaxBareColumnKernelColumns) {
    const int producer = g.producer[n.inputs[0]];
    if (producer < 0 || !is_jit_elementwise(g, producer)) return std::nullopt;
  }
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
  if (!node_compiles(g, node)) return std::nullopt;
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

bool aligns_as_reduced_value(const Shape& v, const ReduceSpace& s) {
  const int nd = static_cast<int>(s.shape.size());
  const int dropped_rank = nd - (s.end - s.k);
  if (static_cast<int>(v.size()) > nd) return false;
  if (static_cast<int>(v.size()) > dropped_rank) return true;  // in the space's own frame
  // v against the dropped shape, with the reduced dims put back as 1s ...
  Shape w(dropped_rank - v.size(), 1), as_dropped;
  w.insert(w.end(), v.begin(), v.end());
  for (int d = 0, j = 0; d < nd; ++d) as_dropped.push_back(d >= s.k && d < s.end ? 1 : w[j++]);
  // ... is v against the space itself, which is how a kernel reads it.
  Shape as_full(nd - v.size(), 1);
  as_full.insert(as_full.end(), v.begin(), v.end());
  return as_dropped == as_full;
}

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

bool is_constant_along_reduced_dims(const Shape& v, const ReduceSpace& s) {
  const int nd = static_cast<int>(s.shape.size());
  if (v.size() > s.shape.size()) return false;
  const int pad = nd - static_cast<int>(v.size());
  for (int d = s.k; d < s.end; ++d)
    if (d >= pad && v[d - pad] != 1) return false;
  return true;
}

bool is_jit_elementwise(const PlanGraph& g, int node) {
  const OpDef& def = g.fragment.nodes[node].op->def();
  return def.kind == OpKind::kElementwise && def.formula && node_compiles(g, node);
}

std::string fusion_blocker(const PlanGraph& g, int node) {
  const FragmentNode& n = g.fragment.nodes[node];
  const OpDef& def = n.op->def();
  if (def.kind == OpKind::kReduction && !g.target.fuses_reductions)
    return "the " + std::string(g.target.name) + " generator fuses no reductions";
  if (def.kind == OpKind::kReduction)
    return reduction_space(g, node)
               ? ""
               : "reduction over other axes, of a dtype, or of more columns than the JIT generates for a "
                 "reduction with nothing to fuse";
  if (is_gemm_node(g, node)) return "";
  if (def.kind != OpKind::kElementwise) return std::string(op_kind_name(def.kind)) + " op";
  if (!def.formula) return "no scalar formula";
  if (node_widening_changes_result(g.fragment, node))
    return "a narrow integer read as another float type than int32 would give (Note [Narrow integers read as floats])";
  if (!g.target.can_compile(node_program(g.fragment, node)))
    return "no " + std::string(g.target.name) + " emitter for its dtype (integer pow)";
  const Shape& out = g.fragment.values[n.outputs[0]].shape;
  if (numel(out) == 0) return "empty output";
  std::vector<const Shape*> ins;
  for (int v : g.inputs_of(node)) ins.push_back(&g.fragment.values[v].shape);
  if (collapse_layout(out, ins).shape.size() > static_cast<size_t>(g.target.max_rank)) return "too many broadcast dims";
  return "";
}

}  // namespace wok::jit
