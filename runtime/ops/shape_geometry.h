// Index arithmetic of pad and resize, shared by their shape rules
// (runtime/ops/movement_ops.cpp, where these are defined) and their
// precompiled kernels (runtime/kernels/cpu/). Compiled once, in the
// baseline build: the kernels call them to build per-axis index maps, once
// per axis and call, never per element.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace wok::ops {

// ---- pad (ONNX Pad) ---------------------------------------------------------------------

enum class PadMode : uint8_t { kConstant, kReflect, kEdge, kWrap };
std::optional<PadMode> parse_pad_mode(std::string_view mode);

// One axis of a pad: `begin` and `end` (ONNX's pads for this axis) crop
// where negative and pad where positive. Negative pads crop first; the
// padding modes then read the cropped input (as onnxruntime does).
struct PadAxis {
  int64_t crop_begin = 0, kept = 0, pad_begin = 0, pad_end = 0;
  int64_t out() const { return kept + pad_begin + pad_end; }
};
PadAxis pad_axis(int64_t size, int64_t begin, int64_t end);
// Why this axis cannot be padded in `mode` ("" when it can): more cropped
// than there is, reflect pads not below the kept size, edge or wrap pads of
// an empty axis.
std::string pad_axis_error(int64_t size, int64_t begin, int64_t end, PadMode mode);
// Input index per output index along the axis; -1 where the constant goes.
std::vector<int64_t> pad_axis_map(const PadAxis& a, PadMode mode);

// ---- resize (ONNX Resize) -------------------------------------------------------------------

enum class ResizeMode : uint8_t { kNearest, kLinear, kCubic };
enum class CoordinateMode : uint8_t {
  kHalfPixel,
  kHalfPixelSymmetric,
  kPytorchHalfPixel,
  kAlignCorners,
  kAsymmetric,
  kTfHalfPixelForNn,
  kTfCropAndResize,
};
enum class NearestMode : uint8_t { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil };
std::optional<ResizeMode> parse_resize_mode(std::string_view s);
std::optional<CoordinateMode> parse_coordinate_mode(std::string_view s);
std::optional<NearestMode> parse_nearest_mode(std::string_view s);

// How the op's "scales" and "roi" attributes spell a list of numbers: one
// exact decimal each ("%.17g", which round-trips), comma-separated; "" for
// none. parse_doubles is the inverse (nullopt where `spelled` is not one).
std::string format_doubles(const std::vector<double>& values);
std::optional<std::vector<double>> parse_doubles(const std::string& spelled);

// The scale of each axis: parsed from `spelled` ("" when the caller gave
// output sizes: then out / in); {} where `spelled` does not parse.
std::vector<double> resize_scales(const std::string& spelled, const std::vector<int64_t>& in,
                                  const std::vector<int64_t>& out);
// One axis of a resize: `in` elements to `out`, with the axis's scale and
// its roi (read by tf_crop_and_resize only).
struct ResizeAxis {
  int64_t in = 0, out = 0;
  double scale = 1;
  double roi_start = 0, roi_end = 1;
};
// Every axis, from the shapes and the op's "scales" and "roi" attributes
// (the roi as ONNX orders it, [starts..., ends...]; "" for the whole input),
// which the op's shape rule has checked.
std::vector<ResizeAxis> resize_axes(const std::vector<int64_t>& in, const std::vector<int64_t>& out,
                                    const std::string& scales, const std::string& roi);

// The input coordinate of output index x along the axis (ONNX's
// x_original). Where tf_crop_and_resize puts it outside [0, in - 1], the
// output is the extrapolation value.
double resize_source_coordinate(CoordinateMode m, int64_t x, const ResizeAxis& a);
// Input index per output index for nearest mode (clamped into range), or
// -1 where the output is the extrapolation value.
std::vector<int64_t> resize_nearest_map(CoordinateMode m, NearestMode n, const ResizeAxis& a);

// How one axis of a linear or cubic resize reads its input: output index x
// is the sum, for k < count[x], of weight[x * width + k] * in[index[x * width
// + k]] (taps of weight 0 are left out), or the extrapolation value where
// count[x] is 0. A source coordinate that is an integer reads that element
// alone, with weight 1.
//   linear: the two neighbours of the coordinate clamped into [0, in - 1]
//           (ONNX's edge padding);
//   cubic:  the four neighbours of the coordinate, their indices clamped
//           into the axis (edge padding), weighted by Keys' cubic
//           convolution kernel with a = cubic_a (ONNX's cubic_coeff_a);
//           with exclude_outside, neighbours outside the axis weigh 0 and
//           the others are renormalized to sum to 1.
struct ResizeTaps {
  int64_t width = 0;  // taps per output index: 2 (linear) or 4 (cubic)
  std::vector<int64_t> index;
  std::vector<double> weight;
  std::vector<uint8_t> count;
  bool identity = false;      // in == out and each x reads in[x] alone
  bool extrapolates = false;  // some count[x] is 0
};
ResizeTaps resize_taps(ResizeMode mode, CoordinateMode m, const ResizeAxis& a, double cubic_a, bool exclude_outside);

}  // namespace wok::ops
