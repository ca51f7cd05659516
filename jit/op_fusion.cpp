// describe_fusion: the rules of fusion_blocker and reduction_space
// (jit/fusion_policy.cpp), is_gemm_node (jit/gemm_lowering.cpp) and
// fold_constants (jit/passes/constant_folding.cpp), asked of one op at each
// accepted dtype. The dtype checks are the real ones: the op's node program
// at that dtype, given to the target's can_compile.
#include "wok/jit/op_fusion.h"

#include <optional>
#include <string>
#include <utility>

#include "wok/jit/lowering.h"

namespace wok::jit {

namespace {

// The node program of `op` alone at dtype case `c`; nullopt when its
// formula does not build there.
std::optional<ScalarProgram> program_at(const RegisteredOp& op, const DTypeCase& c, const Attrs& attrs) {
  Fragment f;
  FragmentNode node;
  node.op = &op;
  node.attrs = &attrs;
  for (size_t i = 0; i < op.def().inputs.size(); ++i) {
    node.inputs.push_back(static_cast<int>(f.values.size()));
    f.values.push_back({Shape{}, c.input});
  }
  for (DType t : c.outputs) {
    node.outputs.push_back(static_cast<int>(f.values.size()));
    f.values.push_back({Shape{}, t});
  }
  f.nodes.push_back(std::move(node));
  try {
    return node_program(f, 0);
  } catch (...) {
    return std::nullopt;
  }
}

using Treatment = std::pair<JitTreatment, std::string>;

// How `target` treats `op` at `c` (nullptr: an op without tensor inputs, or
// one whose dtype rule refused every probe).
Treatment treatment(const RegisteredOp& op, const Target& target, const DTypeCase* c, const Attrs& attrs) {
  const OpDef& def = op.def();
  const std::string gen(target.name);
  // Why the target leaves op at c to a kernel of its own ("" when it fuses).
  auto refusal = [&]() -> std::string {
    if (!c) return "";
    if (widening_changes_result(def, std::vector<DType>(def.inputs.size(), c->input), attrs))
      return "its precompiled kernel widens it to " + std::string(dtype_name(compute_dtype(c->input))) +
             ", which computes in another float type";
    std::optional<ScalarProgram> p = program_at(op, *c, attrs);
    return p && target.can_compile(*p) ? "" : "no " + gen + " emitter for it";
  };
  if (def.output_aliases_input) return {JitTreatment::kView, ""};
  if (def.kind == OpKind::kCreation)
    return def.fills_constant ? Treatment{JitTreatment::kConstant, ""} : Treatment{JitTreatment::kOwnKernel, ""};
  if (def.kind == OpKind::kReduction) {
    if (!def.reduction) return {JitTreatment::kOwnKernel, "no reduction schema"};
    if (!target.fuses_reductions) return {JitTreatment::kOwnKernel, "the " + gen + " generator fuses no reductions"};
    if (std::string why = refusal(); !why.empty()) return {JitTreatment::kOwnKernel, why};
    return {JitTreatment::kFusesReduction, "over one block of adjacent axes (over more than " +
                                               std::to_string(kMaxBareColumnKernelColumns) +
                                               " columns after it only with an elementwise prologue), else its own kernel"};
  }
  if (is_gemm_op(def) && target.fuses_gemm) {
    if (c && !gemm_dtype_supported(c->outputs.empty() ? c->input : c->outputs[0]))
      return {JitTreatment::kOwnKernel, "the GEMM generator takes float32 and float64"};
    return {JitTreatment::kGemmEpilogue, def.name == "matmul" ? "transposed operands read in place"
                                                              : "depthwise convolutions run their own kernel"};
  }
  if (def.kind == OpKind::kMovement)
    return {JitTreatment::kMovement, target.fuses_gemm && def.name == "permute"
                                         ? "a transpose of the last two dims read only by a matmul is read in place"
                                         : ""};
  if (def.kind != OpKind::kElementwise) return {JitTreatment::kOwnKernel, ""};
  if (!def.formula) return {JitTreatment::kOwnKernel, "no scalar formula"};
  if (std::string why = refusal(); !why.empty()) return {JitTreatment::kOwnKernel, why};
  return {JitTreatment::kFusesElementwise, ""};
}

}  // namespace

std::vector<JitInfo> describe_fusion(const RegisteredOp& op, const OpInfo& info) {
  const Attrs attrs = placeholder_attrs(op.def());
  std::vector<JitInfo> out;
  const std::pair<DeviceType, const Target*> targets[] = {{DeviceType::kCPU, &x86_target()},
                                                          {DeviceType::kCUDA, &cuda_target()}};
  for (const auto& [device, target] : targets) {
    const size_t first = out.size();
    auto add = [&](const Treatment& t, const DTypeCase* c) {
      for (size_t i = first; i < out.size(); ++i)
        if (out[i].treatment == t.first && out[i].note == t.second) {
          if (c) out[i].dtypes.push_back(c->input);
          return;
        }
      JitInfo j{device, std::string(target->name), t.first, {}, t.second};
      if (c) j.dtypes.push_back(c->input);
      out.push_back(std::move(j));
    };
    if (info.inputs.empty() || info.dtypes.empty()) add(treatment(op, *target, nullptr, attrs), nullptr);
    for (const DTypeCase& c : info.dtypes)
      if (!info.inputs.empty()) add(treatment(op, *target, &c, attrs), &c);
    if (out.size() == first + 1) out.back().dtypes.clear();  // one treatment for every dtype
  }
  return out;
}

}  // namespace wok::jit
