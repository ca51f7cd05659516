#include "wok/frontend/shape_ops.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "wok/frontend/creation.h"
#include "wok/frontend/dispatch.h"
#include "wok/frontend/ops.h"
#include "wok/runtime/ops/shape_geometry.h"

namespace wok {

using detail::positional_attrs;
using detail::record1;

namespace {

std::string described(const Tensor& x) { return std::string(dtype_name(x.dtype())) + shape_str(x.shape()); }

void require_defined(const char* op, const Tensor& x) {
  if (!x.defined()) throw ArgumentError(std::string("wok::") + op + ": input is an undefined tensor");
}

// Maps `axis` into [0, ndim), naming the op and the input when it is out
// of range.
int64_t axis_in(const char* op, const Tensor& x, int64_t axis, int ndim) {
  std::optional<int> a = normalize_axis(axis, ndim);
  if (!a)
    throw ShapeError(std::string("wok::") + op + ": axis " + std::to_string(axis) + " is out of range for rank " +
                     std::to_string(ndim) + " (input " + described(x) + ")");
  return *a;
}

// Normalized, sorted axes without repeats.
std::vector<int64_t> distinct_axes(const char* op, const Tensor& x, std::vector<int64_t> axes, int ndim) {
  for (int64_t& a : axes) a = axis_in(op, x, a, ndim);
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end())
    throw ShapeError(std::string("wok::") + op + ": an axis is repeated (input " + described(x) + ")");
  return axes;
}

Tensor as_float(const Tensor& x) { return x.astype(float_result_type(x.dtype())); }

// `shape` with dim `axis` set to `size`.
Shape with_dim(Shape shape, int64_t axis, int64_t size) {
  shape[static_cast<size_t>(axis)] = size;
  return shape;
}

// Range on the host (the op's kernel is a CPU one), moved where it is used.
Tensor range_values(Scalar start, Scalar delta, int64_t n, DType dtype, Device device) {
  static const RegisteredOp& op = WOK_BUILTIN_OP("range");
  Tensor t = record1(op, {}, positional_attrs(op, {start, delta, n, dtype}));
  return device.is_cpu() ? t : t.to(device);
}

Tensor zero_like_scalar(const Tensor& x) { return full({}, Scalar(0).cast(x.dtype()), x.device()); }

Tensor triangle(const char* op, const Tensor& x, int64_t k, bool lower) {
  require_defined(op, x);
  if (x.ndim() < 2)
    throw ShapeError(std::string("wok::") + op + ": needs at least 2 dims, got " + described(x));
  const int64_t H = x.shape()[x.ndim() - 2], W = x.shape()[x.ndim() - 1];
  if (x.numel() == 0) return x;
  // Past these bounds every element is kept (or none is).
  k = std::clamp<int64_t>(k, -H, W);
  if (lower ? k >= W - 1 : k <= -(H - 1)) return x;
  if (lower ? k < -(H - 1) : k > W - 1) return full(x.shape(), Scalar(0).cast(x.dtype()), x.device());
  // rows[i] = i + k against cols[j] = j: one fused elementwise kernel that
  // reads x and two short index vectors.
  const DType it = H + W < (int64_t{1} << 30) ? DType::kInt32 : DType::kInt64;
  Tensor rows = range_values(Scalar(k).cast(it), Scalar(1).cast(it), H, it, x.device()).reshape({H, 1});
  Tensor cols = range_values(Scalar(0).cast(it), Scalar(1).cast(it), W, it, x.device()).reshape({1, W});
  return where(lower ? le(cols, rows) : ge(cols, rows), x, zero_like_scalar(x));
}

}  // namespace

// ---- reshapes ---------------------------------------------------------------------------

Tensor squeeze(const Tensor& x, std::vector<int64_t> axes) {
  WOK_CALLER_SCOPE();
  require_defined("squeeze", x);
  Shape out;
  if (axes.empty()) {
    for (int64_t d : x.shape())
      if (d != 1) out.push_back(d);
    return reshape(x, std::move(out));
  }
  axes = distinct_axes("squeeze", x, std::move(axes), x.ndim());
  for (int64_t a : axes)
    if (x.shape()[a] != 1)
      throw ShapeError("wok::squeeze: axis " + std::to_string(a) + " has size " + std::to_string(x.shape()[a]) +
                       ", not 1 (input " + described(x) + ")");
  for (int i = 0; i < x.ndim(); ++i)
    if (!std::binary_search(axes.begin(), axes.end(), i)) out.push_back(x.shape()[i]);
  return reshape(x, std::move(out));
}

Tensor unsqueeze(const Tensor& x, std::vector<int64_t> axes) {
  WOK_CALLER_SCOPE();
  require_defined("unsqueeze", x);
  const int rank = x.ndim() + static_cast<int>(axes.size());
  axes = distinct_axes("unsqueeze", x, std::move(axes), rank);
  Shape out;
  size_t next = 0;
  for (int i = 0; i < rank; ++i) {
    if (std::binary_search(axes.begin(), axes.end(), i)) out.push_back(1);
    else out.push_back(x.shape()[next++]);
  }
  return reshape(x, std::move(out));
}

Tensor flatten(const Tensor& x, int64_t axis) {
  WOK_CALLER_SCOPE();
  require_defined("flatten", x);
  const int64_t r = x.ndim();
  if (axis < -r || axis > r)
    throw ShapeError("wok::flatten: axis " + std::to_string(axis) + " is outside [-" + std::to_string(r) + ", " +
                     std::to_string(r) + "] (input " + described(x) + ")");
  if (axis < 0) axis += r;
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < r; ++i) (i < axis ? outer : inner) *= x.shape()[i];
  return reshape(x, {outer, inner});
}

// ---- copies -------------------------------------------------------------------------------

Tensor expand(const Tensor& x, Shape shape) {
  WOK_CALLER_SCOPE();
  require_defined("expand", x);
  for (int64_t d : shape)
    if (d < 0) throw ShapeError("wok::expand: shape " + shape_str(shape) + " has a negative dimension");
  std::optional<Shape> out = broadcast_shapes(x.shape(), shape);
  if (!out)
    throw ShapeError("wok::expand: " + described(x) + " and shape " + shape_str(shape) +
                     " cannot be broadcast together");
  return broadcast_to(x, std::move(*out));
}

std::vector<Tensor> split(const Tensor& x, const std::vector<int64_t>& sizes, int64_t axis) {
  WOK_CALLER_SCOPE();
  require_defined("split", x);
  const int64_t a = axis_in("split", x, axis, x.ndim());
  int64_t total = 0;
  for (int64_t s : sizes) {
    if (s < 0) throw ShapeError("wok::split: sizes " + shape_str(sizes) + " hold a negative size");
    total += s;
  }
  if (total != x.shape()[a])
    throw ShapeError("wok::split: sizes " + shape_str(sizes) + " sum to " + std::to_string(total) + ", not to the " +
                     std::to_string(x.shape()[a]) + " of axis " + std::to_string(a) + " (input " + described(x) + ")");
  std::vector<Tensor> out;
  out.reserve(sizes.size());
  int64_t at = 0;
  for (int64_t s : sizes) {
    out.push_back(slice(x, a, at, at + s));
    at += s;
  }
  return out;
}

std::vector<Tensor> split(const Tensor& x, std::initializer_list<int64_t> sizes, int64_t axis) {
  WOK_CALLER_SCOPE();
  return split(x, std::vector<int64_t>(sizes), axis);
}

std::vector<Tensor> split(const Tensor& x, int64_t num_outputs, int64_t axis) {
  WOK_CALLER_SCOPE();
  require_defined("split", x);
  const int64_t a = axis_in("split", x, axis, x.ndim());
  if (num_outputs < 1) throw ShapeError("wok::split: num_outputs " + std::to_string(num_outputs) + " is not positive");
  const int64_t n = x.shape()[a];
  const int64_t chunk = (n + num_outputs - 1) / num_outputs;
  const int64_t last = n - chunk * (num_outputs - 1);
  if (last < 0)
    throw ShapeError("wok::split: " + std::to_string(n) + " elements of axis " + std::to_string(a) +
                     " do not make " + std::to_string(num_outputs) + " pieces of " + std::to_string(chunk) +
                     " (the last would hold " + std::to_string(last) + ")");
  std::vector<int64_t> sizes(static_cast<size_t>(num_outputs), chunk);
  sizes.back() = last;
  return split(x, sizes, a);
}

Tensor tile(const Tensor& x, std::vector<int64_t> repeats) {
  WOK_CALLER_SCOPE();
  require_defined("tile", x);
  for (int64_t r : repeats)
    if (r < 0) throw ShapeError("wok::tile: repeats " + shape_str(repeats) + " hold a negative count");
  Shape dims = x.shape();
  while (dims.size() < repeats.size()) dims.insert(dims.begin(), 1);
  while (repeats.size() < dims.size()) repeats.insert(repeats.begin(), 1);
  // x as [.., 1, d, ..] broadcast to [.., r, d, ..]: one copy, then a view.
  // Dims repeated once, or of size 1, need no dim of their own.
  Shape view, target, out;
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t d = dims[i], r = repeats[i];
    if (r != 1 && d != 1) {
      view.push_back(1);
      target.push_back(r);
    }
    view.push_back(d);
    target.push_back(d == 1 ? r : d);
    out.push_back(d * r);
  }
  return reshape(broadcast_to(reshape(x, view), target), out);
}

Tensor flip(const Tensor& x, std::vector<int64_t> axes) {
  WOK_CALLER_SCOPE();
  require_defined("flip", x);
  static const RegisteredOp& op = WOK_BUILTIN_OP("slice");
  if (axes.empty())
    for (int i = 0; i < x.ndim(); ++i) axes.push_back(i);
  axes = distinct_axes("flip", x, std::move(axes), x.ndim());
  Shape starts(x.ndim(), 0), stops = x.shape(), steps(x.ndim(), 1);
  bool moves = false;
  for (int64_t a : axes) {
    const int64_t n = x.shape()[a];
    if (n <= 1) continue;
    starts[a] = n - 1;
    stops[a] = -1;
    steps[a] = -1;
    moves = true;
  }
  if (!moves) return x;
  return record1(op, {x}, positional_attrs(op, {std::move(starts), std::move(stops), std::move(steps)}));
}

Tensor tril(const Tensor& x, int64_t k) {
  WOK_CALLER_SCOPE();
  return triangle("tril", x, k, true);
}

Tensor triu(const Tensor& x, int64_t k) {
  WOK_CALLER_SCOPE();
  return triangle("triu", x, k, false);
}

// ---- pad --------------------------------------------------------------------------------------

namespace {

// The pads and mode checked as the op's shape rule checks them, so that the
// composed path reports the same errors.
ops::PadMode checked_pad(const Tensor& x, const std::vector<int64_t>& pads, std::string_view mode) {
  std::optional<ops::PadMode> m = ops::parse_pad_mode(mode);
  if (!m)
    throw ArgumentError("wok::pad: mode '" + std::string(mode) + "' is not one of constant, reflect, edge, wrap");
  const size_t n = static_cast<size_t>(x.ndim());
  if (pads.size() != 2 * n)
    throw ShapeError("wok::pad: needs 2 pads per axis, begins then ends (" + std::to_string(2 * n) + " for " +
                     described(x) + "), got " + shape_str(pads));
  for (size_t i = 0; i < n; ++i) {
    std::string why = ops::pad_axis_error(x.shape()[i], pads[i], pads[i + n], *m);
    if (!why.empty())
      throw ShapeError("wok::pad: axis " + std::to_string(i) + ": " + why + " (input " + described(x) + ")");
  }
  return *m;
}

}  // namespace

Tensor pad(const Tensor& x, std::vector<int64_t> pads, std::string_view mode, Scalar value) {
  WOK_CALLER_SCOPE();
  require_defined("pad", x);
  static const RegisteredOp& op = WOK_BUILTIN_OP("pad");
  checked_pad(x, pads, mode);
  if (std::all_of(pads.begin(), pads.end(), [](int64_t p) { return p == 0; })) return x;
  if (!op.kernel(x.device().type)) return detail::pad_composed(x, pads, mode, value);
  return record1(op, {x}, positional_attrs(op, {std::move(pads), std::string(mode), value.cast(x.dtype())}));
}

Tensor detail::pad_composed(const Tensor& x, const std::vector<int64_t>& pads, std::string_view mode, Scalar value) {
  WOK_CALLER_SCOPE();
  require_defined("pad", x);
  const ops::PadMode m = checked_pad(x, pads, mode);
  const int64_t r = x.ndim();
  Tensor y = x;
  for (int64_t a = 0; a < r; ++a) {
    const ops::PadAxis p = ops::pad_axis(x.shape()[a], pads[a], pads[a + r]);
    if (p.kept != x.shape()[a]) y = slice(y, a, p.crop_begin, p.crop_begin + p.kept);
    if (p.pad_begin == 0 && p.pad_end == 0) continue;
    const int64_t n = p.kept, pb = p.pad_begin, pe = p.pad_end;
    Tensor left, right;
    switch (m) {
      case ops::PadMode::kConstant: {
        const Scalar v = value.cast(x.dtype());
        if (pb) left = full(with_dim(y.shape(), a, pb), v, x.device());
        if (pe) right = full(with_dim(y.shape(), a, pe), v, x.device());
        break;
      }
      case ops::PadMode::kEdge:
        if (pb) left = broadcast_to(slice(y, a, 0, 1), with_dim(y.shape(), a, pb));
        if (pe) right = broadcast_to(slice(y, a, n - 1, n), with_dim(y.shape(), a, pe));
        break;
      case ops::PadMode::kReflect:  // pb, pe < n
        if (pb) left = slice(y, a, pb, 0, -1);
        if (pe) right = slice(y, a, n - 2, n - 2 - pe >= 0 ? std::optional<int64_t>(n - 2 - pe) : std::nullopt, -1);
        break;
      case ops::PadMode::kWrap:
        if (pb <= n && pe <= n) {
          if (pb) left = slice(y, a, n - pb, n);
          if (pe) right = slice(y, a, 0, pe);
        } else {  // several periods: copies of y, then the window
          const int64_t before = (pb + n - 1) / n, after = (pe + n - 1) / n;
          std::vector<Tensor> copies(static_cast<size_t>(before + 1 + after), y);
          y = slice(concat(copies, a), a, before * n - pb, (before + 1) * n + pe);
          continue;
        }
        break;
    }
    std::vector<Tensor> parts;
    if (left.defined()) parts.push_back(left);
    parts.push_back(y);
    if (right.defined()) parts.push_back(right);
    y = concat(parts, a);
  }
  return y;
}

// ---- range ------------------------------------------------------------------------------------

Tensor range(Scalar start, Scalar limit, Scalar delta, std::optional<DType> dtype, Device device) {
  WOK_CALLER_SCOPE();
  auto integral = [](const Scalar& s) { return !is_floating(s.dtype()); };
  const DType t = dtype.value_or(integral(start) && integral(limit) && integral(delta) ? DType::kInt64
                                                                                      : DType::kFloat32);
  if (t == DType::kBool) throw DTypeError("wok::range: bool has no ranges");
  const Scalar s = start.cast(t), l = limit.cast(t), d = delta.cast(t);
  int64_t n = 0;
  if (is_integral(t)) {
    const __int128 a = s.to<int64_t>(), b = l.to<int64_t>(), step = d.to<int64_t>();
    if (step == 0) throw ArgumentError("wok::range: delta must not be 0");
    const __int128 span = b - a;
    // ceil(span / step), rounding toward +inf for either sign.
    __int128 q = span / step;
    if (span % step != 0 && ((span < 0) == (step < 0))) ++q;
    n = static_cast<int64_t>(std::max<__int128>(q, 0));
  } else {
    const double a = s.as_double(), b = l.as_double(), step = d.as_double();
    if (step == 0 || !std::isfinite(a) || !std::isfinite(b) || !std::isfinite(step))
      throw ArgumentError("wok::range: start, limit and delta must be finite and delta non-zero");
    const double c = std::ceil((b - a) / step);
    if (!(c < 0x1p62)) throw ArgumentError("wok::range: " + std::to_string(c) + " values are too many");
    n = std::max<int64_t>(0, static_cast<int64_t>(c));
  }
  return range_values(s, d, n, t, device);
}

// ---- space and depth ----------------------------------------------------------------------------

Tensor depth_to_space(const Tensor& x, int64_t blocksize, std::string_view mode) {
  WOK_CALLER_SCOPE();
  require_defined("depth_to_space", x);
  const int64_t b = blocksize;
  if (x.ndim() != 4) throw ShapeError("wok::depth_to_space: needs [N, C, H, W], got " + described(x));
  if (b < 1) throw ShapeError("wok::depth_to_space: blocksize " + std::to_string(b) + " is not positive");
  if (mode != "DCR" && mode != "CRD")
    throw ArgumentError("wok::depth_to_space: mode '" + std::string(mode) + "' is not DCR or CRD");
  const int64_t N = x.shape()[0], C = x.shape()[1], H = x.shape()[2], W = x.shape()[3];
  if (C % (b * b) != 0)
    throw ShapeError("wok::depth_to_space: channels " + std::to_string(C) + " are not a multiple of blocksize^2 = " +
                     std::to_string(b * b) + " (input " + described(x) + ")");
  const int64_t c = C / (b * b);
  Tensor y = mode == "DCR" ? x.reshape({N, b, b, c, H, W}).permute({0, 3, 4, 1, 5, 2})
                           : x.reshape({N, c, b, b, H, W}).permute({0, 1, 4, 2, 5, 3});
  return y.reshape({N, c, H * b, W * b});
}

Tensor space_to_depth(const Tensor& x, int64_t blocksize) {
  WOK_CALLER_SCOPE();
  require_defined("space_to_depth", x);
  const int64_t b = blocksize;
  if (x.ndim() != 4) throw ShapeError("wok::space_to_depth: needs [N, C, H, W], got " + described(x));
  if (b < 1) throw ShapeError("wok::space_to_depth: blocksize " + std::to_string(b) + " is not positive");
  const int64_t N = x.shape()[0], C = x.shape()[1], H = x.shape()[2], W = x.shape()[3];
  if (H % b != 0 || W % b != 0)
    throw ShapeError("wok::space_to_depth: spatial size " + std::to_string(H) + "x" + std::to_string(W) +
                     " is not a multiple of blocksize " + std::to_string(b) + " (input " + described(x) + ")");
  return x.reshape({N, C, H / b, b, W / b, b}).permute({0, 3, 5, 1, 2, 4}).reshape({N, C * b * b, H / b, W / b});
}

// ---- resize ---------------------------------------------------------------------------------------

namespace {

Tensor record_resize(const Tensor& x, Shape sizes, std::string scales, const ResizeOptions& o) {
  static const RegisteredOp& op = WOK_BUILTIN_OP("resize");
  return record1(op, {x},
                 positional_attrs(op, {std::move(sizes), std::move(scales), o.mode, o.coordinate_transformation_mode,
                                       o.nearest_mode, o.cubic_coeff_a, o.exclude_outside, ops::format_doubles(o.roi),
                                       o.extrapolation_value}));
}

ResizeOptions resize_options(std::string_view mode, std::string_view coordinate_transformation_mode,
                             std::string_view nearest_mode) {
  ResizeOptions o;
  o.mode = mode;
  o.coordinate_transformation_mode = coordinate_transformation_mode;
  o.nearest_mode = nearest_mode;
  return o;
}

}  // namespace

Tensor resize(const Tensor& x, const std::vector<double>& scales, const ResizeOptions& options) {
  WOK_CALLER_SCOPE();
  require_defined("resize", x);
  if (static_cast<int>(scales.size()) != x.ndim())
    throw ShapeError("wok::resize: needs one scale per axis, got " + std::to_string(scales.size()) + " for " +
                     described(x));
  Shape sizes;
  for (size_t i = 0; i < scales.size(); ++i) {
    if (!(scales[i] > 0) || !std::isfinite(scales[i]))
      throw ShapeError("wok::resize: scale " + std::to_string(scales[i]) + " of axis " + std::to_string(i) +
                       " is not positive and finite");
    sizes.push_back(static_cast<int64_t>(std::floor(static_cast<double>(x.shape()[i]) * scales[i])));
  }
  return record_resize(x, std::move(sizes), ops::format_doubles(scales), options);
}

Tensor resize_to(const Tensor& x, Shape sizes, const ResizeOptions& options) {
  WOK_CALLER_SCOPE();
  return record_resize(x, std::move(sizes), "", options);
}

Tensor resize(const Tensor& x, const std::vector<double>& scales, std::string_view mode,
              std::string_view coordinate_transformation_mode, std::string_view nearest_mode) {
  WOK_CALLER_SCOPE();
  return resize(x, scales, resize_options(mode, coordinate_transformation_mode, nearest_mode));
}

Tensor resize_to(const Tensor& x, Shape sizes, std::string_view mode, std::string_view coordinate_transformation_mode,
                 std::string_view nearest_mode) {
  WOK_CALLER_SCOPE();
  return resize_to(x, std::move(sizes), resize_options(mode, coordinate_transformation_mode, nearest_mode));
}

// ---- reductions ------------------------------------------------------------------------------------

Tensor logsumexp(const Tensor& x, std::vector<int64_t> axes, bool keepdims) {
  WOK_CALLER_SCOPE();
  require_defined("logsumexp", x);
  Tensor xf = as_float(x);
  Tensor m = max(xf, axes, true);
  // An infinite (or nan) maximum would make x - m nan: shift by 0 there,
  // which gives inf, -inf (every element -inf, or none) and nan as they are.
  Tensor shift = where(abs(m) < std::numeric_limits<double>::infinity(), m, 0.0);
  // Kept dims throughout, so that the JIT makes it one row kernel; the
  // result drops them as a view.
  Tensor r = log(sum(exp(xf - shift), axes, true)) + shift;
  if (keepdims) return r;
  if (axes.empty())
    for (int i = 0; i < x.ndim(); ++i) axes.push_back(i);
  axes = distinct_axes("logsumexp", x, std::move(axes), x.ndim());
  Shape out;
  for (int i = 0; i < x.ndim(); ++i)
    if (!std::binary_search(axes.begin(), axes.end(), i)) out.push_back(x.shape()[i]);
  return r.reshape(std::move(out));
}

Tensor reduce_log_sum_exp(const Tensor& x, std::vector<int64_t> axes, bool keepdims) {
  WOK_CALLER_SCOPE();
  return logsumexp(x, std::move(axes), keepdims);
}

Tensor vector_norm(const Tensor& x, double ord, std::vector<int64_t> axes, bool keepdims) {
  WOK_CALLER_SCOPE();
  require_defined("vector_norm", x);
  if (std::isnan(ord)) throw ArgumentError("wok::vector_norm: ord is nan");
  Tensor xf = as_float(x);
  if (ord == 2) return sqrt(sum(square(xf), axes, keepdims));
  if (ord == 1) return sum(abs(xf), axes, keepdims);
  // max|x| of nothing is 0, not max's -inf; nan still propagates.
  if (std::isinf(ord))
    return ord > 0 ? maximum(max(abs(xf), axes, keepdims), 0.0) : min(abs(xf), axes, keepdims);
  if (ord == 0) return sum((xf != 0.0).astype(xf.dtype()), axes, keepdims);
  return pow(sum(pow(abs(xf), ord), axes, keepdims), 1.0 / ord);
}

Tensor reduce_l1(const Tensor& x, std::vector<int64_t> axes, bool keepdims) {
  WOK_CALLER_SCOPE();
  require_defined("reduce_l1", x);
  return sum(x.dtype() == DType::kBool ? x : abs(x), std::move(axes), keepdims);
}

Tensor reduce_sum_square(const Tensor& x, std::vector<int64_t> axes, bool keepdims) {
  WOK_CALLER_SCOPE();
  require_defined("reduce_sum_square", x);
  if (x.dtype() == DType::kBool) return sum(x, std::move(axes), keepdims);
  // Integers square in int64, where sum accumulates them anyway.
  return sum(square(is_integral(x.dtype()) ? x.astype(DType::kInt64) : x), std::move(axes), keepdims);
}

Tensor reduce_l2(const Tensor& x, std::vector<int64_t> axes, bool keepdims) {
  WOK_CALLER_SCOPE();
  require_defined("reduce_l2", x);
  return sqrt(sum(square(as_float(x)), std::move(axes), keepdims));
}

Tensor reduce_log_sum(const Tensor& x, std::vector<int64_t> axes, bool keepdims) {
  WOK_CALLER_SCOPE();
  require_defined("reduce_log_sum", x);
  return log(sum(as_float(x), std::move(axes), keepdims));
}

}  // namespace wok
