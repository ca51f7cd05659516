// Building a plan: the pipeline (jit/pipeline.h), then the kernels
// compiled through the kernel cache. Replays are in jit/plan_replay.cpp and
// jit/plan_stream_replay.cpp.
#include "wok/jit/plan.h"
#include "wok/jit/gemm_driver.h"

#include "wok/jit/graphviz.h"
#include "wok/jit/pipeline.h"
#include "wok/jit/plan_order_check.h"
#include "wok/runtime/dump.h"
#include "wok/runtime/error.h"
#include "wok/runtime/signature.h"

namespace wok::jit {

absl::StatusOr<std::shared_ptr<const Plan>> build_plan(const Fragment& fragment, CpuIsa isa) {
  std::shared_ptr<Plan> plan = plan_structure(fragment);
  for (PlanStep& st : plan->steps) {
    if (st.kind != PlanStep::Kind::kKernel) continue;
    if (st.lowered.spec.is_gemm()) {
      // The register tile is the host's: it is part of the kernel's signature.
      const GemmTile tile = choose_gemm_tile(st.lowered.spec.input_dtypes[0], isa, st.lowered.gemm.m,
                                             st.lowered.gemm.convolution);
      st.lowered.spec.tile_rows = tile.rows;
      st.lowered.spec.tile_cols = tile.cols;
      for (std::optional<GemmPrologue>* p : {&st.lowered.gemm.a_prologue, &st.lowered.gemm.b_prologue}) {
        if (!*p) continue;
        absl::StatusOr<std::shared_ptr<const CompiledKernel>> k = KernelCache::global().get((*p)->spec, isa);
        if (!k.ok())
          return absl::Status(k.status().code(), "cannot compile a GEMM prologue: " + std::string(k.status().message()));
        (*p)->kernel = *k;
      }
    }
    absl::StatusOr<std::shared_ptr<const CompiledKernel>> k = KernelCache::global().get(st.lowered.spec, isa);
    if (!k.ok())
      return absl::Status(k.status().code(), "cannot compile a fused kernel: " + std::string(k.status().message()));
    st.kernel = *k;
  }
  return std::shared_ptr<const Plan>(std::move(plan));
}

std::shared_ptr<Plan> plan_structure(const Fragment& fragment, const Target& target) {
  PlanGraph g(fragment, target);
  if (!dump_enabled()) {
    std::shared_ptr<Plan> plan = run_pipeline(g, nullptr);
    testing::apply_plan_edit_hook(*plan);
    return plan;
  }
  std::vector<StageRecord> records;
  std::shared_ptr<Plan> plan = run_pipeline(g, &records);
  std::string text = fragment.str();
  testing::apply_plan_edit_hook(*plan);
  for (const StageRecord& r : records) text += "\n-- after " + r.name + ":\n" + r.after;
  std::string stem = "fragment_" + hash128(text).hex().substr(0, 8);
  write_dump(stem + ".passes.txt", text);
  write_dump(stem + ".dot", to_graphviz(g));
  return plan;
}

}  // namespace wok::jit
