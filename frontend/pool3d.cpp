// max_pool3d and avg_pool3d, lowered onto the 2-D pools.
//
// Note [Separable 3-D pooling]
// A 3-D window is the product of three 1-D ones (Note [Pooling windows],
// runtime/ops/pool_ops.cpp), and both reductions separate over it: the
// maximum of a box is the maximum over depth of each plane's maximum, and
// the average's divisor is the product of the per-dim counts (inside the
// input, or inside the padded input with count_include_pad; the ceil-mode
// overhang never counts), so the box average is the depth average of the
// plane averages. Each 3-D pool is therefore a 2-D pool over (H, W) of the
// N x C*D planes, then a pool over depth of the [N, C, D, OH*OW] result with
// a D x 1 window. The average rounds twice in float32 instead of once.
#include <string>

#include "wok/frontend/dispatch.h"
#include "wok/frontend/ops.h"
#include "wok/frontend/pooling.h"
#include "wok/runtime/error.h"

namespace wok {

namespace {

std::string message(const char* op, const std::string& what, const Tensor& x) {
  return std::string("wok::") + op + ": " + what + " (inputs: x " + std::string(dtype_name(x.dtype())) +
         shape_str(x.shape()) + ")";
}

struct Window3d {
  std::vector<int64_t> kernel, stride, pads, dilation;  // pads: {front, top, left, back, bottom, right}
};

// The 3-D forms of the 2-D op's checks (pool_ops.cpp), so the lowered calls
// never fail with the reshaped input in their message.
Window3d check_window(const char* op, const Tensor& x, std::vector<int64_t> kernel, std::vector<int64_t> stride,
                      const std::vector<int64_t>& padding, std::vector<int64_t> dilation) {
  auto fail = [&](const std::string& what) { throw ShapeError(message(op, what, x)); };
  if (!x.defined()) throw ArgumentError(std::string("wok::") + op + ": x is an undefined wok::Tensor");
  if (x.ndim() != 5) fail("needs a 5-D input [N, C, D, H, W], got rank " + std::to_string(x.ndim()));
  if (stride.empty()) stride = kernel;
  for (const auto& [name, v] : {std::pair{"kernel", &kernel}, {"stride", &stride}, {"dilation", &dilation}}) {
    if (v->size() != 3) fail(std::string(name) + " " + shape_str(*v) + " must have 3 values");
    for (int64_t e : *v)
      if (e < 1) fail(std::string(name) + " " + shape_str(*v) + " must be positive");
  }
  std::vector<int64_t> pads = padding;
  if (pads.size() == 3) pads.insert(pads.end(), padding.begin(), padding.end());
  if (pads.size() != 6)
    fail("padding " + shape_str(padding) + " must have 3 values (one per spatial dim) or 6 (front, top, left, back, "
         "bottom, right)");
  for (size_t i = 0; i < 3; ++i) {
    const int64_t eff = dilation[i] * (kernel[i] - 1) + 1;
    if (pads[i] < 0 || pads[i + 3] < 0) fail("padding " + shape_str(pads) + " must be non-negative");
    if (pads[i] >= eff || pads[i + 3] >= eff)
      fail("padding " + shape_str(pads) + " is not smaller than the effective kernel " + std::to_string(eff) +
           " along dim " + std::to_string(2 + i) + ": a window could lie entirely in padding");
    const int64_t span = x.shape()[2 + i] + pads[i] + pads[i + 3] - eff;
    if (span < 0)
      fail("the input padded by " + shape_str(pads) + " is smaller than the window (kernel " + shape_str(kernel) +
           ", dilation " + shape_str(dilation) + ") along dim " + std::to_string(2 + i));
  }
  // Ceil mode only adds windows (each starts inside the input or its
  // padding), so it cannot make an output empty.
  return {std::move(kernel), std::move(stride), std::move(pads), std::move(dilation)};
}

// Note [Separable 3-D pooling]: `plane` pools [N, C*D, H, W] over (H, W);
// `depth` pools [N, C, D, P] with a (D x 1) window.
template <typename PlanePool, typename DepthPool>
Tensor separable(const Tensor& x, const Window3d& w, PlanePool plane, DepthPool depth) {
  const Shape& s = x.shape();
  const Tensor planes = plane(reshape(x, {s[0], s[1] * s[2], s[3], s[4]}), std::vector<int64_t>{w.kernel[1], w.kernel[2]},
                              std::vector<int64_t>{w.stride[1], w.stride[2]},
                              std::vector<int64_t>{w.pads[1], w.pads[2], w.pads[4], w.pads[5]},
                              std::vector<int64_t>{w.dilation[1], w.dilation[2]});
  const int64_t oh = planes.shape()[2], ow = planes.shape()[3];
  const Tensor pooled = depth(reshape(planes, {s[0], s[1], s[2], oh * ow}), std::vector<int64_t>{w.kernel[0], 1},
                              std::vector<int64_t>{w.stride[0], 1}, std::vector<int64_t>{w.pads[0], 0, w.pads[3], 0},
                              std::vector<int64_t>{w.dilation[0], 1});
  return reshape(pooled, {s[0], s[1], pooled.shape()[2], oh, ow});
}

}  // namespace

Tensor max_pool3d(const Tensor& x, std::vector<int64_t> kernel, std::vector<int64_t> stride,
                  std::vector<int64_t> padding, std::vector<int64_t> dilation, bool ceil_mode) {
  WOK_CALLER_SCOPE();
  const Window3d w = check_window("max_pool3d", x, std::move(kernel), std::move(stride), padding, std::move(dilation));
  auto pool = [&](const Tensor& t, std::vector<int64_t> k, std::vector<int64_t> s, std::vector<int64_t> p,
                  std::vector<int64_t> d) { return max_pool2d(t, std::move(k), std::move(s), std::move(p), std::move(d), ceil_mode); };
  return separable(x, w, pool, pool);
}

Tensor avg_pool3d(const Tensor& x, std::vector<int64_t> kernel, std::vector<int64_t> stride,
                  std::vector<int64_t> padding, bool ceil_mode, bool count_include_pad) {
  WOK_CALLER_SCOPE();
  const Window3d w = check_window("avg_pool3d", x, std::move(kernel), std::move(stride), padding, {1, 1, 1});
  auto pool = [&](const Tensor& t, std::vector<int64_t> k, std::vector<int64_t> s, std::vector<int64_t> p,
                  std::vector<int64_t>) {
    return avg_pool2d(t, std::move(k), std::move(s), std::move(p), ceil_mode, count_include_pad);
  };
  return separable(x, w, pool, pool);
}

}  // namespace wok
