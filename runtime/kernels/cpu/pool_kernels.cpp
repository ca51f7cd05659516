// Precompiled kernels of max_pool2d (int32, int64, float32, float64),
// avg_pool2d and adaptive_avg_pool2d (float32, float64) over NCHW; the
// windows are those of Note [Pooling windows] (runtime/ops/pool_ops.cpp).
// The ops are opaque, so both backends run these kernels.
//
// Note [Pooling loops]
// Work is split over the output rows of all N * C planes. An output row is
// built in place: for each kernel row inside the input and each kernel
// column, one pass over the output columns combines input[o * stride + off]
// into out[o]. The output columns whose kernel column reads inside the
// input form one range per kernel column, computed once per call, so the
// passes have no border tests and vectorize (contiguous loads at stride 1,
// a template constant; strided at 2; a runtime stride otherwise); the
// columns a kernel column would read in padding are simply not visited.
// The average then divides each sum by its window's count. The adaptive
// average sums its window's input rows into a row buffer first (one
// vectorized pass per row), then each output averages its columns of it.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "wok/runtime/error.h"
#include "wok/runtime/kernels/cpu/elementwise_rules.h"
#include "wok/runtime/kernels/cpu/isa.h"
#include "wok/runtime/kernels/cpu/vec_math.h"
#include "wok/runtime/op_registry.h"
#include "wok/runtime/thread_pool.h"

namespace wok::cpu::WOK_ISA_NS {

namespace {

// Input elements read per parallel chunk, at least: below this, a thread
// hand-off costs more than the work.
constexpr int64_t kMinParallelReads = 1 << 15;

// The outputs [lo, hi) whose kernel offset j reads inside the input, at
// input position o * stride + off.
struct Span {
  int64_t lo, hi, off;
};

// (a + s - 1) / s for a > 0, else 0.
int64_t ceil_div_pos(int64_t a, int64_t s) { return a <= 0 ? 0 : (a + s - 1) / s; }

// One Span per kernel offset j in [0, k) along a dim of `in` inputs and
// `out` outputs.
std::vector<Span> valid_spans(int64_t in, int64_t out, int64_t k, int64_t s, int64_t pad_before, int64_t d) {
  std::vector<Span> spans(static_cast<size_t>(k));
  for (int64_t j = 0; j < k; ++j) {
    const int64_t off = j * d - pad_before;
    const int64_t hi = std::min(out, ceil_div_pos(in - off, s));
    const int64_t lo = std::min(hi, ceil_div_pos(-off, s));
    spans[static_cast<size_t>(j)] = {lo, hi, off};
  }
  return spans;
}

// The attributes and sizes of one call.
struct Geometry {
  int64_t planes, h, w, oh, ow;
  int64_t kh, kw, sh, sw, pt, pl, pb, pr, dh, dw;
  bool count_include_pad;
};

Geometry geometry(const KernelContext& ctx, bool has_dilation) {
  const Shape& x = *ctx.inputs[0].shape;
  const Shape& y = *ctx.outputs[0].shape;
  const auto& k = ctx.attrs.get_ints("kernel");
  const auto& s = ctx.attrs.get_ints("stride");
  const auto& p = ctx.attrs.get_ints("padding");
  Geometry g{x[0] * x[1], x[2], x[3], y[2], y[3], k[0], k[1], s[0], s[1], p[0], p[1], p[2], p[3], 1, 1, false};
  if (has_dilation) {
    const auto& d = ctx.attrs.get_ints("dilation");
    g.dh = d[0];
    g.dw = d[1];
  } else {
    g.count_include_pad = ctx.attrs.get_bool("count_include_pad");
  }
  return g;
}

template <typename T>
constexpr T lowest() {
  if constexpr (std::is_floating_point_v<T>) return -std::numeric_limits<T>::infinity();
  else return std::numeric_limits<T>::lowest();
}

struct MaxStep {
  template <typename T>
  static T apply(T acc, T v) {
    return vm::maximum(acc, v);
  }
};
struct SumStep {
  template <typename T>
  static T apply(T acc, T v) {
    return acc + v;
  }
};

// out[o] = Step(out[o], in[o * stride + off]) for o in [lo, hi). S is the
// stride when known at compile time, else 0.
template <typename Step, int S, typename T>
inline void combine_pass(T* __restrict out, const T* __restrict in, const Span& c, int64_t stride) {
  const int64_t st = S > 0 ? S : stride;
  for (int64_t o = c.lo; o < c.hi; ++o) out[o] = Step::apply(out[o], in[o * st + c.off]);
}

// Output row `r` of the plane `x`: each output's window combined into
// `out_row`, starting from `init`.
template <typename Step, int S, typename T>
void pool_row(const Geometry& g, const T* x, T* out_row, int64_t r, const std::vector<Span>& rows,
              const std::vector<Span>& cols, T init) {
  std::fill(out_row, out_row + g.ow, init);
  for (const Span& rs : rows) {
    if (r < rs.lo || r >= rs.hi) continue;
    const T* in_row = x + (r * g.sh + rs.off) * g.w;
    for (const Span& cs : cols) combine_pass<Step, S>(out_row, in_row, cs, g.sw);
  }
}

// The count an average divides by along one dim, for output o: the window's
// positions inside the input, or inside the padded extent.
int64_t window_count(int64_t o, int64_t s, int64_t pad_before, int64_t pad_after, int64_t k, int64_t in,
                     bool include_pad) {
  const int64_t start = o * s - pad_before;
  if (include_pad) return std::min(start + k, in + pad_after) - start;
  return std::min(start + k, in) - std::max<int64_t>(start, 0);
}

// Calls row_fn(input plane, output row, r) for every output row r of every
// plane, in parallel.
template <typename T, typename RowFn>
void for_each_row(const KernelContext& ctx, const Geometry& g, int64_t reads_per_row, const RowFn& row_fn) {
  const T* x = ctx.inputs[0].as<const T>();
  T* y = ctx.outputs[0].as<T>();
  const int64_t grain = std::max<int64_t>(1, kMinParallelReads / std::max<int64_t>(1, reads_per_row));
  parallel_for(g.planes * g.oh, grain, [&](int64_t b, int64_t e) {
    for (int64_t u = b; u < e; ++u) {
      const int64_t plane = u / g.oh, r = u % g.oh;
      row_fn(x + plane * g.h * g.w, y + plane * g.oh * g.ow + r * g.ow, r);
    }
  });
}

// max (col_count empty) or average (col_count: each output column's count)
// at column stride S (0: g.sw).
template <typename Step, int S, typename T>
void window_pool(const KernelContext& ctx, const Geometry& g, T init, const std::vector<T>& col_count) {
  const std::vector<Span> rows = valid_spans(g.h, g.oh, g.kh, g.sh, g.pt, g.dh);
  const std::vector<Span> cols = valid_spans(g.w, g.ow, g.kw, g.sw, g.pl, g.dw);
  for_each_row<T>(ctx, g, g.ow * g.kh * g.kw, [&](const T* x, T* out, int64_t r) {
    pool_row<Step, S>(g, x, out, r, rows, cols, init);
    if (col_count.empty()) return;
    const T rc = static_cast<T>(window_count(r, g.sh, g.pt, g.pb, g.kh, g.h, g.count_include_pad));
    const T* __restrict cc = col_count.data();
    for (int64_t o = 0; o < g.ow; ++o) out[o] = out[o] / (rc * cc[o]);
  });
}

template <typename Step, typename T>
void window_pool_any_stride(const KernelContext& ctx, const Geometry& g, T init, const std::vector<T>& col_count) {
  if (g.sw == 1) window_pool<Step, 1>(ctx, g, init, col_count);
  else if (g.sw == 2) window_pool<Step, 2>(ctx, g, init, col_count);
  else window_pool<Step, 0>(ctx, g, init, col_count);
}

template <typename T>
void max_pool_typed(const KernelContext& ctx) {
  const Geometry g = geometry(ctx, /*has_dilation=*/true);
  if (ctx.outputs[0].numel() == 0) return;
  window_pool_any_stride<MaxStep>(ctx, g, lowest<T>(), std::vector<T>{});
}

template <typename T>
void avg_pool_typed(const KernelContext& ctx) {
  const Geometry g = geometry(ctx, /*has_dilation=*/false);
  if (ctx.outputs[0].numel() == 0) return;
  std::vector<T> col_count(static_cast<size_t>(g.ow));
  for (int64_t o = 0; o < g.ow; ++o)
    col_count[static_cast<size_t>(o)] =
        static_cast<T>(window_count(o, g.sw, g.pl, g.pr, g.kw, g.w, g.count_include_pad));
  window_pool_any_stride<SumStep>(ctx, g, T(0), col_count);
}

// Output i of n over `in` positions: [floor(i * in / n), ceil((i + 1) * in / n)).
Span adaptive_window(int64_t i, int64_t in, int64_t n) { return {i * in / n, ((i + 1) * in + n - 1) / n, 0}; }

template <typename T>
void adaptive_avg_pool_typed(const KernelContext& ctx) {
  const Shape& xs = *ctx.inputs[0].shape;
  const Shape& ys = *ctx.outputs[0].shape;
  Geometry g{xs[0] * xs[1], xs[2], xs[3], ys[2], ys[3], 0, 0, 0, 0, 0, 0, 0, 0, 1, 1, false};
  if (ctx.outputs[0].numel() == 0) return;
  std::vector<Span> cols(static_cast<size_t>(g.ow));
  for (int64_t o = 0; o < g.ow; ++o) cols[static_cast<size_t>(o)] = adaptive_window(o, g.w, g.ow);
  const int64_t rows_per_window = (g.h + g.oh - 1) / g.oh + 1;
  const T* x = ctx.inputs[0].as<const T>();
  T* y = ctx.outputs[0].as<T>();
  const int64_t grain = std::max<int64_t>(1, kMinParallelReads / (rows_per_window * g.w));
  parallel_for(g.planes * g.oh, grain, [&](int64_t b, int64_t e) {
    std::vector<T> acc(static_cast<size_t>(g.w));
    T* __restrict a = acc.data();
    for (int64_t u = b; u < e; ++u) {
      const int64_t plane = u / g.oh, r = u % g.oh;
      const Span rs = adaptive_window(r, g.h, g.oh);
      std::fill(a, a + g.w, T(0));
      for (int64_t i = rs.lo; i < rs.hi; ++i) {
        const T* __restrict in = x + (plane * g.h + i) * g.w;
        for (int64_t j = 0; j < g.w; ++j) a[j] += in[j];
      }
      const T rc = static_cast<T>(rs.hi - rs.lo);
      T* out = y + u * g.ow;
      for (int64_t o = 0; o < g.ow; ++o) {
        const Span& cs = cols[static_cast<size_t>(o)];
        T sum = 0;
        for (int64_t j = cs.lo; j < cs.hi; ++j) sum += a[j];
        out[o] = sum / (rc * static_cast<T>(cs.hi - cs.lo));
      }
    }
  });
}

template <bool kFloatOnly, typename Typed>
void dispatch(const KernelContext& ctx, Typed&& typed) {
  const DType t = ctx.inputs[0].dtype;
  if (ctx.outputs[0].dtype != t) throw DTypeError("pool kernel: input and result must share one dtype");
  visit_dtype(t, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool> || (kFloatOnly && !std::is_floating_point_v<T>)) unsupported_dtype(ctx, t);
    else typed(T{});
  });
}

void max_pool_kernel(const KernelContext& ctx) {
  dispatch<false>(ctx, [&](auto tag) { max_pool_typed<decltype(tag)>(ctx); });
}
void avg_pool_kernel(const KernelContext& ctx) {
  dispatch<true>(ctx, [&](auto tag) { avg_pool_typed<decltype(tag)>(ctx); });
}
void adaptive_avg_pool_kernel(const KernelContext& ctx) {
  dispatch<true>(ctx, [&](auto tag) { adaptive_avg_pool_typed<decltype(tag)>(ctx); });
}

}  // namespace

void register_pool_kernels(OpRegistry& r) {
  r.add_kernel("max_pool2d", DeviceType::kCPU, max_pool_kernel);
  r.add_kernel("avg_pool2d", DeviceType::kCPU, avg_pool_kernel);
  r.add_kernel("adaptive_avg_pool2d", DeviceType::kCPU, adaptive_avg_pool_kernel);
}

}  // namespace wok::cpu::WOK_ISA_NS
