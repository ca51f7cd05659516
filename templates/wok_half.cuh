// float16 and bfloat16 on the device: the storage types wok::f16 and
// wok::bf16 (raw bits, so no CUDA header is needed) and their conversions,
// which give the CPU's bits (runtime/half.h), NaNs included.
//
// Note [Device half conversions]
// The portable code here is runtime/half.h's, spelled for NVRTC (no std
// headers, no constexpr bit_cast): one rounding to nearest even from float
// or double, NaN kept quiet with its sign and top payload bits, subnormals
// rounded like any other value. tests/cuda_half_host_test.cpp compiles this
// file as host C++ and checks it against runtime/half.h for every 16-bit
// pattern, a dense sweep of floats, and the doubles whose double rounding
// would show. On the device, the float <-> float16 conversions of ordinary
// values use the PTX cvt instructions (one instruction, IEEE rounding to
// nearest even, the same result), because a kernel that converts every
// element would otherwise spend about a dozen integer instructions on each,
// as much as an H100 has per element of a memory-bound kernel; NaNs take
// the portable code, whose payload handling the instruction does not
// document. bfloat16 loads are a shift, and stores five integer
// instructions.
//
// WOK_DEVICE is defined by the includer (wok_device.cuh, or the host test).
#ifndef WOK_HALF_CUH
#define WOK_HALF_CUH

namespace wok {

struct f16 {
  unsigned short bits;
};
struct bf16 {
  unsigned short bits;
};

namespace half_detail {

// x's bytes read as a To (the low bytes, where To is smaller).
template <typename To, typename From>
WOK_DEVICE To bit_copy(From x) {
  union {
    From from;
    To to;
  } u;
  u.from = x;
  return u.to;
}

// x / 2^shift rounded to nearest, ties to even (shift >= 1).
template <typename B>
WOK_DEVICE B shift_right_rounding(B x, int shift) {
  const B lowest_kept = (x >> shift) & 1;
  return (x + (B(1) << (shift - 1)) - 1 + lowest_kept) >> shift;
}

template <typename Src>
struct Format;
template <>
struct Format<float> {
  using Bits = unsigned int;
  static constexpr int kFraction = 23, kBias = 127;
};
template <>
struct Format<double> {
  using Bits = unsigned long long;
  static constexpr int kFraction = 52, kBias = 1023;
};

// The 16-bit encoding nearest `value` in a format with kDstExponent exponent
// bits and kDstFraction fraction bits (float16: 5, 10; bfloat16: 8, 7);
// runtime/half.h's narrow (Note [One rounding for every narrowing] there).
template <int kDstExponent, int kDstFraction, typename Src>
WOK_DEVICE unsigned short narrow(Src value) {
  using Bits = typename Format<Src>::Bits;
  constexpr int kSrcFraction = Format<Src>::kFraction, kSrcBias = Format<Src>::kBias;
  constexpr int kDstBias = (1 << (kDstExponent - 1)) - 1;
  constexpr int kDropped = kSrcFraction - kDstFraction;
  constexpr Bits kSrcSign = Bits(1) << (8 * sizeof(Bits) - 1);
  constexpr Bits kSrcFractionMask = (Bits(1) << kSrcFraction) - 1;
  constexpr Bits kSrcInf = ~kSrcSign & ~kSrcFractionMask;
  constexpr unsigned kDstInf = ((1u << kDstExponent) - 1) << kDstFraction;
  constexpr unsigned kDstQuiet = 1u << (kDstFraction - 1);
  constexpr unsigned kDstFractionMask = (1u << kDstFraction) - 1;
  const Bits bits = bit_copy<Bits>(value);
  const unsigned sign = (bits & kSrcSign) ? 0x8000u : 0u;
  const Bits magnitude = bits & ~kSrcSign;
  if (magnitude > kSrcInf)
    return static_cast<unsigned short>(sign | kDstInf | kDstQuiet |
                                       static_cast<unsigned>((magnitude >> kDropped) & kDstFractionMask));
  const int exponent = static_cast<int>(magnitude >> kSrcFraction);  // biased; 0 for subnormals
  if (exponent > kSrcBias + kDstBias) return static_cast<unsigned short>(sign | kDstInf);
  if (exponent > kSrcBias - kDstBias) {
    const Bits rebased = magnitude - (Bits(kSrcBias - kDstBias) << kSrcFraction);
    return static_cast<unsigned short>(sign | static_cast<unsigned>(shift_right_rounding(rebased, kDropped)));
  }
  // Subnormal or zero destination: in units of its smallest subnormal.
  const Bits significand = (magnitude & kSrcFractionMask) | (exponent ? Bits(1) << kSrcFraction : Bits(0));
  const int shift = kSrcBias + kSrcFraction + 1 - kDstBias - kDstFraction - (exponent ? exponent : 1);
  if (shift > kSrcFraction + 1) return static_cast<unsigned short>(sign);
  return static_cast<unsigned short>(sign | static_cast<unsigned>(shift_right_rounding(significand, shift)));
}

// Exact: every float16 is a float. NaNs come back quiet with their payload.
WOK_DEVICE float f16_bits_to_float(unsigned short h) {
  const unsigned sign = static_cast<unsigned>(h & 0x8000u) << 16;
  const unsigned exponent = (h >> 10) & 0x1Fu, fraction = h & 0x3FFu;
  if (exponent == 0x1F) return bit_copy<float>(sign | 0x7F800000u | (fraction ? 0x00400000u | (fraction << 13) : 0u));
  if (exponent == 0) {
    const float magnitude = static_cast<float>(fraction) * 0x1p-24f;  // exact
    return sign ? -magnitude : magnitude;
  }
  return bit_copy<float>(sign | (exponent + 112) << 23 | fraction << 13);
}

// float -> bfloat16 rounds the float's bits at bit 16 (the two share an
// exponent); a NaN is made quiet.
WOK_DEVICE unsigned short float_to_bf16_bits(float value) {
  const unsigned bits = bit_copy<unsigned>(value);
  if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<unsigned short>((bits >> 16) | 0x0040u);
  return static_cast<unsigned short>(shift_right_rounding(bits, 16));
}

}  // namespace half_detail

WOK_DEVICE float to_float(f16 h) {
#if defined(__CUDA_ARCH__)
  if ((h.bits & 0x7FFFu) <= 0x7C00u) {  // not a NaN: Note [Device half conversions]
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h.bits));
    return f;
  }
#endif
  return half_detail::f16_bits_to_float(h.bits);
}
WOK_DEVICE float to_float(bf16 b) { return half_detail::bit_copy<float>(static_cast<unsigned>(b.bits) << 16); }

WOK_DEVICE f16 to_f16(float x) {
#if defined(__CUDA_ARCH__)
  if (x == x) {  // not a NaN: Note [Device half conversions]
    unsigned short h;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(x));
    return f16{h};
  }
#endif
  return f16{half_detail::narrow<5, 10>(x)};
}
WOK_DEVICE f16 to_f16(double x) { return f16{half_detail::narrow<5, 10>(x)}; }
WOK_DEVICE bf16 to_bf16(float x) { return bf16{half_detail::float_to_bf16_bits(x)}; }
WOK_DEVICE bf16 to_bf16(double x) { return bf16{half_detail::narrow<8, 7>(x)}; }

}  // namespace wok

#endif  // WOK_HALF_CUH
