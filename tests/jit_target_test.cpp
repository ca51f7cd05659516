// The pass pipeline plans for a target: the x86 generator fuses reductions
// with their prologues and epilogues; the CUDA renderer makes elementwise
// kernels only, so a CUDA plan keeps its elementwise groups fused and runs
// the reductions on precompiled kernels instead of falling back whole.
#include <gtest/gtest.h>
#include <wok/wok.h>

#include "wok/jit/cuda/cuda_renderer.h"
#include "wok/jit/plan.h"
#include "wok/jit/target.h"
#include "wok/runtime/op_registry.h"

namespace {

using wok::jit::PlanStep;

// exp(-x) summed over rows, then exp of the sums: on x86 one row kernel
// (prologue, reduction, epilogue).
struct RowProgram {
  wok::Attrs none;
  wok::Attrs axes;
  wok::Fragment f;
  RowProgram() {
    const wok::RegisteredOp& exp = wok::OpRegistry::global().get("exp");
    const wok::RegisteredOp& neg = wok::OpRegistry::global().get("neg");
    const wok::RegisteredOp& sum = wok::OpRegistry::global().get("sum");
    axes = wok::Attrs(&sum.def().attrs, {std::vector<int64_t>{1}, true});
    const wok::Device cpu = wok::Device::cpu();
    for (int i = 0; i < 3; ++i) f.values.push_back({wok::Shape{64, 256}, wok::DType::kFloat32, cpu});
    f.values.push_back({wok::Shape{64, 1}, wok::DType::kFloat32, cpu});
    f.values.push_back({wok::Shape{64, 1}, wok::DType::kFloat32, cpu});
    f.inputs = {0};
    f.nodes.push_back({&neg, &none, {0}, {1}, {}});
    f.nodes.push_back({&exp, &none, {1}, {2}, {}});
    f.nodes.push_back({&sum, &axes, {2}, {3}, {}});
    f.nodes.push_back({&exp, &none, {3}, {4}, {}});
    f.outputs = {4};
  }
};

int kernels(const wok::jit::Plan& p) {
  int n = 0;
  for (const PlanStep& st : p.steps) n += st.kind == PlanStep::Kind::kKernel;
  return n;
}

TEST(JitTarget, X86FusesTheReductionWithItsNeighbours) {
  RowProgram prog;
  auto plan = wok::jit::plan_structure(prog.f, wok::jit::x86_target());
  EXPECT_EQ(plan->steps.size(), 1u) << plan->graph_text;
  EXPECT_EQ(kernels(*plan), 1);
}

TEST(JitTarget, CudaKeepsElementwiseGroupsAndLeavesTheReductionToAKernelCall) {
  RowProgram prog;
  auto plan = wok::jit::plan_structure(prog.f, wok::jit::cuda_target());
  // [neg, exp] fused, sum on the precompiled kernel, exp fused alone.
  ASSERT_EQ(plan->steps.size(), 3u) << plan->graph_text;
  EXPECT_EQ(kernels(*plan), 2);
  EXPECT_NE(plan->graph_text.find("fuses no reductions"), std::string::npos) << plan->graph_text;
  for (const PlanStep& st : plan->steps) {
    if (st.kind != PlanStep::Kind::kKernel) continue;
    absl::StatusOr<wok::jit::cuda::RenderedKernel> k = wok::jit::cuda::render_cuda(st.lowered.spec, "k");
    EXPECT_TRUE(k.ok()) << k.status();  // every fused step renders: no whole-fragment fallback
  }
}

TEST(JitTarget, CudaRendersOnlyWhatItHasPatternsFor) {
  wok::ScalarProgram p;
  wok::ScalarInstr in(wok::ScalarOp::kInput, wok::DType::kFloat32);
  in.index = 0;
  p.instrs.push_back(in);
  wok::ScalarInstr e(wok::ScalarOp::kExp, wok::DType::kFloat32);
  e.args[0] = 0;
  p.instrs.push_back(e);
  p.outputs = {1};
  EXPECT_TRUE(wok::jit::cuda::can_render(p));
  wok::ScalarInstr r(wok::ScalarOp::kReduceSum, wok::DType::kFloat32);
  r.args[0] = 1;
  p.instrs.push_back(r);
  p.outputs = {2};
  EXPECT_FALSE(wok::jit::cuda::can_render(p));
  EXPECT_TRUE(wok::jit::x86_target().can_compile(p));
}

// Storage dtypes render in their compute dtypes (Note [Programs in their
// compute dtypes] in runtime/compute_program.h); uint64, which has none,
// in itself.
TEST(JitTarget, CudaRendersEveryDtype) {
  for (wok::DType t : wok::kAllDTypes) {
    if (t == wok::DType::kBool) continue;
    wok::ScalarProgram p;
    wok::ScalarInstr in(wok::ScalarOp::kInput, t);
    in.index = 0;
    p.instrs.push_back(in);
    wok::ScalarInstr add(wok::ScalarOp::kAdd, t);
    add.args[0] = add.args[1] = 0;
    p.instrs.push_back(add);
    p.outputs = {1};
    EXPECT_TRUE(wok::jit::cuda::can_render(p)) << wok::dtype_name(t);
  }
}

}  // namespace
