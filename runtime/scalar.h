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
  Scalar(half v) : dtype_(DType::kFloat16), f_(static_cast<float>(v)) {}
  Scalar(bfloat16 v) : dtype_(DType::kBFloat16), f_(static_cast<float>(v)) {}
  // Other integer types (long long, unsigned, ...) map to int64; of<T>
  // keeps the element type.
  template <typename T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool> &&
                                             !std::is_same_v<T, int32_t> && !std::is_same_v<T, int64_t>,
                                         int> = 0>
  Scalar(T v) : dtype_(DType::kInt64), i_(static_cast<int64_t>(v)) {}

  // The value v with the dtype of its element type T (item() of a uint8
  // tensor is a uint8 scalar).
  template <typename T>
  static Scalar of(T v) {
    static_assert(is_element_type_v<T>);
    Scalar s;
    s.dtype_ = dtype_of<T>();
    if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>) s.f_ = static_cast<float>(v);
    else if constexpr (std::is_floating_point_v<T>) s.f_ = v;
    else s.i_ = static_cast<int64_t>(v);  // uint64 keeps its bits
    return s;
  }

  DType dtype() const { return dtype_; }

  // The value converted to T with C++ conversion rules (through float for
  // the half types, which have no conversion from integers).
  template <typename T>
  T to() const {
    if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>) {
      return T(is_floating(dtype_) ? f_ : dtype_ == DType::kUInt64 ? static_cast<double>(static_cast<uint64_t>(i_))
                                                                   : static_cast<double>(i_));
    } else {
      if (is_floating(dtype_)) return static_cast<T>(f_);
      if (dtype_ == DType::kUInt64) return static_cast<T>(static_cast<uint64_t>(i_));
      return static_cast<T>(i_);
    }
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
