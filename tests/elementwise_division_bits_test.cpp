// fmod, remainder, floor_divide, atan2 and the bitwise ops and shifts, on
// both CPU backends: integers exact against C++ references (division by
// zero and INT_MIN / -1 included), floats against libm, the dtype rules
// (floats refused by the bit ops, named in the error), plain-number
// operands and fusion.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "elementwise_test_util.h"
#include "test_util.h"

namespace {

using wok::DType;
using wok::Tensor;
using wt::kInf;
using wt::kNaN;
using wt::Pairs;
using LD = long double;

class DivisionAndBits : public wt::BothBackends {};

// ---- references ---------------------------------------------------------------------

template <typename T>
T ref_fmod(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) return std::fmod(a, b);
  else return (b == 0 || b == -1) ? T(0) : static_cast<T>(a % b);
}

template <typename T>
T ref_floor_div(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::floor(a / b);
  } else {
    using U = std::make_unsigned_t<T>;
    if (b == 0) return 0;
    if (b == -1) return static_cast<T>(U(0) - static_cast<U>(a));
    T q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
  }
}

// Python's a % b.
template <typename T>
T ref_remainder(T a, T b) {
  T m = ref_fmod(a, b);
  if constexpr (std::is_floating_point_v<T>) {
    if (m != 0) {
      if ((b < 0) != (m < 0)) m += b;
    } else {
      m = std::copysign(T(0), b);
    }
    return m;
  } else {
    return (m != 0 && ((m < 0) != (b < 0))) ? static_cast<T>(m + b) : m;
  }
}

template <typename T>
Pairs<T> division_inputs() {
  Pairs<T> p = wt::binary_inputs<T>(-1000, 1000);
  std::vector<T> small = wt::random_values<T>(256, -20, 20, 9), small2 = wt::random_values<T>(256, -20, 20, 10);
  p.a.insert(p.a.end(), small.begin(), small.end());
  p.b.insert(p.b.end(), small2.begin(), small2.end());
  return p;
}

template <typename T>
void check_division() {
  Pairs<T> p = division_inputs<T>();
  std::vector<T> f, r, q;
  for (size_t i = 0; i < p.a.size(); ++i) {
    f.push_back(ref_fmod(p.a[i], p.b[i]));
    r.push_back(ref_remainder(p.a[i], p.b[i]));
    q.push_back(ref_floor_div(p.a[i], p.b[i]));
  }
  Tensor a = wt::tensor(p.a), b = wt::tensor(p.b);
  const std::string dt = " " + wt::dname(wok::dtype_of<T>());
  EXPECT_TRUE(wt::exact<T>("fmod" + dt, wok::fmod(a, b), f, p.describe()));
  EXPECT_TRUE(wt::exact<T>("remainder" + dt, wok::remainder(a, b), r, p.describe()));
  EXPECT_TRUE(wt::exact<T>("floor_divide" + dt, wok::floor_divide(a, b), q, p.describe()));
}

TEST_P(DivisionAndBits, DivisionMatchesTheReferencesExactly) {
  check_division<int32_t>();
  check_division<int64_t>();
  check_division<float>();
  check_division<double>();
}

TEST_P(DivisionAndBits, IntegerDivisionByZeroAndOverflowAreDefined) {
  const int32_t mn = std::numeric_limits<int32_t>::min();
  Tensor a = wt::tensor(std::vector<int32_t>{7, -7, 0, mn, mn, 5});
  Tensor b = wt::tensor(std::vector<int32_t>{0, 0, 0, -1, 0, -1});
  EXPECT_TRUE(wt::exact<int32_t>("floor_divide", wok::floor_divide(a, b), {0, 0, 0, mn, 0, -5}));
  EXPECT_TRUE(wt::exact<int32_t>("fmod", wok::fmod(a, b), {0, 0, 0, 0, 0, 0}));
  EXPECT_TRUE(wt::exact<int32_t>("remainder", wok::remainder(a, b), {0, 0, 0, 0, 0, 0}));
  const int64_t MN = std::numeric_limits<int64_t>::min();
  Tensor c = wt::tensor(std::vector<int64_t>{MN, 9, MN});
  Tensor d = wt::tensor(std::vector<int64_t>{-1, 0, 0});
  EXPECT_TRUE(wt::exact<int64_t>("floor_divide", wok::floor_divide(c, d), {MN, 0, 0}));
  EXPECT_TRUE(wt::exact<int64_t>("fmod", wok::fmod(c, d), {0, 0, 0}));
  EXPECT_TRUE(wt::exact<int64_t>("remainder", wok::remainder(c, d), {0, 0, 0}));
  // bool computes in int32.
  Tensor t = wt::tensor(std::vector<bool>{true, true, false}), u = wt::tensor(std::vector<bool>{true, false, true});
  EXPECT_TRUE(wt::exact<int32_t>("floor_divide", wok::floor_divide(t, u), {1, 0, 0}));
  EXPECT_TRUE(wt::exact<int32_t>("remainder", wok::remainder(t, u), {0, 0, 0}));
}

// On an unsigned type the all-ones divisor is its largest value, not -1:
// 5 // UINT64_MAX is 0 and 5 % UINT64_MAX is 5 (the INT_MIN / -1 rule is
// for signed types only).
template <typename T>
void check_largest_unsigned_divisor() {
  const T mx = std::numeric_limits<T>::max();
  Tensor a = wt::tensor(std::vector<T>{5, mx, 7, 0, T(mx - 1), mx});
  Tensor b = wt::tensor(std::vector<T>{mx, mx, 2, mx, mx, T(mx - 1)});
  const std::string dt = " " + wt::dname(wok::dtype_of<T>());
  EXPECT_TRUE(wt::exact<T>("floor_divide" + dt, wok::floor_divide(a, b), {0, 1, 3, 0, 0, 1}));
  EXPECT_TRUE(wt::exact<T>("fmod" + dt, wok::fmod(a, b), {5, 0, 1, 0, T(mx - 1), 1}));
  EXPECT_TRUE(wt::exact<T>("remainder" + dt, wok::remainder(a, b), {5, 0, 1, 0, T(mx - 1), 1}));
}

TEST_P(DivisionAndBits, TheLargestUnsignedDivisorIsNotMinusOne) {
  check_largest_unsigned_divisor<uint8_t>();
  check_largest_unsigned_divisor<uint16_t>();
  check_largest_unsigned_divisor<uint32_t>();
  check_largest_unsigned_divisor<uint64_t>();
}

TEST_P(DivisionAndBits, SignConventions) {
  // fmod takes the dividend's sign (ONNX Mod fmod=1), remainder the divisor's (fmod=0).
  Tensor a = wt::tensor(std::vector<int32_t>{7, -7, 7, -7}), b = wt::tensor(std::vector<int32_t>{3, 3, -3, -3});
  EXPECT_TRUE(wt::exact<int32_t>("fmod", wok::fmod(a, b), {1, -1, 1, -1}));
  EXPECT_TRUE(wt::exact<int32_t>("remainder", wok::remainder(a, b), {1, 2, -2, -1}));
  EXPECT_TRUE(wt::exact<int32_t>("floor_divide", wok::floor_divide(a, b), {2, -3, -3, 2}));
  Tensor x = wt::tensor(std::vector<double>{7.5, -7.5, 7.5, -7.5, 6, -6, 0.0, -0.0, 1, -1e-300});
  Tensor y = wt::tensor(std::vector<double>{2, 2, -2, -2, -3, 3, -1, 1, kInf, 1});
  EXPECT_TRUE(wt::exact<double>("fmod", wok::fmod(x, y), {1.5, -1.5, 1.5, -1.5, 0, -0.0, 0.0, -0.0, 1, -1e-300}));
  EXPECT_TRUE(wt::exact<double>("remainder", wok::remainder(x, y), {1.5, 0.5, -0.5, -1.5, -0.0, 0.0, -0.0, 0.0, 1, 1}));
  EXPECT_TRUE(wt::exact<double>("floor_divide", wok::floor_divide(x, y), {3, -4, -4, 3, -2, -2, -0.0, -0.0, 0, -1}));
  // Identity on integers: floor_divide(a, b) * b + remainder(a, b) == a.
  Pairs<int64_t> p = division_inputs<int64_t>();
  Tensor pa = wt::tensor(p.a), pb = wt::tensor(p.b);
  Tensor back = wok::floor_divide(pa, pb) * pb + wok::remainder(pa, pb);
  std::vector<int64_t> want = p.a;
  for (size_t i = 0; i < want.size(); ++i)
    if (p.b[i] == 0) want[i] = 0;  // 0 * 0 + 0
    else if (p.b[i] == -1) want[i] = p.a[i];
  EXPECT_TRUE(wt::exact<int64_t>("floor_divide * b + remainder", back, want, p.describe()));
}

TEST_P(DivisionAndBits, PlainNumberOperands) {
  Tensor x = wt::tensor(std::vector<int32_t>{-7, 8});
  EXPECT_TRUE(wt::exact<int32_t>("remainder", wok::remainder(x, 3), {2, 2}));
  EXPECT_TRUE(wt::exact<int32_t>("floor_divide", wok::floor_divide(x, 3), {-3, 2}));
  EXPECT_TRUE(wt::exact<float>("fmod", wok::fmod(x, 2.5f), {-2, 0.5f}));
  EXPECT_TRUE(wt::exact<int32_t>("fmod", wok::fmod(100, x), {2, 4}));
  EXPECT_TRUE(wt::exact<int32_t>("bitwise_and", wok::bitwise_and(x, 6), {0, 0}));
  EXPECT_TRUE(wt::exact<int32_t>("bitwise_left_shift", wok::bitwise_left_shift(1, x), {0, 256}));
  EXPECT_TRUE(wt::exact<double>("atan2", wok::atan2(1.0, wt::tensor(std::vector<double>{1})),
                                {static_cast<double>(std::atan2(1.0L, 1.0L))}));
}

TEST_P(DivisionAndBits, Atan2) {
  const double pi = 3.14159265358979323846;
  // C's special cases (checked against libm below, signs of zero included).
  std::vector<double> y = {0.0, -0.0, 0.0, -0.0, 1, -1, 1, -1, kInf, -kInf, kInf, -kInf, kInf, 1, -1, 0.0, kNaN, 1, kNaN};
  std::vector<double> x = {0.0, 0.0, -0.0, -0.0, 0.0, -0.0, kInf, -kInf, kInf, kInf, -kInf, -kInf, 1, 1e-300, -1e-300, -5, 1, kNaN, kNaN};
  std::vector<double> want;
  for (size_t i = 0; i < y.size(); ++i) want.push_back(std::atan2(y[i], x[i]));
  auto describe = [&](size_t i) { return "y=" + wt::fmt(y[i]) + ", x=" + wt::fmt(x[i]); };
  EXPECT_TRUE(wt::exact<double>("atan2", wok::atan2(wt::tensor(y), wt::tensor(x)), want, describe));
  std::vector<float> yf(y.begin(), y.end()), xf(x.begin(), x.end()), wantf;
  for (size_t i = 0; i < y.size(); ++i) wantf.push_back(std::atan2(yf[i], xf[i]));
  EXPECT_TRUE(wt::exact<float>("atan2", wok::atan2(wt::tensor(yf), wt::tensor(xf)), wantf, describe));
  // Random points of every quadrant and scale, within 2 ulp.
  for (int f64 = 0; f64 < 2; ++f64) {
    std::vector<double> ry = wt::log_spread<double>(3000, -20, 20, 1), rx = wt::log_spread<double>(3000, -20, 20, 2);
    std::vector<LD> rw;
    if (!f64)
      for (size_t i = 0; i < ry.size(); ++i) ry[i] = static_cast<float>(ry[i]), rx[i] = static_cast<float>(rx[i]);
    for (size_t i = 0; i < ry.size(); ++i) rw.push_back(std::atan2(static_cast<LD>(ry[i]), static_cast<LD>(rx[i])));
    Tensor ty = wt::tensor(ry), tx = wt::tensor(rx);
    if (!f64) ty = wok::cast(ty, DType::kFloat32), tx = wok::cast(tx, DType::kFloat32);
    auto d = [&](size_t i) { return "y=" + wt::fmt(ry[i]) + ", x=" + wt::fmt(rx[i]); };
    wt::UlpReport r;
    // Results below the normal range carry fewer bits: an absolute error of a subnormal ulp or two.
    auto subnormal = [&](size_t i) { return std::fabs(rw[i]) < (f64 ? 1e-300 : 1e-37) ? (f64 ? 1e-323 : 3e-45) : 0.0; };
    if (f64)
      EXPECT_TRUE(wt::within_ulp<double>("atan2", wok::atan2(ty, tx), rw, 2, d, &r, subnormal));
    else
      EXPECT_TRUE(wt::within_ulp<float>("atan2", wok::atan2(ty, tx), rw, 2, d, &r, subnormal));
    wt::report_ulp("atan2", f64 ? DType::kFloat64 : DType::kFloat32, r);
  }
  // Integers compute in float64.
  Tensor i = wok::atan2(wt::tensor(std::vector<int32_t>{1, -1}), wt::tensor(std::vector<int32_t>{0, -1}));
  EXPECT_TRUE(wt::exact<double>("atan2", i, {std::atan2(1.0, 0.0), std::atan2(-1.0, -1.0)}));
  EXPECT_NEAR(wok::atan2(wt::tensor(std::vector<double>{1}), wt::tensor(std::vector<double>{-1})).to_vector<double>()[0],
              0.75 * pi, 1e-15);
}

template <typename T>
void check_bits() {
  Pairs<T> p = wt::binary_inputs<T>(-1e6, 1e6);
  std::vector<T> band, bor, bxor;
  for (size_t i = 0; i < p.a.size(); ++i) {
    band.push_back(static_cast<T>(p.a[i] & p.b[i]));
    bor.push_back(static_cast<T>(p.a[i] | p.b[i]));
    bxor.push_back(static_cast<T>(p.a[i] ^ p.b[i]));
  }
  Tensor a = wt::tensor(p.a), b = wt::tensor(p.b);
  const std::string dt = " " + wt::dname(wok::dtype_of<T>());
  EXPECT_TRUE(wt::exact<T>("bitwise_and" + dt, wok::bitwise_and(a, b), band, p.describe()));
  EXPECT_TRUE(wt::exact<T>("bitwise_or" + dt, wok::bitwise_or(a, b), bor, p.describe()));
  EXPECT_TRUE(wt::exact<T>("bitwise_xor" + dt, wok::bitwise_xor(a, b), bxor, p.describe()));
}

TEST_P(DivisionAndBits, BitwiseOps) {
  check_bits<int32_t>();
  check_bits<int64_t>();
  check_bits<bool>();  // logical
  // Mixed int32 and int64 promote to int64.
  EXPECT_TRUE(wt::exact<int64_t>("bitwise_or", wok::bitwise_or(wt::tensor(std::vector<int32_t>{-1, 4}),
                                                               wt::tensor(std::vector<int64_t>{1LL << 40, 1})),
                                 {-1, 5}));
}

template <typename T>
void check_shifts() {
  using U = std::make_unsigned_t<T>;
  constexpr int w = sizeof(T) * 8;
  std::vector<T> a, b, l, r;
  for (T x : wt::integer_edges<T>())
    for (T s : {T(-1), T(0), T(1), T(3), T(w - 1), T(w), T(w + 1), T(100), std::numeric_limits<T>::min()}) {
      a.push_back(x);
      b.push_back(s);
      bool out = static_cast<U>(s) >= static_cast<U>(w);
      l.push_back(out ? T(0) : static_cast<T>(static_cast<U>(x) << static_cast<U>(s)));
      r.push_back(out ? T(0) : static_cast<T>(static_cast<U>(x) >> static_cast<U>(s)));
    }
  auto describe = [&](size_t i) { return "a=" + wt::fmt(a[i]) + ", b=" + wt::fmt(b[i]); };
  const std::string dt = " " + wt::dname(wok::dtype_of<T>());
  EXPECT_TRUE(wt::exact<T>("bitwise_left_shift" + dt, wok::bitwise_left_shift(wt::tensor(a), wt::tensor(b)), l, describe));
  EXPECT_TRUE(wt::exact<T>("bitwise_right_shift" + dt, wok::bitwise_right_shift(wt::tensor(a), wt::tensor(b)), r, describe));
}

TEST_P(DivisionAndBits, ShiftsAreLogicalAndZeroPastTheWidth) {
  check_shifts<int32_t>();
  check_shifts<int64_t>();
  // Logical: the sign bit shifts in as 0.
  EXPECT_TRUE(wt::exact<int32_t>("bitwise_right_shift", wok::bitwise_right_shift(wt::tensor(std::vector<int32_t>{-1}), 28), {15}));
  // bool shifts in int32.
  EXPECT_TRUE(wt::exact<int32_t>("bitwise_left_shift", wok::bitwise_left_shift(wt::tensor(std::vector<bool>{true, false}),
                                                                               wt::tensor(std::vector<bool>{true, true})),
                                 {2, 0}));
}

TEST_P(DivisionAndBits, BitOpsRefuseFloatsAndNameTheOpAndDtype) {
  using BinaryFn = Tensor (*)(const Tensor&, const Tensor&);
  const std::pair<BinaryFn, const char*> ops[] = {
      {wok::bitwise_and, "bitwise_and"},
      {wok::bitwise_or, "bitwise_or"},
      {wok::bitwise_xor, "bitwise_xor"},
      {wok::bitwise_left_shift, "bitwise_left_shift"},
      {wok::bitwise_right_shift, "bitwise_right_shift"},
  };
  for (auto [fn, name] : ops)
    for (DType t : {DType::kFloat32, DType::kFloat64}) {
      Tensor f = wok::cast(wt::tensor(std::vector<double>{1, 2}), t);
      EXPECT_TRUE(wt::throws_naming<wok::DTypeError>([&] { fn(f, f); }, {std::string("wok::") + name, wt::dname(t)}));
      // An int tensor and a float number: the number makes it float.
      Tensor i = wt::tensor(std::vector<int32_t>{1, 2});
      EXPECT_TRUE(wt::throws_naming<wok::DTypeError>([&] { fn(i, wok::cast(i, t)); }, {std::string("wok::") + name}));
    }
}

TEST_P(DivisionAndBits, FusesUnderTheJit) {
  // int32 division runs in the generated kernel (through float64), as do
  // the bit ops and float floor division: one kernel each.
  Tensor i = wt::tensor(std::vector<int32_t>{-7, 8, 100, std::numeric_limits<int32_t>::min()});
  Tensor f = wt::tensor(std::vector<float>{-7.5f, 8, 1e10f, 0.1f});
  struct Program {
    const char* what;
    Tensor y;
  };
  const std::vector<Program> programs = {
      {"int32 remainder", wok::remainder(i * 3, 7) + 1},
      {"int32 floor_divide", wok::floor_divide(i + 1, -3) * 2},
      {"bits", wok::bitwise_or(wok::bitwise_xor(wok::bitwise_left_shift(i, 2), wok::bitwise_not(i)), 1)},
      {"float floor_divide", wok::floor_divide(f * 2.0f, 3.0f) - 1.0f},
      {"atan2", wok::atan2(f, f + 1.0f) * 2.0f},
  };
  for (const Program& p : programs) {
    wok::reset_stats();
    wok::eval({p.y});
    if (GetParam() == wok::Backend::kJit) {
      EXPECT_EQ(wok::stats().kernel_launches, 1) << p.what;
    }
  }
  std::vector<int32_t> rem = programs[0].y.to_vector<int32_t>();
  std::vector<int32_t> want;
  for (int32_t v : std::vector<int32_t>{-7, 8, 100, std::numeric_limits<int32_t>::min()})
    want.push_back(ref_remainder<int32_t>(static_cast<int32_t>(static_cast<uint32_t>(v) * 3u), 7) + 1);
  EXPECT_EQ(rem, want);
}

INSTANTIATE_TEST_SUITE_P(Backends, DivisionAndBits, wt::kBothBackends, wt::backend_param_name);

}  // namespace
