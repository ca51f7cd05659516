#include "wok/runtime/scalar.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>

namespace wok {

Scalar Scalar::cast(DType t) const {
  return visit_any_dtype(t, [&](auto v) -> Scalar {
    using T = decltype(v);
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      // Out-of-range floats saturate (and nan becomes 0) instead of being
      // undefined behaviour: clamp(x, -inf, 5) on an int tensor must work.
      if (is_floating(dtype_)) {
        if (std::isnan(f_)) return of(T{0});
        if (f_ <= static_cast<double>(std::numeric_limits<T>::min())) return of(std::numeric_limits<T>::min());
        if (f_ >= static_cast<double>(std::numeric_limits<T>::max())) return of(std::numeric_limits<T>::max());
      }
    }
    return of(to<T>());
  });
}

std::string Scalar::str() const {
  std::ostringstream out;
  if (dtype_ == DType::kBool) out << (i_ ? "true" : "false");
  else if (dtype_ == DType::kUInt64) out << static_cast<uint64_t>(i_);
  else if (is_integral(dtype_)) out << i_;
  else {
    out.precision(17);
    out << f_;
  }
  return out.str();
}

bool operator==(const Scalar& a, const Scalar& b) {
  if (a.dtype_ != b.dtype_) return false;
  // Bitwise for floats so that nan == nan and -0 != +0: two constants are
  // interchangeable only if they are the same bits.
  if (is_floating(a.dtype_)) return std::memcmp(&a.f_, &b.f_, sizeof(double)) == 0;
  return a.i_ == b.i_;
}

}  // namespace wok
