// Running sums and products, and selection by order along one axis: cumsum
// and cumprod (ONNX CumSum), topk (ONNX TopK), sort and argsort. Axes may
// be negative; a 0-d tensor is treated as one element along axis 0 or -1.
//
// Order (Note [Order of values in topk and sort] in runtime/ops/
// scan_ops.cpp): values compare as numbers with nan above +inf and -0 equal
// to +0, and equal values keep their order along the axis (lower index
// first, ascending or descending). So nans come first in a descending sort
// and in topk(largest), last in an ascending sort and in topk(smallest).
#pragma once

#include <cstdint>
#include <optional>

#include "wok/frontend/tensor.h"

namespace wok {

// out[..., i, ...] = x[..., 0, ...] + ... + x[..., i, ...] along axis;
// exclusive leaves out x[i] itself (out[0] = 0), reverse sums from the end.
// Integers and bool accumulate in int64 (wrapping), as wok::sum does;
// floats in their own type, one element after another.
Tensor cumsum(const Tensor& x, int64_t axis, bool exclusive = false, bool reverse = false);
// The same with products (out[0] = 1 when exclusive).
Tensor cumprod(const Tensor& x, int64_t axis, bool exclusive = false, bool reverse = false);

struct ValuesIndices {
  Tensor values;   // x's dtype
  Tensor indices;  // int64 positions along the axis
};

// The k largest (or smallest) values along axis and their indices, in
// order (best first). `sorted` = false is accepted for ONNX's signature;
// the result is sorted either way.
ValuesIndices topk(const Tensor& x, int64_t k, int64_t axis = -1, bool largest = true, bool sorted = true);
// Stable sort along axis.
ValuesIndices sort(const Tensor& x, int64_t axis = -1, bool descending = false);
// sort(...).indices.
Tensor argsort(const Tensor& x, int64_t axis = -1, bool descending = false);

// The distinct values of x (flattened), or with `axis` its distinct slices
// along that axis (ONNX Unique, torch.unique): in ascending order (slices
// compare lexicographically), or with sorted = false in order of first
// appearance. indices: each one's first position in x (along axis);
// inverse: for every element (slice) of x, its position in values; counts:
// how often each appears. Order as in sort (nan above +inf, equal to
// itself). The result's size depends on x's values, so, like nonzero, it
// evaluates x now (refused inside wok::compile).
struct UniqueResult {
  Tensor values;   // x's dtype: [k], or x's shape with k along axis
  Tensor indices;  // int64 [k]
  Tensor inverse;  // int64 [x.numel()], or [x.shape()[axis]]
  Tensor counts;   // int64 [k]
};
UniqueResult unique(const Tensor& x, bool sorted = true, std::optional<int64_t> axis = std::nullopt);

}  // namespace wok
