// The dtypes beyond the five compute dtypes (float16, bfloat16, int8,
// uint8, int16, uint16, uint32, uint64) through the frontend: promotion,
// casts between every pair over special values against a reference written
// here from the rules of docs/numerics.md, every half bit pattern through
// float32 and back, every elementwise op on every new dtype against a
// float64 (or int64) reference rounded to the dtype, reductions that
// accumulate in float32, matmul, printing and round trips.
#include <gtest/gtest.h>
#include <wok/wok.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "test_util.h"
#include "wok/frontend/dispatch.h"
#include "wok/jit/shadow.h"

namespace {

using wok::bfloat16;
using wok::DType;
using wok::half;
using wok::Tensor;

std::string hex(uint32_t v) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04x", v);
  return buf;
}

// ---- the reference cast -----------------------------------------------------------

// One source element, exactly: every float dtype's values are doubles, every
// integer dtype's fit in __int128.
struct Exact {
  bool floating = false;
  double f = 0;
  __int128 i = 0;
};

template <typename T>
Exact exact_of(T v) {
  Exact e;
  if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>) {
    e.floating = true, e.f = static_cast<float>(v);
  } else if constexpr (std::is_floating_point_v<T>) {
    e.floating = true, e.f = v;
  } else {
    e.i = static_cast<__int128>(v);
  }
  return e;
}

// x wrapped to an integer of `bits` bits, signed or not (two's complement).
__int128 wrap(__int128 x, int bits, bool is_signed) {
  const unsigned __int128 m = bits == 128 ? ~static_cast<unsigned __int128>(0)
                                          : (static_cast<unsigned __int128>(1) << bits) - 1;
  unsigned __int128 u = static_cast<unsigned __int128>(x) & m;
  if (is_signed && bits < 128 && (u >> (bits - 1)) & 1) return static_cast<__int128>(u) - (static_cast<__int128>(1) << bits);
  return static_cast<__int128>(u);
}

// The documented float -> integer rule (Note [Float to integer casts]):
// truncation; int32 and int64 give their minimum for nan and out of range;
// narrower integers go through int32 and wrap, uint32 through int64;
// uint64 takes [2^63, 2^64) exactly, the rest through int64.
__int128 float_to_int_rule(double x, int bits, bool is_signed) {
  auto through = [&](int w) -> __int128 {
    const double limit = std::ldexp(1.0, w - 1);
    if (!(x > -limit - 1 && x < limit)) return -(static_cast<__int128>(1) << (w - 1));
    return static_cast<__int128>(std::trunc(x));
  };
  if (bits == 64 && !is_signed && x >= std::ldexp(1.0, 63) && x < std::ldexp(1.0, 64))
    return static_cast<__int128>(std::trunc(x));
  const int via = bits == 64 || (bits == 32 && !is_signed) ? 64 : 32;
  return wrap(through(via), bits, is_signed);
}

template <typename To>
To ref_cast(const Exact& e) {
  if constexpr (std::is_same_v<To, bool>) {
    return e.floating ? e.f != 0 || std::isnan(e.f) : e.i != 0;
  } else if constexpr (std::is_same_v<To, double>) {
    return e.floating ? e.f : static_cast<double>(e.i);
  } else if constexpr (std::is_same_v<To, float>) {
    return e.floating ? static_cast<float>(e.f) : static_cast<float>(e.i);
  } else if constexpr (std::is_same_v<To, half> || std::is_same_v<To, bfloat16>) {
    return To(e.floating ? e.f : static_cast<double>(e.i));  // one rounding (tests/half_test.cpp)
  } else {
    constexpr int bits = 8 * sizeof(To);
    constexpr bool is_signed = std::is_signed_v<To>;
    return static_cast<To>(e.floating ? float_to_int_rule(e.f, bits, is_signed) : wrap(e.i, bits, is_signed));
  }
}

template <typename T>
bool is_nan_value(T v) {
  if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>) return std::isnan(static_cast<float>(v));
  else if constexpr (std::is_floating_point_v<T>) return std::isnan(v);
  else return false;
}

template <typename T>
std::string show(T v) {
  if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16>) {
    uint16_t bits;
    std::memcpy(&bits, &v, 2);
    return wt::fmt(static_cast<float>(v)) + " (bits 0x" + hex(bits) + ")";
  } else if constexpr (std::is_same_v<T, int8_t> || std::is_same_v<T, uint8_t>) {
    return std::to_string(static_cast<int>(v));
  } else {
    return wt::fmt(v);
  }
}

// Source values of each dtype: the special values of the issue (signed
// zeros, subnormals, infinities, nan, the largest finite values, ties for
// every rounding), and the integers at every width's edges.
std::vector<double> float_sources() {
  const double inf = std::numeric_limits<double>::infinity();
  return {0.0,
          -0.0,
          1.0,
          -1.0,
          0.5,
          1.5,
          2.5,
          -2.5,
          0.3,
          100.7,
          300.7,
          -1.5,
          -129.5,
          65504.0,
          65519.99,
          65520.0,        // float16's overflow tie: rounds to inf
          2049.0,         // float16 tie between 2048 and 2050: to 2048
          2051.0,         // to 2052
          1.0 + 1 / 256.0,  // bfloat16 tie: to 1
          1.0 + 3 / 256.0,  // to 1 + 4/256
          5.960464477539063e-08,  // float16's smallest subnormal
          2.9802322387695312e-08, // half of it: ties to 0
          4.4703483581542969e-08, // 1.5 of it: ties to 2 of them
          6.103515625e-05,        // float16's smallest normal
          1e-8,
          1.401298464324817e-45,  // float32's smallest subnormal
          1e-40,
          9.183549615799121e-41,  // bfloat16 subnormal range
          3.4028234663852886e38,  // float32 max
          -3.4028234663852886e38,
          3.3895313892515355e38,  // bfloat16 max
          3.4e38,
          std::numeric_limits<double>::max(),
          std::numeric_limits<double>::denorm_min(),
          2147483647.0,
          2147483648.0,
          -2147483648.0,
          -2147483649.0,
          4294967295.0,
          4294967296.0,
          9223372036854775808.0,
          -9223372036854775808.0,
          18446744073709551616.0,
          1e20,
          inf,
          -inf,
          std::numeric_limits<double>::quiet_NaN(),
          -std::numeric_limits<double>::quiet_NaN()};
}

std::vector<__int128> int_sources() {
  std::vector<__int128> v = {0, 1, -1, 2, 127, 128, 255, 256, -128, -129, 32767, 32768, 65535, 65536, -32769};
  for (int b : {31, 32, 53, 63}) {
    const __int128 p = static_cast<__int128>(1) << b;
    v.insert(v.end(), {p - 1, p, p + 1, -p, -p - 1});
  }
  v.push_back((static_cast<__int128>(1) << 64) - 1);  // uint64's max
  return v;
}

template <typename T>
std::vector<T> sources_of() {
  std::vector<T> out;
  if constexpr (std::is_same_v<T, bool>) {
    out = {false, true};
  } else if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16> || std::is_floating_point_v<T>) {
    for (double d : float_sources()) out.push_back(static_cast<T>(d));
  } else {
    for (__int128 i : int_sources()) out.push_back(static_cast<T>(i));  // wraps to T's width
  }
  return out;
}

class CastEveryPair : public wt::BothBackends {};

TEST_P(CastEveryPair, SpecialValuesMatchTheReference) {
  int checked = 0;
  for (DType from : wok::kAllDTypes) {
    wok::visit_any_dtype(from, [&](auto f) {
      using From = decltype(f);
      const std::vector<From> src = sources_of<From>();
      const Tensor x = wok::from_vector(src);
      for (DType to : wok::kAllDTypes) {
        wok::visit_any_dtype(to, [&](auto t) {
          using To = decltype(t);
          const std::vector<To> got = wok::cast(x, to).template to_vector<To>();
          ASSERT_EQ(got.size(), src.size());
          for (size_t k = 0; k < src.size(); ++k) {
            const To want = ref_cast<To>(exact_of(src[k]));
            EXPECT_TRUE(wt::same_value(got[k], want)) << wok::dtype_name(from) << " " << show(src[k]) << " -> "
                                            << wok::dtype_name(to) << ": got " << show(got[k]) << ", want "
                                            << show(want);
            ++checked;
          }
        });
      }
    });
  }
  EXPECT_GT(checked, 13 * 13 * 2);
}

// A cast inside a fused chain rounds there, whatever the chain computes in.
TEST_P(CastEveryPair, CastToHalfInsideAChainRounds) {
  const Tensor x = wok::from_vector(std::vector<float>{1.0f + 1 / 4096.0f, 3.14159f, 70000.0f});
  const Tensor y = wok::cast(wok::cast(x * 1.0f, DType::kFloat16), DType::kFloat32) * 1.0f;
  const std::vector<float> got = y.to_vector<float>();
  EXPECT_EQ(got[0], 1.0f);
  EXPECT_EQ(got[1], static_cast<float>(half(3.14159f)));
  EXPECT_TRUE(std::isinf(got[2]));
  const Tensor b = wok::cast(wok::cast(x * 1.0f, DType::kBFloat16), DType::kFloat32) * 1.0f;
  EXPECT_EQ(b.to_vector<float>()[1], static_cast<float>(bfloat16(3.14159f)));
}

INSTANTIATE_TEST_SUITE_P(Backends, CastEveryPair, wt::kBothBackends, wt::backend_param_name);

// ---- every half bit pattern, as tensors ---------------------------------------------

template <typename H>
void every_pattern_through_float32() {
  std::vector<H> all;
  for (uint32_t b = 0; b < 65536; ++b) all.push_back(H::from_bits(static_cast<uint16_t>(b)));
  const Tensor x = wok::from_vector(all);
  const std::vector<float> wide = wok::cast(x, DType::kFloat32).to_vector<float>();
  const std::vector<H> back = wok::cast(wok::cast(x, DType::kFloat32), wok::dtype_of<H>()).template to_vector<H>();
  int bad = 0;
  for (uint32_t b = 0; b < 65536 && bad < 10; ++b) {
    const float want = static_cast<float>(all[b]);
    const bool ok_wide = std::isnan(want) ? std::isnan(wide[b]) : std::memcmp(&want, &wide[b], 4) == 0;
    const bool ok_back = std::isnan(want) ? is_nan_value(back[b]) : back[b].bits == all[b].bits;
    if (!ok_wide || !ok_back) {
      ++bad;
      ADD_FAILURE() << wok::dtype_name(wok::dtype_of<H>()) << " bits 0x" << hex(b) << ": float " << wide[b]
                    << " (want " << want << "), back 0x" << hex(back[b].bits);
    }
  }
}

TEST(HalfTensors, EveryFloat16PatternThroughFloat32AndBack) { every_pattern_through_float32<half>(); }
TEST(HalfTensors, EveryBFloat16PatternThroughFloat32AndBack) { every_pattern_through_float32<bfloat16>(); }

// ---- promotion ----------------------------------------------------------------------

TEST(Promotion, TheTable) {
  struct Case {
    DType a, b, want;
  };
  using D = DType;
  const Case cases[] = {
      // NumPy's table for the integers.
      {D::kInt8, D::kUInt8, D::kInt16},
      {D::kInt8, D::kInt16, D::kInt16},
      {D::kUInt8, D::kUInt16, D::kUInt16},
      {D::kUInt8, D::kInt16, D::kInt16},
      {D::kUInt16, D::kInt16, D::kInt32},
      {D::kUInt32, D::kInt32, D::kInt64},
      {D::kUInt32, D::kInt8, D::kInt64},
      {D::kUInt64, D::kInt64, D::kFloat64},
      {D::kUInt64, D::kUInt8, D::kUInt64},
      {D::kBool, D::kUInt8, D::kUInt8},
      {D::kBool, D::kFloat16, D::kFloat16},
      // PyTorch's for the half types.
      {D::kFloat16, D::kBFloat16, D::kFloat32},
      {D::kFloat16, D::kFloat32, D::kFloat32},
      {D::kBFloat16, D::kFloat32, D::kFloat32},
      {D::kBFloat16, D::kFloat64, D::kFloat64},
      {D::kFloat16, D::kInt8, D::kFloat16},
      {D::kBFloat16, D::kInt64, D::kBFloat16},
      {D::kFloat16, D::kUInt64, D::kFloat16},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(wok::promote_types(c.a, c.b), c.want) << wok::dtype_name(c.a) << " with " << wok::dtype_name(c.b);
    EXPECT_EQ(wok::promote_types(c.b, c.a), c.want) << wok::dtype_name(c.b) << " with " << wok::dtype_name(c.a);
  }
  // Every pair is symmetric and a dtype with itself is itself.
  for (DType a : wok::kAllDTypes) {
    EXPECT_EQ(wok::promote_types(a, a), a);
    for (DType b : wok::kAllDTypes) EXPECT_EQ(wok::promote_types(a, b), wok::promote_types(b, a));
  }
  EXPECT_EQ(wok::float_result_type(DType::kInt8), DType::kFloat32);
  EXPECT_EQ(wok::float_result_type(DType::kUInt16), DType::kFloat32);
  EXPECT_EQ(wok::float_result_type(DType::kUInt32), DType::kFloat64);
  EXPECT_EQ(wok::float_result_type(DType::kBFloat16), DType::kBFloat16);
}

TEST(Promotion, OperatorsFollowTheTableAndPlainNumbersAreWeak) {
  const Tensor h = wok::from_vector(std::vector<half>{half(1.5f), half(-2.0f)});
  const Tensor b = wok::from_vector(std::vector<bfloat16>{bfloat16(1.5f), bfloat16(-2.0f)});
  const Tensor f = wok::from_vector(std::vector<float>{1, 2});
  const Tensor i8 = wok::from_vector(std::vector<int8_t>{100, -100});
  const Tensor u8 = wok::from_vector(std::vector<uint8_t>{200, 1});
  EXPECT_EQ((h + 2.5).dtype(), DType::kFloat16);  // a plain number keeps the half type
  EXPECT_EQ((b * 2).dtype(), DType::kBFloat16);
  EXPECT_EQ((h + b).dtype(), DType::kFloat32);
  EXPECT_EQ((h + f).dtype(), DType::kFloat32);
  EXPECT_EQ((h + i8).dtype(), DType::kFloat16);
  EXPECT_EQ((i8 + 1).dtype(), DType::kInt8);
  EXPECT_EQ((i8 + u8).dtype(), DType::kInt16);
  EXPECT_EQ((i8 + u8).to_vector<int16_t>(), (std::vector<int16_t>{300, -99}));
  EXPECT_EQ((h + b).to_vector<float>(), (std::vector<float>{3.0f, -4.0f}));
}

// ---- arithmetic ---------------------------------------------------------------------

class SmallDTypes : public wt::BothBackends {};

TEST_P(SmallDTypes, IntegerArithmeticWrapsAtItsWidth) {
  const Tensor a = wok::from_vector(std::vector<int8_t>{100, -100, 127, -128});
  const Tensor b = wok::from_vector(std::vector<int8_t>{100, -100, 1, -1});
  EXPECT_EQ((a + b).to_vector<int8_t>(), (std::vector<int8_t>{-56, 56, -128, 127}));
  EXPECT_EQ((a * b).to_vector<int8_t>(), (std::vector<int8_t>{16, 16, 127, -128}));
  const Tensor u = wok::from_vector(std::vector<uint8_t>{0, 1, 255});
  EXPECT_EQ((u - uint8_t{1}).dtype(), DType::kUInt8);
  EXPECT_EQ((u - 1).to_vector<uint8_t>(), (std::vector<uint8_t>{255, 0, 254}));
  const Tensor w = wok::from_vector(std::vector<uint16_t>{65535, 2});
  EXPECT_EQ((w + w).to_vector<uint16_t>(), (std::vector<uint16_t>{65534, 4}));
  const Tensor big = wok::from_vector(std::vector<uint32_t>{4294967295u, 7});
  EXPECT_EQ((big + 1).to_vector<uint32_t>(), (std::vector<uint32_t>{0, 8}));
  EXPECT_EQ((big > 5).to_vector<bool>(), (std::vector<bool>{true, true}));
}

TEST_P(SmallDTypes, HalfReductionsAccumulateInFloat32) {
  // float16 holds 10000 exactly; a float16 running sum would stop at 2048.
  const Tensor ones = wok::full({10000}, wok::Scalar(half(1.0f)));
  EXPECT_EQ(wok::sum(ones).dtype(), DType::kFloat16);
  EXPECT_EQ(static_cast<float>(wok::sum(ones).to_vector<half>()[0]), 10000.0f);
  EXPECT_EQ(static_cast<float>(wok::mean(ones).to_vector<half>()[0]), 1.0f);
  const Tensor bones = wok::full({3000}, wok::Scalar(bfloat16(1.0f)));
  EXPECT_EQ(static_cast<float>(wok::sum(bones).to_vector<bfloat16>()[0]), 3008.0f);  // 3000 rounded once
  const Tensor row = wok::reshape(wok::cast(wok::arange(0, 64, 1, DType::kFloat32), DType::kFloat16), {4, 16});
  EXPECT_EQ(wok::max(row, {1}).to_vector<half>()[3].bits, half(63.0f).bits);
  const Tensor soft = wok::softmax(row, 1);
  EXPECT_EQ(soft.dtype(), DType::kFloat16);
  float total = 0;
  for (half v : wok::sum(soft, {1}).to_vector<half>()) total += static_cast<float>(v);
  EXPECT_NEAR(total, 4.0f, 4e-3f);
}

TEST_P(SmallDTypes, HalfMatmulAccumulatesInFloat32) {
  const int64_t m = 5, k = 300, n = 7;
  std::vector<half> a(m * k), b(k * n);
  std::vector<double> da(m * k), db(k * n);
  for (int64_t i = 0; i < m * k; ++i) a[i] = half(static_cast<float>((i * 37) % 17) / 8.0f - 1.0f), da[i] = static_cast<float>(a[i]);
  for (int64_t i = 0; i < k * n; ++i) b[i] = half(static_cast<float>((i * 11) % 13) / 4.0f - 1.5f), db[i] = static_cast<float>(b[i]);
  const Tensor c = wok::matmul(wok::from_vector(a, {m, k}), wok::from_vector(b, {k, n}));
  ASSERT_EQ(c.dtype(), DType::kFloat16);
  const std::vector<half> got = c.to_vector<half>();
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double want = 0;
      for (int64_t p = 0; p < k; ++p) want += da[i * k + p] * db[p * n + j];
      // The products are exact in float32 and the sums stay below 2^24
      // eighths: float32 accumulation is exact, so one rounding remains.
      EXPECT_EQ(got[i * n + j].bits, half(want).bits) << i << "," << j << ": want " << want;
    }
}

TEST_P(SmallDTypes, Uint64RunsElementwiseOpsReductionsAndMatmul) {
  const Tensor x = wok::from_vector(std::vector<uint64_t>{18446744073709551615ull, 1});
  EXPECT_EQ(wok::cast(x, DType::kFloat64).to_vector<double>()[0], 18446744073709551616.0);
  EXPECT_EQ(wok::reshape(x, {2, 1}).to_vector<uint64_t>()[0], 18446744073709551615ull);
  EXPECT_EQ((x + x).to_vector<uint64_t>(), (std::vector<uint64_t>{18446744073709551614ull, 2}));
  EXPECT_EQ((x > uint64_t{1}).to_vector<bool>(), (std::vector<bool>{true, false}));  // unsigned compare
  EXPECT_EQ(wok::bitwise_right_shift(x, uint64_t{60}).to_vector<uint64_t>(), (std::vector<uint64_t>{15, 0}));
  // The reductions take uint64 as it is: sums and products wrap in uint64,
  // comparisons are unsigned, means sum in double.
  EXPECT_EQ(wok::sum(x).dtype(), DType::kUInt64);
  EXPECT_EQ(wok::sum(x).to_vector<uint64_t>()[0], 0u);
  EXPECT_EQ(wok::prod(x + x).to_vector<uint64_t>()[0], 18446744073709551612ull);
  EXPECT_EQ(wok::max(x).to_vector<uint64_t>()[0], 18446744073709551615ull);
  EXPECT_EQ(wok::min(x).to_vector<uint64_t>()[0], 1u);
  EXPECT_EQ(wok::argmax(x).to_vector<int64_t>()[0], 0);
  EXPECT_EQ(wok::mean(x).to_vector<double>()[0], 9223372036854775808.0);
  EXPECT_EQ(wok::max(wok::reshape(x, {2, 1}), {1}).to_vector<uint64_t>()[1], 1u);
  const Tensor m = wok::matmul(wok::reshape(x, {1, 2}), wok::reshape(x, {2, 1}));
  EXPECT_EQ(m.dtype(), DType::kUInt64);
  EXPECT_EQ(m.to_vector<uint64_t>()[0], 2u);  // (2^64 - 1)^2 + 1 wraps to 2
}

TEST_P(SmallDTypes, MaxAndMinOfNothingAreEachIntegersOwnLimits) {
  // The identity of an empty max or min is the dtype's lowest or highest
  // value, not a wider type's narrowed (INT32_MAX would be -1 in int8).
  for (DType t : {DType::kInt8, DType::kUInt8, DType::kInt16, DType::kUInt16, DType::kUInt32, DType::kUInt64}) {
    const Tensor empty = wok::zeros({2, 0}, t);
    wok::visit_any_dtype(t, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
        EXPECT_EQ(wok::max(empty, {1}).template to_vector<T>(), std::vector<T>(2, std::numeric_limits<T>::lowest()))
            << wok::dtype_name(t);
        EXPECT_EQ(wok::min(empty, {1}).template to_vector<T>(), std::vector<T>(2, std::numeric_limits<T>::max()))
            << wok::dtype_name(t);
      }
    });
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, SmallDTypes, wt::kBothBackends, wt::backend_param_name);

// ---- every elementwise op on every new dtype ------------------------------------------

bool is_new(DType t) {
  return t != DType::kBool && t != DType::kInt32 && t != DType::kInt64 && t != DType::kFloat32 &&
         t != DType::kFloat64;
}

// Inputs of dtype t: small values every op takes (integers in [-20, 20], or
// [0, 40] unsigned, halves in [-4, 4] in quarters), the last input nonzero
// (a divisor), the first input of where bool.
std::vector<Tensor> sweep_inputs(const std::string& op, size_t arity, DType t) {
  std::vector<Tensor> out;
  for (size_t a = 0; a < arity; ++a) {
    const bool divisor = a + 1 == arity && arity > 1;
    std::vector<double> v;
    for (int k = 0; k < 41; ++k) {
      double x = wok::is_floating(t) ? (k - 20) / 5.0 + 0.125 * (a + 1) : wok::is_unsigned(t) ? k : k - 20;
      if (divisor && x == 0) x = 3;
      v.push_back(x);
    }
    Tensor x = wok::cast(wok::from_vector(v), t);
    if (op == "where" && a == 0) x = wok::cast(wok::from_vector(v) > 0.0, DType::kBool);
    out.push_back(x);
  }
  return out;
}

// The wide dtype a reference computes in: float64 for the floats, int64 for the integers.
DType reference_dtype(DType t) { return wok::is_floating(t) ? DType::kFloat64 : DType::kInt64; }

TEST(EveryOp, ElementwiseOpsOnEveryNewDtypeMatchAWideReference) {
  int cases = 0;
  std::string refused;
  for (const wok::OpInfo& info : wt::builtin_elementwise_ops()) {
    const std::string& name = info.name;
    if (name == "cast") continue;  // CastEveryPair
    for (const wok::DTypeCase& c : info.dtypes) {
      if (!is_new(c.input) || c.outputs.size() != 1) continue;
      const DType out_dtype = c.outputs[0];
      const std::vector<Tensor> in = sweep_inputs(name, info.inputs.size(), c.input);
      std::vector<Tensor> wide;
      for (const Tensor& x : in) wide.push_back(x.dtype() == DType::kBool ? x : wok::cast(x, reference_dtype(c.input)));
      Tensor got_t;
      try {
        got_t = wok::call1(name, in);
        wok::eval({got_t});
      } catch (const wok::DTypeError& e) {
        // Only uint64 may lack a compute type.
        EXPECT_EQ(c.input, DType::kUInt64) << name << " on " << wok::dtype_name(c.input) << ": " << e.what();
        refused += " " + name;
        continue;
      }
      ASSERT_EQ(got_t.dtype(), out_dtype) << name;
      const Tensor want_t = wok::cast(wok::call1(name, wide), out_dtype);
      ++cases;
      wok::visit_any_dtype(out_dtype, [&](auto tag) {
        using T = decltype(tag);
        const std::vector<T> got = got_t.template to_vector<T>();
        const std::vector<T> want = want_t.template to_vector<T>();
        for (size_t k = 0; k < got.size(); ++k) {
          bool ok = wt::same_value(got[k], want[k]);
          if constexpr (std::is_same_v<T, half> || std::is_same_v<T, bfloat16> || std::is_floating_point_v<T>) {
            // The kernel computes in float32 and rounds once; the reference
            // rounds the float64 value once: at most one ulp apart.
            if (!ok && !is_nan_value(want[k]) && !is_nan_value(got[k]))
              ok = wok::jit::ulp_distance(got[k], want[k]) <= 1;
          }
          EXPECT_TRUE(ok) << name << " on " << wok::dtype_name(c.input) << " [" << k << "]: got " << show(got[k])
                          << ", want " << show(want[k]);
          if (!ok) break;
        }
      });
    }
  }
  EXPECT_GT(cases, 200) << "ops refused on uint64:" << refused;
}

// ---- round trips and printing ---------------------------------------------------------

TEST(SmallDTypes, VectorsRoundTripAndPrint) {
  EXPECT_EQ(wok::from_vector(std::vector<int8_t>{-128, 0, 127}).to_vector<int8_t>(), (std::vector<int8_t>{-128, 0, 127}));
  EXPECT_EQ(wok::from_vector(std::vector<uint16_t>{65535, 1}).dtype(), DType::kUInt16);
  const Tensor u64 = wok::from_vector(std::vector<uint64_t>{18446744073709551615ull});
  EXPECT_EQ(u64.to_vector<uint64_t>()[0], 18446744073709551615ull);
  EXPECT_NE(u64.str().find("18446744073709551615"), std::string::npos) << u64.str();
  EXPECT_NE(u64.str().find("uint64"), std::string::npos) << u64.str();
  const Tensor h = wok::from_vector(std::vector<half>{half(0.1f), half(65504.0f)});
  EXPECT_EQ(h.to_vector<float>()[0], static_cast<float>(half(0.1f)));  // to_vector converts
  EXPECT_NE(h.str().find("float16"), std::string::npos) << h.str();
  EXPECT_NE(h.str().find("65504"), std::string::npos) << h.str();
  const Tensor b = wok::from_vector(std::vector<bfloat16>{bfloat16(-2.5f)});
  EXPECT_NE(b.str().find("-2.5"), std::string::npos) << b.str();
  EXPECT_NE(b.str().find("bfloat16"), std::string::npos) << b.str();
  EXPECT_EQ(wok::parse_dtype("bfloat16"), DType::kBFloat16);
  EXPECT_EQ(wok::parse_dtype("uint8"), DType::kUInt8);
  EXPECT_EQ(wok::scalar_tensor(wok::Scalar(half(3.0f))).dtype(), DType::kFloat16);
  EXPECT_EQ(wok::zeros({2}, DType::kInt16).to_vector<int16_t>(), (std::vector<int16_t>{0, 0}));
}

}  // namespace
