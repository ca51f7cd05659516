// The conversion of one element between any two dtypes: the cast rules of
// docs/numerics.md ("Casts"), written once for every kernel and for the
// frontend's to_vector. Spelled out because static_cast is undefined for
// out-of-range floats and ambiguous for the half types.
#pragma once

#include <cstdint>
#include <limits>
#include <type_traits>

#include "wok/runtime/half.h"

namespace wok {

template <typename T>
inline constexpr bool is_half_type_v = std::is_same_v<T, half> || std::is_same_v<T, bfloat16>;

// Note [Float to integer casts]
// Truncation toward zero. To int32 and int64, nan, infinities and values
// out of range give the most negative integer, as x86's conversion
// instructions (and so the JIT) give. The narrower integers convert through
// int32 and uint32 through int64, then wrap to their width, as the JIT's
// widened registers do: 300.7 -> uint8 44, -1.5 -> uint8 255, nan -> 0.
// uint64 takes [2^63, 2^64) exactly and the rest through int64.
template <typename Out, typename In>
[[gnu::always_inline]] inline Out float_to_int(In x) {
  if constexpr (std::is_same_v<Out, int32_t> || std::is_same_v<Out, int64_t>) {
    constexpr In kLimit = static_cast<In>(std::numeric_limits<Out>::max()) + In(1);  // 2^31 or 2^63, exact
    const bool out_of_range = !(x > -kLimit - In(1) && x < kLimit);                  // also true for nan
    return out_of_range ? std::numeric_limits<Out>::min() : static_cast<Out>(x);
  } else if constexpr (std::is_same_v<Out, uint64_t>) {
    constexpr In k63 = In(9223372036854775808.0), k64 = In(18446744073709551616.0);
    if (x >= k63 && x < k64) return static_cast<uint64_t>(x);
    return static_cast<uint64_t>(float_to_int<int64_t>(x));
  } else if constexpr (std::is_same_v<Out, uint32_t>) {
    return static_cast<Out>(float_to_int<int64_t>(x));
  } else {
    return static_cast<Out>(float_to_int<int32_t>(x));
  }
}

// `v` as an element of type To.
template <typename To, typename From>
[[gnu::always_inline]] inline To element_cast(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else if constexpr (is_half_type_v<From>) {
    return element_cast<To>(static_cast<float>(v));  // exact
  } else if constexpr (std::is_same_v<To, bool>) {
    return v != From(0);
  } else if constexpr (is_half_type_v<To>) {
    // One rounding from float or double; integers through double, exact up
    // to 2^53 (far beyond both types' ranges but for bfloat16's).
    if constexpr (std::is_floating_point_v<From>) return To(v);
    else return To(static_cast<double>(v));
  } else if constexpr (std::is_floating_point_v<From> && std::is_integral_v<To>) {
    return float_to_int<To>(v);
  } else {
    return static_cast<To>(v);  // integers wrap; to floats rounds once
  }
}

}  // namespace wok
