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

enum class ResizeMode : uint8_t { kNearest, kLinear };
enum class CoordinateMode : uint8_t {
  kHalfPixel,
  kHalfPixelSymmetric,
  kPytorchHalfPixel,
  kAlignCorners,
  kAsymmetric,
  kTfHalfPixelForNn,
};
enum class NearestMode : uint8_t { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil };
std::optional<ResizeMode> parse_resize_mode(std::string_view s);
std::optional<CoordinateMode> parse_coordinate_mode(std::string_view s);
std::optional<NearestMode> parse_nearest_mode(std::string_view s);

// Per-axis scales as the op's "scales" attribute spells them: "" when the
// caller gave output sizes (each scale is then out / in), else one exact
// decimal per axis, comma-separated.
std::string format_scales(const std::vector<double>& scales);
// The scale of each axis: parsed from `spelled`, or out / in.
std::vector<double> resize_scales(const std::string& spelled, const std::vector<int64_t>& in,
                                  const std::vector<int64_t>& out);

// The input coordinate of output index x along an axis of `in` elements
// resized to `out` with `scale` (ONNX's x_original).
double resize_source_coordinate(CoordinateMode m, int64_t x, double scale, int64_t in, int64_t out);
// Input index per output index for nearest mode (clamped into range).
std::vector<int64_t> resize_nearest_map(CoordinateMode m, NearestMode n, double scale, int64_t in, int64_t out);
// For linear mode: out[x] = (1 - w[x]) * in[lo[x]] + w[x] * in[hi[x]], the
// source coordinate clamped into [0, in - 1] (ONNX's edge padding).
struct LinearTaps {
  std::vector<int64_t> lo, hi;
  std::vector<double> w;
  bool identity = false;  // lo[x] == x and w[x] == 0 everywhere (in == out)
};
LinearTaps resize_linear_taps(CoordinateMode m, double scale, int64_t in, int64_t out);

}  // namespace wok::ops
