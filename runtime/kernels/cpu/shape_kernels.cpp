// Precompiled kernels of the shape family's ops that compute: resize
// (ONNX Resize, nearest and linear) and range (ONNX Range). pad is a
// movement kernel (movement_kernels.cpp).
//
// Nearest resize is a gather with one index map per axis (axis_gather.h).
// Linear resize is separable: one pass per axis whose taps are not the
// identity, shrinking axes first (the later passes then read less), each
// output element (1 - w) * in[lo] + w * in[hi] along that axis, computed in
// float64 and rounded once per pass. ONNX's reference interpolates all axes
// at once; the two agree to a few ulps (tests/shape_ops_extra_test.cpp).
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

// Calls fn(U{}) with an unsigned type of the given item size.
template <typename Fn>
void visit_bytes(size_t size, Fn&& fn) {
  switch (size) {
    case 1: fn(uint8_t{}); return;
    case 4: fn(uint32_t{}); return;
    case 8: fn(uint64_t{}); return;
    default: throw DTypeError("resize handles items of 1, 4 or 8 bytes, not " + std::to_string(size));
  }
}

// One linear pass along `axis` of a contiguous [outer, n_in, inner] tensor
// into [outer, n_out, inner].
template <typename T>
void linear_axis(const T* in, T* out, const Shape& shape, size_t axis, const ops::LinearTaps& taps) {
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < axis; ++d) outer *= shape[d];
  for (size_t d = axis + 1; d < shape.size(); ++d) inner *= shape[d];
  const int64_t n_in = shape[axis], n_out = static_cast<int64_t>(taps.lo.size());
  if (inner == 1) {
    parallel_for(outer, std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(n_out, 1)), [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) {
        const T* src = in + o * n_in;
        T* dst = out + o * n_out;
        for (int64_t x = 0; x < n_out; ++x) {
          const double w = taps.w[static_cast<size_t>(x)];
          const T a = src[taps.lo[static_cast<size_t>(x)]];
          dst[x] = w == 0 ? a : static_cast<T>((1 - w) * static_cast<double>(a) +
                                               w * static_cast<double>(src[taps.hi[static_cast<size_t>(x)]]));
        }
      }
    });
    return;
  }
  const int64_t rows = outer * n_out;
  parallel_for(rows, std::max<int64_t>(1, kElementwiseGrain / inner), [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      const int64_t o = r / n_out, x = r % n_out;
      const T* lo = in + (o * n_in + taps.lo[static_cast<size_t>(x)]) * inner;
      const T* hi = in + (o * n_in + taps.hi[static_cast<size_t>(x)]) * inner;
      T* dst = out + r * inner;
      const double w = taps.w[static_cast<size_t>(x)], w0 = 1 - w;
      if (w == 0) {
        std::memcpy(dst, lo, static_cast<size_t>(inner) * sizeof(T));
        continue;
      }
      for (int64_t i = 0; i < inner; ++i)
        dst[i] = static_cast<T>(w0 * static_cast<double>(lo[i]) + w * static_cast<double>(hi[i]));
    }
  });
}

template <typename T>
void resize_linear(const T* in, T* out, const Shape& in_shape, const Shape& out_shape,
                   const std::vector<ops::LinearTaps>& taps) {
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
    linear_axis<T>(src, dst, shape, a, taps[a]);
    src = dst;
    shape = std::move(next);
  }
}

void resize_kernel(const KernelContext& ctx) {
  const TensorRef& x = ctx.inputs[0];
  const TensorRef& y = ctx.outputs[0];
  if (y.numel() == 0) return;
  const Shape& in = *x.shape;
  const Shape& out = *y.shape;
  const std::vector<double> scales = ops::resize_scales(ctx.attrs.get_string("scales"), in, out);
  const ops::CoordinateMode cm = ops::parse_coordinate_mode(ctx.attrs.get_string("coordinate_transformation_mode")).value();
  if (ops::parse_resize_mode(ctx.attrs.get_string("mode")).value() == ops::ResizeMode::kNearest) {
    const ops::NearestMode nm = ops::parse_nearest_mode(ctx.attrs.get_string("nearest_mode")).value();
    std::vector<std::vector<int64_t>> maps(in.size());
    for (size_t d = 0; d < in.size(); ++d) maps[d] = ops::resize_nearest_map(cm, nm, scales[d], in[d], out[d]);
    visit_bytes(itemsize(x.dtype), [&](auto tag) {
      using U = decltype(tag);
      gather_axes<U>(in, out, maps, U{}, x.as<U>(), y.as<U>());
    });
    return;
  }
  std::vector<ops::LinearTaps> taps(in.size());
  for (size_t d = 0; d < in.size(); ++d) taps[d] = ops::resize_linear_taps(cm, scales[d], in[d], out[d]);
  if (x.dtype == DType::kFloat32) resize_linear<float>(x.as<float>(), y.as<float>(), in, out, taps);
  else if (x.dtype == DType::kFloat64) resize_linear<double>(x.as<double>(), y.as<double>(), in, out, taps);
  else throw DTypeError("precompiled linear resize: float32 or float64 only, got " + std::string(dtype_name(x.dtype)));
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
