// The device's half conversions (templates/wok_half.cuh) compiled as host
// C++ and checked against the CPU's (runtime/half.h) bit for bit: every
// 16-bit pattern widened, floats around every half-way point and a sweep
// of all float32 magnitudes narrowed, and the doubles whose rounding in two
// steps would differ from one (Note [Device half conversions]). On the
// device, ordinary float <-> float16 values take the PTX cvt instructions
// instead; everything else is this code.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <random>
#include <string>

#include "wok/runtime/half.h"

namespace device {
#define WOK_DEVICE inline
#include "../templates/wok_half.cuh"
#undef WOK_DEVICE
}  // namespace device

namespace {

namespace dw = device::wok;

uint32_t bits_of(float f) { return std::bit_cast<uint32_t>(f); }

// float16 and bfloat16 narrowing of x, device against CPU; the first
// mismatch is reported with its input.
template <typename T>
::testing::AssertionResult narrows_alike(T x) {
  const uint16_t h_cpu = wok::half(x).bits, h_dev = dw::to_f16(x).bits;
  const uint16_t b_cpu = wok::bfloat16(x).bits, b_dev = dw::to_bf16(x).bits;
  if (h_cpu == h_dev && b_cpu == b_dev) return ::testing::AssertionSuccess();
  char buf[160];
  std::snprintf(buf, sizeof buf, "%a: float16 cpu 0x%04x device 0x%04x, bfloat16 cpu 0x%04x device 0x%04x",
                static_cast<double>(x), h_cpu, h_dev, b_cpu, b_dev);
  return ::testing::AssertionFailure() << buf;
}

TEST(CudaHalfOnTheHost, EveryPatternWidensAsOnTheCpu) {
  for (uint32_t b = 0; b < 65536; ++b) {
    const auto raw = static_cast<uint16_t>(b);
    ASSERT_EQ(bits_of(dw::to_float(dw::f16{raw})), bits_of(float(wok::half::from_bits(raw)))) << "float16 " << b;
    ASSERT_EQ(bits_of(dw::to_float(dw::bf16{raw})), bits_of(float(wok::bfloat16::from_bits(raw)))) << "bfloat16 " << b;
  }
}

TEST(CudaHalfOnTheHost, FloatsNarrowAsOnTheCpu) {
  // Around every half-way point and every value of both formats: the
  // neighbouring floats, so ties and either side of them.
  for (uint32_t b = 0; b < 65536; ++b) {
    for (float v : {float(wok::half::from_bits(static_cast<uint16_t>(b))),
                    float(wok::bfloat16::from_bits(static_cast<uint16_t>(b)))}) {
      const uint32_t u = bits_of(v);
      for (uint32_t d = 0; d < 3; ++d)
        for (uint32_t center : {u, u + 0x1000u, u + 0x8000u}) {  // the value, float16's and bfloat16's midpoints
          ASSERT_TRUE(narrows_alike(std::bit_cast<float>(center + d)));
          ASSERT_TRUE(narrows_alike(std::bit_cast<float>(center - d)));
        }
    }
  }
  // Every exponent, NaN payloads and subnormals included.
  for (uint64_t u = 0; u <= 0xFFFFFFFFu; u += 65521) ASSERT_TRUE(narrows_alike(std::bit_cast<float>(static_cast<uint32_t>(u))));
}

TEST(CudaHalfOnTheHost, DoublesRoundOnce) {
  // 1 + 2^-11 + 2^-40 is just above float16's midpoint between 1 and
  // 1 + 2^-10: rounding to float first would land on the tie and go to 1.
  EXPECT_EQ(dw::to_f16(1.0 + 0x1p-11 + 0x1p-40).bits, 0x3C01);
  EXPECT_EQ(dw::to_bf16(1.0 + 0x1p-8 + 0x1p-40).bits, 0x3F81);
  std::mt19937_64 rng(7);
  for (uint32_t b = 0; b < 65536; ++b) {
    const double v = float(wok::half::from_bits(static_cast<uint16_t>(b)));
    const double w = float(wok::bfloat16::from_bits(static_cast<uint16_t>(b)));
    for (double c : {v, w}) {
      // Infinities and NaNs have no neighbours to round from (and ilogb(NaN)
      // is INT_MIN: the offset below would overflow); the random doubles
      // below reach them.
      if (!std::isfinite(c)) continue;
      const double ulp16 = std::ldexp(1.0, std::ilogb(c == 0 ? 1 : c) - 10);
      for (double off : {0.5, 0.5 + 0x1p-30, 0.5 - 0x1p-30, 0x1p-3})
        for (double x : {c + off * ulp16, c - off * ulp16, c + off * ulp16 / 8, c - off * ulp16 / 8})
          ASSERT_TRUE(narrows_alike(x));
    }
  }
  for (int i = 0; i < 200000; ++i) ASSERT_TRUE(narrows_alike(std::bit_cast<double>(rng())));
}

}  // namespace
