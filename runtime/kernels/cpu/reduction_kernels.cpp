// Precompiled kernels of the reductions: sum, mean, max, min, prod, argmax.
//
// Note [Reduction layout]
// Size-1 dims are dropped and adjacent dims that are both reduced or both
// kept are merged, so any reduction becomes alternating groups of kept (K)
// and reduced (R) dims over a contiguous input. Two loops cover all cases:
//  - the innermost group is reduced ("inner"): each output reduces one or
//    more contiguous runs, with several independent lane accumulators;
//  - the innermost group is kept ("outer"): each output row accumulates
//    whole input rows, out[j] op= x[r, j], vectorized across j.
// Other groups are walked with an odometer.
//
// Note [Deterministic splitting]
// Work is cut into units whose bounds depend only on the shape (kChunk
// elements), never on the thread count, and partial results are combined in
// a fixed order, so every thread count gives bitwise the same result.
// Floating-point sums are blocked: lanes of at most 32 elements, blocks
// merged by a binary cascade (pairwise summation), so the error grows with
// log(n) rather than n.
//
// The ops and cascades are in reduction_ops.h, contiguous runs in
// reduction_runs.h, the layout in reduction_layout.h and row tiles in
// reduction_rows.h; this file holds the two loops and the kernels.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include "wok/runtime/kernels/cpu/strided_loop.h"
#include "wok/runtime/thread_pool.h"
#include "wok/runtime/widening.h"
#include "wok/runtime/wrapping.h"
#include "wok/runtime/kernels/cpu/elementwise_rules.h"
#include "wok/runtime/kernels/cpu/isa.h"
#include "wok/runtime/kernels/cpu/reduction_layout.h"
#include "wok/runtime/kernels/cpu/reduction_ops.h"
#include "wok/runtime/kernels/cpu/reduction_rows.h"
#include "wok/runtime/kernels/cpu/reduction_runs.h"
#include "wok/runtime/thread_pool.h"

namespace wok::cpu::WOK_ISA_NS {

namespace {

// ---- the two loops ---------------------------------------------------------------------

// out[o] = reduction of x[o * L, (o + 1) * L) for o in [b, e).
template <class Op, int L>
void short_rows(const typename Op::In* __restrict x, typename Op::Out* __restrict out, int64_t b, int64_t e) {
  for (int64_t o = b; o < e; ++o) {
    typename Op::P a = Op::first(x[o * L], 0);
    for (int l = 1; l < L; ++l) a = Op::step(a, x[o * L + l], l);
    out[o] = Op::finish(a, L);
  }
}

// Innermost group reduced: output o reduces pieces of at most kChunk
// contiguous elements; consecutive pieces form units of about kChunk.
template <class Op>
void reduce_inner(const ReduceLayout& l, const typename Op::In* in, typename Op::Out* out) {
  using P = typename Op::P;
  const int64_t L = l.red.back().size;
  const size_t nrp = l.red.size() - 1;  // the other reduced groups
  const int64_t C = (L + kChunk - 1) / kChunk;
  const int64_t npieces = (l.count / L) * C;
  const int64_t G = L >= kChunk ? 1 : kChunk / L;
  const int64_t S = (npieces + G - 1) / G;
  const int64_t O = l.out_numel;

  auto unit = [&](int64_t base, int64_t s) -> P {
    if (npieces == 1) return run<Op>(in + base, L, 0);
    const int64_t p0 = s * G, p1 = std::min(npieces, p0 + G);
    if (L < kSmallRow) {
      // Short runs under outer reduced dims: accumulate the runs as rows of
      // L columns, then fold the columns.
      P tile[kSmallRow];
      Odometer ro(l.red, nrp);
      ro.seek(p0);
      rows_unit<Op>(in + base, ro, p0, p1, L, tile);
      if constexpr (Op::kIndexed)
        for (int64_t j = 0; j < L; ++j) tile[j].i = tile[j].i * L + j;
      P acc = tile[0];
      for (int64_t j = 1; j < L; ++j) acc = merge_lanes<Op>(acc, tile[j]);
      return acc;
    }
    Odometer ro(l.red, nrp);
    int64_t rp = p0 / C, c = p0 % C;
    ro.seek(rp);
    ScalarCascade<Op> cas;
    P acc{};
    for (int64_t p = p0; p < p1; ++p) {
      const int64_t start = c * kChunk;
      P part = run<Op>(in + base + ro.off + start, std::min(kChunk, L - start), rp * L + start);
      if constexpr (Op::kPairwise) cas.push(part);
      else acc = p == p0 ? part : Op::merge(acc, part);
      if (++c == C) {
        c = 0;
        ++rp;
        ro.next();
      }
    }
    if constexpr (Op::kPairwise) return cas.result();
    else return acc;
  };

  if (S == 1) {
    const int64_t grain = std::max<int64_t>(1, kGrain / l.count);
    if (nrp == 0) {  // the kept dims merged into one: output o reduces x[o * L, (o + 1) * L)
      parallel_for(O, grain, [&](int64_t b, int64_t e) {
        const typename Op::In* const x = in;
        typename Op::Out* const y = out;
        const int64_t n = L;
        if constexpr (!Op::kIndexed) {
          switch (n) {  // short rows: vectorized across outputs
            case 2: short_rows<Op, 2>(x, y, b, e); return;
            case 3: short_rows<Op, 3>(x, y, b, e); return;
            case 4: short_rows<Op, 4>(x, y, b, e); return;
            case 8: short_rows<Op, 8>(x, y, b, e); return;
            default: break;
          }
        }
        for (int64_t o = b; o < e; ++o) y[o] = Op::finish(run<Op>(x + o * n, n, 0), n);
      });
      return;
    }
    parallel_for(O, grain, [&](int64_t b, int64_t e) {
      Odometer ko(l.kept, l.kept.size());
      ko.seek(b);
      for (int64_t o = b; o < e; ++o, ko.next()) out[o] = Op::finish(unit(ko.off, 0), l.count);
    });
    return;
  }
  std::unique_ptr<P[]> parts(new P[static_cast<size_t>(O * S)]);
  parallel_for(O * S, 1, [&](int64_t b, int64_t e) {
    Odometer ko(l.kept, l.kept.size());
    for (int64_t u = b; u < e; ++u) {
      ko.seek(u / S);
      parts[static_cast<size_t>(u)] = unit(ko.off, u % S);
    }
  });
  for (int64_t o = 0; o < O; ++o) {
    P* p = &parts[static_cast<size_t>(o * S)];
    tree_merge<Op>(p, S, 1, 1);
    out[o] = Op::finish(p[0], l.count);
  }
}

// Rows of J < kSmallRow contiguous elements, one after another: reduced as
// one flat stream of W = J * m lanes, lane t feeding column t % J.
template <class Op>
void flat_unit(const typename Op::In* __restrict x, int64_t rows, int64_t J, typename Op::P* tile) {
  using P = typename Op::P;
  constexpr int64_t kTarget = kWideLanes<P>;
  const int64_t W = J * ((kTarget + J - 1) / J);
  const int64_t n = rows * J;
  if (n < 2 * W) {  // too short for lanes
    row_first<Op>(tile, x, J, 0);
    for (int64_t i = J; i < n; i += J) row_step<Op>(tile, x + i, J, 0);
    return;
  }
  P acc[kTarget + kSmallRow];
  auto block = [&](int64_t i, int64_t e) {
    for (int64_t t = 0; t < W; ++t) acc[t] = Op::first(x[i + t], 0);
    for (i += W; i + W <= e; i += W)
      for (int64_t t = 0; t < W; ++t) acc[t] = Op::step(acc[t], x[i + t], 0);
    for (int64_t t = 0; i + t < e; ++t) acc[t] = Op::step(acc[t], x[i + t], 0);
  };
  if constexpr (Op::kPairwise) {
    const int64_t B = W * kLaneDepth;
    Cascade<Op> cas(W);
    for (int64_t i = 0; i < n; i += B) {
      int64_t e = std::min(n, i + B);
      if (e - i < W) {  // a short last block: fold it into lanes starting from zero
        for (int64_t t = 0; t < W; ++t) acc[t] = P(0);
        for (int64_t t = 0; i + t < e; ++t) acc[t] = Op::step(acc[t], x[i + t], 0);
      } else {
        block(i, e);
      }
      cas.push(acc);
    }
    cas.result(acc);
  } else {
    block(0, n);
  }
  for (int64_t j = 0; j < J; ++j) tile[j] = acc[j];
  for (int64_t t = J; t < W; t += J)
    for (int64_t j = 0; j < J; ++j) tile[j] = Op::merge(tile[j], acc[t + j]);
}

// Innermost group kept: out[o', j] reduces x[o', r, j] over the reduced
// rows r, in column tiles and row units.
template <class Op>
void reduce_outer(const ReduceLayout& l, const typename Op::In* in, typename Op::Out* out) {
  using P = typename Op::P;
  const int64_t J = l.kept.back().size;
  const size_t nkp = l.kept.size() - 1;  // the other kept groups
  const int64_t R = l.count;
  const bool flat = !Op::kIndexed && l.red.size() == 1 && l.red[0].stride == J && J < kSmallRow;
  const int64_t Jt = flat ? J : std::min<int64_t>(J, kColTileBytes / sizeof(P));
  const int64_t nJt = (J + Jt - 1) / Jt;
  const int64_t G = std::max<int64_t>(1, (flat ? kChunk : kOuterChunk) / Jt);
  const int64_t S = (R + G - 1) / G;
  const int64_t Op_ = l.out_numel / J;
  const int64_t units = Op_ * nJt * S;

  // Fills tile with unit u's partial result; returns its width.
  auto unit = [&](int64_t u, Odometer& ko, P* tile) -> int64_t {
    const int64_t s = u % S, jt = (u / S) % nJt, o = u / (S * nJt);
    ko.seek(o);
    const int64_t j0 = jt * Jt, n = std::min(Jt, J - j0);
    const int64_t r0 = s * G, r1 = std::min(R, r0 + G);
    const typename Op::In* base = in + ko.off + j0;
    if (flat) {
      flat_unit<Op>(base + r0 * J, r1 - r0, J, tile);
    } else {
      Odometer ro(l.red, l.red.size());
      ro.seek(r0);
      rows_unit<Op>(base, ro, r0, r1, n, tile);
    }
    return n;
  };

  if (S == 1) {
    parallel_for(units, std::max<int64_t>(1, kGrain / (R * Jt)), [&](int64_t b, int64_t e) {
      Odometer ko(l.kept, nkp);
      std::unique_ptr<P[]> tile(new P[static_cast<size_t>(Jt)]);
      for (int64_t u = b; u < e; ++u) {
        int64_t n = unit(u, ko, tile.get());
        typename Op::Out* o = out + (u / nJt) * J + (u % nJt) * Jt;
        for (int64_t j = 0; j < n; ++j) o[j] = Op::finish(tile[static_cast<size_t>(j)], R);
      }
    });
    return;
  }
  std::unique_ptr<P[]> parts(new P[static_cast<size_t>(units * Jt)]);
  parallel_for(units, 1, [&](int64_t b, int64_t e) {
    Odometer ko(l.kept, nkp);
    for (int64_t u = b; u < e; ++u) unit(u, ko, &parts[static_cast<size_t>(u * Jt)]);
  });
  parallel_for(Op_ * nJt, std::max<int64_t>(1, kGrain / (S * Jt)), [&](int64_t b, int64_t e) {
    for (int64_t g = b; g < e; ++g) {
      P* p = &parts[static_cast<size_t>(g * S * Jt)];
      const int64_t n = std::min(Jt, J - (g % nJt) * Jt);
      tree_merge<Op>(p, S, Jt, n);
      typename Op::Out* o = out + (g / nJt) * J + (g % nJt) * Jt;
      for (int64_t j = 0; j < n; ++j) o[j] = Op::finish(p[j], R);
    }
  });
}

template <class Op>
void reduce(const KernelContext& ctx) {
  using In = typename Op::In;
  using Out = typename Op::Out;
  const TensorRef& x = ctx.inputs[0];
  const TensorRef& y = ctx.outputs[0];
  if (y.dtype != dtype_of<Out>())
    throw DTypeError("precompiled '" + ctx.op.name() + "' kernel: unexpected output dtype " +
                     std::string(dtype_name(y.dtype)));
  const ReduceLayout l = make_layout(*x.shape, ctx.attrs.get_ints("axes"));
  const In* in = x.as<In>();
  Out* out = y.as<Out>();
  if (l.out_numel == 0) return;
  if (l.count == 0) {
    const Out v = Op::empty();
    parallel_for(l.out_numel, kElementwiseGrain, [&](int64_t b, int64_t e) { std::fill(out + b, out + e, v); });
    return;
  }
  if (l.red.empty()) {  // every reduced dim has size 1: one element per output
    parallel_for(l.out_numel, kElementwiseGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) out[i] = Op::finish(Op::first(in[i], 0), 1);
    });
    return;
  }
  if (l.last_reduced) reduce_inner<Op>(l, in, out);
  else reduce_outer<Op>(l, in, out);
}

template <typename T>
using acc_t = std::conditional_t<std::is_floating_point_v<T>, T, std::conditional_t<std::is_same_v<T, uint64_t>, uint64_t, int64_t>>;

// sum, mean and prod take the compute dtypes and uint64; max, min and
// argmax every dtype but the half types as it is: widened, an empty
// reduction's identity would be the wide type's (INT32_MAX narrows to -1 in int8).
constexpr DTypeMask kReductionDTypes = kComputeAndUInt64DTypeMask;
constexpr DTypeMask kComparingDTypes = kAllDTypeMask & ~(dtype_bit(DType::kFloat16) | dtype_bit(DType::kBFloat16));

void sum_kernel(const KernelContext& ctx) {
  visit_dtype<kReductionDTypes>(ctx.inputs[0].dtype, [&](auto tag) {
    using T = decltype(tag);
    reduce<SumOp<T, acc_t<T>, acc_t<T>>>(ctx);
  });
}

// Means of bool and int32 sum exactly in int64; int64 and uint64 sum in
// double (no overflow) and floats in their own type; the division is in
// double except for floats, which divide in their own type.
void mean_kernel(const KernelContext& ctx) {
  visit_dtype<kReductionDTypes>(ctx.inputs[0].dtype, [&](auto tag) {
    using T = decltype(tag);
    using Out = float_result_t<T>;
    using P = std::conditional_t<std::is_integral_v<T> && sizeof(T) == 8, double, acc_t<T>>;
    reduce<MeanOp<T, P, Out>>(ctx);
  });
}

void prod_kernel(const KernelContext& ctx) {
  visit_dtype<kReductionDTypes>(ctx.inputs[0].dtype, [&](auto tag) {
    using T = decltype(tag);
    reduce<ProdOp<T, acc_t<T>>>(ctx);
  });
}

template <bool kMax>
void maxmin_kernel(const KernelContext& ctx) {
  visit_dtype<kComparingDTypes>(ctx.inputs[0].dtype, [&](auto tag) {
    using T = decltype(tag);
    reduce<MaxMinOp<T, kMax>>(ctx);
  });
}

void argmax_kernel(const KernelContext& ctx) {
  visit_dtype<kComparingDTypes>(ctx.inputs[0].dtype, [&](auto tag) {
    using T = decltype(tag);
    reduce<ArgmaxOp<T>>(ctx);
  });
}

}  // namespace

void register_reduction_kernels(OpRegistry& r) {
  constexpr DeviceType cpu = DeviceType::kCPU;
  r.add_kernel("sum", cpu, sum_kernel, kReductionDTypes);
  r.add_kernel("mean", cpu, mean_kernel, kReductionDTypes);
  r.add_kernel("max", cpu, maxmin_kernel<true>, kComparingDTypes);
  r.add_kernel("min", cpu, maxmin_kernel<false>, kComparingDTypes);
  r.add_kernel("prod", cpu, prod_kernel, kReductionDTypes);
  r.add_kernel("argmax", cpu, argmax_kernel, kComparingDTypes);
}

}  // namespace wok::cpu::WOK_ISA_NS
