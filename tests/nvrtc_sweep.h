// Compiling many rendered CUDA kernels with NVRTC, for the tests that sweep
// every op and dtype (tests/cuda_codegen_test.cpp,
// tests/cuda_formula_kernel_test.cpp) and the fusion patterns.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "wok/runtime/cuda/cuda_compiler.h"

namespace wt {

inline constexpr int kSweepArchs[] = {80, 90};

struct NvrtcCase {
  std::string label;   // what a failure names
  std::string name;    // the kernel's program name when compiled alone
  std::string source;  // empty: not rendered (the caller reports why)
  std::string detail;  // appended to a failure (the spec, say)
};

// kBoth compiles every case for every arch of kSweepArchs. kAlternate
// compiles case i for kSweepArchs[i % 2] only, which halves the sweep:
// see Note [Alternating archs in the NVRTC sweeps].
enum class SweepArchs { kBoth, kAlternate };

struct SweepResult {
  std::vector<std::string> failures;
  size_t compiles = 0;  // NVRTC programs that compiled as batches
  double ms_per_batch = 0;
};

// Note [Alternating archs in the NVRTC sweeps]
// Each kernel costs NVRTC about 0.1 s per arch (front end, then ptxas for
// the cubin; the program's fixed cost is small), and the two every-op
// sweeps render about a thousand kernels each: compiling every one for
// sm_80 and sm_90 took 4 minutes of a 2-core machine per sweep, a third
// of the suite's run. The sweeps list cases op by op with the dtypes
// inner, so alternating archs by case index gives every op with two or
// more dtypes both archs, and every dtype both archs across the ops; each
// (op, dtype) pair still compiles to a cubin once. The fusion patterns and
// named cases compile for both. WOK_TEST_NVRTC_BOTH_ARCHS=1 compiles every
// pair for both archs.
inline SweepResult compile_sweep(const std::vector<NvrtcCase>& cases, size_t per_batch, SweepArchs archs) {
  if (const char* both = std::getenv("WOK_TEST_NVRTC_BOTH_ARCHS"); both && std::string(both) == "1")
    archs = SweepArchs::kBoth;
  struct Job {
    int arch;
    std::vector<size_t> cases;
  };
  std::vector<Job> jobs;
  for (size_t a = 0; a < std::size(kSweepArchs); ++a) {
    std::vector<size_t> mine;
    for (size_t i = 0; i < cases.size(); ++i)
      if (!cases[i].source.empty() && (archs == SweepArchs::kBoth || i % std::size(kSweepArchs) == a))
        mine.push_back(i);
    for (size_t b = 0; b < mine.size(); b += per_batch)
      jobs.push_back({kSweepArchs[a], std::vector<size_t>(mine.begin() + static_cast<std::ptrdiff_t>(b),
                                                          mine.begin() + static_cast<std::ptrdiff_t>(
                                                                             std::min(mine.size(), b + per_batch)))});
  }

  SweepResult result;
  std::mutex mu;
  std::atomic<size_t> next{0};
  std::atomic<int64_t> us{0};
  std::atomic<size_t> compiled{0};
  auto worker = [&] {
    for (size_t j; (j = next.fetch_add(1)) < jobs.size();) {
      const Job& job = jobs[j];
      const std::string arch = "sm_" + std::to_string(job.arch);
      std::string source;
      for (size_t i : job.cases) source += cases[i].source;
      absl::StatusOr<wok::cuda::CudaBinary> bin =
          wok::cuda::compile_cuda(source, "batch" + std::to_string(j), job.arch);
      if (bin.ok() && bin->is_cubin && !bin->image.empty()) {
        us.fetch_add(static_cast<int64_t>(bin->compile_ms * 1000));
        compiled.fetch_add(1);
        continue;
      }
      // A failing batch: compile its kernels one by one to name the culprit.
      bool named = false;
      for (size_t i : job.cases) {
        absl::StatusOr<wok::cuda::CudaBinary> one = wok::cuda::compile_cuda(cases[i].source, cases[i].name, job.arch);
        std::string failure;
        if (!one.ok()) failure = cases[i].label + " " + arch + ": " + std::string(one.status().message());
        else if (!one->is_cubin) failure = cases[i].label + ": no cubin for " + arch;
        if (failure.empty()) continue;
        named = true;
        std::lock_guard lock(mu);
        result.failures.push_back(failure + (cases[i].detail.empty() ? "" : "\n" + cases[i].detail));
      }
      if (!named) {  // each compiles alone: the kernels clash with each other
        std::lock_guard lock(mu);
        result.failures.push_back("batch " + std::to_string(j) + " for " + arch + " fails while each of its kernels " +
                                  "compiles alone: " +
                                  (bin.ok() ? std::string("no cubin") : std::string(bin.status().message())));
      }
    }
  };
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < std::max(1u, std::thread::hardware_concurrency()); ++t) threads.emplace_back(worker);
  for (std::thread& t : threads) t.join();
  result.compiles = compiled.load();
  if (result.compiles)
    result.ms_per_batch = static_cast<double>(us.load()) / 1000.0 / static_cast<double>(result.compiles);
  return result;
}

}  // namespace wt
