// Precompiled kernels of topk and sort (runtime/ops/scan_ops.cpp), in the
// order of Note [Order of values in topk and sort] there.
//
// x is viewed as [A, n, B] around the axis; each of the A * B lines is
// copied into a buffer of (value, index) pairs, ordered, and written out.
// The order compares values and then indices, so it is total: std::sort
// gives the stable result, and a partial sort of the first k gives exactly
// ONNX TopK's (lower index first among equal values).
#include <algorithm>
#include <cmath>
#include <memory>
#include <type_traits>

#include "wok/runtime/kernels/cpu/index_common.h"

namespace wok::cpu::WOK_ISA_NS {

namespace {

// a comes after b in ascending order: a > b, with nan above every number
// (two nans are equal).
template <typename T>
inline bool above(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(b)) return false;
    if (std::isnan(a)) return true;
  }
  return a > b;
}

template <typename T>
struct Item {
  T v;
  int64_t i;
};

template <typename T, bool kDescending>
struct Before {
  bool operator()(const Item<T>& a, const Item<T>& b) const {
    if (kDescending ? above(a.v, b.v) : above(b.v, a.v)) return true;
    if (kDescending ? above(b.v, a.v) : above(a.v, b.v)) return false;
    return a.i < b.i;
  }
};

// Writes the first k of each line, in order, to values and indices (both
// viewed as [A, k, B]).
template <typename T, bool kDescending>
void select_lines(const T* x, T* values, int64_t* indices, int64_t A, int64_t n, int64_t B, int64_t k) {
  parallel_for(A * B, std::max<int64_t>(1, kIndexGrain / std::max<int64_t>(n, 1)), [&](int64_t b, int64_t e) {
    std::unique_ptr<Item<T>[]> buf(new Item<T>[static_cast<size_t>(n)]);
    Item<T>* line = buf.get();
    for (int64_t l = b; l < e; ++l) {
      const int64_t a = l / B, c = l % B;
      const T* src = x + a * n * B + c;
      for (int64_t i = 0; i < n; ++i) line[i] = {src[i * B], i};
      if (k == n) std::sort(line, line + n, Before<T, kDescending>{});
      else std::partial_sort(line, line + k, line + n, Before<T, kDescending>{});
      T* vo = values + a * k * B + c;
      int64_t* io = indices + a * k * B + c;
      for (int64_t j = 0; j < k; ++j) {
        vo[j * B] = line[j].v;
        io[j * B] = line[j].i;
      }
    }
  });
}

void select_kernel(const KernelContext& ctx, int64_t k, bool descending) {
  const TensorRef& x = ctx.inputs[0];
  const TensorRef& values = ctx.outputs[0];
  const TensorRef& indices = ctx.outputs[1];
  if (values.numel() == 0) return;
  if (indices.dtype != DType::kInt64 || values.dtype != x.dtype)
    throw DTypeError("precompiled '" + ctx.op.name() + "' kernel: unexpected output dtypes");
  const Shape& xs = *x.shape;
  const size_t axis = static_cast<size_t>(ctx.attrs.get_int("axis"));
  const int64_t A = prod(xs, 0, axis), n = xs[axis], B = prod(xs, axis + 1, xs.size());
  visit_dtype(x.dtype, [&](auto tag) {
    using T = decltype(tag);
    if (descending) select_lines<T, true>(x.as<T>(), values.as<T>(), indices.as<int64_t>(), A, n, B, k);
    else select_lines<T, false>(x.as<T>(), values.as<T>(), indices.as<int64_t>(), A, n, B, k);
  });
}

void topk_kernel(const KernelContext& ctx) {
  select_kernel(ctx, ctx.attrs.get_int("k"), ctx.attrs.get_bool("largest"));
}

void sort_kernel(const KernelContext& ctx) {
  const size_t axis = static_cast<size_t>(ctx.attrs.get_int("axis"));
  select_kernel(ctx, (*ctx.inputs[0].shape)[axis], ctx.attrs.get_bool("descending"));
}

}  // namespace

void register_sort_kernels(OpRegistry& r) {
  constexpr DeviceType cpu = DeviceType::kCPU;
  r.add_kernel("topk", cpu, topk_kernel);
  r.add_kernel("sort", cpu, sort_kernel);
}

}  // namespace wok::cpu::WOK_ISA_NS
