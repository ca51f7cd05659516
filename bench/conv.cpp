// wok's conv2d, through the public API, against oneDNN's forward-inference
// convolution (Debian's libdnnl-dev 2.6, linked into this benchmark only),
// with 1 and with 2 threads in one run (both libraries' thread counts set per
// benchmark).
//
// Cases (float32, NCHW; values uniform in [-1, 1], made once):
//   ResNet-50 layers: the 7x7 stride-2 stem 3->64 at 224x224, the 3x3 pad-1
//   layers 64@56, 128@28, 256@14, 512@7 and the 1x1 layers 64->256@56,
//   256->64@56, 512->128@28, at batch 1, and the stem, 64@56, 256@14, 512@7
//   and 256->64@56 at batch 8
//   a depthwise 3x3 (MobileNetV2's [8, 144, 56, 56], groups = 144)
//   conv + bias + relu at [8, 64, 56, 56] with 64 3x3 filters
//   a ResNet basic block at [8, 64, 56, 56]: relu(bn(conv3x3)), bn(conv3x3),
//   + x, relu. wok evaluates it as one expression (wok::batch_norm in
//   inference mode); oneDNN runs the usual inference form: BN folded into
//   the weights and a bias, two convs with post-ops (relu; sum + relu).
// oneDNN: its preferred layouts (format_tag::any; on an AVX-512 host its
// brgconv kernels pick nhwc activations and blocked weights), inputs
// reordered once outside the timing and outputs left in its layout; the
// "nchw" column is the same convolution with plain nchw activations
// (weights still in its layout). The implementations are listed last.
// FLOPs are nominal, 2 * N * O * OH * OW * C/groups * KH * KW, padding taps
// included (oneDNN skips them: 18% of the taps at 7x7, pad 1).
// References: the FMA peak probe and the STREAM triad of bench/peak_probes.h
// (the same as bench/gemm.cpp's).
//
// Targets, from medians within this run, at both thread counts (the table
// printed last says "met" or "MISSED" with the figure):
//   3x3 and 1x1 layers: >= 0.9x oneDNN's speed and >= 70% of the FMA probe
//   stem: >= 0.8x oneDNN's speed
//   conv + bias + relu: <= 1.05x the time of the bare conv (wok)
//   depthwise 3x3: >= 70% of its bandwidth bound (bytes read and written /
//     triad GB/s)
//
// Before anything is timed, each case's wok result is checked against
// oneDNN's (largest |wok - oneDNN| / largest |oneDNN|); a gross mismatch
// aborts the run. Timing as in bench/gemm.cpp: each iteration evaluates a
// freshly recorded expression (wok::eval) and drops the result, every
// iteration is timed on its own and the tables use medians; repetitions are
// interleaved at random (Note [Timing on a shared machine] in bench_util.h).
//
// Run: build/bench/bench_conv [--benchmark_filter=REGEX] [--benchmark_repetitions=N]
//      [--benchmark_min_time=SECONDS]   (defaults: 5 repetitions, 0.05 s; about 40 s on 2 cores)
#include "wok/frontend/conv.h"

#include <cstdlib>
#include <functional>
#include <memory>

#include "bench_util.h"
#include "conv_reference.h"
#include "peak_probes.h"

namespace {

using wok::Tensor;
using wok_bench::ConvShape;
using wok_bench::DnnlConv;
using wok_bench::DnnlRun;
using wok_bench::FmaProbe;
using wok_bench::fmt;
using wok_bench::Layout;
using wok_bench::name_of;
using wok_bench::PostOp;
using wok_bench::target_text;
using wok_bench::Timed;
using wok_bench::uniform;
using wok_bench::verdict;
constexpr int kThreadCounts[] = {1, 2};

// ---- cases --------------------------------------------------------------------------

enum class Target { kNone, kLayer, kStem, kBiasRelu, kDepthwise };

struct Case {
  std::string id;     // benchmark names: id/wok/tN, id/onednn/tN, id/onednn_nchw/tN
  std::string label;  // table text
  double flops;       // per evaluation
  Target target;
  bool nchw = false;                                       // also time oneDNN with plain nchw activations
  double bytes = 0;                                        // depthwise: bytes read and written (the bandwidth bound)
  std::function<Tensor()> wok{};                           // records the expression; each iteration evaluates it
  std::function<std::unique_ptr<DnnlRun>(Layout)> dnnl{};  // made at the current thread count
  int64_t launches = 0;                                    // wok kernels per evaluation
};
std::vector<Case> g_cases;

uint64_t next_seed() {
  static uint64_t seed = 100;
  return seed++;
}

std::unique_ptr<DnnlRun> one_conv(const ConvShape& s, Layout layout, PostOp post, const Tensor& x, const Tensor& w,
                                  const Tensor& b) {
  auto run = std::make_unique<DnnlRun>();
  run->convs.push_back(std::make_unique<DnnlConv>(s, layout, post, x.data<float>(), w.data<float>(),
                                                  b.defined() ? b.data<float>() : nullptr));
  return run;
}

void add_conv(const std::string& id, const std::string& label, const ConvShape& s, Target target, bool nchw) {
  Tensor x = uniform({s.n, s.c, s.h, s.w}, next_seed());
  Tensor w = uniform({s.o, s.c / s.groups, s.k, s.k}, next_seed());
  Case c{id, label, s.flops(), target, nchw};
  c.wok = [=] { return wok::conv2d(x, w, {}, {s.stride, s.stride}, {s.pad, s.pad}, {1, 1}, s.groups); };
  c.dnnl = [=](Layout l) { return one_conv(s, l, PostOp::kNone, x, w, {}); };
  if (target == Target::kDepthwise) c.bytes = 4.0 * (s.src_elems() + s.dst_elems() + s.o * s.k * s.k);
  g_cases.push_back(std::move(c));
}

// relu(conv2d(x, w, b)) at [8, 64, 56, 56], 64 3x3 filters; oneDNN: bias and
// a relu post-op.
void add_bias_relu() {
  const ConvShape s{8, 64, 56, 56, 64, 3, 1, 1};
  Tensor x = uniform({8, 64, 56, 56}, next_seed());
  Tensor w = uniform({64, 64, 3, 3}, next_seed());
  Tensor b = uniform({64}, next_seed());
  Case c{"c3_64_b8_bias_relu", "conv + bias + relu [8,64,56,56] 3x3", s.flops(), Target::kBiasRelu};
  c.wok = [=] { return wok::relu(wok::conv2d(x, w, b, {1, 1}, {1, 1})); };
  c.dnnl = [=](Layout l) { return one_conv(s, l, PostOp::kRelu, x, w, b); };
  g_cases.push_back(std::move(c));
}

// The basic block out = relu(bn2(conv2(relu(bn1(conv1(x))))) + x) at
// [8, 64, 56, 56]; wok::batch_norm (inference) with mean in [-0.1, 0.1],
// variance in [0.5, 1.5], weight in [0.5, 1.5], bias in [-0.1, 0.1].
struct BatchNorm {
  Tensor mean, var, weight, bias;
  // oneDNN's side: weights[o] * scale[o], and a bias shift[o].
  std::vector<float> folded_weights(const Tensor& w) const {
    std::vector<float> f = w.to_vector<float>();
    const std::vector<float> sc = scale();
    const size_t per_o = f.size() / sc.size();
    for (size_t i = 0; i < f.size(); ++i) f[i] *= sc[i / per_o];
    return f;
  }
  std::vector<float> scale() const {
    const std::vector<float> v = var.to_vector<float>(), g = weight.to_vector<float>();
    std::vector<float> sc(v.size());
    for (size_t i = 0; i < v.size(); ++i) sc[i] = g[i] / std::sqrt(v[i] + 1e-5f);
    return sc;
  }
  std::vector<float> shift() const {
    const std::vector<float> m = mean.to_vector<float>(), b = bias.to_vector<float>(), sc = scale();
    std::vector<float> sh(m.size());
    for (size_t i = 0; i < m.size(); ++i) sh[i] = b[i] - m[i] * sc[i];
    return sh;
  }
};
BatchNorm make_bn(int64_t c) {
  auto param = [c](double half_width, double center) {
    Tensor t = uniform({c}, next_seed()) * half_width + center;
    wok::eval({t});
    return t;
  };
  return {param(0.1, 0.0), param(0.5, 1.0), param(0.5, 1.0), param(0.1, 0.0)};
}

void add_basic_block() {
  const ConvShape s{8, 64, 56, 56, 64, 3, 1, 1};
  Tensor x = uniform({8, 64, 56, 56}, next_seed());
  Tensor w1 = uniform({64, 64, 3, 3}, next_seed()), w2 = uniform({64, 64, 3, 3}, next_seed());
  const BatchNorm bn1 = make_bn(64), bn2 = make_bn(64);
  Case c{"block_b8", "ResNet basic block [8,64,56,56]", 2 * s.flops(), Target::kNone};
  c.wok = [=] {
    auto bn = [](const Tensor& y, const BatchNorm& p) { return wok::batch_norm(y, p.mean, p.var, p.weight, p.bias); };
    Tensor y = wok::relu(bn(wok::conv2d(x, w1, {}, {1, 1}, {1, 1}), bn1));
    return wok::relu(bn(wok::conv2d(y, w2, {}, {1, 1}, {1, 1}), bn2) + x);
  };
  c.dnnl = [=](Layout l) {
    const std::vector<float> f1 = bn1.folded_weights(w1), f2 = bn2.folded_weights(w2);
    const std::vector<float> b1 = bn1.shift(), b2 = bn2.shift();
    auto run = std::make_unique<DnnlRun>();
    run->convs.push_back(std::make_unique<DnnlConv>(s, l, PostOp::kRelu, x.data<float>(), f1.data(), b1.data()));
    const dnnl::memory::desc mid = run->convs[0]->dst_desc();
    run->convs.push_back(std::make_unique<DnnlConv>(s, l, PostOp::kSumRelu, nullptr, f2.data(), b2.data(), &mid));
    run->convs[1]->set_src_memory(run->convs[0]->dst());
    const dnnl::memory::dims dims{s.n, s.c, s.h, s.w};
    dnnl::memory plain({dims, dnnl::memory::data_type::f32, dnnl::memory::format_tag::nchw}, wok_bench::dnnl_engine(),
                       const_cast<float*>(x.data<float>()));
    run->residual = DnnlConv::reordered(plain, run->convs[1]->dst_desc());
    return run;
  };
  g_cases.push_back(std::move(c));
}

void make_cases() {
  const Target layer = Target::kLayer;
  for (int64_t n : {1, 8}) {
    const std::string b = "_b" + std::to_string(n), at = ", batch " + std::to_string(n);
    add_conv("stem" + b, "stem 7x7/2 3->64 @224" + at, {n, 3, 224, 224, 64, 7, 2, 3}, Target::kStem, true);
    add_conv("c3_64" + b, "3x3 64->64 @56" + at, {n, 64, 56, 56, 64, 3, 1, 1}, layer, true);
    if (n == 1) add_conv("c3_128" + b, "3x3 128->128 @28" + at, {n, 128, 28, 28, 128, 3, 1, 1}, layer, true);
    add_conv("c3_256" + b, "3x3 256->256 @14" + at, {n, 256, 14, 14, 256, 3, 1, 1}, layer, n == 1);
    add_conv("c3_512" + b, "3x3 512->512 @7" + at, {n, 512, 7, 7, 512, 3, 1, 1}, layer, n == 1);
    if (n == 1) add_conv("c1_64_256" + b, "1x1 64->256 @56" + at, {n, 64, 56, 56, 256, 1, 1, 0}, layer, true);
    add_conv("c1_256_64" + b, "1x1 256->64 @56" + at, {n, 256, 56, 56, 64, 1, 1, 0}, layer, n == 1);
    if (n == 1) add_conv("c1_512_128" + b, "1x1 512->128 @28" + at, {n, 512, 28, 28, 128, 1, 1, 0}, layer, true);
  }
  add_conv("dw_144_b8", "depthwise 3x3 [8,144,56,56]", {8, 144, 56, 56, 144, 3, 1, 1, 144}, Target::kDepthwise, true);
  add_bias_relu();
  add_basic_block();
}

// ---- the check: wok's results against oneDNN's ------------------------------------

constexpr double kTolerance = 1e-4;  // float32 sums of up to 4608 products of [-1, 1] values
constexpr double kGross = 1e-2;      // beyond this the run stops: the timings would mean nothing

// Evaluates each case once (which also compiles its kernels), counts its
// kernel launches and compares it with oneDNN's result. Returns the worst
// relative difference; exits on a gross mismatch.
std::pair<double, std::string> check_results() {
  wok::set_num_threads(0);
  wok_bench::set_dnnl_threads(2);
  double worst = 0;
  std::string worst_case = "-";
  for (Case& c : g_cases) {
    Tensor r = c.wok();
    wok::eval({r});
    const int64_t l0 = wok::stats().kernel_launches;
    wok::eval({c.wok()});
    c.launches = wok::stats().kernel_launches - l0;
    std::unique_ptr<DnnlRun> ref = c.dnnl(Layout::kAny);
    ref->prep();
    ref->run();
    const std::vector<float> want = ref->convs.back()->dst_nchw();
    const double rel = r.numel() == static_cast<int64_t>(want.size())
                           ? wok_bench::relative_difference(r.data<float>(), want.data(), r.numel())
                           : INFINITY;
    std::printf("check %-40s |wok - oneDNN| / max |oneDNN| = %.1e  (oneDNN: %s)\n", c.label.c_str(), rel,
                ref->impl().c_str());
    if (!(rel <= kGross)) {
      std::fprintf(stderr, "bench_conv: %s: wok's result differs from oneDNN's by %.1e (> %.0e): aborting\n",
                   c.label.c_str(), rel, kGross);
      std::exit(1);
    }
    if (!(rel <= worst)) worst = rel, worst_case = c.label;
  }
  std::fflush(stdout);
  return {worst, worst_case};
}

// ---- registration -------------------------------------------------------------------

std::map<std::string, std::string> g_impl;  // benchmark name -> oneDNN implementation

void set_threads(int threads) {
  wok::set_num_threads(threads);
  wok_bench::set_dnnl_threads(threads);
}

// Each variant's body is made once per process, at its thread count
// (wok_bench::register_timed): oneDNN's primitives pick their blocking for it.
void register_all(const FmaProbe& probe, const wok_bench::TriadArrays& tr) {
  using wok_bench::register_timed;
  for (int t : kThreadCounts) {
    for (const Case& c : g_cases) {
      const double work = c.target == Target::kDepthwise ? c.bytes : c.flops;
      const char* unit = c.target == Target::kDepthwise ? "B/s" : "FLOP/s";
      register_timed(c.id + "/wok", t, unit, work, set_threads, [fn = c.wok] {
        return Timed{[fn] { wok::eval({fn()}); }, {}};
      });
      for (Layout l : {Layout::kAny, Layout::kNchw}) {
        if (l == Layout::kNchw && !c.nchw) continue;
        const std::string what = c.id + (l == Layout::kAny ? "/onednn" : "/onednn_nchw");
        register_timed(what, t, unit, work, set_threads, [make = c.dnnl, l, name = name_of(what, t)] {
          std::shared_ptr<DnnlRun> run = make(l);
          g_impl[name] = run->impl();
          return Timed{[run] { run->run(); }, [run] { run->prep(); }};
        });
      }
    }
    wok_bench::register_peak_probes(probe, tr, t, set_threads);
  }
}

// ---- tables -------------------------------------------------------------------------

void print_tables(const FmaProbe& probe, const std::pair<double, std::string>& check) {
  auto secs = [](const std::string& what, int t) { return wok_bench::median_seconds(name_of(what, t)); };
  auto ms = [](double s) { return fmt(s * 1e3, 3); };

  std::printf("\n### wok conv2d vs oneDNN %d.%d.%d (median iteration)\n\n", dnnl_version()->major,
              dnnl_version()->minor, dnnl_version()->patch);
  std::printf("Results: largest |wok - oneDNN| / largest |oneDNN| is %.1e (%s)%s.\n", check.first, check.second.c_str(),
              check.first <= kTolerance ? "" : ": above the 1e-4 expected of float32 sums");
  std::printf("FMA peak probe: %s, %d independent chains per thread.\n", probe.isa, wok_bench::kChains);
  const char* spin = std::getenv("GOMP_SPINCOUNT");
  std::printf("GOMP_SPINCOUNT=%s (Note [OpenMP's idle threads]).\n", spin ? spin : "unset");
  std::printf("Triad: 3 x %lld MiB float32 arrays, 12 bytes per element.\n",
              static_cast<long long>(4 * wok_bench::kTriadN >> 20));
  std::printf(
      "oneDNN: format_tag::any layouts, inputs reordered and weights prepacked outside the timing; the basic block "
      "with BN folded into the weights and bias, the residual copied into the second conv's dst (for its sum "
      "post-op) untimed. GFLOP/s of the block counts its two convs.\n");
  wok_bench::warn_if_cores_shared();

  for (int t : kThreadCounts) {
    const auto [peak, triad_gbs] = wok_bench::print_peak_heading(probe, t);
    std::printf(
        "| case | wok ms | oneDNN ms | oneDNN nchw ms | wok / oneDNN speed | wok GFLOP/s | oneDNN GFLOP/s | wok %% "
        "of peak | wok kernels/eval | target |\n");
    std::printf("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n");
    for (const Case& c : g_cases) {
      const double w = secs(c.id + "/wok", t), o = secs(c.id + "/onednn", t);
      const double o_nchw = secs(c.id + "/onednn_nchw", t);
      if (std::isnan(w) && std::isnan(o)) continue;  // filtered out
      const double speed = o / w, wok_gflops = c.flops / w / 1e9, of_peak = 100.0 * wok_gflops / peak;
      std::string target = "-";
      char figure[256];
      switch (c.target) {
        case Target::kNone:
          break;
        case Target::kLayer:
          std::snprintf(figure, sizeof figure, "%sx (>= 0.9x), %s%% of peak (>= 70%%)", fmt(speed).c_str(),
                        fmt(of_peak, 1).c_str());
          target = target_text(speed + of_peak, speed >= 0.9 && of_peak >= 70.0, figure);
          break;
        case Target::kStem:
          std::snprintf(figure, sizeof figure, "%sx (>= 0.8x)", fmt(speed).c_str());
          target = target_text(speed, speed >= 0.8, figure);
          break;
        case Target::kBiasRelu: {
          const double bare = secs("c3_64_b8/wok", t);
          std::snprintf(figure, sizeof figure, "%sx the bare conv's %s ms (<= 1.05x)", fmt(w / bare).c_str(),
                        ms(bare).c_str());
          target = target_text(w / bare, w / bare <= 1.05, figure);
          break;
        }
        case Target::kDepthwise: {
          const double bound = c.bytes / (triad_gbs * 1e9);
          std::snprintf(figure, sizeof figure, "%s%% of the bound %.0f B / %s GB/s = %s ms (>= 70%%)",
                        fmt(100.0 * bound / w, 1).c_str(), c.bytes, fmt(triad_gbs, 1).c_str(), ms(bound).c_str());
          target = target_text(bound / w, bound / w >= 0.7, figure);
          break;
        }
      }
      std::printf("| %s | %s | %s | %s | %s | %s | %s | %s | %lld | %s |\n", c.label.c_str(), ms(w).c_str(),
                  ms(o).c_str(), c.nchw ? ms(o_nchw).c_str() : "-", fmt(speed).c_str(), fmt(wok_gflops, 1).c_str(),
                  fmt(c.flops / o / 1e9, 1).c_str(), fmt(of_peak, 1).c_str(), static_cast<long long>(c.launches),
                  target.c_str());
    }
  }

  std::printf("\n### oneDNN implementations (2 threads; -> dst layout)\n\n");
  for (const Case& c : g_cases)
    for (const char* v : {"/onednn", "/onednn_nchw"}) {
      auto it = g_impl.find(name_of(c.id + v, 2));
      if (it != g_impl.end()) std::printf("- %s%s: %s\n", c.id.c_str(), v, it->second.c_str());
    }
  std::printf("\n| check | target | value | result |\n|---|---|---|---|\n");
  wok_bench::print_timed_compiles_row();
}

}  // namespace

// Note [OpenMP's idle threads]
// oneDNN runs on libgomp, whose worker threads spin after each parallel
// region for GOMP_SPINCOUNT rounds (300000 by default, a few ms) before they
// sleep: a wok run just after a 2-thread oneDNN run would share its cores
// with them. libgomp reads the variable once, when it is loaded, so main
// sets it to 10000 (well under 1 ms, still spanning the back-to-back
// parallel regions of one convolution and of the basic block's two) and
// re-executes itself. A value already in the environment is kept.
void limit_openmp_spin(char** argv) {
  if (std::getenv("GOMP_SPINCOUNT") || std::getenv("OMP_WAIT_POLICY")) return;
  wok_bench::reexec_with_env(argv, "GOMP_SPINCOUNT", "10000", "bench_conv", "OpenMP");
}

int main(int argc, char** argv) {
  limit_openmp_spin(argv);
  wok_bench::init(
      &argc, &argv,
      {"--benchmark_min_time=0.05", "--benchmark_repetitions=5", "--benchmark_enable_random_interleaving=true"});
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  const FmaProbe probe = wok_bench::fma_probe();
  make_cases();
  const auto check = check_results();
  const wok_bench::TriadArrays triad_arrays;
  register_all(probe, triad_arrays);
  wok_bench::run_and_print([&] { print_tables(probe, check); });
  return 0;
}
