// Indexing with tensors of indices: gathers, scatters, one_hot and nonzero,
// with ONNX's semantics (Gather, GatherElements, GatherND, ScatterElements,
// ScatterND, OneHot, NonZero) and PyTorch's names where it has them.
//
// Indices are int32 or int64 tensors; a negative index counts from the end
// of its dim. An index outside [-n, n) is a wok::ArgumentError naming the
// op, the index and the dim's size; indices are data, so it is raised when
// the op runs, by whatever evaluates it (to_vector, item, wok::eval), not
// when it is recorded (Note [Indices are data] in
// runtime/ops/indexing_ops.cpp). Axes may be negative.
#pragma once

#include <array>
#include <cstdint>

#include "wok/frontend/tensor.h"

namespace wok {

// ONNX Gather: out.shape = x.shape[:axis] + indices.shape + x.shape[axis+1:],
// out[i..., j..., k...] = x[i..., indices[j...], k...]. A 0-d index drops
// the axis (x[:, 2] is gather(x, 1, scalar_tensor(2))).
Tensor gather(const Tensor& x, int64_t axis, const Tensor& indices);
// torch.index_select: gather with a 1-D index (the axis keeps its place).
Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index);
// torch.take: gather from x flattened; the result has indices' shape.
Tensor take(const Tensor& x, const Tensor& indices);
// torch.nn.functional.embedding: rows of `weight` [num, dim] picked by
// indices; the result is indices.shape + [dim].
Tensor embedding(const Tensor& weight, const Tensor& indices);

// ONNX GatherElements (torch.gather): indices has x's rank and is no larger
// than x off the axis; out has indices' shape and
// out[i] = x[i with i[axis] replaced by indices[i]].
Tensor gather_elements(const Tensor& x, int64_t axis, const Tensor& indices);
// ONNX GatherND: indices [..., k] holds tuples of k indices into x's dims
// after the first batch_dims (which x and indices share); out.shape =
// indices.shape[:-1] + x.shape[batch_dims + k:].
Tensor gather_nd(const Tensor& x, const Tensor& indices, int64_t batch_dims = 0);

// How a scatter combines an update with the element it lands on (ONNX's
// `reduction`): kNone replaces it (of several updates to one element the
// last in row-major order of the indices wins), the others fold updates in
// that order. Integers wrap; on bool, add and max are `or`, mul and min
// `and`; max and min propagate nan.
enum class ScatterReduction { kNone, kAdd, kMul, kMax, kMin };

// ONNX ScatterElements (torch.scatter / scatter_reduce): a copy of x where
// out[i with i[axis] = indices[i]] (op)= updates[i]. updates has indices'
// shape and is cast to x's dtype.
Tensor scatter_elements(const Tensor& x, int64_t axis, const Tensor& indices, const Tensor& updates,
                        ScatterReduction reduction = ScatterReduction::kNone);
// ONNX ScatterND: a copy of x where the slice x[indices[r]] (op)= updates[r]
// for every tuple r of indices [..., k]; updates.shape = indices.shape[:-1]
// + x.shape[k:], cast to x's dtype.
Tensor scatter_nd(const Tensor& x, const Tensor& indices, const Tensor& updates,
                  ScatterReduction reduction = ScatterReduction::kNone);

// ONNX OneHot: a new dim of `depth` inserted at `axis` (of the result),
// values[1] (on) where its position equals the index and values[0] (off)
// elsewhere. Negative indices wrap; one outside [-depth, depth) gives a
// column of `off`. The result's dtype is that of the two values promoted
// (int64 by default, as torch.nn.functional.one_hot).
Tensor one_hot(const Tensor& indices, int64_t depth,
               std::array<Scalar, 2> values = {Scalar(int64_t{0}), Scalar(int64_t{1})}, int64_t axis = -1);

// ONNX NonZero: the int64 [rank, n] coordinates of x's n nonzero elements
// (true, nonzero, nan), in row-major order. Its shape depends on x's
// values, so it evaluates x now (a read, like to_vector: refused inside
// wok::compile) and returns a tensor of the result.
Tensor nonzero(const Tensor& x);

}  // namespace wok
