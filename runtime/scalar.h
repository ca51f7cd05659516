// A single typed value: constants in graphs, attribute values, item().
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

#include "wok/runtime/dtype.h"

namespace wok {

class Scalar {
 public:
  Scalar() : dtype_(DType::kFloat32), f_(0) {}
  Scalar(bool v) : dtype_(DType::kBool), i_(v) {}
  Scalar(int32_t v) : dtype_(DType::kInt32), i_(v) {}
  Scalar(int64_t v) : dtype_(DType::kInt64), i_(v) {}
  Scalar(float v) : dtype_(DType::kFloat32), f_(v) {}
  Scalar(double v) : dtype_(DType::kFloat64), f_(v) {}
  // Other integer types (long long, unsigned, ...) map to int64.
  template <typename T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool> &&
                                             !std::is_same_v<T, int32_t> && !std::is_same_v<T, int64_t>,
                                         int> = 0>
  Scalar(T v) : dtype_(DType::kInt64), i_(static_cast<int64_t>(v)) {}

  DType dtype() const { return dtype_; }

  // The value converted to T with C++ conversion rules.
  template <typename T>
  T to() const {
    return is_floating(dtype_) ? static_cast<T>(f_) : static_cast<T>(i_);
  }
  double as_double() const { return to<double>(); }

  // The same value held as `t` (C++ conversion, rounding for float32).
  Scalar cast(DType t) const;

  std::string str() const;
  friend bool operator==(const Scalar& a, const Scalar& b);

 private:
  DType dtype_;
  union {
    int64_t i_;
    double f_;
  };
};

}  // namespace wok
