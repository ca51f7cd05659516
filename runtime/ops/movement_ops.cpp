// Ops that move or select elements without arithmetic, and the shape
// family's other ops with kernels of their own: pad, resize (which
// interpolates) and range (a creation op). The other shape functions of
// frontend/shape_ops.h are compositions of these and need no op.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "wok/runtime/op_registry.h"
#include "wok/runtime/ops/op_rules.h"
#include "wok/runtime/ops/shape_geometry.h"

namespace wok::ops {

namespace {

DTypeFn same_dtype() {
  return [](std::span<const DType> in, const Attrs&) { return one(in[0]); };
}

OpDef reshape_op() {
  OpDef def;
  def.name = "reshape";
  def.inputs = {"x"};
  def.attrs = {{"shape", AttrType::kInts, std::nullopt}};
  def.kind = OpKind::kMovement;
  def.infer_shape = [](std::span<const Shape> in, const Attrs& a) {
    const Shape& to = a.get_ints("shape");
    for (int64_t d : to)
      if (d < 0) throw ShapeError("reshape target " + shape_str(to) + " has a negative dimension");
    if (numel(to) != numel(in[0]))
      throw ShapeError("cannot reshape " + std::to_string(numel(in[0])) + " elements into " + shape_str(to));
    return std::vector<Shape>{to};
  };
  def.infer_dtype = same_dtype();
  def.output_aliases_input = true;  // tensors are contiguous: same bytes, new shape
  def.doc = "same elements, new shape";
  return def;
}

OpDef permute_op() {
  OpDef def;
  def.name = "permute";
  def.inputs = {"x"};
  def.attrs = {{"dims", AttrType::kInts, std::nullopt}};
  def.kind = OpKind::kMovement;
  def.infer_shape = [](std::span<const Shape> in, const Attrs& a) {
    const auto& dims = a.get_ints("dims");
    if (dims.size() != in[0].size())
      throw ShapeError("permutation " + shape_str(dims) + " does not match rank " + std::to_string(in[0].size()));
    check_axes(dims, static_cast<int>(dims.size()));
    Shape out;
    for (int64_t d : dims) out.push_back(in[0][d]);
    return std::vector<Shape>{out};
  };
  def.infer_dtype = same_dtype();
  def.doc = "out.shape[i] = x.shape[dims[i]]";
  return def;
}

OpDef broadcast_to_op() {
  OpDef def;
  def.name = "broadcast_to";
  def.inputs = {"x"};
  def.attrs = {{"shape", AttrType::kInts, std::nullopt}};
  def.kind = OpKind::kMovement;
  def.infer_shape = [](std::span<const Shape> in, const Attrs& a) {
    const Shape& to = a.get_ints("shape");
    std::optional<Shape> b = broadcast_shapes(in[0], to);
    if (!b || *b != to) throw ShapeError("cannot broadcast " + shape_str(in[0]) + " to " + shape_str(to));
    return std::vector<Shape>{to};
  };
  def.infer_dtype = same_dtype();
  def.doc = "repeat along size-1 and new leading dims";
  return def;
}

// Python-style slices with every axis spelled out: starts, stops and steps
// are already clamped by the frontend, steps are non-zero.
OpDef slice_op() {
  OpDef def;
  def.name = "slice";
  def.inputs = {"x"};
  def.attrs = {{"starts", AttrType::kInts, std::nullopt},
               {"stops", AttrType::kInts, std::nullopt},
               {"steps", AttrType::kInts, std::nullopt}};
  def.kind = OpKind::kMovement;
  def.infer_shape = [](std::span<const Shape> in, const Attrs& a) {
    const auto& starts = a.get_ints("starts");
    const auto& stops = a.get_ints("stops");
    const auto& steps = a.get_ints("steps");
    size_t n = in[0].size();
    if (starts.size() != n || stops.size() != n || steps.size() != n)
      throw ShapeError("slice needs one start, stop and step per axis (rank " + std::to_string(n) + ")");
    Shape out(n);
    for (size_t i = 0; i < n; ++i) {
      int64_t step = steps[i];
      if (step == 0) throw ShapeError("slice step of axis " + std::to_string(i) + " is 0");
      int64_t len = step > 0 ? (stops[i] - starts[i] + step - 1) / step : (starts[i] - stops[i] - step - 1) / -step;
      out[i] = std::max<int64_t>(len, 0);
      if (out[i] > 0) {
        int64_t last = starts[i] + (out[i] - 1) * step;
        if (starts[i] < 0 || starts[i] >= in[0][i] || last < 0 || last >= in[0][i])
          throw ShapeError("slice of axis " + std::to_string(i) + " reads outside [0, " + std::to_string(in[0][i]) +
                           ")");
      }
    }
    return std::vector<Shape>{out};
  };
  def.infer_dtype = same_dtype();
  def.doc = "x[start:stop:step] along each axis";
  return def;
}

OpDef concat_op() {
  OpDef def;
  def.name = "concat";
  def.inputs = {"xs"};
  def.variadic_inputs = true;
  def.attrs = {{"axis", AttrType::kInt, std::nullopt}};
  def.kind = OpKind::kMovement;
  def.infer_shape = [](std::span<const Shape> in, const Attrs& a) {
    if (in.empty()) throw ShapeError("concat needs at least one tensor");
    int64_t axis = a.get_int("axis");
    if (axis < 0 || axis >= static_cast<int64_t>(in[0].size()))
      throw ShapeError("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(in[0].size()));
    Shape out = in[0];
    for (size_t k = 1; k < in.size(); ++k) {
      bool fits = in[k].size() == out.size();
      for (size_t i = 0; fits && i < out.size(); ++i) fits = static_cast<int64_t>(i) == axis || in[k][i] == out[i];
      if (!fits)
        throw ShapeError("tensor " + std::to_string(k) + " of shape " + shape_str(in[k]) +
                         " does not match " + shape_str(in[0]) + " outside axis " + std::to_string(axis));
      out[axis] += in[k][axis];
    }
    return std::vector<Shape>{out};
  };
  def.infer_dtype = [](std::span<const DType> in, const Attrs&) { return one(common_dtype(in)); };
  def.doc = "join tensors along an existing axis";
  return def;
}


// ONNX Pad: pads are [begin_0, ..., begin_{n-1}, end_0, ..., end_{n-1}];
// negative pads crop. Modes constant, reflect, edge, wrap (PadAxis).
OpDef pad_op() {
  OpDef def;
  def.name = "pad";
  def.inputs = {"x"};
  def.attrs = {{"pads", AttrType::kInts, std::nullopt},
               {"mode", AttrType::kString, std::string("constant")},
               {"value", AttrType::kScalar, Scalar(0.0)}};
  def.kind = OpKind::kMovement;
  def.infer_shape = [](std::span<const Shape> in, const Attrs& a) {
    const auto& pads = a.get_ints("pads");
    const size_t n = in[0].size();
    if (pads.size() != 2 * n)
      throw ShapeError("pad needs 2 pads per axis, begins then ends (" + std::to_string(2 * n) + " for rank " +
                       std::to_string(n) + "), got " + shape_str(pads));
    std::optional<PadMode> mode = parse_pad_mode(a.get_string("mode"));
    if (!mode)
      throw ArgumentError("pad mode '" + a.get_string("mode") + "' is not one of constant, reflect, edge, wrap");
    Shape out(n);
    for (size_t i = 0; i < n; ++i) {
      std::string why = pad_axis_error(in[0][i], pads[i], pads[i + n], *mode);
      if (!why.empty()) throw ShapeError("axis " + std::to_string(i) + ": " + why);
      out[i] = pad_axis(in[0][i], pads[i], pads[i + n]).out();
    }
    return std::vector<Shape>{out};
  };
  def.infer_dtype = same_dtype();
  def.doc = "ONNX Pad: pads [begins..., ends...] (negative crops), mode constant | reflect | edge | wrap";
  return def;
}

// ONNX Resize over every axis, to the output shape `sizes`. "scales" is
// empty when the caller gave sizes (each axis's scale is then out / in),
// else the caller's scales (format_doubles), which the coordinate
// transformation reads. "roi" ([starts..., ends...], format_doubles; empty
// for the whole input) is tf_crop_and_resize's only.
OpDef resize_op() {
  OpDef def;
  def.name = "resize";
  def.inputs = {"x"};
  def.attrs = {{"sizes", AttrType::kInts, std::nullopt},
               {"scales", AttrType::kString, std::string()},
               {"mode", AttrType::kString, std::string("nearest")},
               {"coordinate_transformation_mode", AttrType::kString, std::string("half_pixel")},
               {"nearest_mode", AttrType::kString, std::string("round_prefer_floor")},
               {"cubic_coeff_a", AttrType::kFloat, -0.75},
               {"exclude_outside", AttrType::kBool, false},
               {"roi", AttrType::kString, std::string()},
               {"extrapolation_value", AttrType::kFloat, 0.0}};
  def.kind = OpKind::kOpaque;  // linear and cubic modes compute
  def.infer_shape = [](std::span<const Shape> in, const Attrs& a) {
    const Shape& to = a.get_ints("sizes");
    const size_t n = in[0].size();
    if (to.size() != n)
      throw ShapeError("resize needs one output size per axis (rank " + std::to_string(n) + "), got " + shape_str(to));
    if (!parse_resize_mode(a.get_string("mode")))
      throw ArgumentError("resize mode '" + a.get_string("mode") + "' is not nearest, linear or cubic");
    const std::string& ctm = a.get_string("coordinate_transformation_mode");
    const std::optional<CoordinateMode> cm = parse_coordinate_mode(ctm);
    if (!cm)
      throw ArgumentError("coordinate_transformation_mode '" + ctm +
                          "' is not one of half_pixel, half_pixel_symmetric, pytorch_half_pixel, align_corners, "
                          "asymmetric, tf_half_pixel_for_nn, tf_crop_and_resize");
    if (!parse_nearest_mode(a.get_string("nearest_mode")))
      throw ArgumentError("nearest_mode '" + a.get_string("nearest_mode") +
                          "' is not one of round_prefer_floor, round_prefer_ceil, floor, ceil");
    if (!std::isfinite(a.get_float("cubic_coeff_a")))
      throw ArgumentError("resize cubic_coeff_a " + std::to_string(a.get_float("cubic_coeff_a")) + " is not finite");
    for (size_t i = 0; i < n; ++i) {
      if (to[i] < 0) throw ShapeError("resize target " + shape_str(to) + " has a negative dimension");
      if (in[0][i] == 0 && to[i] != 0)
        throw ShapeError("axis " + std::to_string(i) + " is empty and cannot be resized to " + std::to_string(to[i]));
    }
    std::vector<double> scales = resize_scales(a.get_string("scales"), in[0], to);
    if (scales.size() != n) throw ShapeError("resize scales '" + a.get_string("scales") + "' are not one per axis");
    for (size_t i = 0; i < n; ++i)
      if (!(scales[i] > 0) || !std::isfinite(scales[i]))
        throw ShapeError("resize scale of axis " + std::to_string(i) + " is not positive and finite");
    const std::string& roi = a.get_string("roi");
    if (!roi.empty()) {
      if (*cm != CoordinateMode::kTfCropAndResize)
        throw ArgumentError("resize roi is read by coordinate_transformation_mode tf_crop_and_resize only, not " + ctm);
      const std::optional<std::vector<double>> r = parse_doubles(roi);
      if (!r || r->size() != 2 * n)
        throw ShapeError("resize roi needs a start and an end per axis, starts first (" + std::to_string(2 * n) +
                         " values for rank " + std::to_string(n) + "), got " +
                         (r ? std::to_string(r->size()) + " values" : "'" + roi + "'"));
      for (double v : *r)
        if (!std::isfinite(v)) throw ShapeError("resize roi [" + roi + "] is not finite");
    }
    return std::vector<Shape>{to};
  };
  def.infer_dtype = [](std::span<const DType> in, const Attrs& a) {
    const ResizeMode mode = parse_resize_mode(a.get_string("mode")).value_or(ResizeMode::kNearest);
    if (mode != ResizeMode::kNearest && !is_floating(in[0]))
      throw DTypeError(a.get_string("mode") + " resize takes float32 or float64 (cast first), got " +
                       std::string(dtype_name(in[0])));
    return one(in[0]);
  };
  def.doc = "ONNX Resize of every axis to `sizes`: nearest, or (separable) linear or cubic";
  return def;
}

// ONNX Range: start + i * delta for i < n (the frontend computes n).
// Integers are exact (int64 arithmetic, wrapping); floats are computed in
// float64 and rounded once.
OpDef range_op() {
  OpDef def;
  def.name = "range";
  def.attrs = {{"start", AttrType::kScalar, std::nullopt},
               {"delta", AttrType::kScalar, std::nullopt},
               {"n", AttrType::kInt, std::nullopt},
               {"dtype", AttrType::kDType, DType::kFloat32}};
  def.kind = OpKind::kCreation;
  def.infer_shape = [](std::span<const Shape>, const Attrs& a) {
    int64_t n = a.get_int("n");
    if (n < 0) throw ShapeError("range length " + std::to_string(n) + " is negative");
    return std::vector<Shape>{Shape{n}};
  };
  def.infer_dtype = [](std::span<const DType>, const Attrs& a) {
    DType t = a.get_dtype("dtype");
    if (t == DType::kBool) throw DTypeError("range is not defined for bool");
    return one(t);
  };
  def.doc = "start, start + delta, ... (n values): ONNX Range";
  return def;
}

}  // namespace

// ---- pad and resize geometry (runtime/ops/shape_geometry.h) ------------------------------

std::optional<PadMode> parse_pad_mode(std::string_view mode) {
  if (mode == "constant") return PadMode::kConstant;
  if (mode == "reflect") return PadMode::kReflect;
  if (mode == "edge") return PadMode::kEdge;
  if (mode == "wrap") return PadMode::kWrap;
  return std::nullopt;
}

PadAxis pad_axis(int64_t size, int64_t begin, int64_t end) {
  PadAxis a;
  a.crop_begin = std::max<int64_t>(-begin, 0);
  a.kept = size - a.crop_begin - std::max<int64_t>(-end, 0);
  a.pad_begin = std::max<int64_t>(begin, 0);
  a.pad_end = std::max<int64_t>(end, 0);
  return a;
}

std::string pad_axis_error(int64_t size, int64_t begin, int64_t end, PadMode mode) {
  const PadAxis a = pad_axis(size, begin, end);
  if (a.kept < 0)
    return "pads " + std::to_string(begin) + ", " + std::to_string(end) + " crop more than its " +
           std::to_string(size) + " elements";
  const bool pads = a.pad_begin > 0 || a.pad_end > 0;
  if (mode == PadMode::kReflect && pads && (a.pad_begin >= a.kept || a.pad_end >= a.kept))
    return "reflect pads " + std::to_string(a.pad_begin) + ", " + std::to_string(a.pad_end) +
           " must be smaller than the size they reflect (" + std::to_string(a.kept) + ")";
  if ((mode == PadMode::kEdge || mode == PadMode::kWrap) && pads && a.kept == 0)
    return std::string(mode == PadMode::kEdge ? "edge" : "wrap") + " padding of an empty axis";
  return "";
}

std::vector<int64_t> pad_axis_map(const PadAxis& a, PadMode mode) {
  std::vector<int64_t> m(static_cast<size_t>(a.out()));
  for (int64_t j = 0; j < a.out(); ++j) {
    int64_t t = j - a.pad_begin;  // in the cropped axis
    if (t < 0 || t >= a.kept) {
      switch (mode) {
        case PadMode::kConstant: t = -1; break;
        case PadMode::kEdge: t = std::clamp<int64_t>(t, 0, a.kept - 1); break;
        case PadMode::kReflect: t = t < 0 ? -t : 2 * (a.kept - 1) - t; break;
        case PadMode::kWrap: t = ((t % a.kept) + a.kept) % a.kept; break;
      }
    }
    m[static_cast<size_t>(j)] = t < 0 ? -1 : a.crop_begin + t;
  }
  return m;
}

std::optional<ResizeMode> parse_resize_mode(std::string_view s) {
  if (s == "nearest") return ResizeMode::kNearest;
  if (s == "linear") return ResizeMode::kLinear;
  if (s == "cubic") return ResizeMode::kCubic;
  return std::nullopt;
}

std::optional<CoordinateMode> parse_coordinate_mode(std::string_view s) {
  if (s == "half_pixel") return CoordinateMode::kHalfPixel;
  if (s == "half_pixel_symmetric") return CoordinateMode::kHalfPixelSymmetric;
  if (s == "pytorch_half_pixel") return CoordinateMode::kPytorchHalfPixel;
  if (s == "align_corners") return CoordinateMode::kAlignCorners;
  if (s == "asymmetric") return CoordinateMode::kAsymmetric;
  if (s == "tf_half_pixel_for_nn") return CoordinateMode::kTfHalfPixelForNn;
  if (s == "tf_crop_and_resize") return CoordinateMode::kTfCropAndResize;
  return std::nullopt;
}

std::optional<NearestMode> parse_nearest_mode(std::string_view s) {
  if (s == "round_prefer_floor") return NearestMode::kRoundPreferFloor;
  if (s == "round_prefer_ceil") return NearestMode::kRoundPreferCeil;
  if (s == "floor") return NearestMode::kFloor;
  if (s == "ceil") return NearestMode::kCeil;
  return std::nullopt;
}

std::string format_doubles(const std::vector<double>& values) {
  std::string out;
  for (size_t i = 0; i < values.size(); ++i) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", values[i]);  // round-trips exactly
    if (i) out += ',';
    out += buf;
  }
  return out;
}

std::optional<std::vector<double>> parse_doubles(const std::string& spelled) {
  std::vector<double> v;
  const char* p = spelled.c_str();
  while (*p) {
    char* end = nullptr;
    v.push_back(std::strtod(p, &end));
    if (end == p || (*end && *end != ',')) return std::nullopt;
    p = *end == ',' ? end + 1 : end;
  }
  return v;
}

std::vector<double> resize_scales(const std::string& spelled, const std::vector<int64_t>& in,
                                  const std::vector<int64_t>& out) {
  if (!spelled.empty()) return parse_doubles(spelled).value_or(std::vector<double>{});
  std::vector<double> s;
  for (size_t i = 0; i < in.size() && i < out.size(); ++i)
    s.push_back(in[i] == 0 ? 1.0 : static_cast<double>(out[i]) / static_cast<double>(in[i]));
  return s;
}

std::vector<ResizeAxis> resize_axes(const std::vector<int64_t>& in, const std::vector<int64_t>& out,
                                    const std::string& scales, const std::string& roi) {
  const std::vector<double> s = resize_scales(scales, in, out);
  const size_t n = in.size();
  std::vector<double> r(2 * n, 1.0);  // "": the whole input, starts 0 and ends 1
  if (roi.empty()) std::fill(r.begin(), r.begin() + static_cast<std::ptrdiff_t>(n), 0.0);
  else r = parse_doubles(roi).value_or(std::vector<double>{});
  std::vector<ResizeAxis> axes(n);
  for (size_t d = 0; d < n; ++d) axes[d] = {in[d], out[d], s.at(d), r.at(d), r.at(n + d)};
  return axes;
}

double resize_source_coordinate(CoordinateMode m, int64_t x, const ResizeAxis& a) {
  const double xr = static_cast<double>(x), scale = a.scale, in = static_cast<double>(a.in);
  // ONNX's reference divides by the resized length before rounding
  // (in * scale), which differs from `out` when scales rather than sizes
  // are given (align_corners, tf_crop_and_resize).
  const double resized = a.out == 1 ? 1.0 : in * scale;
  switch (m) {
    case CoordinateMode::kHalfPixel: return (xr + 0.5) / scale - 0.5;
    case CoordinateMode::kHalfPixelSymmetric: {
      const double adjustment = static_cast<double>(a.out) / (scale * in);
      const double center = in / 2;
      return center * (1 - adjustment) + (xr + 0.5) / scale - 0.5;
    }
    case CoordinateMode::kPytorchHalfPixel: return a.out > 1 ? (xr + 0.5) / scale - 0.5 : 0.0;
    case CoordinateMode::kAlignCorners: return resized <= 1 ? 0.0 : xr * (in - 1) / (resized - 1);
    case CoordinateMode::kAsymmetric: return xr / scale;
    case CoordinateMode::kTfHalfPixelForNn: return (xr + 0.5) / scale;
    case CoordinateMode::kTfCropAndResize: {
      const double span = a.roi_end - a.roi_start;
      // One output element samples the roi's centre.
      if (resized <= 1) return 0.5 * (a.roi_start + a.roi_end) * (in - 1);
      return xr * span * (in - 1) / (resized - 1) + a.roi_start * (in - 1);
    }
  }
  return xr;
}

namespace {

// tf_crop_and_resize's samples outside the input give the extrapolation value.
bool resize_extrapolates(CoordinateMode m, double coordinate, const ResizeAxis& a) {
  return m == CoordinateMode::kTfCropAndResize && !(coordinate >= 0 && coordinate <= static_cast<double>(a.in - 1));
}

// Keys' cubic convolution kernel at distance t, for t in [0, 1] and in
// [1, 2], written as ONNX's reference writes it.
double cubic_near(double t, double a) { return ((a + 2) * t - (a + 3)) * t * t + 1; }
double cubic_far(double t, double a) { return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a; }

}  // namespace

std::vector<int64_t> resize_nearest_map(CoordinateMode m, NearestMode n, const ResizeAxis& a) {
  std::vector<int64_t> map(static_cast<size_t>(a.out));
  for (int64_t x = 0; x < a.out; ++x) {
    const double c = resize_source_coordinate(m, x, a);
    if (resize_extrapolates(m, c, a)) {
      map[static_cast<size_t>(x)] = -1;
      continue;
    }
    const double f = std::floor(c), r = c - f;
    bool up = false;
    if (r != 0) {
      switch (n) {
        case NearestMode::kRoundPreferFloor: up = r > 0.5; break;
        case NearestMode::kRoundPreferCeil: up = r >= 0.5; break;
        case NearestMode::kFloor: up = false; break;
        case NearestMode::kCeil: up = true; break;
      }
    }
    const double i = std::clamp(f + (up ? 1.0 : 0.0), 0.0, static_cast<double>(a.in - 1));
    map[static_cast<size_t>(x)] = static_cast<int64_t>(i);
  }
  return map;
}

ResizeTaps resize_taps(ResizeMode mode, CoordinateMode m, const ResizeAxis& a, double cubic_a, bool exclude_outside) {
  ResizeTaps t;
  t.width = mode == ResizeMode::kCubic ? 4 : 2;
  const auto out = static_cast<size_t>(a.out), width = static_cast<size_t>(t.width);
  t.index.assign(out * width, 0);
  t.weight.assign(out * width, 0.0);
  t.count.assign(out, 0);
  t.identity = a.in == a.out;
  const double last = static_cast<double>(a.in - 1);
  for (int64_t x = 0; x < a.out; ++x) {
    const auto at = static_cast<size_t>(x) * width;
    int64_t* index = &t.index[at];
    double* weight = &t.weight[at];
    uint8_t& count = t.count[static_cast<size_t>(x)];
    double c = resize_source_coordinate(m, x, a);
    if (resize_extrapolates(m, c, a)) {
      t.extrapolates = true;
      t.identity = false;
      continue;
    }
    if (mode == ResizeMode::kLinear) c = std::clamp(c, 0.0, last);
    const double f = std::floor(c), r = c - f;
    const auto lo = static_cast<int64_t>(f);
    if (r == 0) {
      index[0] = std::clamp<int64_t>(lo, 0, a.in - 1);
      weight[0] = 1;
      count = 1;
      t.identity = t.identity && index[0] == x;
      continue;
    }
    t.identity = false;
    // Neighbours lo + first .. lo + first + width - 1, before clamping.
    const int64_t first = mode == ResizeMode::kCubic ? -1 : 0;
    double w[4];
    if (mode == ResizeMode::kCubic) {
      w[0] = cubic_far(r + 1, cubic_a);
      w[1] = cubic_near(r, cubic_a);
      w[2] = cubic_near(1 - r, cubic_a);
      w[3] = cubic_far((1 - r) + 1, cubic_a);
    } else {
      w[0] = 1 - r;
      w[1] = r;
    }
    if (exclude_outside && mode == ResizeMode::kCubic) {  // linear's neighbours are inside
      double sum = 0;
      for (size_t k = 0; k < width; ++k) {
        const int64_t i = lo + first + static_cast<int64_t>(k);
        if (i < 0 || i >= a.in) w[k] = 0;
        sum += w[k];
      }
      for (size_t k = 0; k < width; ++k) w[k] /= sum;
    }
    for (size_t k = 0; k < width; ++k) {
      if (w[k] == 0) continue;
      index[count] = std::clamp<int64_t>(lo + first + static_cast<int64_t>(k), 0, a.in - 1);
      weight[count] = w[k];
      ++count;
    }
  }
  return t;
}

void register_movement_ops(OpRegistry& r) {
  r.add(reshape_op());
  r.add(permute_op());
  r.add(broadcast_to_op());
  r.add(slice_op());
  r.add(concat_op());
  r.add(pad_op());
  r.add(resize_op());
  r.add(range_op());
}

}  // namespace wok::ops
