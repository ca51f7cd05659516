// The CUDA backend's figures, in one run:
//  - NVRTC compile time per fused kernel (P1, P2, P3 of bench/jit_programs.cpp
//    and softmax's elementwise parts), for sm_80 and sm_90: this part needs
//    only NVRTC, no GPU;
//  - on a GPU: P1, P2, P3 at 2^26 float32 elements, JIT vs precompiled vs a
//    device-to-device copy (GB/s counting nominal traffic: 2 reads + 1 write
//    for P1 and P2, 1 + 1 for P3 and the copy); target JIT >= 85% of copy
//    bandwidth; and launch + replay overhead per fragment (a 16-element P1
//    traced and evaluated anew each time).
// Prints Markdown tables; without a GPU it says so and prints the NVRTC part.
//
// Run: bench_cuda_programs [iterations, default 20]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "wok/jit/cuda/cuda_jit_runner.h"
#include "wok/jit/cuda/cuda_renderer.h"
#include "wok/jit/plan.h"
#include "wok/runtime/cuda/cuda_allocator.h"
#include "wok/runtime/cuda/cuda_compiler.h"
#include "wok/runtime/cuda/cuda_copy.h"
#include "wok/runtime/cuda/nvrtc_loader.h"
#include "programs.h"
#include "wok/wok.h"

namespace {

using wok::Tensor;
using Clock = std::chrono::steady_clock;

using wok_bench::p1;
using wok_bench::p2;
using wok_bench::p3;

struct Program {
  const char* name;
  Tensor (*fn)(const Tensor&, const Tensor&);
  double bytes_per_element;
};
const Program kPrograms[] = {{"P1", p1, 12}, {"P2", p2, 12}, {"P3", p3, 8}};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}
double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

// NVRTC time per fused kernel of each program (traced on the CPU: the
// kernel spec does not depend on the device).
void nvrtc_table(int iterations) {
  std::printf("\n### NVRTC compile time per fused kernel (ms, median of %d)\n\n", iterations);
  if (!wok::nvrtc_available()) {
    std::printf("NVRTC not available: %s\n", wok::nvrtc_unavailable_reason().c_str());
    return;
  }
  std::printf("| kernel | sm_80 | sm_90 |\n|---|---:|---:|\n");
  Tensor a = wok::rand({1024}, 1), b = wok::rand({1024}, 2);
  std::vector<std::pair<std::string, Tensor>> programs;
  for (const Program& p : kPrograms) programs.push_back({p.name, p.fn(a, b)});
  programs.push_back({"softmax (elementwise part)", wok::exp(a - 1.0f) / (b + 2.0f)});
  for (auto& [label, out] : programs) {
    wok::jit::cuda::PendingFragment pf = wok::jit::cuda::pending_fragment(std::vector<wok::TensorImplPtr>{out.impl()});
    std::shared_ptr<wok::jit::Plan> plan = wok::jit::plan_structure(pf.fragment);
    for (const wok::jit::PlanStep& st : plan->steps) {
      if (st.kind != wok::jit::PlanStep::Kind::kKernel) continue;
      absl::StatusOr<wok::jit::cuda::RenderedKernel> k = wok::jit::cuda::render_cuda(st.lowered.spec, "bench_kernel");
      if (!k.ok()) {
        std::printf("| %s | %s | |\n", label.c_str(), std::string(k.status().message()).c_str());
        continue;
      }
      double ms[2];
      for (int i = 0; i < 2; ++i) {
        std::vector<double> times;
        for (int it = 0; it < iterations; ++it) {
          absl::StatusOr<wok::cuda::CudaBinary> bin =
              wok::cuda::compile_cuda(k->source, "bench_kernel", i ? 90 : 80);
          if (!bin.ok()) {
            std::printf("compile failed: %s\n", std::string(bin.status().message()).c_str());
            return;
          }
          times.push_back(bin->compile_ms);
        }
        ms[i] = median(times);
      }
      std::printf("| %s | %.1f | %.1f |\n", label.c_str(), ms[0], ms[1]);
    }
  }
}

void gpu_tables(int iterations) {
  const wok::Device gpu = wok::Device::cuda(0);
  const int64_t n = int64_t{1} << 26;
  std::printf("\n### CUDA, %s, 2^26 float32 (GB/s, median of %d)\n\n", wok::cuda_device_name(0).c_str(), iterations);
  Tensor a = wok::rand({n}, 1, wok::DType::kFloat32, gpu) * 4.0f - 2.0f;
  Tensor b = wok::rand({n}, 2, wok::DType::kFloat32, gpu) * 4.0f - 2.0f;
  wok::eval({a, b});
  auto time_eval = [&](const Program& p) {
    wok::eval({p.fn(a, b)});  // warm-up: compile, allocator
    std::vector<double> t;
    for (int i = 0; i < iterations; ++i) {
      auto t0 = Clock::now();
      wok::eval({p.fn(a, b)});
      t.push_back(ms_since(t0));
    }
    return median(t);
  };
  // Device-to-device copy of one tensor (read + write).
  void* dst = wok::cuda::CudaAllocator::get(0).allocate(4 * n);
  Tensor src = wok::rand({n}, 3, wok::DType::kFloat32, gpu);
  wok::eval({src});
  const void* src_ptr = src.impl()->storage()->data();  // device memory
  std::vector<double> copy_ms;
  for (int i = 0; i <= iterations; ++i) {
    auto t0 = Clock::now();
    wok::cuda::copy_device_to_device(dst, 0, src_ptr, 0, 4 * n);
    if (i) copy_ms.push_back(ms_since(t0));
  }
  wok::cuda::CudaAllocator::get(0).deallocate(dst, 4 * n);
  const double copy_gbs = 8.0 * n / median(copy_ms) / 1e6;
  std::printf("| program | JIT | precompiled | JIT / copy bandwidth |\n|---|---:|---:|---:|\n");
  for (const Program& p : kPrograms) {
    wok::set_backend(wok::Backend::kJit);
    const double jit = p.bytes_per_element * n / time_eval(p) / 1e6;
    wok::set_backend(wok::Backend::kPrecompiled);
    const double pre = p.bytes_per_element * n / time_eval(p) / 1e6;
    std::printf("| %s | %.0f | %.0f | %.0f%% |\n", p.name, jit, pre, 100.0 * jit / copy_gbs);
  }
  std::printf("| device-to-device copy | %.0f | | |\n", copy_gbs);
  wok::set_backend(wok::Backend::kJit);
  Tensor sa = wok::rand({16}, 4, wok::DType::kFloat32, gpu), sb = wok::rand({16}, 5, wok::DType::kFloat32, gpu);
  wok::eval({p1(sa, sb)});
  std::vector<double> us;
  for (int i = 0; i < 20 * iterations; ++i) {
    auto t0 = Clock::now();
    wok::eval({p1(sa, sb)});
    us.push_back(1000 * ms_since(t0));
  }
  std::printf("\nlaunch + replay overhead per fragment (trace P1 on 16 elements, eval): %.1f us (median)\n",
              median(us));
}

}  // namespace

int main(int argc, char** argv) {
  const int iterations = argc > 1 ? std::max(1, std::atoi(argv[1])) : 20;
  nvrtc_table(std::min(iterations, 5));
  if (!wok::cuda_available()) {
    std::printf("\nno GPU: %s\nThe GPU figures (JIT vs precompiled vs copy bandwidth, replay overhead) "
                "need a CUDA device.\n",
                wok::cuda_unavailable_reason().c_str());
    return 0;
  }
  gpu_tables(iterations);
  return 0;
}
