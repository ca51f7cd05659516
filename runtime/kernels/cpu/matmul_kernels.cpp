// Precompiled kernel of matmul: a [..., n, k] @ b [..., k, m] with
// broadcast batch dims, for int32, int64, float32 and float64.
//
// Note [Matmul blocking]
// GotoBLAS-style: the output is cut into units of (batch, band of kMC rows,
// band of NC columns) that run in parallel. A unit walks k in blocks of
// kKC: it packs its kKC x NC block of b into strips of NR columns
// (zero-padded), then for each group of MR rows packs those rows of a
// (kKC x MR, zero-padded) and runs the micro-kernel over every strip. The
// micro-kernel keeps an MR x NR block of c in registers and does
// c[r, j] += a[r, p] * b[p, j] for each p: one broadcast of a and NR / V
// vector loads of b feed MR * NR / V vector multiply-adds. Packing makes
// both operands contiguous, so the loops vectorize without gathers.
//
// Thin shapes skip packing: m == 1 is a dot product per row (gemv), n <= 3
// accumulates rows of b into each row of c (gemm_few_rows).
//
// Floating-point results use fused multiply-adds where the ISA has them
// (vm::fma); each output sums its products in order of p within a kKC
// block, block results added in order. Integers wrap (unsigned
// arithmetic).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "wok/runtime/error.h"
#include "wok/runtime/kernels/cpu/elementwise_rules.h"
#include "wok/runtime/kernels/cpu/gemm_blocked.h"
#include "wok/runtime/kernels/cpu/isa.h"
#include "wok/runtime/kernels/cpu/vec_math.h"
#include "wok/runtime/op_registry.h"
#include "wok/runtime/thread_pool.h"
#include "wok/runtime/widening.h"

namespace wok::cpu::WOK_ISA_NS {

namespace {

using namespace gemm_blocked;

// m == 1: each output is a dot product of a row of a with the column b.
template <typename U>
void gemv(const Problem& pr, const U* A, const U* B, U* C) {
  constexpr int L = 4 * kVecBytes / static_cast<int>(sizeof(U));
  const int64_t n = pr.n, k = pr.k;
  const int64_t rows = pr.nbatch * n;
  parallel_for(rows, std::max<int64_t>(1, (1 << 15) / std::max<int64_t>(k, 1)), [&](int64_t b, int64_t e) {
    for (int64_t row = b; row < e; ++row) {
      const int64_t bi = row / n, i = row % n;
      const U* __restrict a = A + pr.a_off[static_cast<size_t>(bi)] + i * k;
      const U* __restrict v = B + pr.b_off[static_cast<size_t>(bi)];
      U acc[L];
      for (int l = 0; l < L; ++l) acc[l] = U(0);
      int64_t p = 0;
      for (; p + L <= k; p += L)
        for (int l = 0; l < L; ++l) acc[l] = madd(a[p + l], v[p + l], acc[l]);
      for (int l = 0; p + l < k; ++l) acc[l] = madd(a[p + l], v[p + l], acc[l]);
      for (int w = L / 2; w >= 1; w /= 2)
        for (int l = 0; l < w; ++l) acc[l] = static_cast<U>(acc[l] + acc[l + w]);
      C[row] = acc[0];
    }
  });
}

// n <= 3 (a vector or a few rows @ matrix): packing b would cost as much
// as the products, so each row of c accumulates rows of b directly,
// c[i, j] += a[i, p] * b[p, j], in column tiles held in L1.
template <typename U>
void gemm_few_rows(const Problem& pr, const U* A, const U* B, U* C) {
  constexpr int64_t kJT = 4096 / static_cast<int64_t>(sizeof(U));
  const int64_t n = pr.n, k = pr.k, m = pr.m;
  const int64_t tiles = (m + kJT - 1) / kJT;
  const int64_t units = pr.nbatch * n * tiles;
  const int64_t grain = std::max<int64_t>(1, kMinParallelFlops / (2 * k * std::min(m, kJT)));
  parallel_for(units, grain, [&](int64_t ub, int64_t ue) {
    U acc[kJT];
    for (int64_t u = ub; u < ue; ++u) {
      const int64_t jt = u % tiles, row = u / tiles, bi = row / n, i = row % n;
      const int64_t j0 = jt * kJT, w = std::min(kJT, m - j0);
      const U* __restrict a = A + pr.a_off[static_cast<size_t>(bi)] + i * k;
      const U* b = B + pr.b_off[static_cast<size_t>(bi)] + j0;
      for (int64_t j = 0; j < w; ++j) acc[j] = U(0);
      for (int64_t p = 0; p < k; ++p) {
        const U av = a[p];
        const U* __restrict br = b + p * m;
        for (int64_t j = 0; j < w; ++j) acc[j] = madd(av, br[j], acc[j]);
      }
      std::memcpy(C + row * m + j0, acc, static_cast<size_t>(w) * sizeof(U));
    }
  });
}

template <typename T>
void matmul_typed(const KernelContext& ctx) {
  using U = arith_t<T>;
  const TensorRef& ta = ctx.inputs[0];
  const TensorRef& tb = ctx.inputs[1];
  const TensorRef& tc = ctx.outputs[0];
  const Shape& sa = *ta.shape;
  const Shape& sb = *tb.shape;
  const Shape& sc = *tc.shape;
  Problem pr;
  pr.n = sa[sa.size() - 2];
  pr.k = sa[sa.size() - 1];
  pr.m = sb[sb.size() - 1];
  const Shape batch(sc.begin(), sc.end() - 2);
  pr.nbatch = numel(batch);
  if (tc.numel() == 0) return;
  U* C = reinterpret_cast<U*>(tc.data);
  if (pr.k == 0) {
    std::memset(C, 0, static_cast<size_t>(tc.numel()) * sizeof(U));
    return;
  }
  // Offsets of each batch's matrices: broadcast batch dims step by 0.
  const Strides bsa = broadcast_strides(Shape(sa.begin(), sa.end() - 2), batch);
  const Strides bsb = broadcast_strides(Shape(sb.begin(), sb.end() - 2), batch);
  pr.a_off.resize(static_cast<size_t>(pr.nbatch));
  pr.b_off.resize(static_cast<size_t>(pr.nbatch));
  for (int64_t bi = 0; bi < pr.nbatch; ++bi) {
    int64_t rem = bi, oa = 0, ob = 0;
    for (size_t d = batch.size(); d-- > 0;) {
      const int64_t idx = rem % batch[d];
      rem /= batch[d];
      oa += idx * bsa[d];
      ob += idx * bsb[d];
    }
    pr.a_off[static_cast<size_t>(bi)] = oa * pr.n * pr.k;
    pr.b_off[static_cast<size_t>(bi)] = ob * pr.k * pr.m;
  }
  const U* A = reinterpret_cast<const U*>(ta.data);
  const U* B = reinterpret_cast<const U*>(tb.data);
  constexpr int V = kVecBytes / static_cast<int>(sizeof(U));
  if (pr.m == 1) gemv<U>(pr, A, B, C);
  else if (pr.n <= 3) gemm_few_rows<U>(pr, A, B, C);
  else if (pr.m <= V) gemm<U, V>(pr, A, B, C);
  else gemm<U, 2 * V>(pr, A, B, C);
}

void matmul_kernel(const KernelContext& ctx) {
  const DType t = ctx.inputs[0].dtype;
  if (ctx.inputs[1].dtype != t || ctx.outputs[0].dtype != t)
    throw DTypeError("matmul kernel: operands and result must share one dtype");
  visit_dtype<kComputeAndUInt64DTypeMask>(t, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) unsupported_dtype(ctx, t);
    else matmul_typed<T>(ctx);
  });
}

}  // namespace

void register_matmul_kernels(OpRegistry& r) { r.add_kernel("matmul", DeviceType::kCPU, matmul_kernel, kComputeAndUInt64DTypeMask); }

}  // namespace wok::cpu::WOK_ISA_NS
