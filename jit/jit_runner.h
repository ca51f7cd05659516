// The JIT backend: plans fragments (passes, fusion, code generation) and
// replays the plans.
#pragma once

#include "wok/runtime/cpu_features.h"
#include "wok/runtime/fragment.h"

namespace wok::jit {

struct Plan;

class JitRunner final : public FragmentRunner {
 public:
  explicit JitRunner(CpuIsa isa) : isa_(isa) {}
  std::string_view name() const override { return "jit"; }
  std::vector<StoragePtr> run(const Fragment& fragment, std::span<const StoragePtr> input_storage) override;
  void run_async(std::shared_ptr<FragmentJob> job, std::shared_ptr<AsyncResult> result) override;
  // Note [Prepared plans] in jit/jit_runner.cpp.
  std::unique_ptr<PreparedFragment> prepare(const Fragment& fragment) override;

 private:
  // The plan for `fragment`; null when async compile is building it in the
  // background and the fragment should run on precompiled kernels now.
  std::shared_ptr<const Plan> plan_for(const Fragment& fragment);

  CpuIsa isa_;
};

// Installs the JIT for the CPU when the host has AVX2+FMA or AVX-512.
void install_cpu_jit();

}  // namespace wok::jit
