// The packing routines of the generated GEMM's driver (jit/gemm_driver.cpp):
// A into panels of tile rows, B into strips of tile columns, and a
// convolution's B from its prepared image (Note [Packing patches]).
// Included by the driver only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include <xmmintrin.h>

#include "wok/runtime/conv_geometry.h"
#include "wok/runtime/cpu_features.h"

namespace wok::jit::gemm_packing {

inline constexpr int kMaxTileCols = 64;  // the widest register tile (choose_gemm_tile), in elements

// out[panel][p][r]: rows [0, mc) of a (strides rs, cs), steps [0, kc),
// panels of `rows` rows, zero-padded.
template <typename T>
void pack_a(const T* a, int64_t rs, int64_t cs, int64_t mc, int64_t kc, int rows, T* out) {
  for (int64_t i0 = 0; i0 < mc; i0 += rows) {
    const int h = static_cast<int>(std::min<int64_t>(rows, mc - i0));
    int r0 = 0;
    if constexpr (std::is_same_v<T, float>) {
      // Four rows at a time, four steps of k at a time: a 4x4 transpose in
      // SSE registers (baseline x86-64) instead of scalar scattered stores.
      if (cs == 1)
        for (; r0 + 4 <= h; r0 += 4) {
          const float* s0 = a + (i0 + r0) * rs;
          int64_t p = 0;
          for (; p + 4 <= kc; p += 4) {
            __m128 x0 = _mm_loadu_ps(s0 + p), x1 = _mm_loadu_ps(s0 + rs + p);
            __m128 x2 = _mm_loadu_ps(s0 + 2 * rs + p), x3 = _mm_loadu_ps(s0 + 3 * rs + p);
            _MM_TRANSPOSE4_PS(x0, x1, x2, x3);
            _mm_storeu_ps(out + (p + 0) * rows + r0, x0);
            _mm_storeu_ps(out + (p + 1) * rows + r0, x1);
            _mm_storeu_ps(out + (p + 2) * rows + r0, x2);
            _mm_storeu_ps(out + (p + 3) * rows + r0, x3);
          }
          for (; p < kc; ++p)
            for (int r = 0; r < 4; ++r) out[p * rows + r0 + r] = s0[r * rs + p];
        }
    }
    for (int r = r0; r < h; ++r) {
      const T* src = a + (i0 + r) * rs;
      T* dst = out + r;
      if (cs == 1)
        for (int64_t p = 0; p < kc; ++p) dst[p * rows] = src[p];
      else
        for (int64_t p = 0; p < kc; ++p) dst[p * rows] = src[p * cs];
    }
    for (int r = h; r < rows; ++r)
      for (int64_t p = 0; p < kc; ++p) out[p * rows + r] = T(0);
    out += kc * rows;
  }
}

// out[strip][p][j]: steps [0, kc) of b (strides rs, cs), columns [0, nc),
// strips of `cols` columns, zero-padded.
template <typename T>
void pack_b(const T* b, int64_t rs, int64_t cs, int64_t kc, int64_t nc, int cols, T* out) {
  for (int64_t j0 = 0; j0 < nc; j0 += cols) {
    const int w = static_cast<int>(std::min<int64_t>(cols, nc - j0));
    if (cs == 1) {
      for (int64_t p = 0; p < kc; ++p) {
        std::memcpy(out + p * cols, b + p * rs + j0, static_cast<size_t>(w) * sizeof(T));
        for (int j = w; j < cols; ++j) out[p * cols + j] = T(0);
      }
    } else {
      // Columns of b are contiguous when it is a transpose: walk them.
      for (int j = 0; j < w; ++j) {
        const T* src = b + (j0 + j) * cs;
        for (int64_t p = 0; p < kc; ++p) out[p * cols + j] = src[p * rs];
      }
      for (int64_t p = 0; p < kc; ++p)
        for (int j = w; j < cols; ++j) out[p * cols + j] = T(0);
    }
    out += kc * cols;
  }
}

// Note [Packing patches]
// A convolution's B operand is its patch matrix. Each image (one group of
// its channels) is prepared once per piece (Note [Phase planes] in
// runtime/conv_geometry.h), so that every row (ci, kh, kw) of the patch
// matrix is a window of one phase plane: element (oh, ow) is at
// row_offset[r] + oh * wq + ow. Packing a strip is then, for every row,
// the same few contiguous copies (one per output row the strip spans) from
// a different base, with no bounds tests: cheap enough for the few rows of
// A a convolution has (tens to hundreds of output channels, where a matmul
// has thousands). Measured on Zen 4, [1, 64, 56, 56] 3x3: 67 GFLOP/s with
// bounds-tested copies per row, 89 with phase planes.
// out[strip][p][j]: rows [pc, pc + kc) and columns [jc, jc + nc) of the
// patch matrix, read from the prepared image; strips of `cols` columns,
// zero-padded (Note [Packing patches]).
template <typename T>
__attribute__((always_inline)) inline void pack_patches_body(const ConvGeometry& g, const ConvPhasePlanes& pp,
                                                             const T* prepared, int64_t pc, int64_t kc, int64_t jc,
                                                             int64_t nc, int cols, T* out) {
  struct Run {
    int dst, len;
    int64_t src;
  };
  Run runs[kMaxTileCols + 1];
  for (int64_t j0 = 0; j0 < nc; j0 += cols) {
    const int w = static_cast<int>(std::min<int64_t>(cols, nc - j0));
    int n = 0;
    for (int j = 0; j < w;) {
      const int64_t col = jc + j0 + j, oh = col / g.ow, ow = col % g.ow;
      const int len = static_cast<int>(std::min<int64_t>(g.ow - ow, w - j));
      runs[n++] = {j, len, oh * pp.wq + ow};
      j += len;
    }
    const int64_t* offsets = pp.row_offset.data() + pc;
    if (n == 1 && w == cols) {
      // The whole strip within one output row: one fixed-size copy per row
      // of k (the common case), which the compiler turns into a few vector
      // moves.
      const T* from = prepared + runs[0].src;
      const int bytes = cols * static_cast<int>(sizeof(T));
      auto rows = [&](auto fixed) {
        for (int64_t p = 0; p < kc; ++p) __builtin_memcpy(out + p * cols, from + offsets[p], decltype(fixed)::value);
      };
      switch (bytes) {
        case 64: rows(std::integral_constant<size_t, 64>{}); break;
        case 96: rows(std::integral_constant<size_t, 96>{}); break;
        case 128: rows(std::integral_constant<size_t, 128>{}); break;
        case 192: rows(std::integral_constant<size_t, 192>{}); break;
        case 256: rows(std::integral_constant<size_t, 256>{}); break;
        default:
          for (int64_t p = 0; p < kc; ++p)
            std::memcpy(out + p * cols, from + offsets[p], static_cast<size_t>(bytes));
      }
    } else {
      for (int64_t p = 0; p < kc; ++p) {
        const T* base = prepared + offsets[p];
        T* dst = out + p * cols;
        for (int r = 0; r < n; ++r) {
          const T* from = base + runs[r].src;
          T* to = dst + runs[r].dst;
          for (int i = 0; i < runs[r].len; ++i) to[i] = from[i];
        }
        for (int j = w; j < cols; ++j) dst[j] = T(0);
      }
    }
    out += kc * cols;
  }
}

// The packing runs once per element of B for only tens of rows of A, so
// its copies are compiled for the host's vector width too (this file is
// otherwise baseline x86-64).
template <typename T>
__attribute__((target("avx512f,avx512vl,avx512bw,avx2"))) void pack_patches_avx512(
    const ConvGeometry& g, const ConvPhasePlanes& pp, const T* prepared, int64_t pc, int64_t kc, int64_t jc,
    int64_t nc, int cols, T* out) {
  pack_patches_body(g, pp, prepared, pc, kc, jc, nc, cols, out);
}
template <typename T>
__attribute__((target("avx2"))) void pack_patches_avx2(const ConvGeometry& g, const ConvPhasePlanes& pp,
                                                        const T* prepared, int64_t pc, int64_t kc, int64_t jc,
                                                        int64_t nc, int cols, T* out) {
  pack_patches_body(g, pp, prepared, pc, kc, jc, nc, cols, out);
}

template <typename T>
void pack_patches(const ConvGeometry& g, const ConvPhasePlanes& pp, const T* prepared, int64_t pc, int64_t kc,
                  int64_t jc, int64_t nc, int cols, T* out) {
  static const CpuIsa isa = precompiled_kernel_isa();
  if (isa == CpuIsa::kAvx512) pack_patches_avx512(g, pp, prepared, pc, kc, jc, nc, cols, out);
  else if (isa == CpuIsa::kAvx2) pack_patches_avx2(g, pp, prepared, pc, kc, jc, nc, cols, out);
  else pack_patches_body(g, pp, prepared, pc, kc, jc, nc, cols, out);
}

}  // namespace wok::jit::gemm_packing
