// A gather whose index is one map per axis: out[i_0, ..., i_k] =
// in[m_0[i_0], ..., m_k[i_k]], or a fill value where some m_d[i_d] is -1.
// pad (every mode, cropping included) and nearest resize are this gather
// with maps built by runtime/ops/shape_geometry.h.
//
// Trailing axes whose maps are the identity are one contiguous block of B
// elements. The last other axis ("the row axis") is cut once into pieces:
// runs that read consecutive input blocks (one memcpy), runs of the fill
// value, and single blocks elsewhere (reflected or repeated indices).
// The axes above it are walked with an odometer; a row whose outer index
// maps to -1 is filled whole. Work units are rows, or ranges of one row
// when there are few rows, so a 1-D pad splits too.
#pragma once

#include "wok/runtime/kernels/cpu/isa.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "wok/runtime/dtype.h"
#include "wok/runtime/error.h"
#include "wok/runtime/scalar.h"
#include "wok/runtime/shape.h"
#include "wok/runtime/thread_pool.h"

namespace wok::cpu::WOK_ISA_NS {

// Private to each kernel file that includes it (internal linkage): one
// copy per instruction-set build.
namespace {

struct GatherPiece {
  int64_t j0, len, src;  // src: input index of j0 (consecutive after it), or -1 for the fill
};

// Pieces of a row axis map: consecutive sources merge, -1s merge.
inline std::vector<GatherPiece> gather_pieces(const std::vector<int64_t>& m) {
  std::vector<GatherPiece> out;
  for (int64_t j = 0; j < static_cast<int64_t>(m.size()); ++j) {
    const int64_t s = m[static_cast<size_t>(j)];
    if (!out.empty()) {
      GatherPiece& p = out.back();
      if ((s < 0 && p.src < 0) || (s >= 0 && p.src >= 0 && s == p.src + p.len)) {
        ++p.len;
        continue;
      }
    }
    out.push_back({j, 1, s < 0 ? -1 : s});
  }
  return out;
}

inline bool is_identity_map(const std::vector<int64_t>& m, int64_t in_size) {
  if (static_cast<int64_t>(m.size()) != in_size) return false;
  for (int64_t j = 0; j < in_size; ++j)
    if (m[static_cast<size_t>(j)] != j) return false;
  return true;
}

template <typename U>
void gather_axes(const Shape& in_shape, const Shape& out_shape, const std::vector<std::vector<int64_t>>& maps,
                 U fill, const U* in, U* out) {
  const int n = static_cast<int>(out_shape.size());
  const int64_t total = numel(out_shape);
  if (total == 0) return;
  if (n == 0) {
    out[0] = in[0];
    return;
  }
  // Trailing identity axes: one block of B elements.
  int k = n - 1;
  int64_t B = 1;
  while (k >= 0 && is_identity_map(maps[static_cast<size_t>(k)], in_shape[static_cast<size_t>(k)])) {
    B *= out_shape[static_cast<size_t>(k)];
    --k;
  }
  if (k < 0) {  // nothing moves
    parallel_for(total, 1 << 15, [&](int64_t b, int64_t e) {
      std::memcpy(out + b, in + b, static_cast<size_t>(e - b) * sizeof(U));
    });
    return;
  }
  const Strides in_strides = contiguous_strides(in_shape);
  const std::vector<int64_t>& row_map = maps[static_cast<size_t>(k)];
  const std::vector<GatherPiece> pieces = gather_pieces(row_map);
  const int64_t J = out_shape[static_cast<size_t>(k)];
  const int64_t row_stride = in_strides[static_cast<size_t>(k)];  // == B
  int64_t rows = 1;
  for (int d = 0; d < k; ++d) rows *= out_shape[static_cast<size_t>(d)];
  // Units: (row, column range); columns split only when rows are few.
  const int64_t row_bytes = J * B * static_cast<int64_t>(sizeof(U));
  const int64_t want_units = 8 * static_cast<int64_t>(ThreadPool::global().num_threads());
  int64_t splits = 1;
  if (rows < want_units && row_bytes > (1 << 16))
    splits = std::min<int64_t>(J, std::max<int64_t>(1, std::min(want_units / rows, row_bytes >> 15)));
  const int64_t cols = (J + splits - 1) / splits;
  const bool per_element = B == 1 && static_cast<int64_t>(pieces.size()) * 2 > J;

  auto copy_cols = [&](const U* src_row, U* dst_row, int64_t jb, int64_t je) {
    if (!src_row) {
      std::fill(dst_row + jb * B, dst_row + je * B, fill);
      return;
    }
    if (per_element) {
      for (int64_t j = jb; j < je; ++j) {
        const int64_t s = row_map[static_cast<size_t>(j)];
        dst_row[j] = s < 0 ? fill : src_row[s];
      }
      return;
    }
    // The first piece that ends after jb.
    auto it = std::upper_bound(pieces.begin(), pieces.end(), jb,
                               [](int64_t j, const GatherPiece& p) { return j < p.j0 + p.len; });
    for (; it != pieces.end() && it->j0 < je; ++it) {
      const int64_t a = std::max(jb, it->j0), z = std::min(je, it->j0 + it->len);
      U* o = dst_row + a * B;
      const int64_t count = (z - a) * B;
      if (it->src < 0) std::fill(o, o + count, fill);
      else std::memcpy(o, src_row + (it->src + (a - it->j0)) * row_stride, static_cast<size_t>(count) * sizeof(U));
    }
  };

  const int64_t units = rows * splits;
  const int64_t unit_bytes = std::max<int64_t>(1, cols * B * static_cast<int64_t>(sizeof(U)));
  parallel_for(units, std::max<int64_t>(1, (1 << 16) / unit_bytes), [&](int64_t b, int64_t e) {
    for (int64_t u = b; u < e; ++u) {
      const int64_t r = u / splits, s = u % splits;
      // The row's source: the outer maps at r's index.
      int64_t flat = r, off = 0;
      bool filled = false;
      for (int d = k - 1; d >= 0; --d) {
        const int64_t size = out_shape[static_cast<size_t>(d)];
        const int64_t m = maps[static_cast<size_t>(d)][static_cast<size_t>(flat % size)];
        flat /= size;
        if (m < 0) filled = true;
        else off += m * in_strides[static_cast<size_t>(d)];
      }
      const int64_t jb = s * cols, je = std::min(J, jb + cols);
      if (jb >= je) continue;
      copy_cols(filled ? nullptr : in + off, out + r * J * B, jb, je);
    }
  });
}

// Calls fn(U{}) with the unsigned type of an item of `size` bytes: movement
// and gathers copy items without looking at their values.
template <typename Fn>
void visit_itemsize(size_t size, Fn&& fn) {
  switch (size) {
    case 1: fn(uint8_t{}); return;
    case 2: fn(uint16_t{}); return;
    case 4: fn(uint32_t{}); return;
    case 8: fn(uint64_t{}); return;
    default: throw DTypeError("movement kernels handle items of 1, 2, 4 or 8 bytes, not " + std::to_string(size));
  }
}

// gather_axes over the raw items of a tensor of dtype `t`, the fill value
// `fill` cast to t (pad's constant, resize's extrapolation value).
inline void gather_axes_of(DType t, const Shape& in_shape, const Shape& out_shape,
                           const std::vector<std::vector<int64_t>>& maps, const Scalar& fill, const void* in, void* out) {
  const Scalar value = fill.cast(t);
  visit_itemsize(itemsize(t), [&](auto tag) {
    using U = decltype(tag);
    U bits{};
    visit_any_dtype(t, [&](auto typed) {
      using T = decltype(typed);
      if constexpr (sizeof(T) == sizeof(U)) {
        const T v = value.to<T>();
        std::memcpy(&bits, &v, sizeof(U));
      }
    });
    gather_axes<U>(in_shape, out_shape, maps, bits, static_cast<const U*>(in), static_cast<U*>(out));
  });
}

}  // namespace

}  // namespace wok::cpu::WOK_ISA_NS
