// Tiles of rows: a tile of columns accumulated over rows, four rows at a
// time, blocked and cascaded for floating-point sums, and argmax's rows;
// used by both loops of reduction_kernels.cpp.
#pragma once

#include "wok/runtime/kernels/cpu/isa.h"

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "wok/runtime/kernels/cpu/reduction_layout.h"
#include "wok/runtime/kernels/cpu/reduction_ops.h"

namespace wok::cpu::WOK_ISA_NS {

// Private to reduction_kernels.cpp (internal linkage, as when these lived
// there): one copy per instruction-set build.
namespace {

// ---- row tiles -------------------------------------------------------------------------

// acc[j] = step(acc[j], row[j]) or first(row[j]).
template <class Op>
void row_first(typename Op::P* __restrict acc, const typename Op::In* __restrict row, int64_t n, int64_t r) {
  for (int64_t j = 0; j < n; ++j) acc[j] = Op::first(row[j], r);
}
template <class Op>
void row_step(typename Op::P* __restrict acc, const typename Op::In* __restrict row, int64_t n, int64_t r) {
  for (int64_t j = 0; j < n; ++j) acc[j] = Op::step(acc[j], row[j], r);
}

// Four rows at a time: a quarter of the loads and stores of the tile.
template <class Op>
void row_step4(typename Op::P* __restrict acc, const typename Op::In* __restrict a, const typename Op::In* __restrict b,
               const typename Op::In* __restrict c, const typename Op::In* __restrict d, int64_t n, int64_t r) {
  for (int64_t j = 0; j < n; ++j)
    acc[j] = Op::step(Op::step(Op::step(Op::step(acc[j], a[j], r), b[j], r + 1), c[j], r + 2), d[j], r + 3);
}

// tile[0, n) op= rows [r, e) from `base`; the odometer is at row r.
template <class Op>
void rows_step(typename Op::P* tile, const typename Op::In* base, Odometer& ro, int64_t r, int64_t e, int64_t n) {
  for (; r + 4 <= e; r += 4) {
    const typename Op::In* a = base + ro.off;
    ro.next();
    const typename Op::In* b = base + ro.off;
    ro.next();
    const typename Op::In* c = base + ro.off;
    ro.next();
    const typename Op::In* d = base + ro.off;
    ro.next();
    row_step4<Op>(tile, a, b, c, d, n, r);
  }
  for (; r < e; ++r, ro.next()) row_step<Op>(tile, base + ro.off, n, r);
}

// argmax of rows: values and row numbers in separate arrays (row numbers
// relative to r0, as wide as the values), four rows per pass, so the select
// loop vectorizes. The loop compares with '>' only and flags columns that
// saw a nan; flagged columns are rescanned for their first nan afterwards
// (nan-aware compares in a chain of selects keep GCC from vectorizing).
template <typename T>
void argmax_rows(const T* base, Odometer& ro, int64_t r0, int64_t r1, int64_t n, ArgP<T>* tile) {
  using I = std::conditional_t<sizeof(T) == 8, int64_t, int32_t>;
  constexpr bool kFloat = std::is_floating_point_v<T>;
  constexpr int64_t kMax = kColTileBytes / sizeof(ArgP<T>);
  T v[kMax];
  I idx[kMax];
  I nan[kFloat ? kMax : 1];
  const Odometer start = ro;
  {
    const T* __restrict x = base + ro.off;
    for (int64_t j = 0; j < n; ++j) {
      v[j] = x[j];
      idx[j] = 0;
      if constexpr (kFloat) nan[j] = x[j] != x[j];
    }
    ro.next();
  }
  int64_t r = r0 + 1;
  for (; r + 4 <= r1; r += 4) {
    const T* __restrict x0 = base + ro.off;
    ro.next();
    const T* __restrict x1 = base + ro.off;
    ro.next();
    const T* __restrict x2 = base + ro.off;
    ro.next();
    const T* __restrict x3 = base + ro.off;
    ro.next();
    const I rr = static_cast<I>(r - r0);
    for (int64_t j = 0; j < n; ++j) {
      const T a = x0[j], b = x1[j], c = x2[j], d = x3[j];
      T best = v[j];
      I at = idx[j];
      bool g = a > best;
      best = g ? a : best;
      at = g ? rr : at;
      g = b > best;
      best = g ? b : best;
      at = g ? static_cast<I>(rr + 1) : at;
      g = c > best;
      best = g ? c : best;
      at = g ? static_cast<I>(rr + 2) : at;
      g = d > best;
      best = g ? d : best;
      at = g ? static_cast<I>(rr + 3) : at;
      v[j] = best;
      idx[j] = at;
      if constexpr (kFloat) nan[j] |= static_cast<I>((a != a) | (b != b) | (c != c) | (d != d));
    }
  }
  for (; r < r1; ++r, ro.next()) {
    const T* __restrict x = base + ro.off;
    const I rr = static_cast<I>(r - r0);
    for (int64_t j = 0; j < n; ++j) {
      const T a = x[j];
      const bool g = a > v[j];
      v[j] = g ? a : v[j];
      idx[j] = g ? rr : idx[j];
      if constexpr (kFloat) nan[j] |= static_cast<I>(a != a);
    }
  }
  if constexpr (kFloat) {
    std::vector<int64_t> cols;
    for (int64_t j = 0; j < n; ++j)
      if (nan[j]) cols.push_back(j);
    Odometer w = start;
    for (int64_t q = r0; q < r1 && !cols.empty(); ++q, w.next()) {
      const T* x = base + w.off;
      for (size_t c = 0; c < cols.size();) {
        const int64_t j = cols[c];
        if (x[j] != x[j]) {
          v[j] = x[j];
          idx[j] = static_cast<I>(q - r0);
          cols[c] = cols.back();
          cols.pop_back();
        } else {
          ++c;
        }
      }
    }
  }
  for (int64_t j = 0; j < n; ++j) tile[j] = {v[j], r0 + idx[j]};
}

// tile[0, n) = reduction of rows [r0, r1) (at least one), columns [0, n)
// from `base`; the odometer is seeked to r0.
template <class Op>
void rows_unit(const typename Op::In* base, Odometer& ro, int64_t r0, int64_t r1, int64_t n, typename Op::P* tile) {
  if constexpr (Op::kIndexed) {
    argmax_rows(base, ro, r0, r1, n, tile);
    return;
  }
  if (!Op::kPairwise || r1 - r0 <= kRowBlock) {
    row_first<Op>(tile, base + ro.off, n, r0);
    ro.next();
    rows_step<Op>(tile, base, ro, r0 + 1, r1, n);
    return;
  }
  if constexpr (Op::kPairwise) {
    Cascade<Op> cas(n);
    for (int64_t b = r0; b < r1; b += kRowBlock) {
      const int64_t e = std::min(r1, b + kRowBlock);
      row_first<Op>(tile, base + ro.off, n, b);
      ro.next();
      rows_step<Op>(tile, base, ro, b + 1, e, n);
      cas.push(tile);
    }
    cas.result(tile);
  }
}

}  // namespace

}  // namespace wok::cpu::WOK_ISA_NS
