// Program splicing: each node's scalar program (node_program), and the
// splicing of a group's programs into one kernel program (build_program),
// separate from the fusion policy and the kernels' layouts.
#include "wok/jit/program_splice.h"

#include <functional>
#include <map>
#include <tuple>

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

}  // namespace wok::jit
