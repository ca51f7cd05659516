// Shape and movement functions beyond the primitives of frontend/ops.h, and
// the reductions written on top of sum/max (ONNX names and semantics,
// PyTorch's where they have one). Most are compositions of the primitives,
// so the JIT sees their parts:
//   squeeze, unsqueeze, flatten            reshape (no copy)
//   expand, tile                           broadcast_to (+ reshape): one copy
//   split                                  one slice per piece
//   flip                                   one slice with negative steps
//   tril, triu                             where(col <= row + k, x, 0), fused
//                                          with its neighbours by the JIT
//   depth_to_space, space_to_depth         reshape, permute, reshape
//   logsumexp and the reduce_* functions   sum, max and elementwise ops
// pad, resize and range are ops of their own with precompiled CPU kernels
// (runtime/kernels/cpu/movement_kernels.cpp, shape_kernels.cpp); on a
// device without a pad kernel, pad is composed of slices and concats.
#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "wok/frontend/tensor.h"

namespace wok {

// ---- reshapes ---------------------------------------------------------------------------

// Removes the given axes, which must have size 1; with no axes, every dim
// of size 1 (ONNX Squeeze).
Tensor squeeze(const Tensor& x, std::vector<int64_t> axes = {});
// Inserts dims of size 1 at `axes`, positions in the result (ONNX
// Unsqueeze): unsqueeze(x[2, 3], {0, -1}) is [1, 2, 3, 1].
Tensor unsqueeze(const Tensor& x, std::vector<int64_t> axes);
// 2-D: [prod(dims before axis), prod(dims from axis)] (ONNX Flatten; axis
// in [-rank, rank]).
Tensor flatten(const Tensor& x, int64_t axis = 1);

// ---- copies -------------------------------------------------------------------------------

// Broadcasts x and `shape` together (ONNX Expand, bidirectional: a dim of
// 1 in `shape` keeps x's dim), unlike broadcast_to, which needs x to fit.
Tensor expand(const Tensor& x, Shape shape);
// Pieces along `axis` of the given sizes, which must sum to its size (ONNX
// Split with `split`).
std::vector<Tensor> split(const Tensor& x, const std::vector<int64_t>& sizes, int64_t axis = 0);
std::vector<Tensor> split(const Tensor& x, std::initializer_list<int64_t> sizes, int64_t axis = 0);
// `num_outputs` pieces of ceil(n / num_outputs), the last one smaller when
// they do not divide n (ONNX Split with num_outputs; [2, 2, 2, 1] for 7 in
// 4). An error when even the last piece would have a negative size.
std::vector<Tensor> split(const Tensor& x, int64_t num_outputs, int64_t axis = 0);
// x repeated repeats[i] times along axis i (ONNX Tile). As in NumPy, a
// shorter `repeats` is padded with leading 1s, a longer one gives x leading
// dims of 1.
Tensor tile(const Tensor& x, std::vector<int64_t> repeats);
// Reverses the order along `axes` (all axes when empty; NumPy flip).
Tensor flip(const Tensor& x, std::vector<int64_t> axes = {});
// Lower / upper triangle of the last two dims, batched over the others
// (ONNX Trilu, PyTorch tril/triu): tril keeps x[..., i, j] where
// j <= i + k, triu where j >= i + k; the rest is 0.
Tensor tril(const Tensor& x, int64_t k = 0);
Tensor triu(const Tensor& x, int64_t k = 0);

// ONNX Pad. `pads` is ONNX's order, [begin_0, ..., begin_{r-1}, end_0, ...,
// end_{r-1}]; negative pads crop (first: the modes then read the cropped
// tensor). Modes: "constant" (`value`, cast to x's dtype), "reflect"
// (mirrored without repeating the edge: pads must be smaller than the
// axis), "edge" (the edge repeated), "wrap" (periodic).
Tensor pad(const Tensor& x, std::vector<int64_t> pads, std::string_view mode = "constant", Scalar value = Scalar(0));

// ONNX Range: start, start + delta, ... while below limit (above it for a
// negative delta): max(ceil((limit - start) / delta), 0) values. start,
// limit and delta are first converted to `dtype`; integer dtypes are exact
// (the count too), floating ones compute each value in float64 and round it
// once. The default dtype is int64 when all three are integers, else
// float32 (torch.arange). `arange` (frontend/creation.h) is this in float64
// cast to its dtype.
Tensor range(Scalar start, Scalar limit, Scalar delta = Scalar(int64_t{1}), std::optional<DType> dtype = std::nullopt,
             Device device = Device::cpu());

// ONNX DepthToSpace on [N, C, H, W]: [N, C / b^2, H * b, W * b]. "DCR"
// takes the block offsets from the outer part of C, "CRD" from the inner.
Tensor depth_to_space(const Tensor& x, int64_t blocksize, std::string_view mode = "DCR");
// ONNX SpaceToDepth, the inverse of depth_to_space in DCR mode.
Tensor space_to_depth(const Tensor& x, int64_t blocksize);

// ONNX Resize of every axis (scales: one per axis, output size
// floor(size * scale); resize_to: the output shape), with ONNX's attributes
// and defaults (opset 11-17):
//   mode                  "nearest"; "linear" (N-linear) or "cubic"
//                         (N-cubic), both separable and float dtypes only
//   coordinate_transformation_mode
//                         "half_pixel", "half_pixel_symmetric",
//                         "pytorch_half_pixel", "align_corners",
//                         "asymmetric", "tf_half_pixel_for_nn",
//                         "tf_crop_and_resize"
//   nearest_mode          "round_prefer_floor", "round_prefer_ceil",
//                         "floor", "ceil"
//   cubic_coeff_a         Keys' a (-0.5 is TensorFlow's, -0.75 PyTorch's)
//   exclude_outside       cubic: neighbours outside the input weigh 0, the
//                         others renormalized (else they repeat the edge)
//   roi                   tf_crop_and_resize's crop, [starts..., ends...] in
//                         coordinates normalized to [0, 1] (a start above its
//                         end flips the axis; beyond [0, 1] extrapolates);
//                         empty: the whole input
//   extrapolation_value   tf_crop_and_resize's output where the crop samples
//                         outside the input (along any axis)
// Linear samples clamp to the edge (ONNX's edge padding). CPU only. Not
// supported: antialias, axes, keep_aspect_ratio_policy (opset 18).
//   wok::resize(img, {1, 1, 2, 2}, {.mode = "cubic", .cubic_coeff_a = -0.5, .exclude_outside = true});
//   wok::resize_to(img, {1, 3, 64, 64}, {.mode = "linear", .coordinate_transformation_mode = "tf_crop_and_resize",
//                                        .roi = {0, 0, 0.25, 0.25, 1, 1, 0.75, 0.75}});
struct ResizeOptions {
  std::string mode = "nearest";
  std::string coordinate_transformation_mode = "half_pixel";
  std::string nearest_mode = "round_prefer_floor";
  double cubic_coeff_a = -0.75;
  bool exclude_outside = false;
  std::vector<double> roi = {};
  double extrapolation_value = 0.0;
};
Tensor resize(const Tensor& x, const std::vector<double>& scales, const ResizeOptions& options);
Tensor resize_to(const Tensor& x, Shape sizes, const ResizeOptions& options);
// The same with the first three options, the others at their defaults.
Tensor resize(const Tensor& x, const std::vector<double>& scales, std::string_view mode = "nearest",
              std::string_view coordinate_transformation_mode = "half_pixel",
              std::string_view nearest_mode = "round_prefer_floor");
Tensor resize_to(const Tensor& x, Shape sizes, std::string_view mode = "nearest",
                 std::string_view coordinate_transformation_mode = "half_pixel",
                 std::string_view nearest_mode = "round_prefer_floor");

// ---- reductions ----------------------------------------------------------------------------
// `axes` as in sum: negative allowed, empty means every axis. Over zero
// elements each gives the value its formula gives there (docs/numerics.md).

// log(sum(exp(x))), computed as m + log(sum(exp(x - m))) with m the
// maximum (0 where the maximum is infinite or nan), so large inputs do not
// overflow (torch.logsumexp, ONNX ReduceLogSumExp). Floating result;
// -inf over zero elements.
Tensor logsumexp(const Tensor& x, std::vector<int64_t> axes = {}, bool keepdims = false);
// torch.linalg.vector_norm: ord 2 (the default) sqrt(sum(x^2)), 1 sum|x|,
// inf max|x|, -inf min|x|, 0 the count of non-zeros, else
// sum(|x|^ord)^(1/ord). Floating result.
Tensor vector_norm(const Tensor& x, double ord = 2, std::vector<int64_t> axes = {}, bool keepdims = false);
// ONNX's reductions. reduce_l1 (sum |x|) and reduce_sum_square (sum x^2)
// keep integers integral, accumulating in int64 as sum does (bool counts
// its trues); reduce_l2 (sqrt(sum x^2)) and reduce_log_sum (log(sum x))
// compute in floating point; reduce_log_sum_exp is logsumexp.
Tensor reduce_l1(const Tensor& x, std::vector<int64_t> axes = {}, bool keepdims = false);
Tensor reduce_l2(const Tensor& x, std::vector<int64_t> axes = {}, bool keepdims = false);
Tensor reduce_sum_square(const Tensor& x, std::vector<int64_t> axes = {}, bool keepdims = false);
Tensor reduce_log_sum(const Tensor& x, std::vector<int64_t> axes = {}, bool keepdims = false);
Tensor reduce_log_sum_exp(const Tensor& x, std::vector<int64_t> axes = {}, bool keepdims = false);

namespace detail {
// pad composed of slice, broadcast_to, full and concat: what pad records on
// a device with no pad kernel. For tests, which compare it with the kernel.
Tensor pad_composed(const Tensor& x, const std::vector<int64_t>& pads, std::string_view mode, Scalar value);
}  // namespace detail

}  // namespace wok
