// Matmuls the JIT generates, what may join them as their epilogue, and the
// lowering of such a group to a GEMM kernel (Note [GEMM micro-kernels] in
// jit/gemm_kernel.h, Note [GEMM blocking] in jit/gemm_driver.cpp).
//
// Note [Convolution as a GEMM]
// A conv2d (other than a depthwise one, which has its own kernel) runs on
// the same micro-kernels as a matmul, as an implicit GEMM: for each image
// n and group g, out[n, g, :, :] = W_g [O/g, C/g * KH * KW] @ P_n,g, where
// P is the patch matrix of the image (Note [Convolution patches] in
// runtime/conv_geometry.h), with one column per output position (oh, ow).
// The batches of the GEMM are the (image, group) pairs; A is the weights
// in place (row stride C/g * KH * KW, each group's rows at its offset); B
// is packed straight from the input image block by block, so the patch
// matrix is never in memory; the product's [O/g, OH * OW] block of each
// batch is the output's [n, g * O/g ..., :, :], row stride OH * OW. A 1x1
// stride-1 convolution needs no patches: B is the image itself, read like
// a matmul's operand.
//
// The epilogue sees the output [N, O, OH, OW] as [N, G] batches of
// [O/g, OH * OW] matrices: an operand fuses when its layout has that form
// (a per-channel [O, 1, 1] bias or scale: column stride 0; a residual of
// the output's shape: column stride 1), so conv + bias + relu and a ResNet
// block's conv + batch-norm + add + relu write the output once.
#include <algorithm>
#include <optional>

#include "wok/jit/lowering.h"
#include "wok/jit/program_splice.h"
#include "wok/runtime/op_registry.h"
#include "wok/runtime/scalar_primitives.h"

namespace wok::jit {

namespace {

const Shape& value_shape(const PlanGraph& g, int v) { return g.fragment.values[v].shape; }

bool is_permute(const PlanGraph& g, int node) { return g.fragment.nodes[node].op->name() == "permute"; }

// A permute that swaps the last two dims and keeps the others: a transpose
// of each matrix, which the packing reads in place.
bool swaps_last_two(const PlanGraph& g, int node) {
  if (!is_permute(g, node)) return false;
  const auto& dims = g.fragment.nodes[node].attrs->get_ints("dims");
  const int64_t r = static_cast<int64_t>(dims.size());
  if (r < 2 || dims[r - 2] != r - 1 || dims[r - 1] != r - 2) return false;
  for (int64_t d = 0; d < r - 2; ++d)
    if (dims[d] != d) return false;
  return true;
}

// Element strides of `v` (contiguous) right-aligned and broadcast to `to`.
Strides strides_in(const Shape& v, const Shape& to) {
  Shape w(to.size() - v.size(), 1);
  w.insert(w.end(), v.begin(), v.end());
  return broadcast_strides(w, to);
}

// Offsets of each batch of `batch` (row-major) given per-dim strides.
std::vector<int64_t> batch_offsets(const Shape& batch, const Strides& strides) {
  const int64_t count = numel(batch);
  std::vector<int64_t> out(static_cast<size_t>(count));
  for (int64_t b = 0; b < count; ++b) {
    int64_t rem = b, off = 0;
    for (size_t d = batch.size(); d-- > 0;) {
      off += (rem % batch[d]) * strides[d];
      rem /= batch[d];
    }
    out[static_cast<size_t>(b)] = off;
  }
  return out;
}

// A contiguous value of shape `v` read as broadcast to `space` (the
// output's batches, then a matrix): its matrix strides (0 along broadcast
// dims) and each batch's offset.
GemmOperandLayout broadcast_layout(const Shape& v, const Shape& space, const Shape& batch) {
  const Strides st = strides_in(v, space);
  GemmOperandLayout o;
  o.row_stride = st[st.size() - 2];
  o.col_stride = st[st.size() - 1];
  o.batch_offsets = batch_offsets(batch, Strides(st.begin(), st.end() - 2));
  return o;
}

bool is_conv_op(const OpDef& def) { return def.name == "conv2d" || def.name == "conv1d"; }

bool is_conv(const PlanGraph& g, int node) { return is_conv_op(g.fragment.nodes[node].op->def()); }

ConvGeometry conv_geometry(const PlanGraph& g, int node) {
  const std::vector<int> in = g.inputs_of(node);
  return ConvGeometry::conv2d(value_shape(g, in[0]), value_shape(g, in[1]), *g.fragment.nodes[node].attrs);
}

// A contiguous value of shape `v` read as broadcast to a convolution's
// output [N, O, OH, OW] (or [N, O, OW]), seen as batches (n, group) of
// [O / groups, OH * OW] (Note [Convolution as a GEMM]); nullopt when the
// spatial dims do not merge into one column stride.
std::optional<GemmOperandLayout> conv_output_layout(const Shape& v, const ConvGeometry& cg) {
  Strides st = strides_in(v, cg.output_shape());
  if (cg.spatial == 1) st.insert(st.begin() + 2, 0);  // a height of 1
  GemmOperandLayout o;
  o.row_stride = st[1];
  if (cg.oh == 1) o.col_stride = st[3];
  else if (cg.ow == 1) o.col_stride = st[2];
  else if (st[2] == cg.ow * st[3]) o.col_stride = st[3];
  else return std::nullopt;
  const int64_t og = cg.o_per_group();
  for (int64_t n = 0; n < cg.n; ++n)
    for (int64_t gi = 0; gi < cg.groups; ++gi) o.batch_offsets.push_back(n * st[0] + gi * og * st[1]);
  return o;
}

}  // namespace

bool is_gemm_op(const OpDef& def) { return def.name == "matmul" || is_conv_op(def); }

bool is_gemm_node(const PlanGraph& g, int node) {
  const FragmentNode& n = g.fragment.nodes[node];
  if (!g.target.fuses_gemm) return false;
  if (is_conv(g, node)) {
    const ConvGeometry cg = conv_geometry(g, node);
    if (cg.depthwise() || cg.k() == 0) return false;
  } else if (!is_gemm_op(n.op->def())) {
    return false;
  }
  const DType t = g.fragment.values[n.outputs[0]].dtype;
  if (!gemm_dtype_supported(t)) return false;
  for (int v : g.inputs_of(node))
    if (g.fragment.values[v].dtype != t) return false;
  return numel(value_shape(g, n.outputs[0])) > 0;
}

bool is_gemm_epilogue_input(const PlanGraph& g, int value, int gemm_node) {
  const FragmentNode& mm = g.fragment.nodes[gemm_node];
  const Shape& out = value_shape(g, mm.outputs[0]);
  const Shape& v = value_shape(g, value);
  const DType acc = g.fragment.values[mm.outputs[0]].dtype;
  const DType t = g.fragment.values[value].dtype;
  // One register width for every operand (Note [Lanes and registers]);
  // bools are stored as bytes and would need other masked loads.
  if (t == DType::kBool || itemsize(t) != itemsize(acc) || v.size() > out.size()) return false;
  const size_t pad = out.size() - v.size();
  for (size_t d = 0; d < v.size(); ++d)
    if (v[d] != 1 && v[d] != out[pad + d]) return false;
  return !is_conv(g, gemm_node) || conv_output_layout(v, conv_geometry(g, gemm_node)).has_value();
}

std::vector<int> gemm_prologue_members(const PlanGraph& g, int gemm_node, int side) {
  if (is_conv(g, gemm_node)) return {};  // the packing reads patches of the image itself
  const int v = g.inputs_of(gemm_node)[static_cast<size_t>(side)];
  const int group = g.group[gemm_node];
  std::vector<char> in(g.fragment.nodes.size(), 0);
  std::vector<int> stack;
  if (int p = g.producer[v]; p >= 0 && group >= 0 && g.group[p] == group && !is_gemm_operand_view(g, p)) {
    in[p] = 1;
    stack.push_back(p);
  }
  while (!stack.empty()) {
    const int x = stack.back();
    stack.pop_back();
    for (int u : g.inputs_of(x))
      if (int p = g.producer[u]; p >= 0 && !in[p] && g.group[p] == group && !g.constant[p]) {
        in[p] = 1;
        stack.push_back(p);
      }
  }
  std::vector<int> members;  // in node order, which is topological
  for (size_t n = 0; n < in.size(); ++n)
    if (in[n]) members.push_back(static_cast<int>(n));
  return members;
}

void absorb_gemm_prologues(PlanGraph& g) {
  const Fragment& f = g.fragment;
  const size_t nn = f.nodes.size();
  bool changed = false;
  for (size_t mm = 0; mm < nn; ++mm) {
    if (!g.alive[mm] || g.group[mm] < 0 || !is_gemm_node(g, static_cast<int>(mm)) || is_conv(g, static_cast<int>(mm)))
      continue;
    for (int v : g.inputs_of(static_cast<int>(mm))) {
      const int p = g.producer[v];
      if (p < 0 || g.group[p] < 0 || g.group[p] == g.group[mm]) continue;
      const int group = g.group[p];
      // The group is elementwise (no matmul, no reduction), and nothing
      // outside it but this matmul reads what it computes.
      bool ok = true;
      for (size_t n = 0; n < nn && ok; ++n) {
        if (g.group[n] != group) continue;
        if (is_gemm_node(g, static_cast<int>(n)) || reduction_space(g, static_cast<int>(n))) ok = false;
        for (int out : f.nodes[n].outputs) {
          const int c = g.canonical[out];
          if (g.is_output(c)) ok = false;
          for (int u : g.users_of(c))
            if (g.group[u] != group && u != static_cast<int>(mm)) ok = false;
        }
      }
      if (!ok) continue;
      for (size_t n = 0; n < nn; ++n)
        if (g.group[n] == group) g.group[n] = g.group[mm];
      changed = true;
    }
  }
  if (!changed) return;
  // Compact the group ids again, in order of first member.
  std::vector<int> id(nn, -1);
  int next = 0;
  for (size_t n = 0; n < nn; ++n) {
    if (g.group[n] < 0) continue;
    if (id[g.group[n]] < 0) id[g.group[n]] = next++;
    g.group[n] = id[g.group[n]];
  }
}

bool fits_gemm_epilogue(const PlanGraph& g, int node, int gemm_node) {
  const int64_t width = static_cast<int64_t>(itemsize(g.fragment.values[g.fragment.nodes[gemm_node].outputs[0]].dtype));
  for (int v : g.fragment.nodes[node].outputs) {
    const DType t = g.fragment.values[v].dtype;
    if (t == DType::kBool || static_cast<int64_t>(itemsize(t)) != width) return false;
  }
  for (const ScalarInstr& in : node_program(g.fragment, node).instrs) {
    const int64_t lane = in.dtype == DType::kBool ? 4 : static_cast<int64_t>(itemsize(in.dtype));
    if (lane > width || (width == 4 && primitive(in.op).float32_via_float64)) return false;
  }
  return true;
}

bool is_gemm_operand_view(const PlanGraph& g, int node) { return is_permute(g, node) && swaps_last_two(g, node); }

void absorb_gemm_operand_views(PlanGraph& g) {
  const Fragment& f = g.fragment;
  for (size_t n = 0; n < f.nodes.size(); ++n) {
    if (!g.alive[n] || g.group[n] < 0 || !is_gemm_node(g, static_cast<int>(n)) || is_conv(g, static_cast<int>(n)))
      continue;
    for (int v : g.inputs_of(static_cast<int>(n))) {
      const int p = g.producer[v];
      if (p < 0 || !g.alive[p] || g.constant[p] || g.group[p] >= 0 || !is_gemm_operand_view(g, p)) continue;
      if (g.is_output(v)) continue;
      bool only_this = true;
      for (int u : g.users_of(v)) only_this = only_this && u == static_cast<int>(n);
      if (!only_this) continue;
      g.group[p] = g.group[n];
      g.break_reason[p] = "";
    }
  }
}

namespace {

// The GemmLayout of a convolution's group (Note [Convolution as a GEMM]);
// `k` holds the epilogue's program with the product as input 0.
void lower_conv_layout(const PlanGraph& g, int conv, const std::vector<int>& outputs, LoweredKernel& k) {
  const ConvGeometry cg = conv_geometry(g, conv);
  const std::vector<int> in = g.inputs_of(conv);
  GemmLayout& l = k.gemm;
  const int64_t og = cg.o_per_group(), cpg = cg.c_per_group(), cols = cg.oh * cg.ow;
  l.m = og;
  l.n = cols;
  l.k = cg.k();
  l.batches = cg.n * cg.groups;
  l.a_ptr = 1;  // the weights; the step's pointers are the image, then the weights
  l.b_ptr = 0;
  l.a.row_stride = l.k;
  l.a.col_stride = 1;
  l.b.row_stride = cg.h * cg.w;
  l.b.col_stride = 1;
  for (int64_t n = 0; n < cg.n; ++n)
    for (int64_t gi = 0; gi < cg.groups; ++gi) {
      l.a.batch_offsets.push_back(gi * og * l.k);
      l.b.batch_offsets.push_back((n * cg.c + gi * cpg) * cg.h * cg.w);
    }
  if (!cg.pointwise()) l.b_patches = cg;
  l.convolution = true;
  k.spec.input_broadcast.push_back({false, false});
  for (size_t i = 1; i < k.input_values.size(); ++i) {
    GemmOperandLayout o = *conv_output_layout(value_shape(g, k.input_values[i]), cg);
    k.spec.input_broadcast.push_back({o.row_stride == 0, o.col_stride == 0});
    l.epilogue.push_back(std::move(o));
  }
  const int n_in = static_cast<int>(k.input_values.size()) - 1;
  const DType t = g.fragment.values[g.canonical[g.fragment.nodes[conv].outputs[0]]].dtype;
  for (size_t o = 0; o < outputs.size(); ++o) {
    l.epilogue.push_back(*conv_output_layout(cg.output_shape(), cg));
    if (l.acc_entry < 0 && k.spec.output_dtype(static_cast<int>(o)) == t) l.acc_entry = n_in + static_cast<int>(o);
  }
  l.first_entry = 2;
  k.input_values.erase(k.input_values.begin());
  k.input_values.insert(k.input_values.begin(), {in[0], in[1]});
  k.shape = {l.m, l.n};
  k.numel = l.batches * l.m * l.n;
}

}  // namespace

LoweredKernel lower_gemm_group(const PlanGraph& g, const std::vector<int>& members, const std::vector<int>& outputs) {
  const Fragment& f = g.fragment;
  int mm = -1;
  for (int n : members)
    if (is_gemm_node(g, n)) mm = n;
  const std::vector<int> mm_inputs = g.inputs_of(mm);
  // Members each operand is computed from (its prologue), and the rest.
  std::vector<int> prologue[2], epilogue;
  for (int side = 0; side < 2; ++side) prologue[side] = gemm_prologue_members(g, mm, side);
  for (int n : members) {
    const bool in_prologue = std::count(prologue[0].begin(), prologue[0].end(), n) ||
                             std::count(prologue[1].begin(), prologue[1].end(), n);
    if (n != mm && !is_gemm_operand_view(g, n) && !in_prologue) epilogue.push_back(n);
  }
  const FragmentNode& node = f.nodes[mm];
  const int product = g.canonical[node.outputs[0]];
  const DType t = f.values[product].dtype;
  LoweredKernel k;
  build_program(g, epilogue, outputs, k);
  // The product is input 0.
  ScalarProgram& prog = k.spec.program;
  auto at = std::find(k.input_values.begin(), k.input_values.end(), product);
  int32_t from = static_cast<int32_t>(at - k.input_values.begin());
  if (at == k.input_values.end()) {  // not read: no instruction refers to it
    k.input_values.push_back(product);
    k.spec.input_dtypes.push_back(t);
    for (ScalarInstr& in : prog.instrs)
      if (in.op == ScalarOp::kInput && in.index >= from) ++in.index;  // params move up one
  }
  for (ScalarInstr& in : prog.instrs)
    if (in.op == ScalarOp::kInput) {
      if (in.index == from) in.index = 0;
      else if (in.index == 0) in.index = from;
    }
  std::swap(k.input_values[0], k.input_values[static_cast<size_t>(from)]);
  std::swap(k.spec.input_dtypes[0], k.spec.input_dtypes[static_cast<size_t>(from)]);

  k.spec.kind = KernelKind::kGemm;
  k.spec.rank = 2;
  if (is_conv(g, mm)) {
    lower_conv_layout(g, mm, outputs, k);
    return k;
  }
  const Shape& out = value_shape(g, product);
  const size_t nd = out.size();
  const Shape batch(out.begin(), out.end() - 2);
  GemmLayout& l = k.gemm;
  l.m = out[nd - 2];
  l.n = out[nd - 1];
  l.batches = numel(batch);

  // The operands: read through an absorbed transpose where there is one,
  // or computed by their prologue.
  std::vector<int> operand_values;
  for (int side = 0; side < 2; ++side) {
    int v = mm_inputs[static_cast<size_t>(side)];
    if (!prologue[side].empty()) {
      (side == 0 ? l.a_ptr : l.b_ptr) = static_cast<int>(operand_values.size());
      GemmPrologue& pro = (side == 0 ? l.a_prologue : l.b_prologue).emplace();
      pro.first_ptr = static_cast<int>(operand_values.size());
      LoweredKernel pk;
      build_program(g, prologue[side], {v}, pk);
      pro.spec = std::move(pk.spec);
      pro.spec.kind = KernelKind::kElementwise;
      pro.spec.rank = 2;
      pro.param_nodes = std::move(pk.param_nodes);
      const Shape& s = value_shape(g, v);
      Shape space = batch;  // the operand as the output's batches see it
      space.push_back(s[s.size() - 2]);
      space.push_back(s[s.size() - 1]);
      for (int iv : pk.input_values) {
        GemmOperandLayout o = broadcast_layout(value_shape(g, iv), space, batch);
        pro.spec.input_broadcast.push_back({o.row_stride == 0, o.col_stride == 0});
        pro.inputs.push_back(std::move(o));
        operand_values.push_back(iv);
      }
      if (side == 0) l.k = s[s.size() - 1];
      continue;
    }
    (side == 0 ? l.a_ptr : l.b_ptr) = static_cast<int>(operand_values.size());
    const int p = g.producer[v];
    const bool transposed = p >= 0 && g.group[p] == g.group[mm] && is_gemm_operand_view(g, p);
    if (transposed) v = g.inputs_of(p)[0];
    operand_values.push_back(v);
    const Shape& s = value_shape(g, v);  // as stored
    const int64_t rows = s[s.size() - 2], cols = s[s.size() - 1];
    GemmOperandLayout& o = side == 0 ? l.a : l.b;
    o.row_stride = transposed ? 1 : cols;
    o.col_stride = transposed ? cols : 1;
    Strides bs = strides_in(Shape(s.begin(), s.end() - 2), batch);
    for (int64_t& x : bs) x *= rows * cols;
    o.batch_offsets = batch_offsets(batch, bs);
    if (side == 0) l.k = transposed ? rows : cols;
  }
  k.spec.input_broadcast.push_back({false, false});
  for (size_t i = 1; i < k.input_values.size(); ++i) {
    GemmOperandLayout o = broadcast_layout(value_shape(g, k.input_values[i]), out, batch);
    k.spec.input_broadcast.push_back({o.row_stride == 0, o.col_stride == 0});
    l.epilogue.push_back(std::move(o));
  }
  const int n_in = static_cast<int>(k.input_values.size()) - 1;
  for (size_t o = 0; o < outputs.size(); ++o) {
    GemmOperandLayout w;
    w.row_stride = l.n;
    w.col_stride = 1;
    w.batch_offsets = batch_offsets(batch, strides_in(batch, batch));
    for (int64_t& x : w.batch_offsets) x *= l.m * l.n;
    l.epilogue.push_back(std::move(w));
    if (l.acc_entry < 0 && k.spec.output_dtype(static_cast<int>(o)) == t) l.acc_entry = n_in + static_cast<int>(o);
  }
  // The step reads the operands (or their prologues' inputs) and the
  // epilogue's inputs; the product itself is never in memory unless it is
  // an output.
  l.first_entry = static_cast<int>(operand_values.size());
  k.input_values.erase(k.input_values.begin());
  k.input_values.insert(k.input_values.begin(), operand_values.begin(), operand_values.end());
  k.shape = {l.m, l.n};
  k.numel = l.batches * l.m * l.n;
  return k;
}

}  // namespace wok::jit
