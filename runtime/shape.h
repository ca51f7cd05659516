// Shapes, strides and NumPy broadcasting.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace wok {

using Shape = std::vector<int64_t>;
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
