// Fused reductions and normalizations (issue 6, issue 17), in one run:
//   softmax     over the last dim of [4096, 4096] float32
//   layer_norm  over the last dim of [8192, 1024] float32, with weight and bias
//   rms_norm    over the last dim of [8192, 1024] float32, with weight
//   col_sum     wok::sum(x, {0}) over [65536, 256], [32768, 512],
//               [4096, 4096] and [131072, 512] (column reductions)
//   col_exp_sum sum(exp(x)) over the first dim of [131072, 128] and of the
//               col_sum shapes (prologue fused; from 129 columns only such
//               reductions are generated, bare wide sums run precompiled)
//   cached      softmax over [64, 2048] and layer_norm over [256, 1024]
//               float32, which stay in cache (reported against the
//               hand-written loops)
//   short rows  softmax, layer_norm (weight and bias) and argmax over the
//               last dim of rows of 3, 7, 17 and 31 float32, ~2^23 elements
//               (32 MiB) each
// each as wok JIT and wok precompiled; softmax and layer_norm also as a
// hand-written fused loop (one row at a time, -O3 -march=native, with and
// without -ffast-math) and with Eigen's Tensor module (bench/eigen_reference.h:
// DefaultDevice at 1 thread, a 2-thread ThreadPoolDevice at 2; the AVX2 build
// under WOK_CPU_ISA=avx2, the -march=native one otherwise); plus a STREAM
// triad (bench/peak_probes.h) as the bandwidth reference. All with 1 and 2
// threads. GB/s counts one read and one write of the tensor; one read for
// the column sums (their output is a row) and for argmax (plus its int64
// output).
//
// Targets, checked as ratios within this run (paired rounds, median):
//   JIT / hand-written -ffast-math      >= 0.9   softmax, layer_norm
//   JIT / precompiled                   >= 2     softmax, layer_norm
//   time(Eigen) / time(JIT)             reported, no target: softmax, layer_norm
//   time(hand-written -ffast-math) / time(JIT)  reported, no target: the cached ones
//   JIT / precompiled                   >= 1.2   each column sum, each wide sum(exp)
//   JIT col_sum [4096, 4096] GB/s       >= 80% of the triad's GB/s
//   JIT / precompiled                   >= 1.0   each short-row op and length
// and the kernels per evaluation in the GB/s table.
//
// Run: bench_norm_programs [--benchmark_filter=REGEX] [--benchmark_repetitions=N]
#include <deque>
#include <functional>
#include <map>

#include "bench_util.h"
#include "eigen_reference.h"
#include "handwritten_fused.h"
#include "peak_probes.h"

namespace {

using wok::Tensor;
constexpr int kThreadCounts[] = {1, 2};
constexpr int kPairedRounds = 15;
// 24 short-row checks of 10-60 ms runs: fewer rounds keep the run under ~90 s.
constexpr int kShortRowRounds = 7;
constexpr float kEps = 1e-5f;

enum class Op { kSoftmax, kLayerNorm, kRmsNorm, kColSum, kColExpSum, kArgmax };

struct Workload {
  std::string name;
  Op op;
  int64_t rows, cols;
  double bytes;  // nominal traffic per evaluation
  Tensor x, w, b;  // input; weight and bias where the op takes them
};

// Every workload, in table order; a deque so the registered lambdas may keep
// references to its elements.
std::deque<Workload>& workloads() {
  static std::deque<Workload> all;
  return all;
}
const Workload& find(const std::string& name) {
  for (const Workload& w : workloads())
    if (w.name == name) return w;
  std::fprintf(stderr, "bench_norm_programs: no workload %s\n", name.c_str());
  std::abort();
}

// The shapes of the column sums, each [rows, cols].
constexpr int64_t kColSumShapes[][2] = {{65536, 256}, {32768, 512}, {4096, 4096}, {131072, 512}};
// The one read against the triad.
const char* const kColSumVsTriad = "col_sum_4096x4096";
// Short rows: lengths, and the elements each tensor has (about 2^23).
constexpr int64_t kShortCols[] = {3, 7, 17, 31};
constexpr int64_t kShortElems = int64_t{1} << 23;

// "65536x256" for names, "[65536, 256]" for the tables (snprintf: GCC 12's
// -Wrestrict misfires on "literal" + std::string).
std::string shape_text(const char* format, int64_t rows, int64_t cols) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, static_cast<long long>(rows), static_cast<long long>(cols));
  return buf;
}
std::string shape_name(int64_t rows, int64_t cols) { return shape_text("%lldx%lld", rows, cols); }
std::string shape_label(int64_t rows, int64_t cols) { return shape_text("[%lld, %lld]", rows, cols); }

// Builds every workload and its inputs, evaluated.
void make_workloads() {
  std::deque<Workload>& all = workloads();
  const Tensor sx = wok::randn({4096, 4096}, 1) * 3.0f;
  const Tensor lx = wok::randn({8192, 1024}, 2) * 2.0f + 0.5f;
  const Tensor lw = wok::rand({1024}, 3) + 0.5f, lb = wok::rand({1024}, 4) - 0.5f;
  all.push_back({"softmax", Op::kSoftmax, 4096, 4096, 8.0 * 4096 * 4096, sx, {}, {}});
  all.push_back({"layer_norm", Op::kLayerNorm, 8192, 1024, 8.0 * 8192 * 1024, lx, lw, lb});
  // In cache, where the JIT works on three rows at once (Note [Rows in
  // flight] in jit/x86/row_codegen.cpp) and the hand-written loops on one.
  all.push_back({"softmax_cached", Op::kSoftmax, 64, 2048, 8.0 * 64 * 2048, wok::randn({64, 2048}, 11) * 3.0f, {}, {}});
  all.push_back({"layer_norm_cached", Op::kLayerNorm, 256, 1024, 8.0 * 256 * 1024,
                 wok::randn({256, 1024}, 12) * 2.0f + 0.5f, lw, lb});
  all.push_back({"rms_norm", Op::kRmsNorm, 8192, 1024, 8.0 * 8192 * 1024, lx, lw, {}});
  uint64_t seed = 10;
  for (auto [rows, cols] : kColSumShapes) {
    const Tensor x = rows == 4096 && cols == 4096 ? sx : wok::rand({rows, cols}, seed++);
    all.push_back({"col_sum_" + shape_name(rows, cols), Op::kColSum, rows, cols, 4.0 * rows * cols, x, {}, {}});
  }
  all.push_back({"col_exp_sum", Op::kColExpSum, 131072, 128, 4.0 * 131072 * 128, wok::rand({131072, 128}, 5), {}, {}});
  // Wide ones: the streaming column kernel (a bare wide sum runs on the
  // precompiled kernel, Note [Wide column reductions] in jit/fusion_policy.cpp).
  for (const Workload& c : std::deque<Workload>(all))
    if (c.op == Op::kColSum)
      all.push_back({"col_exp_sum_" + shape_name(c.rows, c.cols), Op::kColExpSum, c.rows, c.cols, c.bytes, c.x, {}, {}});
  for (int64_t cols : kShortCols) {
    const int64_t rows = (kShortElems + cols - 1) / cols;
    const Tensor x = wok::randn({rows, cols}, seed++) * 2.0f;
    const Tensor w = wok::rand({cols}, seed++) + 0.5f, b = wok::rand({cols}, seed++) - 0.5f;
    const double elems = static_cast<double>(rows * cols);
    const std::string c = std::string("_c") + std::to_string(cols);
    all.push_back({"softmax" + c, Op::kSoftmax, rows, cols, 8.0 * elems, x, {}, {}});
    all.push_back({"layer_norm" + c, Op::kLayerNorm, rows, cols, 8.0 * elems, x, w, b});
    all.push_back({"argmax" + c, Op::kArgmax, rows, cols, 4.0 * elems + 8.0 * static_cast<double>(rows), x, {}, {}});
  }
  std::vector<Tensor> inputs;
  for (const Workload& w : all)
    for (const Tensor* t : {&w.x, &w.w, &w.b})
      if (t->defined()) inputs.push_back(*t);
  wok::eval(inputs);
}

using wok_bench::name_of;
void register_one(const std::string& name, double bytes, int threads, std::function<void()> setup,
                  std::function<void()> body) {
  wok_bench::register_variant(name, bytes, threads, std::move(setup), std::move(body));
}

std::function<Tensor()> wok_program(const Workload& w) {
  switch (w.op) {
    case Op::kSoftmax: return [&w] { return wok::softmax(w.x); };
    case Op::kLayerNorm: return [&w] { return wok::layer_norm(w.x, w.w, w.b, kEps); };
    case Op::kRmsNorm: return [&w] { return wok::rms_norm(w.x, w.w, kEps); };
    case Op::kColSum: return [&w] { return wok::sum(w.x, {0}); };
    case Op::kColExpSum: return [&w] { return wok::sum(wok::exp(w.x), {0}); };
    case Op::kArgmax: return [&w] { return wok::argmax(w.x, {-1}); };
  }
  return {};
}

// Rows split over wok's pool the way its kernels split them.
void for_rows(int64_t rows, const std::function<void(int64_t, int64_t)>& body) {
  wok::parallel_for(rows, 16, [&](int64_t b, int64_t e) { body(b, e); });
}

using SoftmaxLoop = void (*)(const float*, float*, int64_t, int64_t);
using NormLoop = void (*)(const float*, const float*, const float*, float, float*, int64_t, int64_t);

// The hand-written loops and Eigen: only for the two large row workloads.
void register_references(const Workload& w, const wok_bench::HostBuffer& out, int threads) {
  const int64_t rows = w.rows, cols = w.cols;
  float* o = out.as<float>();
  const float* x = w.x.data<float>();
  const wok_bench::EigenReference* eigen = wok_bench::eigen_reference();
  if (w.op == Op::kSoftmax) {
    for (auto [vname, loop] : {std::pair<const char*, SoftmaxLoop>{"hand_strict", wok_bench::softmax_rows_strict},
                               std::pair<const char*, SoftmaxLoop>{"hand_fastmath", wok_bench::softmax_rows_fastmath}})
      register_one(name_of(w.name + "/" + vname, threads), w.bytes, threads, [] {}, [=] {
        for_rows(rows, [&](int64_t b, int64_t e) { loop(x + b * cols, o + b * cols, e - b, cols); });
        benchmark::ClobberMemory();
      });
    if (eigen)
      register_one(name_of(w.name + "/eigen", threads), w.bytes, threads, [] {}, [=] {
        eigen->softmax(x, o, rows, cols, threads);
        benchmark::ClobberMemory();
      });
    return;
  }
  const float* wt = w.w.data<float>();
  const float* bs = w.b.data<float>();
  for (auto [vname, loop] : {std::pair<const char*, NormLoop>{"hand_strict", wok_bench::layer_norm_rows_strict},
                             std::pair<const char*, NormLoop>{"hand_fastmath", wok_bench::layer_norm_rows_fastmath}})
    register_one(name_of(w.name + "/" + vname, threads), w.bytes, threads, [] {}, [=] {
      for_rows(rows, [&](int64_t b, int64_t e) { loop(x + b * cols, wt, bs, kEps, o + b * cols, e - b, cols); });
      benchmark::ClobberMemory();
    });
  if (eigen)
    register_one(name_of(w.name + "/eigen", threads), w.bytes, threads, [] {}, [=] {
      eigen->layer_norm(x, wt, bs, kEps, o, rows, cols, threads);
      benchmark::ClobberMemory();
    });
}

void register_workload(const Workload& w, const wok_bench::HostBuffer& out, int threads) {
  for (auto backend : {wok::Backend::kJit, wok::Backend::kPrecompiled}) {
    const char* bname = backend == wok::Backend::kJit ? "jit" : "precompiled";
    register_one(name_of(w.name + "/" + bname, threads), w.bytes, threads, [backend] { wok::set_backend(backend); },
                 [fn = wok_program(w)] { wok::eval({fn()}); });
  }
  if (w.name == "softmax" || w.name == "layer_norm" || w.name.ends_with("_cached"))
    register_references(w, out, threads);
}

// Kernels the JIT launches for one evaluation.
int64_t jit_launches(const Workload& w) {
  wok::set_backend(wok::Backend::kJit);
  auto fn = wok_program(w);
  wok::eval({fn()});
  wok::reset_stats();
  wok::eval({fn()});
  return wok::stats().kernel_launches;
}

// Largest |Eigen - wok JIT| over the largest |wok JIT| for `w` (softmax or
// layer_norm), Eigen's output written to `out`.
double eigen_difference(const Workload& w, const wok_bench::HostBuffer& out) {
  const wok_bench::EigenReference* eigen = wok_bench::eigen_reference();
  wok::set_backend(wok::Backend::kJit);
  Tensor want = wok_program(w)();
  wok::eval({want});
  float* o = out.as<float>();
  if (w.op == Op::kSoftmax)
    eigen->softmax(w.x.data<float>(), o, w.rows, w.cols, 1);
  else
    eigen->layer_norm(w.x.data<float>(), w.w.data<float>(), w.b.data<float>(), kEps, o, w.rows, w.cols, 1);
  return wok_bench::relative_difference(o, want.data<float>(), w.rows * w.cols);
}


// One row of the targets table: time(slow) / time(fast) at 1 and 2 threads
// over `rounds` paired rounds (`scale` times it, e.g. to a percentage),
// against `limit`; no limit (NaN) prints "-" as the result.
void print_check(const std::string& what, const std::string& slow, const std::string& fast, double limit,
                 const std::string& target, double scale = 1.0, int digits = 2, int rounds = kPairedRounds) {
  double v[2];
  for (int i = 0; i < 2; ++i) v[i] = wok_bench::paired_variants(slow, fast, kThreadCounts[i], rounds) * scale;
  const bool missing = std::isnan(v[0] + v[1]);
  const char* result = std::isnan(limit) ? "-" : missing ? "n/a" : (v[0] >= limit && v[1] >= limit) ? "PASS" : "MISS";
  std::printf("| %s | %s | %s | %s | %s |\n", what.c_str(), target.c_str(), wok_bench::fmt(v[0], digits).c_str(),
              wok_bench::fmt(v[1], digits).c_str(), result);
}

void print_tables(const wok_bench::HostBuffer& out) {
  using wok_bench::fmt;
  auto gbs = [&](const Workload& w, const std::string& v, int t) {
    return w.bytes / wok_bench::median_seconds(name_of(w.name + "/" + v, t)) / 1e9;
  };
  std::printf("\n### Reductions and normalizations, float32 (GB/s, median iteration)\n\n");
  std::printf("| program | shape | variant | 1 thread | 2 threads |\n|---|---|---|---:|---:|\n");
  for (const Workload& w : workloads()) {
    const std::string shape = shape_label(w.rows, w.cols);
    for (const char* v : {"jit", "precompiled", "hand_strict", "hand_fastmath", "eigen"}) {
      if (std::isnan(wok_bench::median_seconds(name_of(w.name + "/" + v, 1))) &&
          std::isnan(wok_bench::median_seconds(name_of(w.name + "/" + v, 2))))
        continue;
      std::string label = v;
      if (label == "jit") label += " (" + std::to_string(jit_launches(w)) + " kernels/eval)";
      std::printf("| %s | %s | %s | %s | %s |\n", w.name.c_str(), shape.c_str(), label.c_str(),
                  fmt(gbs(w, v, 1), 1).c_str(), fmt(gbs(w, v, 2), 1).c_str());
    }
  }
  const double triad_gbs[2] = {wok_bench::kTriadBytes / wok_bench::median_seconds(name_of("triad", 1)) / 1e9,
                               wok_bench::kTriadBytes / wok_bench::median_seconds(name_of("triad", 2)) / 1e9};
  std::printf("| triad | 3 x [%lld] | (12 bytes/element counted) | %s | %s |\n",
              static_cast<long long>(wok_bench::kTriadN), fmt(triad_gbs[0], 1).c_str(), fmt(triad_gbs[1], 1).c_str());

  std::printf("\n%s\n", wok_bench::eigen_reference_note().c_str());
  if (wok_bench::eigen_reference())
    std::printf("Eigen vs wok JIT, max |difference| / max |value|: softmax %s, layer_norm %s\n",
                fmt(eigen_difference(find("softmax"), out), 8).c_str(),
                fmt(eigen_difference(find("layer_norm"), out), 8).c_str());

  std::printf("\n### Targets (time ratios within one run; %d paired rounds, %d for the short rows; median)\n\n",
              kPairedRounds, kShortRowRounds);
  std::printf("| check | target | 1 thread | 2 threads | result |\n|---|---|---:|---:|---|\n");
  for (const char* n : {"softmax", "layer_norm"}) {
    const std::string s = n;
    print_check("JIT / hand-written -ffast-math, " + s, s + "/hand_fastmath", s + "/jit", 0.9, ">= 0.90");
    print_check("JIT / precompiled, " + s, s + "/precompiled", s + "/jit", 2.0, ">= 2.00");
    if (wok_bench::eigen_reference())
      print_check("time(Eigen) / time(JIT), " + s, s + "/eigen", s + "/jit", NAN, "- (reported)");
  }
  for (const char* n : {"softmax_cached", "layer_norm_cached"}) {
    const std::string s = n;
    print_check("time(hand-written -ffast-math, a row at a time) / time(JIT), " + s, s + "/hand_fastmath", s + "/jit", NAN,
                "- (reported)");
  }
  for (auto [rows, cols] : kColSumShapes) {
    const std::string n = "col_sum_" + shape_name(rows, cols);
    print_check("JIT / precompiled, col_sum " + shape_label(rows, cols),
                n + "/precompiled", n + "/jit", 1.2, ">= 1.20");
  }
  for (auto [rows, cols] : kColSumShapes) {
    const std::string n = "col_exp_sum_" + shape_name(rows, cols);
    print_check("JIT / precompiled, sum(exp(x)) over axis 0 " + shape_label(rows, cols), n + "/precompiled",
                n + "/jit", 1.2, ">= 1.20");
  }
  // GB/s(col_sum) / GB/s(triad) = time(triad) / time(col_sum) * bytes(col_sum) / bytes(triad).
  const Workload& cs = find(kColSumVsTriad);
  print_check("JIT col_sum [4096, 4096] GB/s, % of triad GB/s", "triad", cs.name + "/jit", 80.0, ">= 80%",
              100.0 * cs.bytes / wok_bench::kTriadBytes, 1);
  for (const char* op : {"softmax", "layer_norm", "argmax"})
    for (int64_t cols : kShortCols) {
      const Workload& w = find(std::string(op) + "_c" + std::to_string(cols));
      print_check("JIT / precompiled, " + std::string(op) + " " + shape_label(w.rows, cols), w.name + "/precompiled",
                  w.name + "/jit", 1.0, ">= 1.00", 1.0, 2, kShortRowRounds);
    }
  wok::set_num_threads(0);
}

}  // namespace

int main(int argc, char** argv) {
  wok_bench::init(
      &argc, &argv,
      {"--benchmark_min_time=0.1", "--benchmark_repetitions=3", "--benchmark_enable_random_interleaving=true"});
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  make_workloads();
  int64_t largest = 0;
  for (const Workload& w : workloads()) largest = std::max(largest, w.rows * w.cols);
  wok_bench::HostBuffer out(4 * static_cast<size_t>(largest));
  const wok_bench::TriadArrays triad;
  for (int t : kThreadCounts) {
    for (const Workload& w : workloads()) register_workload(w, out, t);
    register_one(name_of("triad", t), wok_bench::kTriadBytes, t, [] {}, [&triad] { wok_bench::triad_on_pool(triad); });
  }
  wok_bench::run_and_print([&out] { print_tables(out); });
  return 0;
}
