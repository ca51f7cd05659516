// Integer arithmetic that wraps around (two's complement), as the JIT's
// instructions do and as docs/numerics.md promises for integer ops and
// reductions, instead of being undefined on overflow. Floats pass through.
//
// always_inline: the precompiled kernels include this from builds for
// several instruction sets; an out-of-line copy chosen by the linker from an
// AVX-512 object must never serve a baseline caller.
#pragma once

#include <type_traits>

namespace wok {

template <typename T>
inline constexpr bool is_wrapping_int_v = std::is_integral_v<T> && !std::is_same_v<T, bool>;

namespace detail {
// Unsigned arithmetic at least as wide as unsigned int: uint16_t * uint16_t
// would promote to (signed) int and overflow. Floats keep their type.
template <typename T, bool = is_wrapping_int_v<T>>
struct WrapWord {
  using type = T;
};
template <typename T>
struct WrapWord<T, true> {
  using type = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;
};
template <typename T>
using wrap_word_t = typename WrapWord<T>::type;
}  // namespace detail

template <typename T>
[[gnu::always_inline]] inline constexpr T wrap_add(T a, T b) {
  using U = detail::wrap_word_t<T>;
  return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
}
template <typename T>
[[gnu::always_inline]] inline constexpr T wrap_sub(T a, T b) {
  using U = detail::wrap_word_t<T>;
  return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
}
template <typename T>
[[gnu::always_inline]] inline constexpr T wrap_mul(T a, T b) {
  using U = detail::wrap_word_t<T>;
  return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
}

}  // namespace wok
