// wok's matmul, through the public API, against OpenBLAS sgemm / dgemm, with
// 1 and with 2 threads in one run (both libraries' thread counts set per
// benchmark).
//
// Cases (float32 unless noted; values uniform in [-1, 1], made once):
//   square 32 .. 2048, and float64 at 1024 (dgemm)
//   the transformer shapes [2048,768]x[768,3072] and [2048,3072]x[3072,768],
//   the first also in float64
//   attention's batched products [48,256,64]x[48,64,256] and
//   [48,256,256]x[48,256,64] (OpenBLAS: a loop of 48 sgemm calls)
//   x [M,768] @ W [768,3072] for M = 1 and 16 (weight streaming)
//   matmul(a, b.transpose()) at 1024 (OpenBLAS: sgemm with B transposed)
//   the feed-forward block matmul(gelu(matmul(x, w1) + b1), w2) + b2 + x,
//   evaluated as one wok expression, against its two bare matmuls (the two
//   transformer-shape cases; OpenBLAS's column is its two bare sgemms)
// References: an FMA peak probe (12 independent chains of vfmadd...ps per
// thread, on zmm if the host has AVX-512, else ymm) and a STREAM triad over
// three 128 MiB arrays (each 4x a 32 MiB L3), shared with bench/conv.cpp
// (bench/peak_probes.h, Note [FMA peak probe] there).
//
// Targets, from medians within this run, at both thread counts (the table
// printed last says "met" or "MISSED" with the figure):
//   1024 and the transformer shapes, float32: >= 0.95x OpenBLAS's speed and
//     >= 85% of the FMA probe's FLOP rate; float64: >= 0.9x OpenBLAS's speed
//   feed-forward block <= 1.05x the time of its two bare matmuls
//   M = 1 and 16: time <= 1.25 x weight bytes / triad GB/s
//   square 64: time <= 2x OpenBLAS's
//   no JIT compiles inside the timed loops; a GEMM kernel's compile < 2 ms
//     (wok::stats().compile_ms / kernels_compiled on a first evaluation with
//     the kernel and plan caches cleared and the disk store off)
//
// Timing: each iteration evaluates a freshly recorded expression (wok::eval);
// its result is dropped at once, so the caching allocator hands the same
// buffer to the next iteration. Every iteration is timed on its own and the
// tables use the median of all iterations of all repetitions; repetitions
// are interleaved at random (Note [Timing on a shared machine] in
// bench_util.h). Warm-up (JIT compile, page faults) runs once per variant,
// outside the timing. OpenBLAS's idle threads are made to sleep within 1 ms
// (Note [OpenBLAS's idle threads], at main).
//
// Run: build/bench/bench_gemm [--benchmark_filter=REGEX] [--benchmark_repetitions=N]
//      [--benchmark_min_time=SECONDS]   (defaults: 5 repetitions, 0.1 s; about 2-3 minutes on 2 cores)
#include <cblas.h>

#include <cstdlib>
#include <functional>
#include <memory>
#include <type_traits>

#include "bench_util.h"
#include "peak_probes.h"
#include "wok/cache/cache_config.h"
#include "wok/jit/kernel_cache.h"
#include "wok/jit/plan_cache.h"

namespace {

using wok::DType;
using wok::Tensor;
using wok_bench::FmaProbe;
using wok_bench::fmt;
using wok_bench::name_of;
using wok_bench::target_text;
using wok_bench::uniform;
using wok_bench::verdict;
constexpr int kThreadCounts[] = {1, 2};

// ---- cases --------------------------------------------------------------------------

enum class Target { kNone, kGemmF32, kGemmF64, kFeedForward, kWeightStream, kSmall };

struct Case {
  std::string id;     // benchmark names: id/wok/tN, id/openblas/tN
  std::string label;  // table text
  double flops;       // per evaluation
  DType dtype;
  Target target;
  std::function<Tensor()> wok{};  // records the expression; each iteration evaluates it
  std::function<void()> blas{};   // one OpenBLAS run; empty for the feed-forward block
  // Largest |wok - OpenBLAS| over the largest |OpenBLAS| of one result;
  // empty for the feed-forward block.
  std::function<double(const Tensor&)> difference{};
  int64_t launches = 0;  // wok kernels per evaluation
};
std::vector<Case> g_cases;

template <typename T>
void blas_gemm(bool trans_b, int m, int n, int k, const T* a, const T* b, T* c) {
  const CBLAS_TRANSPOSE tb = trans_b ? CblasTrans : CblasNoTrans;
  const int ldb = trans_b ? k : n;
  if constexpr (std::is_same_v<T, float>)
    cblas_sgemm(CblasRowMajor, CblasNoTrans, tb, m, n, k, 1.0f, a, k, b, ldb, 0.0f, c, n);
  else
    cblas_dgemm(CblasRowMajor, CblasNoTrans, tb, m, n, k, 1.0, a, k, b, ldb, 0.0, c, n);
}

// [batch,] [m, k] @ [k, n] (b stored [n, k] and transposed when trans_b).
void add_gemm(const std::string& id, const std::string& label, int64_t batch, int m, int k, int n, DType dtype,
              Target target, bool trans_b = false) {
  static uint64_t seed = 100;
  const bool batched = batch > 1;
  Tensor a = uniform(batched ? wok::Shape{batch, m, k} : wok::Shape{m, k}, seed++, dtype);
  Tensor b = uniform(trans_b ? wok::Shape{n, k} : batched ? wok::Shape{batch, k, n} : wok::Shape{k, n}, seed++, dtype);
  const size_t elem = dtype == DType::kFloat64 ? 8 : 4;
  auto out = std::make_shared<wok_bench::HostBuffer>(static_cast<size_t>(batch * m * n) * elem);
  Case c{id, label, 2.0 * static_cast<double>(batch) * m * k * n, dtype, target};
  if (trans_b)
    c.wok = [a, b] { return wok::matmul(a, b.transpose()); };
  else
    c.wok = [a, b] { return wok::matmul(a, b); };
  auto run = [=](auto tag) {
    using T = decltype(tag);
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    T* pc = out->as<T>();
    for (int64_t i = 0; i < batch; ++i) blas_gemm<T>(trans_b, m, n, k, pa + i * m * k, pb + i * k * n, pc + i * m * n);
  };
  auto difference = [=](auto tag, const Tensor& result) {
    using T = decltype(tag);
    run(tag);
    return wok_bench::relative_difference(result.data<T>(), out->as<T>(), batch * m * n);
  };
  if (dtype == DType::kFloat64) {
    c.blas = [run] { run(double{}); };
    c.difference = [difference](const Tensor& r) { return difference(double{}, r); };
  } else {
    c.blas = [run] { run(float{}); };
    c.difference = [difference](const Tensor& r) { return difference(float{}, r); };
  }
  g_cases.push_back(std::move(c));
}

// The feed-forward block, x [2048,768], w1 [768,3072], w2 [3072,768].
void add_feed_forward() {
  Tensor x = uniform({2048, 768}, 1, DType::kFloat32);
  Tensor w1 = uniform({768, 3072}, 2, DType::kFloat32);
  Tensor b1 = uniform({3072}, 3, DType::kFloat32);
  Tensor w2 = uniform({3072, 768}, 4, DType::kFloat32);
  Tensor b2 = uniform({768}, 5, DType::kFloat32);
  const double flops = 2.0 * 2048 * 768 * 3072 * 2;
  Case c{"ffn_block", "feed-forward block, one expression", flops, DType::kFloat32, Target::kFeedForward};
  c.wok = [=] { return wok::matmul(wok::gelu(wok::matmul(x, w1) + b1), w2) + b2 + x; };
  g_cases.push_back(std::move(c));
}

void make_cases() {
  const DType f32 = DType::kFloat32, f64 = DType::kFloat64;
  for (int s : {256, 512, 1024, 2048})
    add_gemm("sq" + std::to_string(s), "square " + std::to_string(s), 1, s, s, s, f32,
             s == 1024 ? Target::kGemmF32 : Target::kNone);
  add_gemm("sq1024_f64", "square 1024 float64", 1, 1024, 1024, 1024, f64, Target::kGemmF64);
  add_gemm("ffn_up", "[2048,768] x [768,3072]", 1, 2048, 768, 3072, f32, Target::kGemmF32);
  add_gemm("ffn_down", "[2048,3072] x [3072,768]", 1, 2048, 3072, 768, f32, Target::kGemmF32);
  add_gemm("ffn_up_f64", "[2048,768] x [768,3072] float64", 1, 2048, 768, 3072, f64, Target::kGemmF64);
  add_gemm("attn_scores", "[48,256,64] x [48,64,256]", 48, 256, 64, 256, f32, Target::kNone);
  add_gemm("attn_values", "[48,256,256] x [48,256,64]", 48, 256, 256, 64, f32, Target::kNone);
  add_gemm("m1", "[1,768] x [768,3072]", 1, 1, 768, 3072, f32, Target::kWeightStream);
  add_gemm("m16", "[16,768] x [768,3072]", 1, 16, 768, 3072, f32, Target::kWeightStream);
  add_gemm("sq64", "square 64", 1, 64, 64, 64, f32, Target::kSmall);
  add_gemm("sq32", "square 32", 1, 32, 32, 32, f32, Target::kNone);
  add_gemm("sq128", "square 128", 1, 128, 128, 128, f32, Target::kNone);
  add_gemm("sq1024_bT", "matmul(a, b.transpose()), 1024", 1, 1024, 1024, 1024, f32, Target::kNone, true);
  add_feed_forward();
}

// ---- registration -------------------------------------------------------------------

void set_threads(int threads) {
  wok::set_num_threads(threads);
  openblas_set_num_threads(threads);
}

void register_all(const FmaProbe& probe, const wok_bench::TriadArrays& tr) {
  // `body` timed per iteration at `t`; `work` per iteration reported as `unit` per second.
  auto register_timed = [](const std::string& what, int t, const char* unit, double work, std::function<void()> body) {
    wok_bench::register_timed(what, t, unit, work, set_threads, [body] { return wok_bench::Timed{body, {}}; });
  };
  for (int t : kThreadCounts) {
    for (const Case& c : g_cases) {
      register_timed(c.id + "/wok", t, "FLOP/s", c.flops, [fn = c.wok] { wok::eval({fn()}); });
      if (c.blas) register_timed(c.id + "/openblas", t, "FLOP/s", c.flops, c.blas);
    }
    wok_bench::register_peak_probes(probe, tr, t, set_threads);
  }
}

// ---- compile checks -----------------------------------------------------------------

struct ColdCompile {
  int64_t kernels = 0;         // compiled per first evaluation (median)
  double ms_per_kernel = NAN;  // median of compile_ms / kernels_compiled per trial
};

// The first evaluation of `fn` with the memory caches cleared and the disk
// store off, so every generated kernel it needs is compiled: compile time
// per kernel from wok::stats().
ColdCompile cold_compile(const std::function<Tensor()>& fn) {
  const wok::cache::CacheConfig saved = wok::cache::cache_config();
  wok::cache::CacheConfig config = saved;
  config.directory.clear();
  wok::cache::set_cache_config(config);
  std::vector<double> per_kernel, kernels;
  for (int trial = 0; trial < 5; ++trial) {
    wok::jit::KernelCache::global().clear();
    wok::jit::PlanCache::global().clear();
    const wok::RuntimeStats s0 = wok::stats();
    wok::eval({fn()});
    const wok::RuntimeStats s1 = wok::stats();
    const int64_t k = s1.kernels_compiled - s0.kernels_compiled;
    kernels.push_back(static_cast<double>(k));
    if (k > 0) per_kernel.push_back((s1.compile_ms - s0.compile_ms) / static_cast<double>(k));
  }
  wok::cache::set_cache_config(saved);
  return {static_cast<int64_t>(wok_bench::median(kernels)), wok_bench::median(per_kernel)};
}

// ---- tables -------------------------------------------------------------------------

const Case* find_case(const std::string& id) {
  for (const Case& c : g_cases)
    if (c.id == id) return &c;
  return nullptr;
}

void print_tables(const FmaProbe& probe, const wok::RuntimeStats& before_run) {
  const wok::RuntimeStats after_run = wok::stats();
  auto secs = [](const std::string& what, int t) { return wok_bench::median_seconds(name_of(what, t)); };
  auto ms = [](double s) { return fmt(s * 1e3, 3); };
  constexpr double kWeightBytes = 768.0 * 3072 * 4;
  constexpr double kTolerance = 1e-4;  // float32 sums of up to 3072 products of [-1, 1] values

  wok::set_num_threads(0);
  // Kernels per evaluation (warm), and each result against OpenBLAS's.
  double worst = 0;
  std::string worst_case = "-";
  for (Case& c : g_cases) {
    const int64_t l0 = wok::stats().kernel_launches;
    Tensor r = c.wok();
    wok::eval({r});
    c.launches = wok::stats().kernel_launches - l0;
    const double d = c.difference ? c.difference(r) : 0.0;
    if (!(d <= worst)) worst = d, worst_case = c.label;
  }

  std::printf("\n### wok matmul vs OpenBLAS (median iteration; %s, kernels for %s)\n\n", openblas_get_config(),
              openblas_get_corename());
  std::printf("Results: largest |wok - OpenBLAS| / largest |OpenBLAS| is %.1e (%s)%s.\n", worst, worst_case.c_str(),
              worst <= kTolerance ? "" : ": WRONG RESULTS, the timings mean nothing");
  std::printf("OPENBLAS_THREAD_TIMEOUT=%s (Note [OpenBLAS's idle threads]).\n", std::getenv("OPENBLAS_THREAD_TIMEOUT"));
  std::printf("FMA peak probe: %s, %d independent chains per thread; float64 rows are read against half of it.\n",
              probe.isa, wok_bench::kChains);
  std::printf(
      "Triad a[i] = b[i] + s*c[i], 3 x %lld MiB float32 arrays; GB/s counts 12 bytes per element "
      "(2 reads + 1 write, write-allocate not counted).\n",
      static_cast<long long>(4 * wok_bench::kTriadN >> 20));
  std::printf("GFLOP/s of the feed-forward block counts its two matmuls only.\n");
  std::printf(
      "M = 1, 16 bound: weight bytes 768*3072*4 = %.0f B (note: 9 MiB, which fits in the L3, so repeated "
      "runs may read it from cache).\n",
      kWeightBytes);

  wok_bench::warn_if_cores_shared();

  for (int t : kThreadCounts) {
    const auto [peak, triad_gbs] = wok_bench::print_peak_heading(probe, t);
    std::printf(
        "| case | wok ms | OpenBLAS ms | wok / OpenBLAS speed | wok GFLOP/s | OpenBLAS GFLOP/s | wok %% of peak "
        "| wok kernels/eval | target |\n");
    std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---|\n");
    for (const Case& c : g_cases) {
      const double w = secs(c.id + "/wok", t);
      double o = secs(c.id + "/openblas", t);
      std::string blas_note;
      if (c.target == Target::kFeedForward) {  // OpenBLAS: the two bare sgemms, no epilogue
        o = secs("ffn_up/openblas", t) + secs("ffn_down/openblas", t);
        blas_note = " (2 bare sgemm)";
      }
      const double speed = o / w;
      const double wok_gflops = c.flops / w / 1e9;
      const double of_peak = 100.0 * wok_gflops / (c.dtype == DType::kFloat64 ? peak / 2 : peak);
      std::string target = "-";
      char figure[256];
      switch (c.target) {
        case Target::kNone:
          break;
        case Target::kGemmF32:
          std::snprintf(figure, sizeof figure, "%sx (>= 0.95x), %s%% of peak (>= 85%%)", fmt(speed).c_str(),
                        fmt(of_peak, 1).c_str());
          target = target_text(speed + of_peak, speed >= 0.95 && of_peak >= 85.0, figure);
          break;
        case Target::kGemmF64:
          std::snprintf(figure, sizeof figure, "%sx (>= 0.90x)", fmt(speed).c_str());
          target = target_text(speed, speed >= 0.9, figure);
          break;
        case Target::kFeedForward: {
          const double up = secs("ffn_up/wok", t), down = secs("ffn_down/wok", t);
          std::snprintf(figure, sizeof figure, "%sx the 2 bare matmuls' %s + %s ms (<= 1.05x)",
                        fmt(w / (up + down)).c_str(), ms(up).c_str(), ms(down).c_str());
          target = target_text(w / (up + down), w / (up + down) <= 1.05, figure);
          break;
        }
        case Target::kWeightStream: {
          const double bound = 1.25 * kWeightBytes / (triad_gbs * 1e9);
          std::snprintf(figure, sizeof figure, "%s ms (<= 1.25 x %.0f B / %s GB/s = %s ms; FLOPs at peak take %s ms)",
                        ms(w).c_str(), kWeightBytes, fmt(triad_gbs, 1).c_str(), ms(bound).c_str(),
                        ms(c.flops / (peak * 1e9)).c_str());
          target = target_text(w / bound, w <= bound, figure);
          break;
        }
        case Target::kSmall:
          std::snprintf(figure, sizeof figure, "%sx OpenBLAS's time (<= 2x)", fmt(w / o).c_str());
          target = target_text(w / o, w / o <= 2.0, figure);
          break;
      }
      std::printf("| %s | %s | %s%s | %s | %s | %s | %s | %lld | %s |\n", c.label.c_str(), ms(w).c_str(), ms(o).c_str(),
                  blas_note.c_str(), fmt(speed).c_str(), fmt(wok_gflops, 1).c_str(), fmt(c.flops / o / 1e9, 1).c_str(),
                  fmt(of_peak, 1).c_str(), static_cast<long long>(c.launches), target.c_str());
    }
  }

  // Compiles. Outside the timed loops (the once-per-variant warm-ups) the
  // kernels come from the disk cache on a warm start.
  std::printf("\n### Compiles (wok::stats())\n\n| check | target | value | result |\n|---|---|---|---|\n");
  const int64_t timed = wok_bench::print_timed_compiles_row();
  const int64_t warmup_compiled = after_run.kernels_compiled - before_run.kernels_compiled - timed;
  const int64_t warmup_disk = after_run.disk_hits - before_run.disk_hits;
  std::string start_result;
  if (wok::cache::cache_config().directory.empty())
    start_result = "n/a: disk store off";
  else if (warmup_compiled == 0)
    start_result = "met";
  else if (warmup_disk == 0)
    start_result = "n/a: cold disk cache, run again";
  else
    start_result = "MISSED";
  std::printf(
      "| this process's warm-ups: kernels compiled / loaded from the disk cache (%s) | 0 compiled on a warm "
      "start | %lld / %lld | %s |\n",
      wok::cache_directory().c_str(), static_cast<long long>(warmup_compiled), static_cast<long long>(warmup_disk),
      start_result.c_str());
  // Per-kernel compile time: first evaluation with the memory caches cleared
  // and the disk store off, stats().compile_ms / kernels_compiled.
  for (const char* id : {"sq1024", "ffn_block"}) {
    const Case* c = find_case(id);
    if (!c) continue;
    const ColdCompile cc = cold_compile(c->wok);
    std::string result =
        cc.kernels == 0 ? "n/a: nothing compiled (precompiled kernels)" : verdict(cc.ms_per_kernel < 2.0);
    std::printf(
        "| cold compile, %s: ms per kernel (%lld kernels/eval), caches cleared, disk store off | < 2 ms | %s "
        "| %s |\n",
        c->label.c_str(), static_cast<long long>(cc.kernels), fmt(cc.ms_per_kernel, 3).c_str(), result.c_str());
  }
}

}  // namespace

// Note [OpenBLAS's idle threads]
// After each call OpenBLAS's worker threads spin (with sched_yield) for
// 2^28 cycles, about 0.1 s, before they sleep: a wok run just after a
// 2-thread OpenBLAS run shares its cores with them (a 2-thread loop measured
// here ran at half speed). OpenBLAS reads OPENBLAS_THREAD_TIMEOUT (2^n
// cycles) once, when it is loaded, so main sets it to 20 (under 1 ms, still
// spanning the back-to-back calls of a batched loop) and re-executes itself.
// A value already in the environment is kept.
void limit_openblas_spin(char** argv) {
  if (std::getenv("OPENBLAS_THREAD_TIMEOUT")) return;
  wok_bench::reexec_with_env(argv, "OPENBLAS_THREAD_TIMEOUT", "20", "bench_gemm", "OpenBLAS");
}

int main(int argc, char** argv) {
  limit_openblas_spin(argv);
  wok_bench::init(
      &argc, &argv,
      {"--benchmark_min_time=0.1", "--benchmark_repetitions=5", "--benchmark_enable_random_interleaving=true"});
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  const FmaProbe probe = wok_bench::fma_probe();
  make_cases();
  const wok_bench::TriadArrays triad_arrays;
  register_all(probe, triad_arrays);
  const wok::RuntimeStats before = wok::stats();
  wok_bench::run_and_print([&] { print_tables(probe, before); });
  return 0;
}
