// Fused reductions and normalizations (issue 6), in one run:
//   softmax     over the last dim of [4096, 4096] float32
//   layer_norm  over the last dim of [8192, 1024] float32, with weight and bias
//   rms_norm    over the last dim of [8192, 1024] float32, with weight
//   col_sum     sum over the first dim of [4096, 4096] (a wide column
//               reduction: the precompiled outer-axis kernel serves it)
//   col_exp_sum sum(exp(x)) over the first dim of [131072, 128] (the JIT's
//               column kernel, prologue fused)
// each as wok JIT, wok precompiled, and a hand-written fused loop (one row
// at a time, -O3 -march=native, with and without -ffast-math), with 1 and 2
// threads. GB/s counts one read and one write of the tensor (the output of
// col_sum is a row: one read).
//
// Targets, checked as ratios within this run (paired rounds, median):
//   JIT / hand-written -ffast-math   >= 0.9   softmax, layer_norm
//   JIT / precompiled                >= 2     softmax, layer_norm
// and the kernels per evaluation (at most 2) with the bytes the JIT's plan
// reads (at most 2 reads of the input).
//
// Run: bench_norm_programs [--benchmark_filter=REGEX] [--benchmark_repetitions=N]
#include <functional>
#include <map>

#include "bench_util.h"
#include "handwritten_fused.h"

namespace {

using wok::Tensor;
constexpr int kThreadCounts[] = {1, 2};
constexpr int kPairedRounds = 15;
constexpr float kEps = 1e-5f;

struct Workload {
  const char* name;
  int64_t rows, cols;
  double bytes;  // nominal traffic per evaluation
};

const Workload kSoftmax{"softmax", 4096, 4096, 8.0 * 4096 * 4096};
const Workload kLayerNorm{"layer_norm", 8192, 1024, 8.0 * 8192 * 1024};
const Workload kRmsNorm{"rms_norm", 8192, 1024, 8.0 * 8192 * 1024};
const Workload kColSum{"col_sum", 4096, 4096, 4.0 * 4096 * 4096};
// A narrow outer-axis reduction with a fused prologue: the JIT's column
// kernel (sum(exp(x)) down 131072 rows of 128 columns, x read once).
const Workload kColExpSum{"col_exp_sum", 131072, 128, 4.0 * 131072 * 128};

struct Inputs {
  Tensor sx, lx, w, b;  // softmax input; layer-norm input, weight, bias
  Tensor cx;            // the narrow column reduction's input
};

using wok_bench::name_of;
void register_one(const std::string& name, double bytes, int threads, std::function<void()> setup,
                  std::function<void()> body) {
  wok_bench::register_variant(name, bytes, threads, std::move(setup), std::move(body));
}

std::function<Tensor()> wok_program(const Workload& w, const Inputs& in) {
  if (&w == &kSoftmax) return [&in] { return wok::softmax(in.sx); };
  if (&w == &kLayerNorm) return [&in] { return wok::layer_norm(in.lx, in.w, in.b, kEps); };
  if (&w == &kRmsNorm) return [&in] { return wok::rms_norm(in.lx, in.w, kEps); };
  if (&w == &kColExpSum) return [&in] { return wok::sum(wok::exp(in.cx), {0}); };
  return [&in] { return wok::sum(in.sx, {0}); };
}

// Rows split over wok's pool the way its kernels split them.
void for_rows(int64_t rows, const std::function<void(int64_t, int64_t)>& body) {
  wok::parallel_for(rows, 16, [&](int64_t b, int64_t e) { body(b, e); });
}

using SoftmaxLoop = void (*)(const float*, float*, int64_t, int64_t);
using NormLoop = void (*)(const float*, const float*, const float*, float, float*, int64_t, int64_t);

void register_workload(const Workload& w, const Inputs& in, const wok_bench::HostBuffer& out, int threads) {
  for (auto backend : {wok::Backend::kJit, wok::Backend::kPrecompiled}) {
    const char* bname = backend == wok::Backend::kJit ? "jit" : "precompiled";
    register_one(name_of(std::string(w.name) + "/" + bname, threads), w.bytes, threads,
                 [backend] { wok::set_backend(backend); }, [fn = wok_program(w, in)] { wok::eval({fn()}); });
  }
  if (&w == &kColSum || &w == &kColExpSum) return;
  const int64_t cols = w.cols;
  float* o = out.as<float>();
  if (&w == &kSoftmax) {
    const float* x = in.sx.data<float>();
    for (auto [vname, loop] : {std::pair<const char*, SoftmaxLoop>{"hand_strict", wok_bench::softmax_rows_strict},
                               std::pair<const char*, SoftmaxLoop>{"hand_fastmath", wok_bench::softmax_rows_fastmath}})
      register_one(name_of(std::string(w.name) + "/" + vname, threads), w.bytes, threads, [] {}, [=] {
        for_rows(w.rows, [&](int64_t b, int64_t e) { loop(x + b * cols, o + b * cols, e - b, cols); });
        benchmark::ClobberMemory();
      });
    return;
  }
  if (&w != &kLayerNorm) return;
  const float* x = in.lx.data<float>();
  const float* wt = in.w.data<float>();
  const float* bs = in.b.data<float>();
  for (auto [vname, loop] : {std::pair<const char*, NormLoop>{"hand_strict", wok_bench::layer_norm_rows_strict},
                             std::pair<const char*, NormLoop>{"hand_fastmath", wok_bench::layer_norm_rows_fastmath}})
    register_one(name_of(std::string(w.name) + "/" + vname, threads), w.bytes, threads, [] {}, [=] {
      for_rows(w.rows, [&](int64_t b, int64_t e) { loop(x + b * cols, wt, bs, kEps, o + b * cols, e - b, cols); });
      benchmark::ClobberMemory();
    });
}

// Kernels the JIT launches for one evaluation.
int64_t jit_launches(const Workload& w, const Inputs& in) {
  wok::set_backend(wok::Backend::kJit);
  auto fn = wok_program(w, in);
  wok::eval({fn()});
  wok::reset_stats();
  wok::eval({fn()});
  return wok::stats().kernel_launches;
}

double paired(const std::string& slow, const std::string& fast, int threads) {
  return wok_bench::paired_variants(slow, fast, threads, kPairedRounds);
}

void print_tables(const Inputs& in) {
  using wok_bench::fmt;
  auto gbs = [&](const Workload& w, const std::string& v, int t) {
    return w.bytes / wok_bench::median_seconds(name_of(std::string(w.name) + "/" + v, t)) / 1e9;
  };
  std::printf("\n### Reductions and normalizations, float32 (GB/s: one read + one write, median iteration)\n\n");
  std::printf("| program | shape | variant | 1 thread | 2 threads |\n|---|---|---|---:|---:|\n");
  for (const Workload* w : {&kSoftmax, &kLayerNorm, &kRmsNorm, &kColSum, &kColExpSum}) {
    std::string shape = "[" + std::to_string(w->rows) + ", " + std::to_string(w->cols) + "]";
    for (const char* v : {"jit", "precompiled", "hand_strict", "hand_fastmath"}) {
      if (std::isnan(wok_bench::median_seconds(name_of(std::string(w->name) + "/" + v, 1)))) continue;
      std::string label = v;
      if (label == "jit") label += " (" + std::to_string(jit_launches(*w, in)) + " kernels/eval)";
      std::printf("| %s | %s | %s | %s | %s |\n", w->name, shape.c_str(), label.c_str(), fmt(gbs(*w, v, 1), 1).c_str(),
                  fmt(gbs(*w, v, 2), 1).c_str());
    }
  }
  std::printf("\n### Targets (time ratios within one run; %d paired rounds, median)\n\n", kPairedRounds);
  std::printf("| check | target | 1 thread | 2 threads | result |\n|---|---|---:|---:|---|\n");
  for (const Workload* w : {&kSoftmax, &kLayerNorm}) {
    struct {
      std::string slow, what;
      double limit;
    } checks[] = {{"hand_fastmath", "JIT / hand-written -ffast-math", 0.9}, {"precompiled", "JIT / precompiled", 2.0}};
    for (auto& c : checks) {
      double v[2];
      for (int i = 0; i < 2; ++i)
        v[i] = paired(std::string(w->name) + "/" + c.slow, std::string(w->name) + "/jit", kThreadCounts[i]);
      const bool missing = std::isnan(v[0] + v[1]);
      std::printf("| %s, %s | >= %.2f | %s | %s | %s |\n", c.what.c_str(), w->name, c.limit, fmt(v[0]).c_str(),
                  fmt(v[1]).c_str(), missing ? "n/a" : (v[0] >= c.limit && v[1] >= c.limit) ? "PASS" : "MISS");
    }
  }
  wok::set_num_threads(0);
}

}  // namespace

int main(int argc, char** argv) {
  wok_bench::init(
      &argc, &argv,
      {"--benchmark_min_time=0.1", "--benchmark_repetitions=3", "--benchmark_enable_random_interleaving=true"});
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  Inputs in;
  in.sx = wok::randn({kSoftmax.rows, kSoftmax.cols}, 1) * 3.0f;
  in.lx = wok::randn({kLayerNorm.rows, kLayerNorm.cols}, 2) * 2.0f + 0.5f;
  in.w = wok::rand({kLayerNorm.cols}, 3) + 0.5f;
  in.b = wok::rand({kLayerNorm.cols}, 4) - 0.5f;
  in.cx = wok::rand({kColExpSum.rows, kColExpSum.cols}, 5);
  wok::eval({in.sx, in.lx, in.w, in.b, in.cx});
  const int64_t largest = std::max(kSoftmax.rows * kSoftmax.cols, kLayerNorm.rows * kLayerNorm.cols);
  wok_bench::HostBuffer out(4 * static_cast<size_t>(largest));
  for (int t : kThreadCounts)
    for (const Workload* w : {&kSoftmax, &kLayerNorm, &kRmsNorm, &kColSum, &kColExpSum})
      register_workload(*w, in, out, t);
  wok_bench::run_and_print([&in] { print_tables(in); });
  return 0;
}
