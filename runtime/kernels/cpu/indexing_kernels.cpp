// Precompiled kernels of the indexing ops (runtime/ops/indexing_ops.cpp):
// gather, gather_elements, gather_nd, scatter_elements, scatter_nd and
// one_hot. The gathers move bytes (dispatch on the item size); the scatters
// combine values (dispatch on the dtype). Every kernel checks its indices
// before it writes (Note [Index errors from kernels] in index_common.h).
//
// Note [Deterministic scatters]
// Updates that land on one element are applied in the row-major order of
// the indices (with reduction none the last one wins), whatever the thread
// count: the work is split only between updates that can never meet. For
// scatter_elements those are the updates at different positions off the
// axis (they address different elements); for scatter_nd, different
// columns of the updated slices.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <type_traits>

#include "wok/runtime/kernels/cpu/index_common.h"
#include "wok/runtime/wrapping.h"

namespace wok::cpu::WOK_ISA_NS {

namespace {

constexpr int64_t kGrainBytes = 1 << 17;

void parallel_copy(void* dst, const void* src, int64_t bytes) {
  if (bytes <= 0) return;
  parallel_for(bytes, 4 * kGrainBytes, [&](int64_t b, int64_t e) {
    std::memcpy(static_cast<char*>(dst) + b, static_cast<const char*>(src) + b, static_cast<size_t>(e - b));
  });
}

// ---- gather --------------------------------------------------------------------------

// x viewed as [outer, n, inner], indices flat [m]: out[o, j, :] = x[o, idx[j], :].
void gather_kernel(const KernelContext& ctx) {
  const TensorRef& x = ctx.inputs[0];
  const TensorRef& y = ctx.outputs[0];
  const Shape& xs = *x.shape;
  const size_t axis = static_cast<size_t>(ctx.attrs.get_int("axis"));
  const int64_t n = xs[axis], outer = prod(xs, 0, axis), inner = prod(xs, axis + 1, xs.size());
  const I64Buffer ix = read_indices(
      ctx, ctx.inputs[1], [n](int64_t) { return n; }, [axis](int64_t) { return static_cast<int64_t>(axis); },
      "axis");
  const int64_t m = ctx.inputs[1].numel();
  if (y.numel() == 0) return;
  visit_item(itemsize(x.dtype), [&](auto tag) {
    using U = decltype(tag);
    const U* src = x.as<U>();
    U* dst = y.as<U>();
    if (inner == 1) {
      parallel_for(outer * m, kIndexGrain, [&](int64_t b, int64_t e) {
        // Walk (o, j) with one division per chunk, not per element.
        int64_t o = b / m, j = b % m;
        for (int64_t r = b; r < e; ++r) {
          dst[r] = src[o * n + ix[j]];
          if (++j == m) {
            j = 0;
            ++o;
          }
        }
      });
      return;
    }
    const int64_t row = inner * static_cast<int64_t>(sizeof(U));
    parallel_for(outer * m, std::max<int64_t>(1, kGrainBytes / row), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r)
        std::memcpy(dst + r * inner, src + ((r / m) * n + ix[r % m]) * inner, static_cast<size_t>(row));
    });
  });
}

// ---- gather_elements / scatter_elements -------------------------------------------------

// indices (shape I, of x's rank) viewed as [A, J, B] around the axis. offA[a]
// and offB[b] are the x offsets of the coordinates before and after the
// axis (I's dims may be smaller than x's), xstride x's stride along it.
struct ElementsLayout {
  int64_t A = 1, J = 1, B = 1, xstride = 1;
  I64Buffer offA{1}, offB{1};
};

// Offsets of every row-major coordinate of dims [b, e) of `is`, with x's
// contiguous strides.
I64Buffer coordinate_offsets(const Shape& is, const Shape& xs, size_t b, size_t e) {
  I64Buffer out(prod(is, b, e));
  int64_t count = 1;
  out[0] = 0;
  for (size_t d = b; d < e; ++d) {
    const int64_t stride = prod(xs, d + 1, xs.size());
    // Expand from the back so that entries are written after they are read.
    for (int64_t i = count - 1; i >= 0; --i) {
      const int64_t base = out[i];
      for (int64_t c = is[d] - 1; c >= 0; --c) out[i * is[d] + c] = base + c * stride;
    }
    count *= is[d];
  }
  return out;
}

ElementsLayout elements_layout(const Shape& xs, const Shape& is, size_t axis) {
  ElementsLayout l;
  l.A = prod(is, 0, axis);
  l.J = is[axis];
  l.B = prod(is, axis + 1, is.size());
  l.xstride = prod(xs, axis + 1, xs.size());
  l.offA = coordinate_offsets(is, xs, 0, axis);
  l.offB = coordinate_offsets(is, xs, axis + 1, is.size());
  return l;
}

void gather_elements_kernel(const KernelContext& ctx) {
  const TensorRef& x = ctx.inputs[0];
  const TensorRef& idx = ctx.inputs[1];
  const TensorRef& y = ctx.outputs[0];
  const size_t axis = static_cast<size_t>(ctx.attrs.get_int("axis"));
  const int64_t n = (*x.shape)[axis];
  const I64Buffer ix = read_indices(
      ctx, idx, [n](int64_t) { return n; }, [axis](int64_t) { return static_cast<int64_t>(axis); }, "axis");
  if (y.numel() == 0) return;
  const ElementsLayout l = elements_layout(*x.shape, *idx.shape, axis);
  visit_item(itemsize(x.dtype), [&](auto tag) {
    using U = decltype(tag);
    const U* src = x.as<U>();
    U* dst = y.as<U>();
    parallel_for(l.A * l.J, std::max<int64_t>(1, kIndexGrain / l.B), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        const int64_t base = l.offA[r / l.J];
        for (int64_t c = 0; c < l.B; ++c) {
          const int64_t p = r * l.B + c;
          dst[p] = src[base + ix[p] * l.xstride + l.offB[c]];
        }
      }
    });
  });
}

enum class Reduction { kNone, kAdd, kMul, kMax, kMin };

Reduction reduction_of(const KernelContext& ctx) {
  const std::string& r = ctx.attrs.get_string("reduction");
  if (r == "none") return Reduction::kNone;
  if (r == "add") return Reduction::kAdd;
  if (r == "mul") return Reduction::kMul;
  if (r == "max") return Reduction::kMax;
  if (r == "min") return Reduction::kMin;
  throw ArgumentError("wok::" + ctx.op.name() + ": unknown reduction '" + r + "'");
}

// The element after an update: integers wrap, bool adds as `or` and
// multiplies as `and`, and max and min propagate nan (as wok::max does).
template <Reduction R, typename T>
inline T combine(T old, T u) {
  if constexpr (R == Reduction::kNone) {
    return u;
  } else if constexpr (std::is_same_v<T, bool>) {
    if constexpr (R == Reduction::kAdd || R == Reduction::kMax) return old || u;
    else return old && u;
  } else if constexpr (R == Reduction::kAdd) {
    return wrap_add(old, u);
  } else if constexpr (R == Reduction::kMul) {
    return wrap_mul(old, u);
  } else {
    if constexpr (std::is_floating_point_v<T>)
      if (std::isnan(old) || std::isnan(u)) return std::isnan(old) ? old : u;
    if constexpr (R == Reduction::kMax) return u > old ? u : old;
    else return u < old ? u : old;
  }
}

// Calls fn with the reduction as a compile-time constant.
template <typename Fn>
void visit_reduction(Reduction r, Fn&& fn) {
  switch (r) {
    case Reduction::kNone: fn(std::integral_constant<Reduction, Reduction::kNone>{}); return;
    case Reduction::kAdd: fn(std::integral_constant<Reduction, Reduction::kAdd>{}); return;
    case Reduction::kMul: fn(std::integral_constant<Reduction, Reduction::kMul>{}); return;
    case Reduction::kMax: fn(std::integral_constant<Reduction, Reduction::kMax>{}); return;
    case Reduction::kMin: fn(std::integral_constant<Reduction, Reduction::kMin>{}); return;
  }
}

// Columns of B per unit of scatter work (Note [Deterministic scatters]).
constexpr int64_t kScatterColumns = 256;

void scatter_elements_kernel(const KernelContext& ctx) {
  const TensorRef& x = ctx.inputs[0];
  const TensorRef& idx = ctx.inputs[1];
  const TensorRef& upd = ctx.inputs[2];
  const TensorRef& y = ctx.outputs[0];
  const size_t axis = static_cast<size_t>(ctx.attrs.get_int("axis"));
  const int64_t n = (*x.shape)[axis];
  const Reduction red = reduction_of(ctx);
  const I64Buffer ix = read_indices(
      ctx, idx, [n](int64_t) { return n; }, [axis](int64_t) { return static_cast<int64_t>(axis); }, "axis");
  parallel_copy(y.data, x.data, static_cast<int64_t>(y.numel() * itemsize(y.dtype)));
  if (idx.numel() == 0) return;
  const ElementsLayout l = elements_layout(*x.shape, *idx.shape, axis);
  const int64_t blocks = (l.B + kScatterColumns - 1) / kScatterColumns;
  visit_dtype(y.dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* u = upd.as<T>();
    T* out = y.as<T>();
    visit_reduction(red, [&](auto rc) {
      constexpr Reduction R = decltype(rc)::value;
      const int64_t work = l.J * std::min(l.B, kScatterColumns);
      parallel_for(l.A * blocks, std::max<int64_t>(1, kIndexGrain / work), [&](int64_t b, int64_t e) {
        for (int64_t unit = b; unit < e; ++unit) {
          const int64_t a = unit / blocks, c0 = (unit % blocks) * kScatterColumns;
          const int64_t c1 = std::min(l.B, c0 + kScatterColumns);
          for (int64_t j = 0; j < l.J; ++j)
            for (int64_t c = c0; c < c1; ++c) {
              const int64_t p = (a * l.J + j) * l.B + c;
              T& dst = out[l.offA[a] + ix[p] * l.xstride + l.offB[c]];
              dst = combine<R, T>(dst, u[p]);
            }
        }
      });
    });
  });
}

// ---- gather_nd / scatter_nd --------------------------------------------------------------

// indices [..batch, ..., k]: tuple r (of rows = numel(indices) / k, or the
// product of indices.shape[:-1] when k is 0) addresses the slice of x at
// base[r]; slices have `slice` elements.
struct NdLayout {
  int64_t rows = 0, slice = 1;
  I64Buffer base{1};
};

NdLayout nd_layout(const KernelContext& ctx, const TensorRef& x, const TensorRef& idx, int64_t batch_dims) {
  const Shape& xs = *x.shape;
  const Shape& is = *idx.shape;
  const size_t b = static_cast<size_t>(batch_dims);
  const int64_t k = is.back();
  NdLayout l;
  l.rows = prod(is, 0, is.size() - 1);
  l.slice = prod(xs, b + static_cast<size_t>(k), xs.size());
  const int64_t per_batch = prod(xs, b, xs.size());             // x elements per batch entry
  const int64_t rows_per_batch = prod(is, b, is.size() - 1);    // tuples per batch entry
  const I64Buffer ix = read_indices(
      ctx, idx, [&](int64_t p) { return xs[b + static_cast<size_t>(p % k)]; },
      [&](int64_t p) { return batch_dims + p % k; }, "dim");
  I64Buffer stride(std::max<int64_t>(k, 1));
  for (int64_t j = 0; j < k; ++j) stride[j] = prod(xs, b + static_cast<size_t>(j) + 1, xs.size());
  l.base = I64Buffer(l.rows);
  parallel_for(l.rows, kIndexGrain, [&](int64_t lo, int64_t hi) {
    for (int64_t r = lo; r < hi; ++r) {
      int64_t off = rows_per_batch > 0 ? (r / rows_per_batch) * per_batch : 0;
      for (int64_t j = 0; j < k; ++j) off += ix[r * k + j] * stride[j];
      l.base[r] = off;
    }
  });
  return l;
}

void gather_nd_kernel(const KernelContext& ctx) {
  const TensorRef& x = ctx.inputs[0];
  const TensorRef& y = ctx.outputs[0];
  const NdLayout l = nd_layout(ctx, x, ctx.inputs[1], ctx.attrs.get_int("batch_dims"));
  if (y.numel() == 0) return;
  visit_item(itemsize(x.dtype), [&](auto tag) {
    using U = decltype(tag);
    const U* src = x.as<U>();
    U* dst = y.as<U>();
    const int64_t row = l.slice * static_cast<int64_t>(sizeof(U));
    parallel_for(l.rows, std::max<int64_t>(1, kGrainBytes / row), [&](int64_t b, int64_t e) {
      for (int64_t r = b; r < e; ++r) {
        if (l.slice == 1) dst[r] = src[l.base[r]];
        else std::memcpy(dst + r * l.slice, src + l.base[r], static_cast<size_t>(row));
      }
    });
  });
}

void scatter_nd_kernel(const KernelContext& ctx) {
  const TensorRef& x = ctx.inputs[0];
  const TensorRef& upd = ctx.inputs[2];
  const TensorRef& y = ctx.outputs[0];
  const Reduction red = reduction_of(ctx);
  const NdLayout l = nd_layout(ctx, x, ctx.inputs[1], 0);
  parallel_copy(y.data, x.data, static_cast<int64_t>(y.numel() * itemsize(y.dtype)));
  if (l.rows == 0 || l.slice == 0) return;
  const int64_t blocks = (l.slice + kScatterColumns - 1) / kScatterColumns;
  visit_dtype(y.dtype, [&](auto tag) {
    using T = decltype(tag);
    const T* u = upd.as<T>();
    T* out = y.as<T>();
    visit_reduction(red, [&](auto rc) {
      constexpr Reduction R = decltype(rc)::value;
      // Units are column blocks of the slices; each applies every tuple in order.
      parallel_for(blocks, std::max<int64_t>(1, kIndexGrain / (l.rows * std::min(l.slice, kScatterColumns))),
                   [&](int64_t b, int64_t e) {
                     for (int64_t blk = b; blk < e; ++blk) {
                       const int64_t c0 = blk * kScatterColumns, c1 = std::min(l.slice, c0 + kScatterColumns);
                       for (int64_t r = 0; r < l.rows; ++r) {
                         T* dst = out + l.base[r];
                         const T* src = u + r * l.slice;
                         for (int64_t c = c0; c < c1; ++c) dst[c] = combine<R, T>(dst[c], src[c]);
                       }
                     }
                   });
    });
  });
}

// ---- one_hot ----------------------------------------------------------------------------

// out viewed as [A, depth, B] around the axis, indices as [A, B]. An index
// outside [-depth, depth) leaves its column all `off` (ONNX OneHot).
void one_hot_kernel(const KernelContext& ctx) {
  const TensorRef& idx = ctx.inputs[0];
  const TensorRef& y = ctx.outputs[0];
  const int64_t depth = ctx.attrs.get_int("depth");
  int64_t axis = ctx.attrs.get_int("axis");
  if (axis < 0) axis += y.ndim();
  const Shape& is = *idx.shape;
  const int64_t A = prod(is, 0, static_cast<size_t>(axis)), B = prod(is, static_cast<size_t>(axis), is.size());
  if (y.numel() == 0) return;
  visit_dtype(y.dtype, [&](auto tag) {
    using T = decltype(tag);
    const T off = ctx.attrs.get_scalar("off").to<T>(), on = ctx.attrs.get_scalar("on").to<T>();
    T* out = y.as<T>();
    auto fill = [&](auto itag) {
      using I = decltype(itag);
      const I* in = idx.as<I>();
      parallel_for(A, std::max<int64_t>(1, kIndexGrain / (depth * B)), [&](int64_t b, int64_t e) {
        for (int64_t a = b; a < e; ++a) {
          T* o = out + a * depth * B;
          std::fill(o, o + depth * B, off);
          for (int64_t c = 0; c < B; ++c) {
            int64_t v = static_cast<int64_t>(in[a * B + c]);
            if (v < 0) v += depth;
            if (v >= 0 && v < depth) o[v * B + c] = on;
          }
        }
      });
    };
    if (idx.dtype == DType::kInt32) fill(int32_t{});
    else fill(int64_t{});
  });
}

}  // namespace

void register_indexing_kernels(OpRegistry& r) {
  constexpr DeviceType cpu = DeviceType::kCPU;
  r.add_kernel("gather", cpu, gather_kernel);
  r.add_kernel("gather_elements", cpu, gather_elements_kernel);
  r.add_kernel("gather_nd", cpu, gather_nd_kernel);
  r.add_kernel("scatter_elements", cpu, scatter_elements_kernel);
  r.add_kernel("scatter_nd", cpu, scatter_nd_kernel);
  r.add_kernel("one_hot", cpu, one_hot_kernel);
}

}  // namespace wok::cpu::WOK_ISA_NS
