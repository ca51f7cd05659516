// Shapes, strides and NumPy broadcasting.
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"

namespace wok {

// Note [Shapes live inline]
// Every pending tensor, graph node and fragment value carries a shape, and
// a traced loop makes and frees them by the thousand per evaluation. As a
// std::vector each was a heap block, and a traced op spent about a third
// of its time in malloc and free (most of it in glibc's slow paths, since
// a whole graph is freed at once). Shapes of up to kShapeInlineDims dims now
// live inside their owner. Shape converts to and from std::vector<int64_t>
// (attributes hold sizes as vectors), so code written for the vector keeps
// working.
inline constexpr size_t kShapeInlineDims = 6;

class Shape : public absl::InlinedVector<int64_t, kShapeInlineDims> {
  using Base = absl::InlinedVector<int64_t, kShapeInlineDims>;

 public:
  using Base::Base;
  Shape() = default;
  Shape(std::initializer_list<int64_t> dims) : Base(dims) {}
  Shape(const std::vector<int64_t>& dims) : Base(dims.begin(), dims.end()) {}  // NOLINT: implicit by design

  operator std::vector<int64_t>() const { return {begin(), end()}; }  // NOLINT: implicit by design

  friend bool operator==(const Shape& a, const Shape& b) {
    return static_cast<const Base&>(a) == static_cast<const Base&>(b);
  }
  friend bool operator==(const Shape& a, const std::vector<int64_t>& b) {
    return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
  }
  friend bool operator<(const Shape& a, const Shape& b) {
    return static_cast<const Base&>(a) < static_cast<const Base&>(b);
  }
};

using Strides = std::vector<int64_t>;  // in elements, not bytes

int64_t numel(const Shape& shape);
std::string shape_str(const Shape& shape);  // "[2, 3]", "[]" for a scalar

// Row-major strides of a contiguous tensor of this shape.
Strides contiguous_strides(const Shape& shape);

// NumPy broadcasting of two shapes; nullopt when they are incompatible.
std::optional<Shape> broadcast_shapes(const Shape& a, const Shape& b);

// Strides that read a contiguous tensor of shape `in` as if it had shape
// `out` (which `in` broadcasts to): 0 along broadcast dims.
Strides broadcast_strides(const Shape& in, const Shape& out);

// The iteration space of an elementwise operation with dims merged: a dim
// of size 1 is dropped, and two neighbouring dims become one when every
// operand steps through both as through one. strides[0] is the output's
// (contiguous), strides[1 + i] input i's (0 along broadcast dims). At least
// one dim remains (shape [1] for a single element).
struct CollapsedLayout {
  Shape shape;
  std::vector<Strides> strides;
};
CollapsedLayout collapse_layout(const Shape& out, const std::vector<const Shape*>& inputs);

// Maps a possibly negative axis into [0, ndim); nullopt if out of range.
std::optional<int> normalize_axis(int64_t axis, int ndim);

}  // namespace wok
