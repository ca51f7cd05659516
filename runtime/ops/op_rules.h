// Shape and dtype rules shared by the built-in op definitions.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "wok/runtime/attrs.h"
#include "wok/runtime/dtype.h"
#include "wok/runtime/error.h"
#include "wok/runtime/op_def.h"
#include "wok/runtime/shape.h"

namespace wok::ops {

// All inputs must share one dtype (the frontend inserts the casts).
inline DType common_dtype(std::span<const DType> in) {
  for (DType t : in)
    if (t != in[0])
      throw DTypeError("inputs must have the same dtype, got " + std::string(dtype_name(in[0])) + " and " +
                       std::string(dtype_name(t)));
  return in[0];
}

inline void require_not_bool(DType t, const char* what) {
  if (t == DType::kBool) throw DTypeError(std::string(what) + " is not defined for bool tensors");
}

// Checks an axis list against a rank: in range, no repeats.
inline void check_axes(const std::vector<int64_t>& axes, int ndim) {
  std::vector<bool> seen(ndim, false);
  for (int64_t a : axes) {
    if (a < 0 || a >= ndim)
      throw ShapeError("axis " + std::to_string(a) + " is out of range for a tensor of rank " + std::to_string(ndim));
    if (seen[a]) throw ShapeError("axis " + std::to_string(a) + " is repeated");
    seen[a] = true;
  }
}

inline std::vector<DType> one(DType t) { return {t}; }

}  // namespace wok::ops
