// 16-bit floating-point element types: wok::half (IEEE 754 binary16) and
// wok::bfloat16 (the top half of a float32). They are storage formats:
// arithmetic converts to float, computes there, and rounds back once on
// store (see the "Half precision" section of docs/numerics.md).
//
// The scalar conversions here are portable C++ and constexpr; they are also
// the reference the vector loops (runtime/kernels/cpu/half_convert.cpp) are
// tested against bit for bit (tests/half_test.cpp).
#pragma once

#include <bit>
#include <compare>
#include <cstdint>
#include <limits>
#include <type_traits>

// Note [Always inline in kernel builds]
// The kernels in runtime/kernels/cpu/ are compiled three times, with
// different -m flags, and they call these conversions. An inline function
// that GCC chose not to inline would be emitted in every one of those
// objects under one name, and the linker keeps whichever copy it sees
// first: an AVX-512 copy could then run on a host without AVX-512.
// Forcing inlining means no out-of-line copy exists to be merged.
// (runtime/kernels/cpu/vec_math.h solves the same problem with
// per-ISA namespaces, which a type's member functions cannot use.)
#define WOK_HALF_INLINE [[gnu::always_inline]] inline constexpr

namespace wok {

namespace half_detail {

// Note [One rounding for every narrowing]
// float and double narrow to half and bfloat16 with one routine, on the
// integer encodings, so the result is rounded once, to nearest with ties to
// even, whatever the source. Going double -> float -> half would round
// twice and be wrong when the first rounding lands exactly on a half-way
// point of the second (1 + 2^-11 + 2^-40 would become 1, not 1 + 2^-10).
//
//  - NaN stays NaN: sign kept, the payload's top bits kept, and the quiet
//    bit set (x86's vcvtps2ph and vcvtneps2bf16 do the same, so the vector
//    loops agree with this code on NaNs too).
//  - Past the largest finite value, rounding goes to infinity as IEEE 754
//    says: a value rounds as if the exponent range were unbounded, and a
//    result beyond the largest finite one becomes inf. For half, 65520 (the
//    midpoint between 65504 and 2^16) and above become inf; just below it,
//    65504.
//  - Into the destination's subnormal range, the value is rounded in units
//    of its smallest subnormal, so tiny inputs (float32 subnormals too)
//    round correctly to subnormals or to a zero of their sign.

// x / 2^shift rounded to nearest, ties to even (shift >= 1; x small enough
// not to overflow when half a unit is added).
template <typename Bits>
WOK_HALF_INLINE Bits shift_right_rounding(Bits x, int shift) {
  const Bits lowest_kept = (x >> shift) & 1;
  return (x + (Bits{1} << (shift - 1)) - 1 + lowest_kept) >> shift;
}

// The 16-bit encoding nearest `value` in a format with kDstExponent
// exponent bits and kDstFraction fraction bits (half: 5, 10; bfloat16: 8,
// 7). Note [One rounding for every narrowing].
template <int kDstExponent, int kDstFraction, typename Src>
WOK_HALF_INLINE uint16_t narrow(Src value) {
  static_assert(std::is_same_v<Src, float> || std::is_same_v<Src, double>);
  static_assert(1 + kDstExponent + kDstFraction == 16);
  using Bits = std::conditional_t<std::is_same_v<Src, float>, uint32_t, uint64_t>;
  constexpr int kSrcFraction = std::numeric_limits<Src>::digits - 1;
  constexpr int kSrcBias = std::numeric_limits<Src>::max_exponent - 1;
  constexpr int kDstBias = (1 << (kDstExponent - 1)) - 1;
  constexpr int kDropped = kSrcFraction - kDstFraction;
  constexpr Bits kSrcSign = Bits{1} << (8 * sizeof(Bits) - 1);
  constexpr Bits kSrcFractionMask = (Bits{1} << kSrcFraction) - 1;
  constexpr Bits kSrcInf = ~kSrcSign & ~kSrcFractionMask;
  constexpr uint16_t kDstInf = ((1u << kDstExponent) - 1) << kDstFraction;
  constexpr uint16_t kDstQuiet = 1u << (kDstFraction - 1);
  constexpr uint16_t kDstFractionMask = (1u << kDstFraction) - 1;

  const Bits bits = std::bit_cast<Bits>(value);
  const uint16_t sign = (bits & kSrcSign) ? 0x8000 : 0;
  const Bits magnitude = bits & ~kSrcSign;
  if (magnitude > kSrcInf)
    return sign | kDstInf | kDstQuiet | static_cast<uint16_t>((magnitude >> kDropped) & kDstFractionMask);
  const int exponent = static_cast<int>(magnitude >> kSrcFraction);  // biased; 0 for subnormals
  // 2^(kDstBias + 1) and beyond (inf too): past every finite destination value.
  if (exponent > kSrcBias + kDstBias) return sign | kDstInf;
  if (exponent > kSrcBias - kDstBias) {
    // A normal destination value: rebias the exponent and round the fraction.
    // A carry out of the fraction correctly bumps the exponent, up to inf.
    const Bits rebased = magnitude - (Bits(kSrcBias - kDstBias) << kSrcFraction);
    return sign | static_cast<uint16_t>(shift_right_rounding(rebased, kDropped));
  }
  // Subnormal (or zero) destination: count in units of its smallest
  // subnormal, 2^(1 - kDstBias - kDstFraction). A count of 2^kDstFraction
  // is the smallest normal, whose encoding it already is.
  const Bits significand = (magnitude & kSrcFractionMask) | (exponent ? Bits{1} << kSrcFraction : 0);
  const int shift = kSrcBias + kSrcFraction + 1 - kDstBias - kDstFraction - (exponent ? exponent : 1);
  if (shift > kSrcFraction + 1) return sign;  // below half the smallest subnormal
  return sign | static_cast<uint16_t>(shift_right_rounding(significand, shift));
}

// float32 -> bfloat16 is the common case and has a short form, because the
// two share an exponent: round the float's bit pattern at bit 16. This is
// narrow<8, 7>(float) (the tests check both against a reference) and the
// formula the vector loops use.
WOK_HALF_INLINE uint16_t float_to_bfloat16_bits(float value) {
  const uint32_t bits = std::bit_cast<uint32_t>(value);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((bits >> 16) | 0x0040u);
  return static_cast<uint16_t>(shift_right_rounding(bits, 16));
}

// Exact: every half is a float. NaNs come back quiet with their payload, as
// vcvtph2ps returns them.
WOK_HALF_INLINE float half_bits_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1Fu;
  const uint32_t fraction = h & 0x3FFu;
  if (exponent == 0x1F) {
    const uint32_t nan_bits = fraction ? 0x00400000u | (fraction << 13) : 0;
    return std::bit_cast<float>(sign | 0x7F800000u | nan_bits);
  }
  if (exponent == 0) {
    if (fraction == 0) return std::bit_cast<float>(sign);
    // fraction * 2^-24 with its top bit at 2^(top - 24): a float normal.
    const int top = std::bit_width(fraction) - 1;
    const uint32_t float_fraction = (fraction << (23 - top)) & 0x7FFFFFu;
    return std::bit_cast<float>(sign | static_cast<uint32_t>(top + 103) << 23 | float_fraction);
  }
  return std::bit_cast<float>(sign | (exponent + 112) << 23 | fraction << 13);
}

// Exact, NaNs included: the bits are the float's top half.
WOK_HALF_INLINE float bfloat16_bits_to_float(uint16_t b) {
  return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}

struct FromBits {};

}  // namespace half_detail

// IEEE 754 binary16: 1 sign, 5 exponent, 10 fraction bits; 65504 at most,
// subnormals down to 2^-24. Converts to float implicitly and exactly, from
// float or double explicitly (round to nearest even, once). There is no
// constructor from integers: a large int64 would round once to double and
// again to half, so the caller chooses the route. Default construction
// leaves `bits` uninitialized, as for float.
struct half {
  uint16_t bits;

  half() = default;
  WOK_HALF_INLINE explicit half(float value) : bits(half_detail::narrow<5, 10>(value)) {}
  WOK_HALF_INLINE explicit half(double value) : bits(half_detail::narrow<5, 10>(value)) {}
  WOK_HALF_INLINE static half from_bits(uint16_t raw) { return half(half_detail::FromBits{}, raw); }

  WOK_HALF_INLINE operator float() const { return half_detail::half_bits_to_float(bits); }

  // As floats: NaN is unordered and unequal to itself, -0 == +0.
  WOK_HALF_INLINE friend bool operator==(half a, half b) { return float(a) == float(b); }
  WOK_HALF_INLINE friend std::partial_ordering operator<=>(half a, half b) { return float(a) <=> float(b); }

 private:
  WOK_HALF_INLINE half(half_detail::FromBits, uint16_t b) : bits(b) {}
};

// bfloat16: float32's sign and 8 exponent bits with 7 fraction bits; the
// range of float32 at 8 bits of precision. Converts like half.
struct bfloat16 {
  uint16_t bits;

  bfloat16() = default;
  WOK_HALF_INLINE explicit bfloat16(float value) : bits(half_detail::float_to_bfloat16_bits(value)) {}
  WOK_HALF_INLINE explicit bfloat16(double value) : bits(half_detail::narrow<8, 7>(value)) {}
  WOK_HALF_INLINE static bfloat16 from_bits(uint16_t raw) { return bfloat16(half_detail::FromBits{}, raw); }

  WOK_HALF_INLINE operator float() const { return half_detail::bfloat16_bits_to_float(bits); }

  WOK_HALF_INLINE friend bool operator==(bfloat16 a, bfloat16 b) { return float(a) == float(b); }
  WOK_HALF_INLINE friend std::partial_ordering operator<=>(bfloat16 a, bfloat16 b) {
    return float(a) <=> float(b);
  }

 private:
  WOK_HALF_INLINE bfloat16(half_detail::FromBits, uint16_t b) : bits(b) {}
};

// What the DType enum and the kernels will rely on: 2 bytes, copyable
// with memcpy, no constructor run for a fresh buffer.
static_assert(sizeof(half) == 2 && alignof(half) == 2);
static_assert(sizeof(bfloat16) == 2 && alignof(bfloat16) == 2);
static_assert(std::is_trivially_copyable_v<half> && std::is_trivially_default_constructible_v<half>);
static_assert(std::is_trivially_copyable_v<bfloat16> && std::is_trivially_default_constructible_v<bfloat16>);
static_assert(std::is_standard_layout_v<half> && std::is_standard_layout_v<bfloat16>);

// Bulk conversion of n elements (n >= 0, else ArgumentError) with the
// widest vector code this host runs (WOK_CPU_ISA caps it, as it caps the
// precompiled kernels). Bit for bit the scalar conversions above.
void half_to_float(const half* in, float* out, int64_t n);
void float_to_half(const float* in, half* out, int64_t n);
void bfloat16_to_float(const bfloat16* in, float* out, int64_t n);
void float_to_bfloat16(const float* in, bfloat16* out, int64_t n);

}  // namespace wok

// The standard traits, so code generic over element types
// (std::numeric_limits<T>::infinity(), ::max(), ::epsilon()) takes these
// types as well.
template <>
struct std::numeric_limits<wok::half> {
  static constexpr bool is_specialized = true;
  // 2^-14, smallest normal
  static constexpr wok::half min() noexcept { return wok::half::from_bits(0x0400); }
  static constexpr wok::half max() noexcept { return wok::half::from_bits(0x7BFF); }  // 65504
  static constexpr wok::half lowest() noexcept { return wok::half::from_bits(0xFBFF); }
  static constexpr int digits = 11;
  static constexpr int digits10 = 3;
  static constexpr int max_digits10 = 5;
  static constexpr bool is_signed = true;
  static constexpr bool is_integer = false;
  static constexpr bool is_exact = false;
  static constexpr int radix = 2;
  static constexpr wok::half epsilon() noexcept { return wok::half::from_bits(0x1400); }  // 2^-10
  static constexpr wok::half round_error() noexcept { return wok::half::from_bits(0x3800); }  // 0.5
  static constexpr int min_exponent = -13;
  static constexpr int min_exponent10 = -4;
  static constexpr int max_exponent = 16;
  static constexpr int max_exponent10 = 4;
  static constexpr bool has_infinity = true;
  static constexpr bool has_quiet_NaN = true;
  static constexpr bool has_signaling_NaN = true;
  static constexpr float_denorm_style has_denorm = denorm_present;
  static constexpr bool has_denorm_loss = false;
  static constexpr wok::half infinity() noexcept { return wok::half::from_bits(0x7C00); }
  static constexpr wok::half quiet_NaN() noexcept { return wok::half::from_bits(0x7E00); }
  static constexpr wok::half signaling_NaN() noexcept { return wok::half::from_bits(0x7D00); }
  // 2^-24
  static constexpr wok::half denorm_min() noexcept { return wok::half::from_bits(0x0001); }
  static constexpr bool is_iec559 = true;
  static constexpr bool is_bounded = true;
  static constexpr bool is_modulo = false;
  static constexpr bool traps = false;
  static constexpr bool tinyness_before = false;
  static constexpr float_round_style round_style = round_to_nearest;
};

template <>
struct std::numeric_limits<wok::bfloat16> {
  static constexpr bool is_specialized = true;
  // 2^-126, smallest normal
  static constexpr wok::bfloat16 min() noexcept { return wok::bfloat16::from_bits(0x0080); }
  // (2 - 2^-7) * 2^127
  static constexpr wok::bfloat16 max() noexcept { return wok::bfloat16::from_bits(0x7F7F); }
  static constexpr wok::bfloat16 lowest() noexcept { return wok::bfloat16::from_bits(0xFF7F); }
  static constexpr int digits = 8;
  static constexpr int digits10 = 2;
  static constexpr int max_digits10 = 4;
  static constexpr bool is_signed = true;
  static constexpr bool is_integer = false;
  static constexpr bool is_exact = false;
  static constexpr int radix = 2;
  // 2^-7
  static constexpr wok::bfloat16 epsilon() noexcept { return wok::bfloat16::from_bits(0x3C00); }
  // 0.5
  static constexpr wok::bfloat16 round_error() noexcept { return wok::bfloat16::from_bits(0x3F00); }
  static constexpr int min_exponent = -125;
  static constexpr int min_exponent10 = -37;
  static constexpr int max_exponent = 128;
  static constexpr int max_exponent10 = 38;
  static constexpr bool has_infinity = true;
  static constexpr bool has_quiet_NaN = true;
  static constexpr bool has_signaling_NaN = true;
  static constexpr float_denorm_style has_denorm = denorm_present;
  static constexpr bool has_denorm_loss = false;
  static constexpr wok::bfloat16 infinity() noexcept { return wok::bfloat16::from_bits(0x7F80); }
  static constexpr wok::bfloat16 quiet_NaN() noexcept { return wok::bfloat16::from_bits(0x7FC0); }
  static constexpr wok::bfloat16 signaling_NaN() noexcept { return wok::bfloat16::from_bits(0x7FA0); }
  // 2^-133
  static constexpr wok::bfloat16 denorm_min() noexcept { return wok::bfloat16::from_bits(0x0001); }
  static constexpr bool is_iec559 = false;  // not an IEEE 754 interchange format
  static constexpr bool is_bounded = true;
  static constexpr bool is_modulo = false;
  static constexpr bool traps = false;
  static constexpr bool tinyness_before = false;
  static constexpr float_round_style round_style = round_to_nearest;
};

#undef WOK_HALF_INLINE
