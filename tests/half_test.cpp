// wok::half and wok::bfloat16: every 16-bit pattern through float and
// back, a few million float32 and float64 inputs against a reference that
// rounds by comparing with midpoints in exact double arithmetic, the special
// values, and the bulk loops of every instruction set this host runs
// against the scalar conversions, bit for bit.
#include "wok/runtime/half.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "wok/runtime/cpu_features.h"
#include "wok/runtime/error.h"
#include "wok/runtime/kernels/cpu/half_convert.h"

namespace {

using wok::bfloat16;
using wok::half;

uint32_t bits_of(float f) { return std::bit_cast<uint32_t>(f); }
uint64_t bits_of(double d) { return std::bit_cast<uint64_t>(d); }
float float_from(uint32_t b) { return std::bit_cast<float>(b); }
double double_from(uint64_t b) { return std::bit_cast<double>(b); }

// ---- the reference -----------------------------------------------------------------
// Written from the definitions, without the code under test: a 16-bit
// format is decoded with ldexp, and a value rounds to the nearer of the two
// encodings around it, found by binary search, by comparing it with their
// midpoint (exact in double, having one bit more than the format), the even
// encoding on a tie.

struct Format {
  int exponent_bits;
  int fraction_bits;
  int bias() const { return (1 << (exponent_bits - 1)) - 1; }
  uint16_t inf() const { return static_cast<uint16_t>(((1u << exponent_bits) - 1) << fraction_bits); }
  uint16_t quiet() const { return static_cast<uint16_t>(1u << (fraction_bits - 1)); }
};
constexpr Format kHalf{5, 10};
constexpr Format kBFloat16{8, 7};

// The value of a non-negative encoding, with the exponent field read as if
// it had no maximum: the infinity pattern decodes to 2^(emax + 1), the
// first value past the largest finite one, which is where IEEE 754 puts the
// overflow threshold (round as if the range were unbounded).
double decode(Format f, uint32_t bits) {
  const uint32_t exponent = bits >> f.fraction_bits;
  const uint32_t fraction = bits & ((1u << f.fraction_bits) - 1);
  if (exponent == 0) return std::ldexp(double(fraction), 1 - f.bias() - f.fraction_bits);
  return std::ldexp(double(fraction + (1u << f.fraction_bits)), int(exponent) - f.bias() - f.fraction_bits);
}

class Reference {
 public:
  explicit Reference(Format f) : format_(f) {
    for (uint32_t b = 0; b <= f.inf(); ++b) values_.push_back(decode(f, b));
  }

  // The encoding nearest x (not NaN); an exact double is rounded once.
  uint16_t round(double x) const {
    const uint16_t sign = std::signbit(x) ? 0x8000 : 0;
    const double a = std::fabs(x);
    if (a >= values_.back()) return sign | format_.inf();
    const size_t above = std::upper_bound(values_.begin(), values_.end(), a) - values_.begin();
    const size_t below = above - 1;  // values_[0] == 0 <= a
    if (values_[below] == a) return static_cast<uint16_t>(sign | below);
    const double midpoint = (values_[below] + values_[above]) / 2;
    const size_t nearest = a < midpoint ? below : a > midpoint ? above : (below % 2 == 0 ? below : above);
    return static_cast<uint16_t>(sign | nearest);
  }

  // What a NaN becomes: its sign, the top fraction bits that fit, quiet.
  uint16_t nan(bool negative, uint64_t fraction, int source_fraction_bits) const {
    const uint16_t payload = static_cast<uint16_t>(fraction >> (source_fraction_bits - format_.fraction_bits));
    return static_cast<uint16_t>((negative ? 0x8000 : 0) | format_.inf() | format_.quiet() | payload);
  }
  uint16_t of(float x) const {
    return std::isnan(x) ? nan(std::signbit(x), bits_of(x) & 0x7FFFFF, 23) : round(x);
  }
  uint16_t of(double x) const {
    return std::isnan(x) ? nan(std::signbit(x), bits_of(x) & 0xFFFFFFFFFFFFFull, 52) : round(x);
  }

 private:
  Format format_;
  std::vector<double> values_;  // values_[b] = decode(b), increasing
};

const Reference& half_reference() {
  static const Reference r(kHalf);
  return r;
}
const Reference& bfloat16_reference() {
  static const Reference r(kBFloat16);
  return r;
}

// ---- inputs --------------------------------------------------------------------------

void add_window(std::vector<uint32_t>& out, uint32_t center, uint32_t radius) {
  for (uint32_t d = 0; d <= 2 * radius; ++d) {
    const uint64_t b = uint64_t(center) + d - radius;
    if (b <= 0xFFFFFFFFu) out.push_back(static_cast<uint32_t>(b));
  }
}

// About 3.2 million float32 bit patterns: a stride through all of them,
// and every pattern that rounding can treat differently near the points
// where it matters, both signs.
const std::vector<uint32_t>& float_sweep() {
  static const std::vector<uint32_t> inputs = [] {
    std::vector<uint32_t> v;
    // Every 2053rd pattern (odd, so the dropped bits vary): NaNs, infs,
    // subnormals and everything between.
    for (uint64_t b = 0; b <= 0xFFFFFFFFu; b += 2053) v.push_back(static_cast<uint32_t>(b));
    for (uint32_t sign : {0u, 0x80000000u}) {
      // half: each kept fraction of each float exponent from below the half
      // subnormals (2^-27) to past the overflow, with the 13 dropped bits at
      // zero, just above zero, just below and at the tie, just above it, all ones.
      for (uint32_t exponent = 100; exponent <= 144; ++exponent)
        for (uint32_t kept = 0; kept < 1024; ++kept)
          for (uint32_t dropped : {0x0000u, 0x0001u, 0x0FFFu, 0x1000u, 0x1001u, 0x1FFFu})
            v.push_back(sign | exponent << 23 | kept << 13 | dropped);
      // half subnormals round at a coarser bit: around each tie (k + 1/2) 2^-24.
      for (uint32_t k = 0; k < 1024; ++k) add_window(v, sign | bits_of(std::ldexp(k + 0.5f, -24)), 3);
      // bfloat16: each of the 2^15 kept patterns (subnormals, NaNs and infs
      // included) with the 16 dropped bits around zero and the tie.
      for (uint32_t kept = 0; kept < 0x8000; ++kept)
        for (uint32_t dropped : {0x0000u, 0x0001u, 0x7FFFu, 0x8000u, 0x8001u, 0xFFFFu})
          v.push_back(sign | kept << 16 | dropped);
      // The thresholds: half's largest finite (65504), overflow midpoint
      // (65520), 2^16, smallest normal, smallest subnormal and half of it;
      // float32's largest finite, bfloat16's overflow midpoint, float32's
      // smallest normal and its subnormals next to zero.
      for (uint32_t center : {0x477FE000u, 0x477FF000u, 0x47800000u, 0x38800000u, 0x33800000u, 0x33000000u,
                              0x7F7FFFFFu, 0x7F7F8000u, 0x00800000u, 0x00001000u})
        add_window(v, sign | center, 4096);
    }
    return v;
  }();
  return inputs;
}

// Bit patterns to feed both float and double conversions.
std::vector<float> sweep_floats() {
  std::vector<float> f;
  for (uint32_t b : float_sweep()) f.push_back(float_from(b));
  return f;
}

// float64 inputs: a stride through all doubles (most overflow or
// underflow the 16-bit formats), and the doubles one ulp either side of each
// float that lies on a half or bfloat16 tie, where rounding through float32
// first would land on the tie and go to even.
std::vector<double> double_sweep() {
  std::vector<double> v;
  for (uint64_t b = 0; b < (uint64_t(1) << 63); b += (uint64_t(1) << 45) + 1) {
    v.push_back(double_from(b));
    v.push_back(-double_from(b));
  }
  std::vector<double> ties;
  for (uint32_t b : float_sweep())
    if ((b & 0x1FFF) == 0x1000 || (b & 0xFFFF) == 0x8000) ties.push_back(float_from(b));
  for (int k = 0; k < 1024; ++k) ties.push_back(std::ldexp(k + 0.5, -24));  // half subnormal ties
  for (double t : ties) {
    v.push_back(t);
    if (std::isfinite(t)) {
      v.push_back(std::nextafter(t, -INFINITY));
      v.push_back(std::nextafter(t, INFINITY));
    }
  }
  return v;
}

// ---- the type ------------------------------------------------------------------------

// The conversions work in constant expressions.
static_assert(half(1.0f).bits == 0x3C00);
static_assert(half(-2.0).bits == 0xC000);
static_assert(float(half::from_bits(0x3555)) == 0x1.554p-2f);
static_assert(float(half::from_bits(0x0001)) == 0x1p-24f);
static_assert(bfloat16(1.0f).bits == 0x3F80);
static_assert(float(bfloat16::from_bits(0x4049)) == 3.140625f);
static_assert(half(1.0f) < half(2.0f) && bfloat16(3.0) > bfloat16(-3.0));

TEST(HalfType, LayoutAndTraits) {
  EXPECT_EQ(sizeof(half), 2u);
  EXPECT_EQ(sizeof(bfloat16), 2u);
  EXPECT_TRUE(std::is_trivially_copyable_v<half>);
  EXPECT_TRUE(std::is_trivially_copyable_v<bfloat16>);
  // An array of them is raw storage, as a tensor's buffer will be.
  half h[3] = {half(1.0f), half(2.0f), half(3.0f)};
  uint16_t raw[3];
  std::memcpy(raw, h, sizeof(h));
  EXPECT_EQ(raw[2], 0x4200);
}

TEST(HalfType, NumericLimits) {
  using HL = std::numeric_limits<half>;
  EXPECT_TRUE(HL::is_specialized);
  EXPECT_EQ(float(HL::max()), 65504.0f);
  EXPECT_EQ(float(HL::lowest()), -65504.0f);
  EXPECT_EQ(float(HL::min()), std::ldexp(1.0f, -14));
  EXPECT_EQ(float(HL::denorm_min()), std::ldexp(1.0f, -24));
  EXPECT_EQ(float(HL::epsilon()), std::ldexp(1.0f, -10));
  EXPECT_EQ(float(half::from_bits(0x3C01)) - 1.0f, float(HL::epsilon()));
  EXPECT_EQ(float(HL::round_error()), 0.5f);
  EXPECT_EQ(float(HL::infinity()), INFINITY);
  EXPECT_TRUE(std::isnan(float(HL::quiet_NaN())));
  EXPECT_TRUE(std::isnan(float(HL::signaling_NaN())));
  EXPECT_EQ(HL::quiet_NaN().bits & 0x0200, 0x0200);
  EXPECT_EQ(HL::signaling_NaN().bits & 0x0200, 0);
  EXPECT_EQ(std::ldexp(1.0, HL::min_exponent - 1), float(HL::min()));
  EXPECT_EQ(std::ldexp(1.0, HL::max_exponent), 65536.0);
  EXPECT_EQ(HL::digits, 11);

  using BL = std::numeric_limits<bfloat16>;
  EXPECT_TRUE(BL::is_specialized);
  EXPECT_EQ(float(BL::max()), std::ldexp(255.0f, 120));
  EXPECT_EQ(float(BL::lowest()), -std::ldexp(255.0f, 120));
  EXPECT_EQ(float(BL::min()), std::numeric_limits<float>::min());
  EXPECT_EQ(float(BL::denorm_min()), std::ldexp(1.0f, -133));
  EXPECT_EQ(float(BL::epsilon()), std::ldexp(1.0f, -7));
  EXPECT_EQ(float(bfloat16::from_bits(0x3F81)) - 1.0f, float(BL::epsilon()));
  EXPECT_EQ(float(BL::round_error()), 0.5f);
  EXPECT_EQ(float(BL::infinity()), INFINITY);
  EXPECT_TRUE(std::isnan(float(BL::quiet_NaN())));
  EXPECT_TRUE(std::isnan(float(BL::signaling_NaN())));
  EXPECT_EQ(BL::quiet_NaN().bits & 0x0040, 0x0040);
  EXPECT_EQ(BL::signaling_NaN().bits & 0x0040, 0);
  EXPECT_EQ(BL::min_exponent, std::numeric_limits<float>::min_exponent);
  EXPECT_EQ(BL::max_exponent, std::numeric_limits<float>::max_exponent);
  EXPECT_EQ(BL::digits, 8);
}

TEST(HalfType, ComparesAsFloat) {
  const half nan = std::numeric_limits<half>::quiet_NaN();
  EXPECT_TRUE(half(1.0f) < half(1.5f));
  EXPECT_TRUE(half(-1.0f) <= half(-1.0f));
  EXPECT_TRUE(half(0.0f) == half(-0.0f));  // different bits, equal values
  EXPECT_FALSE(nan == nan);
  EXPECT_TRUE(nan != nan);
  EXPECT_FALSE(nan < half(1.0f) || nan > half(1.0f) || nan <= nan);
  EXPECT_TRUE(half(2.0f) == 2.0f);  // against a float, through the conversion
  EXPECT_TRUE(std::isnan(nan));
  EXPECT_EQ(half(1.5f) + half(2.25f), 3.75f);  // arithmetic happens in float

  const bfloat16 bnan = std::numeric_limits<bfloat16>::quiet_NaN();
  EXPECT_TRUE(bfloat16(1.0f) < bfloat16(1.5f));
  EXPECT_TRUE(bfloat16(0.0f) == bfloat16(-0.0f));
  EXPECT_FALSE(bnan == bnan);
  EXPECT_FALSE(bnan < bfloat16(1.0f) || bnan >= bfloat16(1.0f));
  EXPECT_TRUE(std::isinf(std::numeric_limits<bfloat16>::infinity()));
}

// ---- every 16-bit pattern ------------------------------------------------------------

TEST(HalfConversion, EveryHalfToFloatAndBack) {
  for (uint32_t b = 0; b <= 0xFFFF; ++b) {
    const half h = half::from_bits(static_cast<uint16_t>(b));
    const float f = h;
    const bool negative = b & 0x8000;
    const uint32_t magnitude = b & 0x7FFF;
    if (magnitude > 0x7C00) {
      // NaN: quiet, sign and payload kept, and back the same way.
      ASSERT_EQ(bits_of(f), (negative ? 0x80000000u : 0u) | 0x7FC00000u | (magnitude & 0x3FF) << 13) << b;
      ASSERT_EQ(half(f).bits, b | 0x0200) << b;
      ASSERT_EQ(half(double(f)).bits, b | 0x0200) << b;
      continue;
    }
    const double expected = (negative ? -1 : 1) * decode(kHalf, magnitude);
    if (magnitude == 0x7C00) {
      ASSERT_EQ(f, negative ? -INFINITY : INFINITY) << b;
    } else {
      ASSERT_EQ(f, expected) << b;
    }
    ASSERT_EQ(std::signbit(f), negative) << b;
    ASSERT_EQ(half(f).bits, b) << b;
    ASSERT_EQ(half(double(f)).bits, b) << b;
  }
}

TEST(HalfConversion, EveryBFloat16ToFloatAndBack) {
  for (uint32_t b = 0; b <= 0xFFFF; ++b) {
    const bfloat16 h = bfloat16::from_bits(static_cast<uint16_t>(b));
    const float f = h;
    // Exact, NaNs included: the bits are the float's top half.
    ASSERT_EQ(bits_of(f), b << 16) << b;
    const uint32_t magnitude = b & 0x7FFF;
    if (magnitude > 0x7F80) {
      ASSERT_EQ(bfloat16(f).bits, b | 0x0040) << b;
      ASSERT_EQ(bfloat16(double(f)).bits, b | 0x0040) << b;
      continue;
    }
    if (magnitude < 0x7F80) {
      ASSERT_EQ(f, ((b & 0x8000) ? -1 : 1) * decode(kBFloat16, magnitude)) << b;
    }
    ASSERT_EQ(bfloat16(f).bits, b) << b;
    ASSERT_EQ(bfloat16(double(f)).bits, b) << b;
  }
}

// ---- rounding against the reference --------------------------------------------------

TEST(HalfConversion, FloatSweepMatchesReference) {
  const Reference& ref = half_reference();
  for (uint32_t b : float_sweep()) {
    const float x = float_from(b);
    ASSERT_EQ(half(x).bits, ref.of(x)) << std::hex << "float bits 0x" << b;
  }
}

TEST(HalfConversion, BFloat16FloatSweepMatchesReference) {
  const Reference& ref = bfloat16_reference();
  for (uint32_t b : float_sweep()) {
    const float x = float_from(b);
    const uint16_t expected = ref.of(x);
    ASSERT_EQ(bfloat16(x).bits, expected) << std::hex << "float bits 0x" << b;
    // The general routine the double conversion uses agrees with the short form.
    ASSERT_EQ((wok::half_detail::narrow<8, 7>(x)), expected) << std::hex << "float bits 0x" << b;
  }
}

// double -> half rounds once; double -> float -> half would round twice.
// The sweep must contain such cases, or it would not test the difference.
TEST(HalfConversion, DoubleSweepRoundsOnce) {
  const Reference& half_ref = half_reference();
  const Reference& bf_ref = bfloat16_reference();
  int64_t half_twice_differs = 0, bfloat16_twice_differs = 0;
  for (double x : double_sweep()) {
    const uint16_t h = half_ref.of(x), b = bf_ref.of(x);
    ASSERT_EQ(half(x).bits, h) << std::hexfloat << x;
    ASSERT_EQ(bfloat16(x).bits, b) << std::hexfloat << x;
    half_twice_differs += half(float(x)).bits != h;
    bfloat16_twice_differs += bfloat16(float(x)).bits != b;
  }
  EXPECT_GT(half_twice_differs, 10000);
  EXPECT_GT(bfloat16_twice_differs, 10000);
}

TEST(HalfConversion, DoubleRoundingCases) {
  // Just above a half tie: rounding to float lands on the tie, which then
  // goes to even (1.0); rounding once goes up.
  const double above_tie = 1.0 + 0x1p-11 + 0x1p-40;
  EXPECT_EQ(half(above_tie).bits, 0x3C01);
  EXPECT_EQ(half(float(above_tie)).bits, 0x3C00);
  // Just below one: the float tie goes up to even, once stays below.
  const double below_tie = 1.0 + 3 * 0x1p-11 - 0x1p-40;
  EXPECT_EQ(half(below_tie).bits, 0x3C01);
  EXPECT_EQ(half(float(below_tie)).bits, 0x3C02);
  // Just below the overflow midpoint 65520: 65504, not inf.
  EXPECT_EQ(half(65520.0 - 0x1p-20).bits, 0x7BFF);
  EXPECT_EQ(half(float(65520.0 - 0x1p-20)).bits, 0x7C00);
  // Just above half the smallest subnormal: 2^-24, not 0.
  EXPECT_EQ(half(0x1p-25 + 0x1p-60).bits, 0x0001);
  EXPECT_EQ(half(float(0x1p-25 + 0x1p-60)).bits, 0x0000);
  // bfloat16: just above the tie between 1 and 1 + 2^-7.
  EXPECT_EQ(bfloat16(1.0 + 0x1p-8 + 0x1p-40).bits, 0x3F81);
  EXPECT_EQ(bfloat16(float(1.0 + 0x1p-8 + 0x1p-40)).bits, 0x3F80);
  // Past float32's range: finite doubles overflow to inf, or underflow past
  // float32 subnormals to a signed zero.
  EXPECT_EQ(bfloat16(1e300).bits, 0x7F80);
  EXPECT_EQ(bfloat16(-1e-300).bits, 0x8000);
  EXPECT_EQ(half(-1e300).bits, 0xFC00);
}

// ---- special values, by hand ---------------------------------------------------------

TEST(HalfConversion, SpecialValues) {
  struct Case {
    uint32_t float_bits;
    uint16_t half_bits, bfloat16_bits;
  };
  const Case cases[] = {
      {0x00000000, 0x0000, 0x0000},  // +0
      {0x80000000, 0x8000, 0x8000},  // -0
      {0x3F800000, 0x3C00, 0x3F80},  // 1
      {0x7F800000, 0x7C00, 0x7F80},  // +inf
      {0xFF800000, 0xFC00, 0xFF80},  // -inf
      {0x477FE000, 0x7BFF, 0x4780},  // 65504, half's largest finite
      {0x477FEFFF, 0x7BFF, 0x4780},  // just below the overflow midpoint
      {0x477FF000, 0x7C00, 0x4780},  // 65520: the tie goes to "even" inf
      {0xC77FF000, 0xFC00, 0xC780},
      {0x7F7FFFFF, 0x7C00, 0x7F80},  // float32's largest: bfloat16 rounds to inf
      {0x7F7F7FFF, 0x7C00, 0x7F7F},  // just below bfloat16's overflow midpoint
      {0x38800000, 0x0400, 0x3880},  // 2^-14, half's smallest normal
      {0x387FC000, 0x03FF, 0x3880},  // half's largest subnormal
      {0x387FE000, 0x0400, 0x3880},  // tie between it and the smallest normal: even
      {0x33800000, 0x0001, 0x3380},  // 2^-24, half's smallest subnormal
      {0x33000000, 0x0000, 0x3300},  // 2^-25: the tie goes to even zero
      {0xB3000000, 0x8000, 0xB300},  // ... of its sign
      {0x33000001, 0x0001, 0x3300},  // just above it
      {0x33C00000, 0x0002, 0x33C0},  // 3 * 2^-25: tie, to even 2 * 2^-24
      {0x00000001, 0x0000, 0x0000},  // float32's smallest subnormal
      {0x80000001, 0x8000, 0x8000},
      {0x00008000, 0x0000, 0x0000},  // float32 subnormal on a bfloat16 tie: even
      {0x00018000, 0x0000, 0x0002},  // ... and up to even
      {0x007FFFFF, 0x0000, 0x0080},  // largest float32 subnormal: bfloat16's smallest normal
      {0x3F801000, 0x3C00, 0x3F80},  // 1 + 2^-11: tie, down to even
      {0x3F803000, 0x3C02, 0x3F80},  // 1 + 3 * 2^-11: tie, up to even
      {0x3F808000, 0x3C04, 0x3F80},  // 1 + 2^-8: bfloat16 tie, down to even
      {0x3F818000, 0x3C0C, 0x3F82},  // 1 + 3 * 2^-8: bfloat16 tie, up to even
      {0x7FC00000, 0x7E00, 0x7FC0},  // quiet NaN
      {0xFFC00000, 0xFE00, 0xFFC0},  // negative quiet NaN
      {0x7F800001, 0x7E00, 0x7FC0},  // signaling, payload below what fits: quieted
      {0xFFA00000, 0xFF00, 0xFFE0},  // signaling with a payload that fits
      {0x7FFFFFFF, 0x7FFF, 0x7FFF},  // all payload bits
      {0x7F812345, 0x7E09, 0x7FC1},
  };
  for (const Case& c : cases) {
    const float x = float_from(c.float_bits);
    EXPECT_EQ(half(x).bits, c.half_bits) << std::hex << "float bits 0x" << c.float_bits;
    EXPECT_EQ(bfloat16(x).bits, c.bfloat16_bits) << std::hex << "float bits 0x" << c.float_bits;
    EXPECT_EQ(half(double(x)).bits, c.half_bits) << std::hex << "as double, float bits 0x" << c.float_bits;
    EXPECT_EQ(bfloat16(double(x)).bits, c.bfloat16_bits) << std::hex << "as double, float bits 0x" << c.float_bits;
  }
  // A double NaN keeps the top bits of its 52-bit payload.
  EXPECT_EQ(half(double_from(0xFFF4000000000001ull)).bits, 0xFF00);
  EXPECT_EQ(bfloat16(double_from(0x7FF0200000000000ull)).bits, 0x7FC1);
}

// ---- the bulk loops ------------------------------------------------------------------

std::vector<wok::CpuIsa> runnable_isas() {
  std::vector<wok::CpuIsa> isas;
  for (wok::CpuIsa isa : {wok::CpuIsa::kBaseline, wok::CpuIsa::kAvx2, wok::CpuIsa::kAvx512})
    if (isa <= wok::host_cpu_isa()) isas.push_back(isa);
  return isas;
}

// Every 16-bit pattern, and the float sweep, through each runnable
// variant: the same bits as the scalar conversions.
TEST(HalfBulkConversion, EveryIsaMatchesScalar) {
  std::vector<half> halves(0x10000);
  std::vector<bfloat16> bfloats(0x10000);
  for (uint32_t b = 0; b <= 0xFFFF; ++b) {
    halves[b] = half::from_bits(static_cast<uint16_t>(b));
    bfloats[b] = bfloat16::from_bits(static_cast<uint16_t>(b));
  }
  const std::vector<float> floats = sweep_floats();
  const int64_t n16 = 0x10000, nf = static_cast<int64_t>(floats.size());
  for (wok::CpuIsa isa : runnable_isas()) {
    SCOPED_TRACE(std::string(wok::cpu_isa_name(isa)));
    const wok::cpu::HalfConvertLoops& loops = wok::cpu::half_convert_loops(isa);
    std::vector<float> widened(n16);
    loops.half_to_float(halves.data(), widened.data(), n16);
    for (uint32_t b = 0; b < n16; ++b) ASSERT_EQ(bits_of(widened[b]), bits_of(float(halves[b]))) << b;
    loops.bfloat16_to_float(bfloats.data(), widened.data(), n16);
    for (uint32_t b = 0; b < n16; ++b) ASSERT_EQ(bits_of(widened[b]), bits_of(float(bfloats[b]))) << b;

    std::vector<half> narrowed(nf);
    loops.float_to_half(floats.data(), narrowed.data(), nf);
    for (int64_t i = 0; i < nf; ++i)
      ASSERT_EQ(narrowed[i].bits, half(floats[i]).bits) << std::hex << bits_of(floats[i]);
    std::vector<bfloat16> narrowed_bf(nf);
    loops.float_to_bfloat16(floats.data(), narrowed_bf.data(), nf);
    for (int64_t i = 0; i < nf; ++i)
      ASSERT_EQ(narrowed_bf[i].bits, bfloat16(floats[i]).bits) << std::hex << bits_of(floats[i]);
  }
}

// Lengths 0 to 70 from unaligned starts: the vector bodies, the tails, and
// nothing written past n.
TEST(HalfBulkConversion, TailsAndOffsets) {
  constexpr int kMaxN = 70, kGuard = 20;
  std::vector<float> floats(kMaxN + 8);
  std::vector<half> halves(kMaxN + 8);
  std::vector<bfloat16> bfloats(kMaxN + 8);
  for (size_t i = 0; i < floats.size(); ++i) {
    // Ties, NaNs, subnormals and plain values, mixed.
    const uint32_t patterns[] = {0x3F801000, 0x7FA00001, 0x00018000, 0x477FF000, 0xC0490FDB, 0x33000001};
    floats[i] = float_from(patterns[i % 6] + static_cast<uint32_t>(i));
    halves[i] = half::from_bits(static_cast<uint16_t>(0x7C01 + 977 * i));
    bfloats[i] = bfloat16::from_bits(static_cast<uint16_t>(0x7F81 + 977 * i));
  }
  const float kUntouched = -12345.0f;
  for (wok::CpuIsa isa : runnable_isas()) {
    const wok::cpu::HalfConvertLoops& loops = wok::cpu::half_convert_loops(isa);
    for (int offset = 0; offset < 4; ++offset) {
      for (int n = 0; n <= kMaxN; ++n) {
        SCOPED_TRACE(std::string(wok::cpu_isa_name(isa)) + " offset " + std::to_string(offset) + " n " +
                     std::to_string(n));
        std::vector<float> wide(n + kGuard, kUntouched);
        loops.half_to_float(halves.data() + offset, wide.data(), n);
        for (int i = 0; i < n; ++i) ASSERT_EQ(bits_of(wide[i]), bits_of(float(halves[offset + i])));
        for (int i = n; i < n + kGuard; ++i) ASSERT_EQ(wide[i], kUntouched);
        std::fill(wide.begin(), wide.end(), kUntouched);
        loops.bfloat16_to_float(bfloats.data() + offset, wide.data(), n);
        for (int i = 0; i < n; ++i) ASSERT_EQ(bits_of(wide[i]), bits_of(float(bfloats[offset + i])));
        for (int i = n; i < n + kGuard; ++i) ASSERT_EQ(wide[i], kUntouched);

        std::vector<half> narrow(n + kGuard, half::from_bits(0xABCD));
        loops.float_to_half(floats.data() + offset, narrow.data(), n);
        for (int i = 0; i < n; ++i) ASSERT_EQ(narrow[i].bits, half(floats[offset + i]).bits);
        for (int i = n; i < n + kGuard; ++i) ASSERT_EQ(narrow[i].bits, 0xABCD);
        std::vector<bfloat16> narrow_bf(n + kGuard, bfloat16::from_bits(0xABCD));
        loops.float_to_bfloat16(floats.data() + offset, narrow_bf.data(), n);
        for (int i = 0; i < n; ++i) ASSERT_EQ(narrow_bf[i].bits, bfloat16(floats[offset + i]).bits);
        for (int i = n; i < n + kGuard; ++i) ASSERT_EQ(narrow_bf[i].bits, 0xABCD);
      }
    }
  }
}

// The public loops run the host's variant, and check their count.
TEST(HalfBulkConversion, PublicLoops) {
  const float in[5] = {1.0f, 65520.0f, -0.0f, NAN, 0x1p-25f};
  half h[5];
  bfloat16 b[5];
  float back[5];
  wok::float_to_half(in, h, 5);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(h[i].bits, half(in[i]).bits) << i;
  wok::half_to_float(h, back, 5);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(bits_of(back[i]), bits_of(float(h[i]))) << i;
  wok::float_to_bfloat16(in, b, 5);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(b[i].bits, bfloat16(in[i]).bits) << i;
  wok::bfloat16_to_float(b, back, 5);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(bits_of(back[i]), bits_of(float(b[i]))) << i;

  wok::float_to_half(nullptr, nullptr, 0);  // nothing to do, nothing read
  try {
    wok::float_to_half(in, h, -1);
    FAIL() << "a negative count was accepted";
  } catch (const wok::ArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find("float_to_half"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("-1"), std::string::npos) << e.what();
  }
  EXPECT_THROW(wok::bfloat16_to_float(b, back, -3), wok::ArgumentError);
}

}  // namespace
