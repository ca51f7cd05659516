// Precompiled kernels of the shape family's ops that compute: resize
// (ONNX Resize: nearest, linear and cubic) and range (ONNX Range). pad is a
// movement kernel (movement_kernels.cpp).
//
// Nearest resize is a gather with one index map per axis (axis_gather.h).
// Linear and cubic resize are separable: one pass per axis whose taps are
// not the identity, shrinking axes first (the later passes then read less),
// each output element the weighted sum of its 2 or 4 taps along that axis
// (ops::ResizeTaps), computed in float64 and rounded once per pass. ONNX's
// reference interpolates all axes at once; the two agree to a few ulps
// (tests/shape_ops_extra_test.cpp). Where tf_crop_and_resize samples
// outside the input along some axis, the output is exactly the
// extrapolation value: a pass writes it for its own axis, and the elements
// a later pass blended from it are set to it again at the end.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <numeric>
#include <type_traits>
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

// dst[i] = sum over k < K of w[k] * src[index[k] * stride + i], in float64.
template <int K, typename T>
void blend_rows(const T* src, int64_t stride, const int64_t* index, const double* w, T* dst, int64_t n) {
  const T* r[K];
  double wk[K];  // in registers: dst cannot be seen to alias them
  for (int k = 0; k < K; ++k) {
    r[k] = src + index[k] * stride;
    wk[k] = w[k];
  }
  for (int64_t i = 0; i < n; ++i) {
    double acc = wk[0] * static_cast<double>(r[0][i]);
    for (int k = 1; k < K; ++k) acc += wk[k] * static_cast<double>(r[k][i]);
    dst[i] = static_cast<T>(acc);
  }
}

// One row of a pass along the last axis, W taps per output index: the
// common case (all W taps weigh) unrolled, the others (a copy, the fill,
// taps of weight 0 left out) apart.
template <int W, typename T>
void interpolate_row(const T* src, T* dst, int64_t n_out, const int64_t* index0, const double* weight0,
                     const uint8_t* count0, T fill) {
  for (int64_t x = 0; x < n_out; ++x) {
    const int64_t* index = index0 + x * W;
    const double* w = weight0 + x * W;
    const int count = count0[x];
    if (count == W) {
      double acc = w[0] * static_cast<double>(src[index[0]]);
      for (int k = 1; k < W; ++k) acc += w[k] * static_cast<double>(src[index[k]]);
      dst[x] = static_cast<T>(acc);
    } else if (count == 0) {
      dst[x] = fill;
    } else if (count == 1 && w[0] == 1) {
      dst[x] = src[index[0]];
    } else {
      double acc = w[0] * static_cast<double>(src[index[0]]);
      for (int k = 1; k < count; ++k) acc += w[k] * static_cast<double>(src[index[k]]);
      dst[x] = static_cast<T>(acc);
    }
  }
}

// One pass along `axis` of a contiguous [outer, n_in, inner] tensor into
// [outer, n_out, inner]; `fill` where an output index has no taps.
template <typename T>
void interpolate_axis(const T* in, T* out, const Shape& shape, size_t axis, const ops::ResizeTaps& taps, T fill) {
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < axis; ++d) outer *= shape[d];
  for (size_t d = axis + 1; d < shape.size(); ++d) inner *= shape[d];
  const int64_t n_in = shape[axis], n_out = static_cast<int64_t>(taps.count.size());
  const int64_t* index0 = taps.index.data();
  const double* weight0 = taps.weight.data();
  const uint8_t* count0 = taps.count.data();
  if (inner == 1) {
    parallel_for(outer, std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(n_out, 1)), [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) {
        const T* src = in + o * n_in;
        T* dst = out + o * n_out;
        if (taps.width == 4) interpolate_row<4>(src, dst, n_out, index0, weight0, count0, fill);
        else interpolate_row<2>(src, dst, n_out, index0, weight0, count0, fill);
      }
    });
    return;
  }
  const int64_t rows = outer * n_out;
  parallel_for(rows, std::max<int64_t>(1, kElementwiseGrain / inner), [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const int64_t o = r / n_out, x = r % n_out;
      const int count = count0[x];
      const int64_t* index = index0 + x * taps.width;
      const double* w = weight0 + x * taps.width;
      T* dst = out + r * inner;
      const T* src = in + o * n_in * inner;
      switch (count) {
        case 0: std::fill(dst, dst + inner, fill); break;
        case 1:
          if (w[0] == 1) std::memcpy(dst, src + index[0] * inner, static_cast<size_t>(inner) * sizeof(T));
          else blend_rows<1>(src, inner, index, w, dst, inner);
          break;
        case 2: blend_rows<2>(src, inner, index, w, dst, inner); break;
        case 3: blend_rows<3>(src, inner, index, w, dst, inner); break;
        default: blend_rows<4>(src, inner, index, w, dst, inner); break;
      }
    }
  });
}

// Sets the elements of `out` whose index along `axis` has no taps to `fill`.
template <typename T>
void fill_extrapolated(T* out, const Shape& shape, size_t axis, const ops::ResizeTaps& taps, T fill) {
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < axis; ++d) outer *= shape[d];
  for (size_t d = axis + 1; d < shape.size(); ++d) inner *= shape[d];
  const int64_t n = shape[axis];
  parallel_for(outer * n, std::max<int64_t>(1, kElementwiseGrain / inner), [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r)
      if (taps.count[static_cast<size_t>(r % n)] == 0) std::fill(out + r * inner, out + (r + 1) * inner, fill);
  });
}

template <typename T>
void resize_interpolate(const T* in, T* out, const Shape& in_shape, const Shape& out_shape,
                        const std::vector<ops::ResizeTaps>& taps, T fill) {
  std::vector<size_t> axes;
  for (size_t d = 0; d < in_shape.size(); ++d)
    if (!taps[d].identity) axes.push_back(d);
  if (axes.empty()) {
    std::memcpy(out, in, static_cast<size_t>(numel(out_shape)) * sizeof(T));
    return;
  }
  // Shrinking axes first, by how much they shrink.
  std::stable_sort(axes.begin(), axes.end(), [&](size_t a, size_t b) {
    return static_cast<double>(out_shape[a]) / static_cast<double>(in_shape[a]) <
           static_cast<double>(out_shape[b]) / static_cast<double>(in_shape[b]);
  });
  Shape shape = in_shape;
  const T* src = in;
  std::unique_ptr<T[]> bufs[2];
  for (size_t p = 0; p < axes.size(); ++p) {
    const size_t a = axes[p];
    Shape next = shape;
    next[a] = out_shape[a];
    T* dst = out;
    if (p + 1 < axes.size()) {
      bufs[p % 2].reset(new T[static_cast<size_t>(numel(next))]);
      dst = bufs[p % 2].get();
    }
    interpolate_axis<T>(src, dst, shape, a, taps[a], fill);
    src = dst;
    shape = std::move(next);
  }
  // The last pass wrote its own axis's fill; the earlier ones' were blended.
  for (size_t p = 0; p + 1 < axes.size(); ++p)
    if (taps[axes[p]].extrapolates) fill_extrapolated<T>(out, out_shape, axes[p], taps[axes[p]], fill);
}

void resize_kernel(const KernelContext& ctx) {
  const TensorRef& x = ctx.inputs[0];
  const TensorRef& y = ctx.outputs[0];
  if (y.numel() == 0) return;
  const Shape& in = *x.shape;
  const Shape& out = *y.shape;
  const std::vector<ops::ResizeAxis> axes =
      ops::resize_axes(in, out, ctx.attrs.get_string("scales"), ctx.attrs.get_string("roi"));
  const ops::CoordinateMode cm = ops::parse_coordinate_mode(ctx.attrs.get_string("coordinate_transformation_mode")).value();
  const ops::ResizeMode mode = ops::parse_resize_mode(ctx.attrs.get_string("mode")).value();
  const Scalar extrapolation = Scalar(ctx.attrs.get_float("extrapolation_value")).cast(x.dtype);
  if (mode == ops::ResizeMode::kNearest) {
    const ops::NearestMode nm = ops::parse_nearest_mode(ctx.attrs.get_string("nearest_mode")).value();
    std::vector<std::vector<int64_t>> maps(in.size());
    for (size_t d = 0; d < in.size(); ++d) maps[d] = ops::resize_nearest_map(cm, nm, axes[d]);
    gather_axes_of(x.dtype, in, out, maps, extrapolation, x.data, y.data);
    return;
  }
  const double a = ctx.attrs.get_float("cubic_coeff_a");
  const bool exclude_outside = ctx.attrs.get_bool("exclude_outside");
  std::vector<ops::ResizeTaps> taps(in.size());
  for (size_t d = 0; d < in.size(); ++d) taps[d] = ops::resize_taps(mode, cm, axes[d], a, exclude_outside);
  if (x.dtype == DType::kFloat32)
    resize_interpolate<float>(x.as<float>(), y.as<float>(), in, out, taps, extrapolation.to<float>());
  else if (x.dtype == DType::kFloat64)
    resize_interpolate<double>(x.as<double>(), y.as<double>(), in, out, taps, extrapolation.to<double>());
  else
    throw DTypeError("precompiled " + ctx.attrs.get_string("mode") + " resize: float32 or float64 only, got " +
                     std::string(dtype_name(x.dtype)));
}

// ---- range ---------------------------------------------------------------------------------

void range_kernel(const KernelContext& ctx) {
  const TensorRef& y = ctx.outputs[0];
  const Scalar& start = ctx.attrs.get_scalar("start");
  const Scalar& delta = ctx.attrs.get_scalar("delta");
  visit_dtype(y.dtype, [&](auto tag) {
    using T = decltype(tag);
    T* o = y.as<T>();
    if constexpr (std::is_same_v<T, bool>) {
      throw DTypeError("range is not defined for bool");
    } else if constexpr (std::is_integral_v<T>) {
      // Exact in int64, wrapping like the other integer arithmetic.
      const auto s = static_cast<uint64_t>(start.to<int64_t>()), d = static_cast<uint64_t>(delta.to<int64_t>());
      parallel_for(y.numel(), kElementwiseGrain, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) o[i] = static_cast<T>(static_cast<int64_t>(s + static_cast<uint64_t>(i) * d));
      });
    } else {
      const double s = start.as_double(), d = delta.as_double();
      parallel_for(y.numel(), kElementwiseGrain, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) o[i] = static_cast<T>(s + static_cast<double>(i) * d);
      });
    }
  });
}

}  // namespace

void register_shape_kernels(OpRegistry& r) {
  constexpr DeviceType cpu = DeviceType::kCPU;
  r.add_kernel("resize", cpu, resize_kernel);
  r.add_kernel("range", cpu, range_kernel);
}

}  // namespace wok::cpu::WOK_ISA_NS
