#include "wok/jit/shadow.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <set>

#include "wok/cache/fragment_serialization.h"
#include "wok/runtime/element_cast.h"
#include "wok/runtime/executor.h"
#include "wok/runtime/op_registry.h"
#include "wok/runtime/observe/events.h"
#include "wok/runtime/observe/report.h"

namespace wok::jit {

namespace {

std::atomic<int> g_every{-1};  // -1: not set; use the environment
std::atomic<uint64_t> g_count{0};

int env_every() {
  static const int n = [] {
    const char* s = std::getenv("WOK_SHADOW");
    if (!s || !*s) return 0;
    char* end = nullptr;
    long v = std::strtol(s, &end, 10);
    if (end == s || v < 0) {
      std::fprintf(stderr, "wok: ignoring WOK_SHADOW=%s (expected a number N: shadow one evaluation in N)\n", s);
      return 0;
    }
    return static_cast<int>(v);
  }();
  return n;
}

// Ordered integer for a float: adjacent floats differ by one.
template <typename F, typename I>
I ordered(F x) {
  I i = std::bit_cast<I>(x);
  return i < 0 ? std::numeric_limits<I>::min() - i : i;
}

template <typename F, typename I>
double ulp_between(F a, F b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b) ? 0 : INFINITY;
  if (a == b) return 0;  // also +0 and -0
  I x = ordered<F, I>(a), y = ordered<F, I>(b);
  // Differences of ordered values fit in the unsigned type.
  using U = std::make_unsigned_t<I>;
  U d = x > y ? static_cast<U>(x) - static_cast<U>(y) : static_cast<U>(y) - static_cast<U>(x);
  return static_cast<double>(d);
}

// The same for the 16-bit floats, on their sign-magnitude encodings.
template <typename H>
double half_ulp_between(H a, H b) {
  const float fa = a, fb = b;
  if (std::isnan(fa) || std::isnan(fb)) return std::isnan(fa) && std::isnan(fb) ? 0 : INFINITY;
  if (fa == fb) return 0;
  auto ordered16 = [](uint16_t bits) {
    return (bits & 0x8000) ? -static_cast<int32_t>(bits & 0x7fff) : static_cast<int32_t>(bits);
  };
  return std::fabs(static_cast<double>(ordered16(a.bits) - ordered16(b.bits)));
}

// Compares n elements of dtype `t`; max_rel is |a - b| / max(1, |b|).
// Half-precision outputs are measured in their own ulps.
void compare(DType t, const void* a, const void* b, int64_t n, double& max_abs, double& max_ulp, double& max_rel) {
  visit_any_dtype(t, [&](auto tag) {
    using T = decltype(tag);
    const T* x = static_cast<const T*>(a);
    const T* y = static_cast<const T*>(b);
    for (int64_t i = 0; i < n; ++i) {
      if constexpr (std::is_floating_point_v<T> || is_half_type_v<T>) {
        double u = ulp_distance(x[i], y[i]);
        double d = std::fabs(static_cast<double>(x[i]) - static_cast<double>(y[i]));
        if (std::isnan(d)) d = u > 0 ? INFINITY : 0;
        max_abs = std::max(max_abs, d);
        max_ulp = std::max(max_ulp, u);
        max_rel = std::max(max_rel, d / std::max(1.0, std::fabs(static_cast<double>(y[i]))));
      } else {
        double d = std::fabs(static_cast<double>(x[i]) - static_cast<double>(y[i]));
        max_abs = std::max(max_abs, d);
        max_ulp = std::max(max_ulp, d);
        max_rel = std::max(max_rel, d);
      }
    }
  });
}

std::mutex g_warned_mu;
std::set<std::string>& warned() {
  static auto* s = new std::set<std::string>();
  return *s;
}

}  // namespace

double ulp_distance(double a, double b) { return ulp_between<double, int64_t>(a, b); }
double ulp_distance(float a, float b) { return ulp_between<float, int32_t>(a, b); }
double ulp_distance(half a, half b) { return half_ulp_between(a, b); }
double ulp_distance(bfloat16 a, bfloat16 b) { return half_ulp_between(a, b); }

int shadow_every() {
  int v = g_every.load(std::memory_order_relaxed);
  return v >= 0 ? v : env_every();
}

void set_shadow(int every_n) {
  g_every.store(std::max(0, every_n));
  if (every_n > 0) observe::collect_report(true);  // the report lists what shadow mode finds
}

bool shadow_due() {
  int n = shadow_every();
  if (n <= 0) return false;
  static std::once_flag collecting;  // WOK_SHADOW alone also fills the report
  std::call_once(collecting, [] { observe::collect_report(true); });
  return g_count.fetch_add(1, std::memory_order_relaxed) % static_cast<uint64_t>(n) == 0;
}

std::vector<ShadowDiff> shadow_compare(const Plan& plan, const Fragment& f, std::span<const StoragePtr> inputs,
                                       const std::vector<StoragePtr>& jit_outputs) {
  PrecompiledExecutor reference;
  std::vector<StoragePtr> ref;
  {
    observe::ShadowRunScope marked;  // its launches are not the program's
    ref = reference.run(f, inputs);
  }

  // The step that writes each value; through aliasing steps (reshape) to
  // the kernel that wrote the bytes.
  std::vector<int> writer(f.values.size(), -1);
  for (size_t s = 0; s < plan.steps.size(); ++s)
    for (int v : plan.steps[s].writes) writer[v] = static_cast<int>(s);
  auto kernel_writing = [&](int v) {
    for (int hops = 0; hops < static_cast<int>(plan.steps.size()) + 1; ++hops) {
      int s = writer[plan.canonical[v]];
      if (s < 0) return -1;
      const PlanStep& st = plan.steps[s];
      if (st.kind == PlanStep::Kind::kKernel) return s;
      if (!f.nodes[st.node].op->def().output_aliases_input || st.reads.empty()) return -1;
      v = st.reads[0];
    }
    return -1;
  };

  std::vector<ShadowDiff> diffs;
  std::vector<double> max_rel;
  std::vector<int64_t> depth;  // per diff: a GEMM's k, or 0
  std::vector<int> diff_of_step(plan.steps.size(), -1);
  for (size_t o = 0; o < f.outputs.size(); ++o) {
    int v = f.outputs[o];
    int s = kernel_writing(v);
    if (s < 0) continue;  // a precompiled node or an input: the same code on both sides
    const PlanStep& st = plan.steps[s];
    if (diff_of_step[s] < 0) {
      diff_of_step[s] = static_cast<int>(diffs.size());
      ShadowDiff d;
      d.kernel = st.kernel ? st.kernel->name : "kernel";
      d.group = st.group;
      for (const ScalarInstr& in : st.lowered.spec.program.instrs) {
        d.reduces = d.reduces || is_reduction(in.op);
        d.rounding_ops += in.op != ScalarOp::kInput && in.op != ScalarOp::kConst;
      }
      d.reduces = d.reduces || st.lowered.spec.is_gemm();
      diffs.push_back(std::move(d));
      max_rel.push_back(0);
      depth.push_back(st.lowered.spec.is_gemm() ? std::max<int64_t>(1, st.lowered.gemm.k) : 0);
    }
    int k = diff_of_step[s];
    ShadowDiff& d = diffs[k];
    d.float64 = d.float64 || f.values[v].dtype == DType::kFloat64;
    if (is_half(f.values[v].dtype))
      d.half_unit = std::max(d.half_unit, f.values[v].dtype == DType::kFloat16 ? 0x1p-11 : 0x1p-8);
    compare(f.values[v].dtype, jit_outputs[o]->data(), ref[o]->data(), f.values[v].numel(), d.max_abs, d.max_ulp,
            max_rel[k]);
  }

  std::string repro;
  for (size_t k = 0; k < diffs.size(); ++k) {
    ShadowDiff& d = diffs[k];
    // Note [Shadow-mode bounds]
    // docs/numerics.md: elementwise kernels are bitwise identical to the
    // precompiled ones. Float reductions are summed in a different order on
    // each side, each within 1e-6 (float32) of the sum of magnitudes; a
    // kernel with a reduction may therefore differ by a relative 1e-6
    // (float32; float64: 1e-12) of max(1, |result|).
    // A GEMM's k products per output are summed in another order too: 2 k
    // unit roundoffs of max(1, |result|) (docs/numerics.md, Matmul).
    double rel_bound = d.reduces ? (d.float64 ? 1e-12 : 1e-6) : 0;
    d.bound = d.reduces ? (d.float64 ? "relative 1e-12 (reduction)" : "relative 1e-6 (reduction)") : "bitwise equality";
    if (depth[k] > 0) {
      const double eps = d.float64 ? 0x1p-53 : 0x1p-24;
      rel_bound = std::max(rel_bound, 2.0 * static_cast<double>(depth[k]) * eps);
      d.bound = "relative 2 k u = " + std::to_string(rel_bound) + " (a GEMM (matmul, convolution) over k = " +
                std::to_string(depth[k]) + ")";
    }
    // A kernel with half outputs rounds once where the op-by-op replay
    // rounds after each of its n ops (docs/numerics.md, "Storage precision,
    // compute precision"): the two may differ by n unit roundoffs of the
    // half type, of max(1, |result|).
    const bool half_chain = d.half_unit > 0 && d.rounding_ops > 1;
    if (half_chain) {
      rel_bound = std::max(rel_bound, d.rounding_ops * d.half_unit);
      d.bound = "relative n u = " + std::to_string(rel_bound) + " (a half-precision kernel of n = " +
                std::to_string(d.rounding_ops) + " ops rounds once, the op-by-op replay after each)";
    }
    d.beyond_bound = max_rel[k] > rel_bound || (!d.reduces && !half_chain && d.max_ulp > 0);
    const bool differs = d.max_abs > 0 || d.max_ulp > 0;
    if (differs && repro.empty()) repro = cache::serialize_fragment(f);
    if (d.beyond_bound) {
      std::lock_guard lock(g_warned_mu);
      if (warned().insert(d.kernel).second)
        std::fprintf(stderr,
                     "wok shadow: warning: fused kernel %s (%s) differs from the precompiled kernels: max abs %.6g, "
                     "max ulp %.6g; the documented bound is %s (docs/numerics.md). Reproducer: %s\n",
                     d.kernel.c_str(), d.group.c_str(), d.max_abs, d.max_ulp, d.bound.c_str(), repro.c_str());
    }
    if (WOK_OBSERVING(observe::EventKind::kShadow)) {
      observe::Event e;
      e.kind = observe::EventKind::kShadow;
      e.name = d.kernel;
      e.detail = d.group;
      e.max_abs = d.max_abs;
      e.max_ulp = d.max_ulp;
      e.warn = d.beyond_bound;
      if (differs) e.repro = repro;
      observe::emit(std::move(e));
    }
  }
  return diffs;
}

}  // namespace wok::jit
