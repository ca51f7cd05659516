// Precompiled kernels of the movement ops: permute, broadcast_to, slice,
// concat and pad (reshape aliases its input and has none). They copy bytes, so they
// dispatch on the item size (1, 2, 4 or 8 bytes), not on the dtype.
//
// Each op describes its output as a strided view of its input: a few merged
// dims, each with the input stride it walks (size-1 dims dropped, dims that
// step through the input as one merged). copy_view then copies innermost
// runs: memcpy when the run is contiguous in the input, a fill when it
// repeats one element, a strided loop otherwise. Views whose contiguous
// input dim is not innermost (permutes) are copied as cache-blocked 2-D
// transposes, and short contiguous runs of 4 or 8 bytes are moved as single
// wider items.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "wok/runtime/error.h"
#include "wok/runtime/kernels/cpu/axis_gather.h"
#include "wok/runtime/kernels/cpu/isa.h"
#include "wok/runtime/kernels/cpu/strided_loop.h"
#include "wok/runtime/op_registry.h"
#include "wok/runtime/ops/shape_geometry.h"
#include "wok/runtime/thread_pool.h"

namespace wok::cpu::WOK_ISA_NS {

namespace {

// Bytes worth a parallel chunk.
constexpr int64_t kGrainBytes = 1 << 17;
// Side of the square tiles of a transpose (a tile is at most 32 KiB).
template <typename U>
inline constexpr int64_t kTile = sizeof(U) == 1 ? 128 : 64;

struct Dim {
  int64_t size, stride;  // stride in input elements
};

// Merges dims (outer to inner) that step through the input as one: dim i
// folds into the previous when prev.stride == stride * size. Size-1 dims
// are dropped. Returns the merged dims.
std::vector<Dim> merge_dims(const std::vector<Dim>& dims) {
  std::vector<Dim> out;
  for (const Dim& d : dims) {
    if (d.size == 1) continue;
    if (!out.empty() && out.back().stride == d.stride * d.size) {
      out.back() = {out.back().size * d.size, d.stride};
      continue;
    }
    out.push_back(d);
  }
  return out;
}

// The input offset of a row-major index over dims[0, n), walked forward.
struct Walker {
  const Dim* dims;
  int n;
  int64_t idx[kMaxDims * 4];
  int64_t off = 0;

  Walker(const std::vector<Dim>& d, int count) : dims(d.data()), n(count) {
    if (n > kMaxDims * 4) throw ShapeError("movement op over more than 64 non-mergeable dims");
  }
  void seek(int64_t flat) {
    off = 0;
    for (int i = n - 1; i >= 0; --i) {
      idx[i] = flat % dims[i].size;
      flat /= dims[i].size;
      off += idx[i] * dims[i].stride;
    }
  }
  void next() {
    for (int i = n - 1; i >= 0; --i) {
      off += dims[i].stride;
      if (++idx[i] < dims[i].size) return;
      off -= dims[i].size * dims[i].stride;
      idx[i] = 0;
    }
  }
};

void parallel_memcpy(void* dst, const void* src, int64_t bytes) {
  if (bytes <= 0) return;
  parallel_for(bytes, 4 * kGrainBytes, [&](int64_t b, int64_t e) {
    std::memcpy(static_cast<char*>(dst) + b, static_cast<const char*>(src) + b, static_cast<size_t>(e - b));
  });
}

// `count` rows of n elements: out row i (at o + i * n) takes
// p[i * row_stride + j * step] for j < n.
template <typename U>
void copy_row_run(U* __restrict o, const U* __restrict p, int64_t count, int64_t n, int64_t step,
                  int64_t row_stride) {
  if (step == 1) {
    for (int64_t i = 0; i < count; ++i)
      std::memcpy(o + i * n, p + i * row_stride, static_cast<size_t>(n) * sizeof(U));
  } else if (step == 0) {
    for (int64_t i = 0; i < count; ++i) {
      const U v = p[i * row_stride];
      U* __restrict r = o + i * n;
      for (int64_t j = 0; j < n; ++j) r[j] = v;
    }
  } else if (step == -1) {
    for (int64_t i = 0; i < count; ++i) {
      const U* __restrict q = p + i * row_stride;
      U* __restrict r = o + i * n;
      for (int64_t j = 0; j < n; ++j) r[j] = q[-j];
    }
  } else {
    for (int64_t i = 0; i < count; ++i) {
      const U* __restrict q = p + i * row_stride;
      U* __restrict r = o + i * n;
      for (int64_t j = 0; j < n; ++j) r[j] = q[j * step];
    }
  }
}

// Copies the strided view `dims` of `in` into the contiguous `out`, a row
// (the innermost dim) at a time. The dim above the rows is walked with
// plain pointer steps, the dims above that with a Walker once per run.
template <typename U>
void copy_rows(const std::vector<Dim>& dims, const U* in, U* out) {
  const int m = static_cast<int>(dims.size());
  if (m == 1) {  // one strided row: split it
    const Dim d = dims[0];
    parallel_for(d.size, std::max<int64_t>(1, kGrainBytes / static_cast<int64_t>(sizeof(U))), [&](int64_t b, int64_t e) {
      copy_row_run<U>(out + b, in + b * d.stride, 1, e - b, d.stride, 0);
    });
    return;
  }
  const Dim inner = dims[static_cast<size_t>(m - 1)], mid = dims[static_cast<size_t>(m - 2)];
  int64_t rows = 1;
  for (int i = 0; i < m - 1; ++i) rows *= dims[static_cast<size_t>(i)].size;
  const int64_t grain = std::max<int64_t>(1, kGrainBytes / static_cast<int64_t>(inner.size * sizeof(U)));
  parallel_for(rows, grain, [&](int64_t b, int64_t e) {
    Walker w(dims, m - 2);
    w.seek(b / mid.size);
    for (int64_t r = b; r < e;) {
      const int64_t i = r % mid.size, count = std::min(e - r, mid.size - i);
      copy_row_run<U>(out + r * inner.size, in + w.off + i * mid.stride, count, inner.size, inner.stride, mid.stride);
      r += count;
      w.next();
    }
  });
}

template <typename U>
void copy_view(std::vector<Dim> dims, const U* in, U* out);

// Rows of 2 or 4 contiguous items that fill 4 or 8 aligned bytes are copied
// as single wider items (a permute keeping [.., 2] pairs last becomes a
// transpose of 8-byte items). Returns false when that does not apply.
template <typename U>
bool copy_view_widened(const std::vector<Dim>& dims, const U* in, U* out) {
  if (dims.size() < 2 || dims.back().stride != 1) return false;
  const int64_t L = dims.back().size;
  const int64_t bytes = L * static_cast<int64_t>(sizeof(U));
  if (bytes != 4 && bytes != 8) return false;
  if (reinterpret_cast<uintptr_t>(in) % static_cast<uintptr_t>(bytes) != 0 ||
      reinterpret_cast<uintptr_t>(out) % static_cast<uintptr_t>(bytes) != 0)
    return false;
  std::vector<Dim> wide(dims.begin(), dims.end() - 1);
  for (Dim& d : wide) {
    if (d.stride % L != 0) return false;
    d.stride /= L;
  }
  if (bytes == 4) copy_view<uint32_t>(wide, reinterpret_cast<const uint32_t*>(in), reinterpret_cast<uint32_t*>(out));
  else copy_view<uint64_t>(wide, reinterpret_cast<const uint64_t*>(in), reinterpret_cast<uint64_t*>(out));
  return true;
}

// ---- permute -------------------------------------------------------------------------

// out[a * oa + b] = in[a + b * ib] over a tile, a < na, b < nb. The tile
// goes through a local buffer: rows of the input are read contiguously and
// rows of the output written contiguously, and the strided accesses stay in
// L1 (power-of-two strides would otherwise map a tile's rows to one cache
// set).
template <typename U>
inline void transpose_tile(const U* __restrict in, U* __restrict out, int64_t na, int64_t nb, int64_t ib, int64_t oa) {
  constexpr int64_t T = kTile<U>;
  U buf[T][T];  // buf[b][a]
  if (na == T && nb == T) {
    for (int64_t b = 0; b < T; ++b)
      for (int64_t a = 0; a < T; ++a) buf[b][a] = in[a + b * ib];
    for (int64_t a = 0; a < T; ++a)
      for (int64_t b = 0; b < T; ++b) out[a * oa + b] = buf[b][a];
    return;
  }
  for (int64_t b = 0; b < nb; ++b)
    for (int64_t a = 0; a < na; ++a) buf[b][a] = in[a + b * ib];
  for (int64_t a = 0; a < na; ++a)
    for (int64_t b = 0; b < nb; ++b) out[a * oa + b] = buf[b][a];
}

// The view's innermost dim is strided and dim k is contiguous in the input:
// copy as 2-D transposes between those two dims, tile by tile, for every
// index of the remaining dims.
template <typename U>
void transpose_view(const std::vector<Dim>& dims, int k, const U* in, U* out) {
  const int m = static_cast<int>(dims.size());
  std::vector<int64_t> ostride(static_cast<size_t>(m));  // of the contiguous output
  for (int64_t i = m - 1, s = 1; i >= 0; --i) {
    ostride[static_cast<size_t>(i)] = s;
    s *= dims[static_cast<size_t>(i)].size;
  }
  const int64_t A = dims[static_cast<size_t>(k)].size, B = dims.back().size;
  const int64_t oa = ostride[static_cast<size_t>(k)], ib = dims.back().stride;
  // The remaining dims form the batch; walk them over input and output.
  std::vector<Dim> batch_in, batch_out;
  for (int i = 0; i < m - 1; ++i) {
    if (i == k) continue;
    batch_in.push_back(dims[static_cast<size_t>(i)]);
    batch_out.push_back({dims[static_cast<size_t>(i)].size, ostride[static_cast<size_t>(i)]});
  }
  int64_t nbatch = 1;
  for (const Dim& d : batch_in) nbatch *= d.size;
  // Units: one batch entry times a band of T rows of A.
  constexpr int64_t T = kTile<U>;
  const int64_t bands = (A + T - 1) / T;
  const int64_t unit_bytes = std::min(A, T) * B * static_cast<int64_t>(sizeof(U));
  parallel_for(nbatch * bands, std::max<int64_t>(1, kGrainBytes / unit_bytes), [&](int64_t b, int64_t e) {
    Walker wi(batch_in, static_cast<int>(batch_in.size())), wo(batch_out, static_cast<int>(batch_out.size()));
    for (int64_t u = b; u < e; ++u) {
      const int64_t bi = u / bands, a0 = (u % bands) * T;
      wi.seek(bi);
      wo.seek(bi);
      const int64_t na = std::min(T, A - a0);
      for (int64_t b0 = 0; b0 < B; b0 += T)
        transpose_tile<U>(in + wi.off + a0 + b0 * ib, out + wo.off + a0 * oa + b0, na, std::min(T, B - b0), ib, oa);
    }
  });
}

// Copies a strided view of `in` (dims, outer to inner, with input strides,
// starting at `in`) into the contiguous `out`.
template <typename U>
void copy_view(std::vector<Dim> dims, const U* in, U* out) {
  dims = merge_dims(dims);
  if (dims.empty()) {
    out[0] = in[0];
    return;
  }
  if (dims.size() == 1 && dims[0].stride == 1) {
    parallel_memcpy(out, in, dims[0].size * static_cast<int64_t>(sizeof(U)));
    return;
  }
  if (copy_view_widened<U>(dims, in, out)) return;
  const int64_t s = dims.back().stride;
  if (s > 1 || s < -1) {
    int k = 0;
    while (k < static_cast<int>(dims.size()) - 1 && dims[static_cast<size_t>(k)].stride != 1) ++k;
    if (k < static_cast<int>(dims.size()) - 1) {
      transpose_view<U>(dims, k, in, out);
      return;
    }
  }
  copy_rows<U>(dims, in, out);
}

template <typename U>
void permute_typed(const Shape& in_shape, const std::vector<int64_t>& perm, const U* in, U* out) {
  const Strides st = contiguous_strides(in_shape);
  std::vector<Dim> dims;
  for (int64_t p : perm) dims.push_back({in_shape[static_cast<size_t>(p)], st[static_cast<size_t>(p)]});
  copy_view<U>(dims, in, out);
}

void permute_kernel(const KernelContext& ctx) {
  const TensorRef& x = ctx.inputs[0];
  const TensorRef& y = ctx.outputs[0];
  if (y.numel() == 0) return;
  visit_itemsize(itemsize(x.dtype), [&](auto tag) {
    using U = decltype(tag);
    permute_typed<U>(*x.shape, ctx.attrs.get_ints("dims"), x.as<U>(), y.as<U>());
  });
}

// ---- broadcast_to ----------------------------------------------------------------------

void broadcast_to_kernel(const KernelContext& ctx) {
  const TensorRef& x = ctx.inputs[0];
  const TensorRef& y = ctx.outputs[0];
  if (y.numel() == 0) return;
  const Shape& out = *y.shape;
  const Strides st = broadcast_strides(*x.shape, out);
  std::vector<Dim> dims;
  for (size_t i = 0; i < out.size(); ++i) dims.push_back({out[i], st[i]});
  visit_itemsize(itemsize(x.dtype), [&](auto tag) {
    using U = decltype(tag);
    copy_view<U>(dims, x.as<U>(), y.as<U>());
  });
}

// ---- slice ------------------------------------------------------------------------------

void slice_kernel(const KernelContext& ctx) {
  const TensorRef& x = ctx.inputs[0];
  const TensorRef& y = ctx.outputs[0];
  if (y.numel() == 0) return;
  const Shape& in = *x.shape;
  const Shape& out = *y.shape;
  const auto& starts = ctx.attrs.get_ints("starts");
  const auto& steps = ctx.attrs.get_ints("steps");
  const Strides st = contiguous_strides(in);
  int64_t base = 0;
  std::vector<Dim> dims;
  for (size_t i = 0; i < in.size(); ++i) {
    base += starts[i] * st[i];
    dims.push_back({out[i], steps[i] * st[i]});
  }
  visit_itemsize(itemsize(x.dtype), [&](auto tag) {
    using U = decltype(tag);
    copy_view<U>(dims, x.as<U>() + base, y.as<U>());
  });
}

// ---- concat ------------------------------------------------------------------------------

// out viewed as [outer, sum of chunks]: input k contributes a chunk of
// shape[axis] * inner elements to each outer row.
void concat_kernel(const KernelContext& ctx) {
  const TensorRef& y = ctx.outputs[0];
  if (y.numel() == 0) return;
  const Shape& out = *y.shape;
  const size_t axis = static_cast<size_t>(ctx.attrs.get_int("axis"));
  const int64_t isz = static_cast<int64_t>(itemsize(y.dtype));
  int64_t outer = 1, inner = 1;
  for (size_t i = 0; i < axis; ++i) outer *= out[i];
  for (size_t i = axis + 1; i < out.size(); ++i) inner *= out[i];
  const size_t n = ctx.inputs.size();
  std::vector<int64_t> chunk(n), offset(n);  // bytes
  int64_t row = 0;
  for (size_t k = 0; k < n; ++k) {
    if (itemsize(ctx.inputs[k].dtype) != static_cast<size_t>(isz))
      throw DTypeError("concat kernel: inputs must share the output's dtype");
    chunk[k] = (*ctx.inputs[k].shape)[axis] * inner * isz;
    offset[k] = row;
    row += chunk[k];
  }
  char* o = static_cast<char*>(y.data);
  if (row >= 4 * kGrainBytes && outer < 4 * ThreadPool::global().num_threads()) {  // few long rows: split each copy
    for (int64_t r = 0; r < outer; ++r)
      for (size_t k = 0; k < n; ++k)
        parallel_memcpy(o + r * row + offset[k], static_cast<const char*>(ctx.inputs[k].data) + r * chunk[k], chunk[k]);
    return;
  }
  parallel_for(outer, std::max<int64_t>(1, kGrainBytes / std::max<int64_t>(row, 1)), [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r)
      for (size_t k = 0; k < n; ++k)
        if (chunk[k] > 0)
          std::memcpy(o + r * row + offset[k], static_cast<const char*>(ctx.inputs[k].data) + r * chunk[k],
                      static_cast<size_t>(chunk[k]));
  });
}

// ---- pad ----------------------------------------------------------------------------------

// One pass over the output: each axis's pads become an index map
// (ops::pad_axis_map), and gather_axes copies contiguous runs, fills the
// constant's runs and reads reflected, edge or wrapped elements one by one.
void pad_kernel(const KernelContext& ctx) {
  const TensorRef& x = ctx.inputs[0];
  const TensorRef& y = ctx.outputs[0];
  if (y.numel() == 0) return;
  const Shape& in = *x.shape;
  const auto& pads = ctx.attrs.get_ints("pads");
  const ops::PadMode mode = ops::parse_pad_mode(ctx.attrs.get_string("mode")).value();
  const size_t n = in.size();
  std::vector<std::vector<int64_t>> maps(n);
  for (size_t i = 0; i < n; ++i) maps[i] = ops::pad_axis_map(ops::pad_axis(in[i], pads[i], pads[i + n]), mode);
  gather_axes_of(x.dtype, in, *y.shape, maps, ctx.attrs.get_scalar("value"), x.data, y.data);
}

}  // namespace

void register_movement_kernels(OpRegistry& r) {
  constexpr DeviceType cpu = DeviceType::kCPU;
  r.add_kernel("permute", cpu, permute_kernel, kAllDTypeMask);
  r.add_kernel("broadcast_to", cpu, broadcast_to_kernel, kAllDTypeMask);
  r.add_kernel("slice", cpu, slice_kernel, kAllDTypeMask);
  r.add_kernel("concat", cpu, concat_kernel, kAllDTypeMask);
  r.add_kernel("pad", cpu, pad_kernel, kAllDTypeMask);
}

}  // namespace wok::cpu::WOK_ISA_NS
