#include "wok/frontend/scans.h"

#include <string>

#include "wok/frontend/dispatch.h"
#include "wok/runtime/error.h"

namespace wok {

using detail::positional_attrs;

namespace {

// x, with a 0-d tensor as one element of a 1-D one, and the axis made
// non-negative.
struct AlongAxis {
  Tensor x;
  int64_t axis;
  bool scalar;
};

AlongAxis along_axis(const char* op, const Tensor& x, int64_t axis) {
  if (!x.defined()) throw ArgumentError(std::string("wok::") + op + ": x is an undefined wok::Tensor");
  const bool scalar = x.ndim() == 0;
  const Tensor v = scalar ? x.reshape({1}) : x;
  std::optional<int> a = normalize_axis(axis, v.ndim());
  if (!a)
    throw ShapeError(std::string("wok::") + op + ": axis " + std::to_string(axis) + " is out of range for " +
                     std::string(dtype_name(x.dtype())) + shape_str(x.shape()));
  return {v, *a, scalar};
}

Tensor unscalar(const Tensor& y, bool scalar) { return scalar ? y.reshape({}) : y; }

Tensor scan(const RegisteredOp& op, const Tensor& x, int64_t axis, bool exclusive, bool reverse) {
  AlongAxis in = along_axis(op.name().c_str(), x, axis);
  return unscalar(detail::record1(op, {in.x}, positional_attrs(op, {in.axis, exclusive, reverse})), in.scalar);
}

ValuesIndices two(std::vector<Tensor> outs, bool scalar) {
  return {unscalar(outs[0], scalar), unscalar(outs[1], scalar)};
}

}  // namespace

Tensor cumsum(const Tensor& x, int64_t axis, bool exclusive, bool reverse) {
  WOK_CALLER_SCOPE();
  return scan(WOK_BUILTIN_OP("cumsum"), x, axis, exclusive, reverse);
}

Tensor cumprod(const Tensor& x, int64_t axis, bool exclusive, bool reverse) {
  WOK_CALLER_SCOPE();
  return scan(WOK_BUILTIN_OP("cumprod"), x, axis, exclusive, reverse);
}

ValuesIndices topk(const Tensor& x, int64_t k, int64_t axis, bool largest, bool sorted) {
  WOK_CALLER_SCOPE();
  static const RegisteredOp& op = WOK_BUILTIN_OP("topk");
  AlongAxis in = along_axis("topk", x, axis);
  const Tensor inputs[] = {in.x};
  return two(detail::record(op, inputs, positional_attrs(op, {k, in.axis, largest})), in.scalar);
}

ValuesIndices sort(const Tensor& x, int64_t axis, bool descending) {
  WOK_CALLER_SCOPE();
  static const RegisteredOp& op = WOK_BUILTIN_OP("sort");
  AlongAxis in = along_axis("sort", x, axis);
  const Tensor inputs[] = {in.x};
  return two(detail::record(op, inputs, positional_attrs(op, {in.axis, descending})), in.scalar);
}

Tensor argsort(const Tensor& x, int64_t axis, bool descending) {
  WOK_CALLER_SCOPE();
  return sort(x, axis, descending).indices;
}

}  // namespace wok
