// The blocked GEMM of the precompiled CPU kernels (Note [Matmul blocking]),
// shared by matmul (matmul_kernels.cpp) and the convolutions
// (conv_kernels.cpp). Compiled once per ISA, in that ISA's namespace.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>
#include <vector>

#include "wok/runtime/kernels/cpu/isa.h"
#include "wok/runtime/kernels/cpu/vec_math.h"
#include "wok/runtime/thread_pool.h"

namespace wok::cpu::WOK_ISA_NS::gemm_blocked {

#if defined(__AVX512F__)
constexpr int kVecBytes = 64;
constexpr int kMR = 8;  // 32 vector registers: 8 x 2 accumulators
#elif defined(__AVX2__)
constexpr int kVecBytes = 32;
constexpr int kMR = 6;  // 16 vector registers: 6 x 2 accumulators
#else
constexpr int kVecBytes = 16;
constexpr int kMR = 6;
#endif

constexpr int64_t kKC = 256;               // depth of a block of k
constexpr int64_t kPanelBytes = 1 << 19;   // packed b block: kKC x NC, in L2
constexpr int64_t kMC = 64;                // rows per unit
constexpr int64_t kMinParallelFlops = 1 << 18;

// Arithmetic type: unsigned for integers, so products and sums wrap.
template <typename T>
struct Arith {
  using type = T;
};
template <>
struct Arith<int32_t> {
  using type = uint32_t;
};
template <>
struct Arith<int64_t> {
  using type = uint64_t;
};
template <typename T>
using arith_t = typename Arith<T>::type;

template <typename U>
inline U madd(U a, U b, U c) {
  if constexpr (std::is_floating_point_v<U>) return vm::fma(a, b, c);
  else return static_cast<U>(a * b + c);
}

// c[0, mr) x [0, nr) (+)= ap (kc x MR, packed) @ bp (kc x NR, packed).
template <typename U, int MR, int NR>
inline void micro_kernel(const U* __restrict ap, const U* __restrict bp, int64_t kc, U* __restrict c, int64_t ldc,
                         int mr, int nr, bool accumulate) {
  U acc[MR][NR];
  for (int r = 0; r < MR; ++r)
    for (int j = 0; j < NR; ++j) acc[r][j] = U(0);
  for (int64_t p = 0; p < kc; ++p) {
    const U* __restrict b = bp + p * NR;
    const U* __restrict a = ap + p * MR;
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      const U av = a[r];
#pragma GCC unroll 64
      for (int j = 0; j < NR; ++j) acc[r][j] = madd(av, b[j], acc[r][j]);
    }
  }
  if (mr == MR && nr == NR) {
    for (int r = 0; r < MR; ++r) {
      U* __restrict cr = c + r * ldc;
      if (accumulate)
        for (int j = 0; j < NR; ++j) cr[j] = static_cast<U>(cr[j] + acc[r][j]);
      else
        for (int j = 0; j < NR; ++j) cr[j] = acc[r][j];
    }
    return;
  }
  for (int r = 0; r < mr; ++r) {
    U* __restrict cr = c + r * ldc;
    if (accumulate)
      for (int j = 0; j < nr; ++j) cr[j] = static_cast<U>(cr[j] + acc[r][j]);
    else
      for (int j = 0; j < nr; ++j) cr[j] = acc[r][j];
  }
}

// Packs b[0, kc) x [0, nc) (row stride ldb) into strips of NR columns:
// out[s][p][j], zero-padded past nc.
template <typename U, int NR>
void pack_b(const U* b, int64_t ldb, int64_t kc, int64_t nc, U* out) {
  for (int64_t j0 = 0; j0 < nc; j0 += NR) {
    const int64_t w = std::min<int64_t>(NR, nc - j0);
    for (int64_t p = 0; p < kc; ++p) {
      const U* __restrict src = b + p * ldb + j0;
      U* __restrict dst = out + p * NR;
      if (w == NR) {
        for (int j = 0; j < NR; ++j) dst[j] = src[j];
      } else {
        for (int64_t j = 0; j < w; ++j) dst[j] = src[j];
        for (int64_t j = w; j < NR; ++j) dst[j] = U(0);
      }
    }
    out += kc * NR;
  }
}

// Packs a[0, mr) x [0, kc) (row stride lda) as out[p][r], zero-padded to MR rows.
template <typename U, int MR>
void pack_a(const U* a, int64_t lda, int mr, int64_t kc, U* out) {
  for (int r = 0; r < mr; ++r) {
    const U* __restrict src = a + r * lda;
    for (int64_t p = 0; p < kc; ++p) out[p * MR + r] = src[p];
  }
  for (int r = mr; r < MR; ++r)
    for (int64_t p = 0; p < kc; ++p) out[p * MR + r] = U(0);
}

struct Problem {
  int64_t n, k, m;
  int64_t nbatch;
  std::vector<int64_t> a_off, b_off;  // element offsets of each batch's matrices
};

// One unit: rows [i0, i1), columns [j0, j1) of batch `bi`.
template <typename U, int NR>
void gemm_unit(const Problem& pr, const U* A, const U* B, U* C, int64_t bi, int64_t i0, int64_t i1, int64_t j0,
               int64_t j1, U* bpack, U* apack) {
  const int64_t k = pr.k, m = pr.m;
  const U* a = A + pr.a_off[static_cast<size_t>(bi)];
  const U* b = B + pr.b_off[static_cast<size_t>(bi)];
  U* c = C + bi * pr.n * m;
  const int64_t nc = j1 - j0;
  for (int64_t pc = 0; pc < k; pc += kKC) {
    const int64_t kc = std::min(kKC, k - pc);
    pack_b<U, NR>(b + pc * m + j0, m, kc, nc, bpack);
    for (int64_t ir = i0; ir < i1; ir += kMR) {
      const int mr = static_cast<int>(std::min<int64_t>(kMR, i1 - ir));
      if (2 * mr <= kMR) {
        // Few rows left: one row at a time wastes less than padding.
        for (int r = 0; r < mr; ++r) {
          pack_a<U, 1>(a + (ir + r) * k + pc, k, 1, kc, apack);
          for (int64_t j = 0; j < nc; j += NR)
            micro_kernel<U, 1, NR>(apack, bpack + (j / NR) * kc * NR, kc, c + (ir + r) * m + j0 + j, m, 1,
                                   static_cast<int>(std::min<int64_t>(NR, nc - j)), pc > 0);
        }
        continue;
      }
      pack_a<U, kMR>(a + ir * k + pc, k, mr, kc, apack);
      for (int64_t j = 0; j < nc; j += NR)
        micro_kernel<U, kMR, NR>(apack, bpack + (j / NR) * kc * NR, kc, c + ir * m + j0 + j, m, mr,
                                 static_cast<int>(std::min<int64_t>(NR, nc - j)), pc > 0);
    }
  }
}

template <typename U, int NR>
void gemm(const Problem& pr, const U* A, const U* B, U* C) {
  // Columns per unit: a multiple of NR whose packed block fits kPanelBytes.
  const int64_t nc_max = std::max<int64_t>(NR, kPanelBytes / (kKC * static_cast<int64_t>(sizeof(U))) / NR * NR);
  const int64_t col_bands = (pr.m + nc_max - 1) / nc_max;
  const int64_t row_bands = (pr.n + kMC - 1) / kMC;
  const int64_t units = pr.nbatch * row_bands * col_bands;
  const int64_t flops = 2 * pr.nbatch * pr.n * pr.m * pr.k;
  const int64_t grain = flops < kMinParallelFlops ? units : 1;
  const int64_t nc_alloc = std::min(nc_max, (pr.m + NR - 1) / NR * NR);
  parallel_for(units, grain, [&](int64_t ub, int64_t ue) {
    std::unique_ptr<U[]> bpack(new U[static_cast<size_t>(std::min(kKC, pr.k) * nc_alloc)]);
    std::unique_ptr<U[]> apack(new U[static_cast<size_t>(std::min(kKC, pr.k) * kMR)]);
    for (int64_t u = ub; u < ue; ++u) {
      const int64_t cb = u % col_bands, rb = (u / col_bands) % row_bands, bi = u / (col_bands * row_bands);
      gemm_unit<U, NR>(pr, A, B, C, bi, rb * kMC, std::min(pr.n, (rb + 1) * kMC), cb * nc_max,
                       std::min(pr.m, (cb + 1) * nc_max), bpack.get(), apack.get());
    }
  });
}

// C [rows, cols] = A [rows, k] @ B [k, cols], all row-major and contiguous.
template <typename U>
void gemm_rowmajor(int64_t rows, int64_t cols, int64_t k, const U* A, const U* B, U* C) {
  Problem pr;
  pr.n = rows;
  pr.k = k;
  pr.m = cols;
  pr.nbatch = 1;
  pr.a_off = {0};
  pr.b_off = {0};
  constexpr int V = kVecBytes / static_cast<int>(sizeof(U));
  if (cols <= V) gemm<U, V>(pr, A, B, C);
  else gemm<U, 2 * V>(pr, A, B, C);
}

}  // namespace wok::cpu::WOK_ISA_NS::gemm_blocked
