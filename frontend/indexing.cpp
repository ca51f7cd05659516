#include "wok/frontend/indexing.h"

#include <string>

#include "wok/frontend/creation.h"
#include "wok/frontend/dispatch.h"
#include "wok/frontend/ops.h"
#include "wok/runtime/error.h"

namespace wok {

using detail::positional_attrs;
using detail::record1;

namespace {

std::string describe(const Tensor& t) { return std::string(dtype_name(t.dtype())) + shape_str(t.shape()); }

void require_defined(const char* op, std::initializer_list<const Tensor*> ts) {
  for (const Tensor* t : ts)
    if (!t->defined()) throw ArgumentError(std::string("wok::") + op + ": an input is an undefined wok::Tensor");
}

int64_t axis_of(const char* op, int64_t axis, int rank, const Tensor& x) {
  std::optional<int> a = normalize_axis(axis, rank);
  if (!a)
    throw ShapeError(std::string("wok::") + op + ": axis " + std::to_string(axis) + " is out of range for " +
                     describe(x));
  return *a;
}

std::string reduction_name(ScatterReduction r) {
  switch (r) {
    case ScatterReduction::kNone: return "none";
    case ScatterReduction::kAdd: return "add";
    case ScatterReduction::kMul: return "mul";
    case ScatterReduction::kMax: return "max";
    case ScatterReduction::kMin: return "min";
  }
  throw ArgumentError("wok: unknown ScatterReduction " + std::to_string(static_cast<int>(r)));
}

// updates in x's dtype: a scatter writes into a copy of x.
Tensor as_dtype_of(const Tensor& updates, const Tensor& x) {
  return updates.dtype() == x.dtype() ? updates : cast(updates, x.dtype());
}

}  // namespace

Tensor gather(const Tensor& x, int64_t axis, const Tensor& indices) {
  WOK_CALLER_SCOPE();
  static const RegisteredOp& op = WOK_BUILTIN_OP("gather");
  require_defined("gather", {&x, &indices});
  return record1(op, {x, indices}, positional_attrs(op, {axis_of("gather", axis, x.ndim(), x)}));
}

Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index) {
  WOK_CALLER_SCOPE();
  require_defined("index_select", {&x, &index});
  if (index.ndim() > 1)
    throw ShapeError("wok::index_select: index must be 1-D, got " + describe(index) + " (x " + describe(x) + ")");
  return gather(x, dim, index.ndim() == 0 ? index.reshape({1}) : index);
}

Tensor take(const Tensor& x, const Tensor& indices) {
  WOK_CALLER_SCOPE();
  require_defined("take", {&x, &indices});
  return gather(x.reshape({x.numel()}), 0, indices);
}

Tensor embedding(const Tensor& weight, const Tensor& indices) {
  WOK_CALLER_SCOPE();
  require_defined("embedding", {&weight, &indices});
  if (weight.ndim() != 2)
    throw ShapeError("wok::embedding: weight must be 2-D [num_embeddings, embedding_dim], got " + describe(weight));
  return gather(weight, 0, indices);
}

Tensor gather_elements(const Tensor& x, int64_t axis, const Tensor& indices) {
  WOK_CALLER_SCOPE();
  static const RegisteredOp& op = WOK_BUILTIN_OP("gather_elements");
  require_defined("gather_elements", {&x, &indices});
  return record1(op, {x, indices}, positional_attrs(op, {axis_of("gather_elements", axis, x.ndim(), x)}));
}

Tensor gather_nd(const Tensor& x, const Tensor& indices, int64_t batch_dims) {
  WOK_CALLER_SCOPE();
  static const RegisteredOp& op = WOK_BUILTIN_OP("gather_nd");
  require_defined("gather_nd", {&x, &indices});
  return record1(op, {x, indices}, positional_attrs(op, {batch_dims}));
}

Tensor scatter_elements(const Tensor& x, int64_t axis, const Tensor& indices, const Tensor& updates,
                        ScatterReduction reduction) {
  WOK_CALLER_SCOPE();
  static const RegisteredOp& op = WOK_BUILTIN_OP("scatter_elements");
  require_defined("scatter_elements", {&x, &indices, &updates});
  return record1(op, {x, indices, as_dtype_of(updates, x)},
                 positional_attrs(op, {axis_of("scatter_elements", axis, x.ndim(), x), reduction_name(reduction)}));
}

Tensor scatter_nd(const Tensor& x, const Tensor& indices, const Tensor& updates, ScatterReduction reduction) {
  WOK_CALLER_SCOPE();
  static const RegisteredOp& op = WOK_BUILTIN_OP("scatter_nd");
  require_defined("scatter_nd", {&x, &indices, &updates});
  return record1(op, {x, indices, as_dtype_of(updates, x)}, positional_attrs(op, {reduction_name(reduction)}));
}

Tensor one_hot(const Tensor& indices, int64_t depth, std::array<Scalar, 2> values, int64_t axis) {
  WOK_CALLER_SCOPE();
  static const RegisteredOp& op = WOK_BUILTIN_OP("one_hot");
  require_defined("one_hot", {&indices});
  const int64_t a = axis_of("one_hot", axis, indices.ndim() + 1, indices);
  return record1(op, {indices}, positional_attrs(op, {depth, a, values[0], values[1]}));
}

Tensor nonzero(const Tensor& x) {
  WOK_CALLER_SCOPE();
  require_defined("nonzero", {&x});
  const Shape& shape = x.shape();
  const int rank = x.ndim();
  std::vector<int64_t> flat;  // row-major positions of the nonzero elements
  visit_any_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const std::vector<T> v = x.to_vector<T>();  // evaluates x
    for (size_t i = 0; i < v.size(); ++i)
      if (element_cast<bool>(v[i])) flat.push_back(static_cast<int64_t>(i));  // nan too
  });
  const int64_t n = static_cast<int64_t>(flat.size());
  std::vector<int64_t> coords(static_cast<size_t>(rank * n));
  for (int64_t j = 0; j < n; ++j) {
    int64_t p = flat[static_cast<size_t>(j)];
    for (int d = rank - 1; d >= 0; --d) {
      coords[static_cast<size_t>(d * n + j)] = p % shape[d];
      p /= shape[d];
    }
  }
  return from_vector(coords, {rank, n}, x.device());
}

}  // namespace wok
