// A compiled plan: what the JIT runs for one traced fragment (one program
// and one set of shapes), built once and replayed on every evaluation of
// the same program.
//
// Note [Memory planned once]
// Each value a plan materializes lives in one of three places: a fragment
// input (read only), an output storage (handed back to the caller), or the
// plan's arena. Arena values get offsets from their lifetimes when the plan
// is built, so a replay allocates the arena and the outputs and nothing
// else. Values joined by aliasing ops (reshape) share one place.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include <absl/status/statusor.h>

#include "wok/jit/kernel_cache.h"
#include "wok/jit/lowering.h"
#include "wok/jit/target.h"
#include "wok/runtime/cpu_features.h"
#include "wok/runtime/fragment.h"

namespace wok::jit {

struct PlanStep {
  enum class Kind { kKernel, kNode } kind;
  std::shared_ptr<const CompiledKernel> kernel;  // kKernel
  LoweredKernel lowered;                          // kKernel
  int node = -1;                                  // kNode: fragment node run by its precompiled kernel
  std::vector<int> deps;                          // steps whose results this step reads
  std::vector<int> reads, writes;                 // fragment values
  int lane = 0;                                   // which stream of the run executes it
  bool signals = false;                           // a step on another lane waits for it
  std::string group;                              // kKernel: the fused group's ops ("mul+exp+sum")
};

// Every arena offset is a multiple of this (a cache line; what the
// generated kernels' aligned accesses may assume of their buffers).
inline constexpr int64_t kArenaAlign = 64;

struct Placement {
  enum class Where { kNone, kInput, kOutput, kArena } where = Where::kNone;
  int index = -1;       // kInput: fragment input position; kOutput: output storage
  int64_t offset = 0;   // kArena: byte offset
};

struct Plan {
  std::vector<PlanStep> steps;               // in a valid execution order
  std::vector<Placement> placement;          // per fragment value (canonical values)
  std::vector<int> canonical;                // per fragment value
  std::vector<size_t> output_storage_bytes;  // per output storage
  int64_t arena_bytes = 0;
  std::string graph_text;                    // passes' final view, for dumps
  int kernels = 0;                           // fused kernel steps
  int lanes = 1;                             // independent chains of steps
  bool communicates = false;                 // runs a collective (Note [The communication lane])
  int comm_lane = -1;                        // the collectives' own lane, if they have one
  int64_t work_elements = 0;                 // elements written by all steps

  // Steps in order (kind, reads, writes, lane, deps), then placements and
  // the arena's size: what WOK_DUMP_DIR shows after each plan stage.
  std::string str() const;
};

// The launch parameters of a plan's kernel steps: the values of the
// constants they read, per step (empty for node steps). A replay computes
// them from the fragment's attributes; a fragment replayed unchanged many
// times (wok::compile) computes them once.
struct PlanParams {
  std::vector<std::vector<uint64_t>> kernel;
  std::vector<std::vector<uint64_t>> prologue[2];  // GEMM steps: A's and B's prologue
};
PlanParams plan_params(const Plan& plan, const Fragment& fragment);

// One replay of a plan: its buffers, and the steps run against them.
class PlanRun {
 public:
  // `params`, when given, are plan_params(plan, fragment) and outlive the run.
  PlanRun(const Plan& plan, const Fragment& fragment, std::vector<StoragePtr> inputs,
          const PlanParams* params = nullptr);
  void run_step(size_t step);
  std::vector<StoragePtr> results() const;

 private:
  void run_step_impl(size_t step);
  void* address(int value) const;
  // One long row reduced in chunks on several threads (all-axis reductions).
  void run_split_row(const PlanStep& step, const KernelArgs& args, const std::vector<void*>& ptrs);
  static constexpr int kMaxSplitPtrs = 64;

  const Plan& plan_;
  const Fragment& fragment_;
  const PlanParams* params_;
  std::vector<StoragePtr> inputs_;
  StoragePtr arena_;
  std::vector<StoragePtr> outputs_;
};

// Runs a plan's steps on pooled streams, one stream per lane, with events
// ordering steps across lanes; completes `result` when all have run.
// `inputs`, when given, are the fragment's input storages already resolved;
// otherwise they are taken from job->leaves, waiting for any in flight.
// Returns an event that completes once the streams hold nothing of the run
// any more (Note [Letting go of a failed run] in jit/plan_stream_replay.cpp).
EventPtr replay_plan_on_streams(std::shared_ptr<const Plan> plan, std::shared_ptr<FragmentJob> job,
                                std::shared_ptr<AsyncResult> result,
                                std::shared_ptr<std::vector<StoragePtr>> inputs);

// Note [Errors inside the JIT]
// Code generators, the kernel caches and plan building report failures as
// absl::Status values: a kernel that does not compile is an expected
// outcome there (the CUDA JIT falls back on some), and a status crosses the
// compile-once caches and threads without being rethrown. The runners
// (jit/jit_runner.cpp, jit/cuda/cuda_jit_runner.cpp), where the runtime and
// through it the frontend call in, turn a failure into wok::Error, once.
// Exceptions inside are for broken invariants (internal errors) only.

// Runs the pipeline (jit/pipeline.h), lowers and compiles the fused groups (through the kernel
// cache) and plans memory. An error status if a kernel fails to compile.
absl::StatusOr<std::shared_ptr<const Plan>> build_plan(const Fragment& fragment, CpuIsa isa);
// build_plan without compiling: passes, lowered kernel steps (kernel left
// null), order, lanes and memory, fused by `target`'s rules. The CUDA JIT
// plans for cuda_target() and compiles the steps with NVRTC
// (jit/cuda/cuda_jit_runner.h).
std::shared_ptr<Plan> plan_structure(const Fragment& fragment, const Target& target = x86_target());

// Where value v lives in one run of `plan` (CPU and CUDA replays alike):
// an input's, an output's or the arena's memory.
void* placement_address(const Plan& plan, int v, std::span<const StoragePtr> inputs,
                        std::span<const StoragePtr> outputs, const Storage* arena);

// Runs node step `st` on its precompiled kernel, each value at its planned
// address (CPU and CUDA replays alike).
void run_node_step(const PlanStep& st, const Plan& plan, const Fragment& f, std::span<const StoragePtr> inputs,
                   std::span<const StoragePtr> outputs, const Storage* arena);

// Runs `plan` for `fragment` (which must have the plan's structure; its
// constant values may differ). Returns one storage per fragment output.
std::vector<StoragePtr> replay_plan(const Plan& plan, const Fragment& fragment, std::span<const StoragePtr> inputs,
                                    const PlanParams* params = nullptr);

}  // namespace wok::jit
