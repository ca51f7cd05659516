// Pooling over the two spatial dims of NCHW tensors: ONNX's MaxPool and
// AveragePool (PyTorch's max_pool2d, avg_pool2d) and PyTorch's
// adaptive_avg_pool2d. Kernels: runtime/kernels/cpu/pool_kernels.cpp.
//
// Note [Pooling windows]
// Along one spatial dim of size `in`, with padding pb before and pa after,
// kernel k, stride s and dilation d, output o reads input positions
// o*s - pb + j*d for j in [0, k). The number of outputs is
//   (in + pb + pa - d*(k-1) - 1) / s + 1,
// rounded down, or up in ceil mode; a ceil-mode window that would start in
// the padding after the input is dropped (PyTorch's rule), so every window
// starts inside the input or the padding before it. Padding is refused
// where it reaches the effective kernel d*(k-1)+1: a window could then lie
// entirely in padding.
//  - max: the maximum over the window's positions inside the input (nan
//    wins, as in wok::max). Dilation can leave a window with no position
//    inside the input; its value is -inf (integers: the lowest value), the
//    maximum over padding, as in PyTorch.
//  - avg: the sum over the positions inside the input, divided by the
//    number of those positions, or, with count_include_pad, by the number
//    of positions inside [-pb, in + pa): the padding counts, the ceil-mode
//    overhang beyond it never does (PyTorch's divisor).
//  - adaptive avg: output i of OH averages rows [floor(i*H/OH),
//    ceil((i+1)*H/OH)), and likewise for columns.
// The op-level defaults are ONNX's (stride 1, no padding, count_include_pad
// off); frontend/pooling.h has PyTorch's.
#include <string>
#include <vector>

#include "wok/runtime/op_registry.h"
#include "wok/runtime/ops/op_rules.h"

namespace wok::ops {

namespace {

void require_rank4(const Shape& x) {
  if (x.size() != 4)
    throw ShapeError("needs a 4-D input [N, C, H, W], got rank " + std::to_string(x.size()));
}

void require_len(const std::vector<int64_t>& v, size_t n, const char* name) {
  if (v.size() != n)
    throw ShapeError(std::string(name) + " must have " + std::to_string(n) + " values, got " + shape_str(v));
}

void require_min(const std::vector<int64_t>& v, int64_t lo, const char* name) {
  for (int64_t x : v)
    if (x < lo)
      throw ShapeError(std::string(name) + " values must be " + (lo == 0 ? "non-negative" : "positive") + ", got " +
                       shape_str(v));
}

// Outputs along one dim (Note [Pooling windows]); the caller has checked
// that pb and pa are below the effective kernel.
int64_t pooled_size(int64_t in, int64_t k, int64_t s, int64_t pb, int64_t pa, int64_t d, bool ceil_mode) {
  const int64_t span = in + pb + pa - d * (k - 1) - 1;
  if (span < 0) return 0;
  int64_t out = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
  if (ceil_mode && (out - 1) * s >= in + pb) --out;
  return out;
}

// The pooled shape of `x` under the window attributes; `dilation` is {1, 1}
// for the average.
Shape pooled_shape(const Shape& x, const Attrs& a, const std::vector<int64_t>& dilation) {
  require_rank4(x);
  const auto& kernel = a.get_ints("kernel");
  const auto& stride = a.get_ints("stride");
  const auto& pads = a.get_ints("padding");
  require_len(kernel, 2, "kernel");
  require_len(stride, 2, "stride");
  require_len(pads, 4, "padding [top, left, bottom, right]");
  require_len(dilation, 2, "dilation");
  require_min(kernel, 1, "kernel");
  require_min(stride, 1, "stride");
  require_min(dilation, 1, "dilation");
  require_min(pads, 0, "padding");
  const bool ceil_mode = a.get_bool("ceil_mode");
  Shape out = {x[0], x[1], 0, 0};
  for (int i = 0; i < 2; ++i) {
    const int64_t eff = dilation[i] * (kernel[i] - 1) + 1;
    for (int64_t p : {pads[i], pads[i + 2]})
      if (p >= eff)
        throw ShapeError("padding " + shape_str(pads) + " is not smaller than the effective kernel " +
                         std::to_string(eff) + " along dim " + std::to_string(2 + i) +
                         ": a window could lie entirely in padding");
    out[2 + i] = pooled_size(x[2 + i], kernel[i], stride[i], pads[i], pads[i + 2], dilation[i], ceil_mode);
  }
  if (out[2] <= 0 || out[3] <= 0)
    throw ShapeError("input " + std::to_string(x[2]) + "x" + std::to_string(x[3]) + " padded by " + shape_str(pads) +
                     " is smaller than the window (kernel " + shape_str(kernel) + ", dilation " + shape_str(dilation) +
                     "): the output would be " + std::to_string(out[2]) + "x" + std::to_string(out[3]));
  return out;
}

std::vector<AttrSpec> window_attrs() {
  return {{"kernel", AttrType::kInts, std::nullopt},
          {"stride", AttrType::kInts, std::vector<int64_t>{1, 1}},
          {"padding", AttrType::kInts, std::vector<int64_t>{0, 0, 0, 0}}};
}

DType require_float(DType t, const char* op) {
  require_not_bool(t, op);
  if (!is_floating(t))
    throw DTypeError(std::string(op) + " takes float32 or float64, got " + std::string(dtype_name(t)) +
                     " (the frontend casts integers to float64)");
  return t;
}

OpDef max_pool_def() {
  OpDef def;
  def.name = "max_pool2d";
  def.inputs = {"x"};
  def.kind = OpKind::kOpaque;
  def.attrs = window_attrs();
  def.attrs.push_back({"dilation", AttrType::kInts, std::vector<int64_t>{1, 1}});
  def.attrs.push_back({"ceil_mode", AttrType::kBool, false});
  def.infer_shape = [](std::span<const Shape> in, const Attrs& a) {
    return std::vector<Shape>{pooled_shape(in[0], a, a.get_ints("dilation"))};
  };
  def.infer_dtype = [](std::span<const DType> in, const Attrs&) {
    require_not_bool(in[0], "max_pool2d");
    return one(in[0]);
  };
  def.doc = "maximum over each kernel window of the spatial dims of x [N, C, H, W] (ONNX MaxPool)";
  return def;
}

OpDef avg_pool_def() {
  OpDef def;
  def.name = "avg_pool2d";
  def.inputs = {"x"};
  def.kind = OpKind::kOpaque;
  def.attrs = window_attrs();
  def.attrs.push_back({"ceil_mode", AttrType::kBool, false});
  def.attrs.push_back({"count_include_pad", AttrType::kBool, false});
  def.infer_shape = [](std::span<const Shape> in, const Attrs& a) {
    return std::vector<Shape>{pooled_shape(in[0], a, {1, 1})};
  };
  def.infer_dtype = [](std::span<const DType> in, const Attrs&) { return one(require_float(in[0], "avg_pool2d")); };
  def.doc = "mean over each kernel window of the spatial dims of x [N, C, H, W] (ONNX AveragePool)";
  return def;
}

OpDef adaptive_avg_pool_def() {
  OpDef def;
  def.name = "adaptive_avg_pool2d";
  def.inputs = {"x"};
  def.kind = OpKind::kOpaque;
  def.attrs = {{"output_size", AttrType::kInts, std::nullopt}};
  def.infer_shape = [](std::span<const Shape> in, const Attrs& a) {
    const Shape& x = in[0];
    require_rank4(x);
    const auto& size = a.get_ints("output_size");
    require_len(size, 2, "output_size");
    require_min(size, 1, "output_size");
    if (x[2] <= 0 || x[3] <= 0)
      throw ShapeError("input spatial size " + std::to_string(x[2]) + "x" + std::to_string(x[3]) + " is empty");
    return std::vector<Shape>{{x[0], x[1], size[0], size[1]}};
  };
  def.infer_dtype = [](std::span<const DType> in, const Attrs&) {
    return one(require_float(in[0], "adaptive_avg_pool2d"));
  };
  def.doc = "mean over output_size windows that tile the spatial dims of x [N, C, H, W]";
  return def;
}

}  // namespace

void register_pool_ops(OpRegistry& r) {
  r.add(max_pool_def());
  r.add(avg_pool_def());
  r.add(adaptive_avg_pool_def());
}

}  // namespace wok::ops
