#include "wok/frontend/ops.h"

#include <algorithm>

#include "wok/frontend/dispatch.h"

namespace wok {

using detail::positional_attrs;
using detail::record1;

namespace {

// Category of a dtype for weak scalar typing: bool < integer < floating.
int category(DType t) { return is_bool(t) ? 0 : is_integral(t) ? 1 : 2; }

// The dtype a tensor of dtype `other` and a plain number compute in: the
// tensor's, unless the number is of a higher category (then the number's).
DType weak_result(Scalar s, DType other) { return category(s.dtype()) <= category(other) ? other : s.dtype(); }

// A 0-d constant for a plain number meeting a tensor of dtype `other`.
Tensor scalar_operand(Scalar s, DType other, Device device) {
  DType t = weak_result(s, other);
  static const RegisteredOp& full = WOK_BUILTIN_OP("full");
  Tensor c = detail::record_constant(full, s.cast(t));
  if (!device.is_cpu()) return c.to(device);
  return c;  // not through ?:, which would copy the handle
}

Tensor cast_to(const Tensor& x, DType t) { return x.dtype() == t ? x : cast(x, t); }

Tensor unary(const RegisteredOp& op, const Tensor& x) { return record1(op, {x}); }

Tensor binary(const RegisteredOp& op, const Tensor& a, const Tensor& b) {
  if (!a.defined() || !b.defined()) return record1(op, {a, b});  // reports the undefined input
  DType t = promote_types(a.dtype(), b.dtype());
  return record1(op, {cast_to(a, t), cast_to(b, t)});
}

// `x op number` (or `number op x` with `number_first`): the number is a
// constant of the weak result dtype, and x is cast to it first. The same as
// binary() on the cast operands, with the handles moved rather than copied
// (this is the hot path of a traced loop such as `x = x * a + b`).
Tensor binary_with_number(const RegisteredOp& op, const Tensor& x, Scalar number, bool number_first) {
  if (!x.defined()) return binary(op, x, x);  // reports the undefined input
  Tensor c = scalar_operand(number, x.dtype(), x.device());
  if (x.dtype() != c.dtype()) {
    Tensor xc = cast(x, c.dtype());
    return number_first ? record1(op, {std::move(c), std::move(xc)}) : record1(op, {std::move(xc), std::move(c)});
  }
  return number_first ? record1(op, {std::move(c), x}) : record1(op, {x, std::move(c)});
}

// Canonical axes for reductions: sorted, non-negative, all when empty.
std::vector<int64_t> canonical_axes(const RegisteredOp& op, const Tensor& x, std::vector<int64_t> axes) {
  int nd = x.ndim();
  if (axes.empty()) {
    for (int i = 0; i < nd; ++i) axes.push_back(i);
    return axes;
  }
  for (int64_t& a : axes) {
    std::optional<int> n = normalize_axis(a, nd);
    if (!n)
      throw ShapeError("wok::" + op.name() + ": axis " + std::to_string(a) + " is out of range for " +
                       std::string(dtype_name(x.dtype())) + shape_str(x.shape()));
    a = *n;
  }
  std::sort(axes.begin(), axes.end());
  if (std::adjacent_find(axes.begin(), axes.end()) != axes.end())
    throw ShapeError("wok::" + op.name() + ": an axis is repeated in " + shape_str(axes));
  return axes;
}

Tensor reduce(const RegisteredOp& op, const Tensor& x, std::vector<int64_t> axes, bool keepdims) {
  if (!x.defined()) return record1(op, {x});
  return record1(op, {x}, positional_attrs(op, {canonical_axes(op, x, std::move(axes)), keepdims}));
}

int64_t axis_or_throw(const char* op, const Tensor& x, int64_t axis) {
  std::optional<int> a = normalize_axis(axis, x.ndim());
  if (!a)
    throw ShapeError(std::string("wok::") + op + ": axis " + std::to_string(axis) + " is out of range for " +
                     std::string(dtype_name(x.dtype())) + shape_str(x.shape()));
  return *a;
}

}  // namespace

#define WOK_UNARY_OP(name, rule, takes_bool, formula, doc) \
  Tensor name(const Tensor& x) {                           \
    WOK_CALLER_SCOPE();                                    \
    return unary(WOK_BUILTIN_OP(#name), x);                \
  }
#include "wok/runtime/ops/unary_op_list.h"
#undef WOK_UNARY_OP

Tensor cast(const Tensor& x, DType dtype) {
  WOK_CALLER_SCOPE();
  static const RegisteredOp& op = WOK_BUILTIN_OP("cast");
  return record1(op, {x}, positional_attrs(op, {dtype}));
}

// With a plain number, the tensor is cast to the weak result dtype first, so
// int32 * 2.5f computes in float32 rather than promoting int32 with float32.
#define WOK_DEFINE_BINARY(name)                                                       \
  Tensor name(const Tensor& a, const Tensor& b) {                                     \
    WOK_CALLER_SCOPE();                                                               \
    return binary(WOK_BUILTIN_OP(#name), a, b);                                       \
  }                                                                                   \
  Tensor name(const Tensor& a, Scalar b) {                                            \
    WOK_CALLER_SCOPE();                                                               \
    return binary_with_number(WOK_BUILTIN_OP(#name), a, b, /*number_first=*/false);   \
  }                                                                                   \
  Tensor name(Scalar a, const Tensor& b) {                                            \
    WOK_CALLER_SCOPE();                                                               \
    return binary_with_number(WOK_BUILTIN_OP(#name), b, a, /*number_first=*/true);    \
  }
WOK_DEFINE_BINARY(add)
WOK_DEFINE_BINARY(sub)
WOK_DEFINE_BINARY(mul)
WOK_DEFINE_BINARY(div)
WOK_DEFINE_BINARY(pow)
WOK_DEFINE_BINARY(maximum)
WOK_DEFINE_BINARY(minimum)
WOK_DEFINE_BINARY(eq)
WOK_DEFINE_BINARY(ne)
WOK_DEFINE_BINARY(lt)
WOK_DEFINE_BINARY(le)
WOK_DEFINE_BINARY(gt)
WOK_DEFINE_BINARY(ge)
WOK_DEFINE_BINARY(logical_and)
WOK_DEFINE_BINARY(logical_or)
WOK_DEFINE_BINARY(fmod)
WOK_DEFINE_BINARY(remainder)
WOK_DEFINE_BINARY(floor_divide)
WOK_DEFINE_BINARY(atan2)
WOK_DEFINE_BINARY(bitwise_and)
WOK_DEFINE_BINARY(bitwise_or)
WOK_DEFINE_BINARY(bitwise_xor)
WOK_DEFINE_BINARY(bitwise_left_shift)
WOK_DEFINE_BINARY(bitwise_right_shift)
#undef WOK_DEFINE_BINARY

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  WOK_CALLER_SCOPE();
  static const RegisteredOp& op = WOK_BUILTIN_OP("where");
  if (!cond.defined() || !a.defined() || !b.defined()) return record1(op, {cond, a, b});
  DType t = promote_types(a.dtype(), b.dtype());
  return record1(op, {cast_to(cond, DType::kBool), cast_to(a, t), cast_to(b, t)});
}

Tensor where(const Tensor& cond, const Tensor& a, Scalar b) {
  WOK_CALLER_SCOPE();
  if (!a.defined()) return where(cond, a, a);
  Tensor c = scalar_operand(b, a.dtype(), a.device());
  return where(cond, cast_to(a, c.dtype()), c);
}

Tensor where(const Tensor& cond, Scalar a, const Tensor& b) {
  WOK_CALLER_SCOPE();
  if (!b.defined()) return where(cond, b, b);
  Tensor c = scalar_operand(a, b.dtype(), b.device());
  return where(cond, c, cast_to(b, c.dtype()));
}

Tensor clamp(const Tensor& x, std::optional<double> lo, std::optional<double> hi) {
  WOK_CALLER_SCOPE();
  static const RegisteredOp& op = WOK_BUILTIN_OP("clamp");
  std::vector<AttrValue> attrs = {lo.value_or(-std::numeric_limits<double>::infinity()),
                                  hi.value_or(std::numeric_limits<double>::infinity())};
  return record1(op, {x}, positional_attrs(op, std::move(attrs)));
}

Tensor sum(const Tensor& x, std::vector<int64_t> axes, bool keepdims) {
  WOK_CALLER_SCOPE();
  return reduce(WOK_BUILTIN_OP("sum"), x, std::move(axes), keepdims);
}
Tensor mean(const Tensor& x, std::vector<int64_t> axes, bool keepdims) {
  WOK_CALLER_SCOPE();
  return reduce(WOK_BUILTIN_OP("mean"), x, std::move(axes), keepdims);
}
Tensor max(const Tensor& x, std::vector<int64_t> axes, bool keepdims) {
  WOK_CALLER_SCOPE();
  return reduce(WOK_BUILTIN_OP("max"), x, std::move(axes), keepdims);
}
Tensor min(const Tensor& x, std::vector<int64_t> axes, bool keepdims) {
  WOK_CALLER_SCOPE();
  return reduce(WOK_BUILTIN_OP("min"), x, std::move(axes), keepdims);
}
Tensor prod(const Tensor& x, std::vector<int64_t> axes, bool keepdims) {
  WOK_CALLER_SCOPE();
  return reduce(WOK_BUILTIN_OP("prod"), x, std::move(axes), keepdims);
}
Tensor argmax(const Tensor& x, std::vector<int64_t> axes, bool keepdims) {
  WOK_CALLER_SCOPE();
  return reduce(WOK_BUILTIN_OP("argmax"), x, std::move(axes), keepdims);
}

namespace {

// Note [argmin and the last index]
// argmin and select_last_index are written with the argmax op, so that they
// fuse and run wherever it does (the x86 and CUDA generators read its
// schema, never an attribute, and a flag on it would be one they ignore):
//  - argmin(x) is argmax of an order-reversing map of x: -x for floats (nan
//    stays nan, so the first nan wins, as in NumPy), -1 - x (= ~x, which
//    never overflows) for integers, !x for bool. Under the JIT the map and
//    the argmax are one kernel.
//  - the last extreme is the first one of x reversed along every reduced
//    axis; reversing all of them reverses the row-major order within the
//    reduced block, so the index is (count - 1) - the reversed one.
Tensor arg_extreme(const char* name, const Tensor& x, std::vector<int64_t> axes, bool keepdims, bool minimum,
                   bool last) {
  const RegisteredOp& op = WOK_BUILTIN_OP("argmax");
  if (!x.defined()) return record1(op, {x});
  for (int64_t a : axes)  // errors name the function called, not the argmax op
    if (!normalize_axis(a, x.ndim()))
      throw ShapeError(std::string("wok::") + name + ": axis " + std::to_string(a) + " is out of range for " +
                       std::string(dtype_name(x.dtype())) + shape_str(x.shape()));
  std::vector<int64_t> ax = canonical_axes(op, x, std::move(axes));
  int64_t count = 1;
  for (int64_t a : ax) {
    if (x.shape()[a] == 0)
      throw ShapeError(std::string("wok::") + name + ": cannot reduce over axis " + std::to_string(a) +
                       " of size 0 (inputs: x " + std::string(dtype_name(x.dtype())) + shape_str(x.shape()) + ")");
    count *= x.shape()[a];
  }
  Tensor v = x;
  if (minimum) v = is_bool(x.dtype()) ? logical_not(x) : is_floating(x.dtype()) ? neg(x) : sub(Scalar(-1), x);
  last = last && count > 1;
  if (last)
    for (int64_t a : ax)
      if (x.shape()[a] > 1) v = slice(v, a, std::nullopt, std::nullopt, -1);
  Tensor i = record1(op, {v}, positional_attrs(op, {std::move(ax), keepdims}));
  return last ? sub(Scalar(count - 1), i) : i;
}

}  // namespace

Tensor argmax(const Tensor& x, std::vector<int64_t> axes, bool keepdims, bool select_last_index) {
  WOK_CALLER_SCOPE();
  return arg_extreme("argmax", x, std::move(axes), keepdims, /*minimum=*/false, select_last_index);
}
Tensor argmin(const Tensor& x, std::vector<int64_t> axes, bool keepdims) {
  WOK_CALLER_SCOPE();
  return arg_extreme("argmin", x, std::move(axes), keepdims, /*minimum=*/true, /*last=*/false);
}
Tensor argmin(const Tensor& x, std::vector<int64_t> axes, bool keepdims, bool select_last_index) {
  WOK_CALLER_SCOPE();
  return arg_extreme("argmin", x, std::move(axes), keepdims, /*minimum=*/true, select_last_index);
}

Tensor reshape(const Tensor& x, Shape shape) {
  WOK_CALLER_SCOPE();
  static const RegisteredOp& op = WOK_BUILTIN_OP("reshape");
  if (!x.defined()) return record1(op, {x}, positional_attrs(op, {shape}));
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      if (infer >= 0)
        throw ShapeError("wok::reshape: more than one -1 in " + shape_str(shape) + " (input " +
                         std::string(dtype_name(x.dtype())) + shape_str(x.shape()) + ")");
      infer = static_cast<int>(i);
    } else {
      known *= shape[i];
    }
  }
  if (infer >= 0) {
    if (known == 0 || x.numel() % known != 0)
      throw ShapeError("wok::reshape: cannot infer -1 in " + shape_str(shape) + " for " + std::to_string(x.numel()) +
                       " elements (input " + std::string(dtype_name(x.dtype())) + shape_str(x.shape()) + ")");
    shape[infer] = x.numel() / known;
  }
  if (shape == x.shape()) return x;
  return record1(op, {x}, positional_attrs(op, {std::move(shape)}));
}

Tensor permute(const Tensor& x, std::vector<int64_t> dims) {
  WOK_CALLER_SCOPE();
  static const RegisteredOp& op = WOK_BUILTIN_OP("permute");
  if (x.defined())
    for (int64_t& d : dims)
      if (d < 0) d += x.ndim();
  bool identity = x.defined() && static_cast<int>(dims.size()) == x.ndim();
  for (size_t i = 0; identity && i < dims.size(); ++i) identity = dims[i] == static_cast<int64_t>(i);
  if (identity) return x;
  return record1(op, {x}, positional_attrs(op, {std::move(dims)}));
}

Tensor transpose(const Tensor& x) {
  WOK_CALLER_SCOPE();
  std::vector<int64_t> dims;
  for (int i = x.defined() ? x.ndim() : 0; i-- > 0;) dims.push_back(i);
  return permute(x, std::move(dims));
}

Tensor transpose(const Tensor& x, int64_t a, int64_t b) {
  WOK_CALLER_SCOPE();
  if (!x.defined()) return permute(x, {});
  std::vector<int64_t> dims;
  for (int i = 0; i < x.ndim(); ++i) dims.push_back(i);
  std::swap(dims[axis_or_throw("transpose", x, a)], dims[axis_or_throw("transpose", x, b)]);
  return permute(x, std::move(dims));
}

Tensor broadcast_to(const Tensor& x, Shape shape) {
  WOK_CALLER_SCOPE();
  static const RegisteredOp& op = WOK_BUILTIN_OP("broadcast_to");
  if (x.defined() && x.shape() == shape) return x;
  return record1(op, {x}, positional_attrs(op, {std::move(shape)}));
}

Tensor slice(const Tensor& x, int64_t axis, std::optional<int64_t> start, std::optional<int64_t> stop, int64_t step) {
  WOK_CALLER_SCOPE();
  static const RegisteredOp& op = WOK_BUILTIN_OP("slice");
  if (!x.defined()) return record1(op, {x}, positional_attrs(op, {Shape{}, Shape{}, Shape{}}));
  int a = static_cast<int>(axis_or_throw("slice", x, axis));
  if (step == 0) throw ShapeError("wok::slice: step must not be 0");
  int64_t n = x.shape()[a];
  // Python's slice.indices(): clamp into range depending on the direction.
  auto clamp_bound = [&](std::optional<int64_t> v, int64_t dflt) {
    if (!v) return dflt;
    int64_t i = *v < 0 ? *v + n : *v;
    if (step > 0) return std::clamp<int64_t>(i, 0, n);
    return std::clamp<int64_t>(i, -1, n - 1);
  };
  int64_t b = clamp_bound(start, step > 0 ? 0 : n - 1);
  int64_t e = clamp_bound(stop, step > 0 ? n : -1);
  Shape starts(x.ndim(), 0), stops = x.shape(), steps(x.ndim(), 1);
  starts[a] = b;
  stops[a] = e;
  steps[a] = step;
  // An empty selection may leave `b` at n; keep the attrs canonical.
  int64_t len = step > 0 ? std::max<int64_t>(0, (e - b + step - 1) / step) : std::max<int64_t>(0, (b - e - step - 1) / -step);
  if (len == 0) {
    starts[a] = 0;
    stops[a] = 0;
    steps[a] = 1;
  }
  if (len == n && step == 1) return x;
  return record1(op, {x}, positional_attrs(op, {std::move(starts), std::move(stops), std::move(steps)}));
}

Tensor concat(const std::vector<Tensor>& xs, int64_t axis) {
  WOK_CALLER_SCOPE();
  static const RegisteredOp& op = WOK_BUILTIN_OP("concat");
  if (xs.empty()) throw ShapeError("wok::concat: needs at least one tensor");
  for (const Tensor& x : xs)
    if (!x.defined()) return record1(op, std::span<const Tensor>(xs), positional_attrs(op, {axis}));
  int64_t a = axis_or_throw("concat", xs[0], axis);
  if (xs.size() == 1) return xs[0];
  DType t = xs[0].dtype();
  for (const Tensor& x : xs) t = promote_types(t, x.dtype());
  std::vector<Tensor> cast_xs;
  for (const Tensor& x : xs) cast_xs.push_back(cast_to(x, t));
  return record1(op, std::span<const Tensor>(cast_xs), positional_attrs(op, {a}));
}

Tensor det(const Tensor& x) {
  WOK_CALLER_SCOPE();
  static const RegisteredOp& op = WOK_BUILTIN_OP("det");
  if (!x.defined()) return record1(op, {x});
  return record1(op, {x.astype(float_result_type(x.dtype()))});
}

Tensor matmul(const Tensor& a, const Tensor& b) {
  WOK_CALLER_SCOPE();
  static const RegisteredOp& op = WOK_BUILTIN_OP("matmul");
  if (!a.defined() || !b.defined()) return record1(op, {a, b});
  if (a.ndim() == 0 || b.ndim() == 0)
    throw ShapeError("wok::matmul: operands must have at least one dimension (inputs: a " +
                     std::string(dtype_name(a.dtype())) + shape_str(a.shape()) + ", b " +
                     std::string(dtype_name(b.dtype())) + shape_str(b.shape()) + ")");
  DType t = promote_types(a.dtype(), b.dtype());
  if (t == DType::kBool) t = DType::kInt32;
  // 1-D operands are reshaped below; check their inner dimension here, so
  // the error names the shapes the caller passed.
  int64_t ka = a.shape().back(), kb = b.ndim() == 1 ? b.shape()[0] : b.shape()[b.ndim() - 2];
  if (ka != kb)
    throw ShapeError("wok::matmul: inner dimensions differ: " + std::to_string(ka) + " vs " + std::to_string(kb) +
                     " (inputs: a " + std::string(dtype_name(a.dtype())) + shape_str(a.shape()) + ", b " +
                     std::string(dtype_name(b.dtype())) + shape_str(b.shape()) + ")");
  // Half operands are multiplied in float32 (Note [Compute dtypes] in
  // runtime/dtype.h): widened as they are read (under the JIT the casts are
  // the GEMM's operand prologues, done while packing), accumulated in
  // float32, rounded once into the result (the GEMM's epilogue).
  const DType compute = is_half(t) ? DType::kFloat32 : t;
  Tensor x = cast_to(a, compute), y = cast_to(b, compute);
  bool vec_a = x.ndim() == 1, vec_b = y.ndim() == 1;
  if (vec_a) x = reshape(x, {1, x.shape()[0]});
  if (vec_b) y = reshape(y, {y.shape()[0], 1});
  Tensor out = record1(op, {x, y});
  if (vec_a || vec_b) {
    Shape s = out.shape();
    if (vec_b) s.erase(s.end() - 1);
    if (vec_a) s.erase(s.end() - 1 - (vec_b ? 0 : 1));
    out = reshape(out, s);
  }
  return compute == t ? out : cast(out, t);
}

Tensor operator-(const Tensor& x) {
  WOK_CALLER_SCOPE();
  return neg(x);
}
Tensor operator!(const Tensor& x) {
  WOK_CALLER_SCOPE();
  return logical_not(x);
}

}  // namespace wok
