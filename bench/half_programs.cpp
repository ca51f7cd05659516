// Half precision against float32 (issue 15), in one run, under the JIT:
//   p1, p2, p3  the programs of bench/programs.h over 2^24 elements
//   softmax     over the last dim of [4096, 4096]
//   layer_norm  over the last dim of [4096, 4096], without weight and bias
//   softmax_l2  softmax over [64, 4096], which stays in cache: the
//               arithmetic's own cost, against which softmax's memory-bound
//               share shows (reported)
//   matmul      [1024, 1024] @ [1024, 1024]
// each in float32, float16 and bfloat16, with 1 and 2 threads. The half
// programs read and write half the bytes and compute in float32 (Note [Half
// types in registers] in jit/x86/vec_emitter.h). GB/s counts each input read
// once and the output written once, in the dtype's bytes; matmul reports
// GFLOP/s (2 m n k).
//
// Targets, checked as time ratios within this run (paired rounds, median):
//   time(float32) / time(half)  >= 1.8   p1, softmax, layer_norm, each half type
//   time(float32) / time(half)  reported p2, p3, softmax_l2 (compute bound: no target)
//   rate(half) / rate(float32)  >= 0.9   matmul, each half type
// and, after them, standalone AVX2 loops of p1 in bfloat16 that measure the
// store levers Note [bfloat16 stores] records, pairs (taken) and streaming
// stores (not taken) (bench/bfloat16_store_probe.h; reported, 1 thread).
//
// Run: bench_half_programs [--benchmark_filter=REGEX] [--benchmark_repetitions=N]
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "bench_util.h"
#include "bfloat16_store_probe.h"
#include "programs.h"

namespace {

using wok::DType;
using wok::Tensor;
using wok_bench::name_of;

constexpr int kThreadCounts[] = {1, 2};
constexpr int kPairedRounds = 11;
constexpr int64_t kElements = int64_t{1} << 24;
constexpr int64_t kRows = 4096, kCols = 4096;
constexpr int64_t kCachedRows = 64;  // 1 MiB of float32: in L2
constexpr int64_t kGemm = 1024;
constexpr DType kDTypes[] = {DType::kFloat32, DType::kFloat16, DType::kBFloat16};

struct Workload {
  std::string name;       // "p1/float16"
  std::string program;    // "p1"
  DType dtype;
  double bytes = 0;       // traffic per evaluation (GB/s)
  double flops = 0;       // matmul only
  std::function<Tensor()> run;
};

std::vector<Workload>& workloads() {
  static std::vector<Workload> all;
  return all;
}

Tensor input(const wok::Shape& shape, uint64_t seed, DType t) {
  Tensor x = wok::cast(wok_bench::uniform(shape, seed), t);
  wok::eval({x});
  return x;
}

void make_workloads() {
  for (DType t : kDTypes) {
    const std::string d(wok::dtype_name(t));
    const double item = static_cast<double>(wok::itemsize(t));
    const Tensor a = input({kElements}, 1, t), b = input({kElements}, 2, t);
    using Program = Tensor (*)(const Tensor&, const Tensor&);
    const std::pair<const char*, Program> programs[] = {{"p1", wok_bench::p1}, {"p2", wok_bench::p2}, {"p3", wok_bench::p3}};
    for (auto [name, fn] : programs) {
      const double reads = std::string(name) == "p3" ? 1 : 2;
      workloads().push_back({std::string(name) + "/" + d, name, t, (reads + 1) * item * kElements, 0,
                             [a, b, fn = fn] { return fn(a, b); }});
    }
    const Tensor x = input({kRows, kCols}, 3, t);
    workloads().push_back({"softmax/" + d, "softmax", t, 2 * item * kRows * kCols, 0, [x] { return wok::softmax(x, 1); }});
    workloads().push_back({"layer_norm/" + d, "layer_norm", t, 2 * item * kRows * kCols, 0, [x] { return wok::layer_norm(x); }});
    const Tensor small = input({kCachedRows, kCols}, 6, t);
    workloads().push_back({"softmax_l2/" + d, "softmax_l2", t, 2 * item * kCachedRows * kCols, 0,
                           [small] { return wok::softmax(small, 1); }});
    const Tensor m = input({kGemm, kGemm}, 4, t), n = input({kGemm, kGemm}, 5, t);
    workloads().push_back({"matmul/" + d, "matmul", t, 3 * item * kGemm * kGemm, 2.0 * kGemm * kGemm * kGemm,
                           [m, n] { return wok::matmul(m, n); }});
  }
}

void register_all() {
  for (int threads : kThreadCounts)
    for (const Workload& w : workloads())
      wok_bench::register_variant(name_of(w.name, threads), w.bytes, threads, [] { wok::set_backend(wok::Backend::kJit); },
                                  [run = w.run] { wok::eval({run()}); });
}

// Kernels the JIT launches for one evaluation of `w`.
int64_t launches(const Workload& w) {
  wok::set_backend(wok::Backend::kJit);
  wok::eval({w.run()});
  wok::reset_stats();
  wok::eval({w.run()});
  return wok::stats().kernel_launches;
}

void print_bfloat16_store_probe() {
  using wok_bench::fmt;
  const auto r = wok_bench::bf16_probe::measure(kElements, kPairedRounds);
  if (!r.ran) {
    std::printf("\n(bfloat16 store probe skipped: the host has no AVX2)\n");
    return;
  }
  std::printf("\n### bfloat16 store levers: standalone AVX2 loops of p1, 1 thread (time(float32) / time(bfloat16))\n\n");
  std::printf("| stores | element order | pairs in even/odd order (the JIT's elementwise kernels) |\n|---|---:|---:|\n");
  std::printf("| ordinary | %s | %s |\n", fmt(r.current).c_str(), fmt(r.pairs).c_str());
  std::printf("| streaming (float32 too) | %s | %s |\n", fmt(r.current_nt).c_str(), fmt(r.pairs_nt).c_str());
  std::printf("\nPairs give element order's bits: %s\n", r.same_bits ? "yes" : "NO");
}

void print_tables() {
  using wok_bench::fmt;
  std::printf("\n### Half precision under the JIT (GB/s, matmul GFLOP/s; median iteration)\n\n");
  std::printf("| program | dtype | kernels/eval | 1 thread | 2 threads |\n|---|---|---:|---:|---:|\n");
  for (const Workload& w : workloads()) {
    double v[2];
    for (int i = 0; i < 2; ++i) {
      const double s = wok_bench::median_seconds(name_of(w.name, kThreadCounts[i]));
      v[i] = (w.flops > 0 ? w.flops : w.bytes) / s / 1e9;
    }
    if (std::isnan(v[0]) && std::isnan(v[1])) continue;
    std::printf("| %s | %s | %lld | %s | %s |\n", w.program.c_str(), std::string(wok::dtype_name(w.dtype)).c_str(),
                static_cast<long long>(launches(w)), fmt(v[0], 1).c_str(), fmt(v[1], 1).c_str());
  }
  std::printf("\n### Targets (time ratios within one run; %d paired rounds, median)\n\n", kPairedRounds);
  std::printf("| check | target | 1 thread | 2 threads | result |\n|---|---|---:|---:|---|\n");
  for (DType t : {DType::kFloat16, DType::kBFloat16}) {
    const std::string d(wok::dtype_name(t));
    for (const char* p : {"p1", "softmax", "layer_norm", "p2", "p3", "softmax_l2", "matmul"}) {
      const std::string prog = p;
      const bool reported = prog == "p2" || prog == "p3" || prog == "softmax_l2";
      double v[2];
      for (int i = 0; i < 2; ++i)
        v[i] = wok_bench::paired_variants(prog + "/float32", prog + "/" + d, kThreadCounts[i], kPairedRounds);
      // For matmul the ratio of rates is the ratio of times: same FLOPs.
      const double limit = reported ? NAN : prog == "matmul" ? 0.9 : 1.8;
      const bool missing = std::isnan(v[0] + v[1]);
      const char* result = reported ? "-" : missing ? "n/a" : (v[0] >= limit && v[1] >= limit) ? "PASS" : "MISS";
      const std::string what = prog == "matmul" ? "rate(" + d + ") / rate(float32), matmul"
                                                : "time(float32) / time(" + d + "), " + prog;
      std::printf("| %s | %s | %s | %s | %s |\n", what.c_str(),
                  reported ? "- (reported)" : (prog == "matmul" ? ">= 0.90" : ">= 1.80"), fmt(v[0]).c_str(),
                  fmt(v[1]).c_str(), result);
    }
  }
  wok::set_num_threads(0);
  print_bfloat16_store_probe();
}

}  // namespace

int main(int argc, char** argv) {
  wok_bench::init(
      &argc, &argv,
      {"--benchmark_min_time=0.1", "--benchmark_repetitions=3", "--benchmark_enable_random_interleaving=true"});
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  make_workloads();
  register_all();
  wok_bench::run_and_print(print_tables);
  return 0;
}
