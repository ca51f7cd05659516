// pow: float accuracy in ulps against long double, IEEE special cases
// against libm, small and integer powers exactly.
//
// Set WOK_TEST_ULP=1 to print the worst ulp error seen.
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
using LD = long double;
using wt::Pairs;
using wt::binary_inputs;
using wt::report_ulp;

// ---- pow ------------------------------------------------------------------------------------

template <typename T>
void check_pow_random(double ulp_tol) {
  // Positive bases over many magnitudes, exponents such that results stay
  // finite, and negative bases with integer exponents.
  Pairs<T> p;
  std::vector<T> base = wt::random_values<T>(1024, 1e-3, 1e3, 21);
  std::vector<T> expo = wt::random_values<T>(1024, -10, 10, 22);
  for (size_t i = 0; i < base.size(); ++i) {
    p.a.push_back(base[i]);
    p.b.push_back(expo[i]);
    p.a.push_back(-base[i]);
    p.b.push_back(std::round(expo[i]));
  }
  std::vector<LD> want;
  for (size_t i = 0; i < p.a.size(); ++i) want.push_back(std::pow(static_cast<LD>(p.a[i]), static_cast<LD>(p.b[i])));
  wt::UlpReport r;
  EXPECT_TRUE(wt::within_ulp<T>("pow", wok::pow(wt::tensor(p.a), wt::tensor(p.b)), want, ulp_tol, p.describe(), &r));
  report_ulp("pow", wok::dtype_of<T>(), r);
}

TEST(PowOp, Float32Accuracy) {
  wt::for_each_backend([] { check_pow_random<float>(1); });
}
TEST(PowOp, Float64Accuracy) {
  wt::for_each_backend([] { check_pow_random<double>(2); });
}

// Large results: the error of exp(b log a) grows with |b log a| unless the
// log is carried in extra precision. wok carries it to about 2^-60, which
// keeps the documented bound (docs/numerics.md): 2 ulp, 4 ulp when
// |b log a| > 500.
TEST(PowOp, Float64LargeResultsAccuracy) {
  wt::for_each_backend([&] {
    std::vector<double> a = {2.0, 10.0, 1.5, 0.5, 7.0, 1.0000001, 3.0};
    std::vector<double> b = {1000.5, 300.25, 1700.0, -1020.0, 360.0, 7e9, -600.5};
    std::vector<LD> want;
    for (size_t i = 0; i < a.size(); ++i) want.push_back(std::pow(static_cast<LD>(a[i]), static_cast<LD>(b[i])));
    wt::UlpReport r;
    EXPECT_TRUE(wt::within_ulp<double>(
        "pow", wok::pow(wt::tensor(a), wt::tensor(b)), want, 4,
        [&](size_t i) { return "a=" + wt::fmt(a[i]) + ", b=" + wt::fmt(b[i]); }, &r));
    report_ulp("pow(large)", DType::kFloat64, r);
  });
}

TEST(PowOp, IEEESpecialCases) {
  wt::for_each_backend([&] {
    struct Case {
      double a, b, want;
    };
    const Case cases[] = {
        {2, 0, 1},
        {kNaN, 0, 1},
        {kInf, 0, 1},
        {0, 0, 1},
        {-0.0, -0.0, 1},
        {1, kNaN, 1},
        {1, kInf, 1},
        {1, -kInf, 1},
        {-1, kInf, 1},
        {-1, -kInf, 1},
        {kNaN, 1, kNaN},
        {2, kNaN, kNaN},
        {1, -7, 1},
        {-1, 0.5, kNaN},
        {-1, -2, 1},
        {-2, 0.5, kNaN},
        {-8, 1.0 / 3, kNaN},
        {-0.0, -1, -kInf},
        {0.0, -1, kInf},
        {-0.0, -2, kInf},
        {-0.0, 1, -0.0},
        {-0.0, 2, 0.0},
        {0.0, 3, 0.0},
        {-0.0, -0.5, kInf},
        {-0.0, 0.5, 0.0},
        {0.5, kInf, 0},
        {2, kInf, kInf},
        {0.5, -kInf, kInf},
        {2, -kInf, 0},
        {-2, kInf, kInf},
        {-0.5, kInf, 0},
        {kInf, -1, 0},
        {kInf, 0.5, kInf},
        {-kInf, 3, -kInf},
        {-kInf, 2, kInf},
        {-kInf, -3, -0.0},
        {-kInf, -2, 0.0},
        {-kInf, 0.5, kInf},
        {-1, 3, -1},
        {-1, 1e300, 1},
        // Overflow and underflow.
        {2, 1024, kInf},
        {2, -1075, 0},
        {-2, 1025, -kInf},
        {10, 400, kInf},
        {10, -400, 0},
    };
    std::vector<double> a, b, want;
    for (const Case& c : cases) {
      a.push_back(c.a);
      b.push_back(c.b);
      want.push_back(c.want);
    }
    auto describe = [&](size_t i) { return "a=" + wt::fmt(a[i]) + ", b=" + wt::fmt(b[i]); };
    std::vector<LD> want_ld;
    for (size_t i = 0; i < a.size(); ++i)
      want_ld.push_back(std::isfinite(want[i]) && want[i] != 0 ? std::pow(static_cast<LD>(a[i]), static_cast<LD>(b[i]))
                                                               : static_cast<LD>(want[i]));
    Tensor y = wok::pow(wt::tensor(a), wt::tensor(b));
    EXPECT_TRUE(wt::within_ulp<double>("pow", y, want_ld, 0.5, describe));
    // Signs of zero results.
    std::vector<double> got = y.to_vector<double>();
    for (size_t i = 0; i < a.size(); ++i)
      if (want[i] == 0) {
        EXPECT_EQ(std::signbit(got[i]), std::signbit(want[i])) << "pow(" << describe(i) << ")";
      }

    std::vector<float> af(a.begin(), a.end()), bf(b.begin(), b.end());
    std::vector<float> wantf;
    for (size_t i = 0; i < a.size(); ++i) wantf.push_back(static_cast<float>(std::pow(af[i], bf[i])));
    EXPECT_TRUE(wt::exact<float>("pow", wok::pow(wt::tensor(af), wt::tensor(bf)), wantf,
                                 [&](size_t i) { return "a=" + wt::fmt(af[i]) + ", b=" + wt::fmt(bf[i]); }));
  });
}

// Small integer powers: exactly representable results must be exact, and
// the rest correctly rounded, as from libm's pow.
// Exponents 1, 2, -1 and 0.5 take exact paths (correctly rounded); other
// small integer powers stay within the general float64 bound of 2 ulp.
TEST(PowOp, SmallIntegerPowers) {
  wt::for_each_backend([&] {
    std::vector<double> xs = {-3.0, -2.0, -1.5, 0.5, 2.0, 3.0, 10.0, 0.1};
    std::vector<double> a, b, a2, b2;
    for (double x : xs)
      for (double y : {-3.0, -2.0, 3.0, 4.0, 10.0}) {
        a2.push_back(x);
        b2.push_back(y);
      }
    std::vector<LD> want2;
    for (size_t i = 0; i < a2.size(); ++i) want2.push_back(std::pow(static_cast<LD>(a2[i]), static_cast<LD>(b2[i])));
    EXPECT_TRUE(wt::within_ulp<double>("pow", wok::pow(wt::tensor(a2), wt::tensor(b2)), want2, 2,
                                       [&](size_t i) { return "a=" + wt::fmt(a2[i]) + ", b=" + wt::fmt(b2[i]); }));
    for (double x : xs)
      for (double y : {-1.0, 1.0, 2.0, 0.5}) {
        a.push_back(x);
        b.push_back(y);
      }
    std::vector<LD> want;
    for (size_t i = 0; i < a.size(); ++i) want.push_back(std::pow(static_cast<LD>(a[i]), static_cast<LD>(b[i])));
    auto describe = [&](size_t i) { return "a=" + wt::fmt(a[i]) + ", b=" + wt::fmt(b[i]); };
    wt::UlpReport r;
    EXPECT_TRUE(wt::within_ulp<double>("pow", wok::pow(wt::tensor(a), wt::tensor(b)), want, 0.5, describe, &r));
    report_ulp("pow(small)", DType::kFloat64, r);
    std::vector<float> af(a.begin(), a.end()), bf(b.begin(), b.end());
    std::vector<LD> wantf;
    for (size_t i = 0; i < a.size(); ++i) wantf.push_back(std::pow(static_cast<LD>(af[i]), static_cast<LD>(bf[i])));
    EXPECT_TRUE(wt::within_ulp<float>("pow", wok::pow(wt::tensor(af), wt::tensor(bf)), wantf, 0.5, describe));
  });
}

template <typename T>
T int_pow_ref(T a, T b) {
  if (b < 0) {
    if (a == 1) return 1;
    if (a == -1) return (b % 2 == 0) ? 1 : -1;
    return 0;  // 1 / a^|b| truncated toward zero (and 0 for a == 0)
  }
  using U = std::make_unsigned_t<T>;
  U r = 1;
  for (T i = 0; i < b; ++i) r = r * static_cast<U>(a);
  return static_cast<T>(r);
}

template <typename T>
void check_int_pow() {
  std::vector<T> a, b;
  for (T x : {T(0), T(1), T(-1), T(2), T(-2), T(3), T(-3), T(10), T(-7), T(1000)})
    for (T y : {T(0), T(1), T(2), T(3), T(7), T(31), T(40), T(63), T(-1), T(-2), T(-3)}) {
      a.push_back(x);
      b.push_back(y);
    }
  std::vector<T> want;
  for (size_t i = 0; i < a.size(); ++i) want.push_back(int_pow_ref(a[i], b[i]));
  EXPECT_TRUE(wt::exact<T>("pow", wok::pow(wt::tensor(a), wt::tensor(b)), want,
                           [&](size_t i) { return "a=" + wt::fmt(a[i]) + ", b=" + wt::fmt(b[i]); }));
}

TEST(PowOp, IntegerPow) {
  wt::for_each_backend([&] {
    check_int_pow<int32_t>();
    check_int_pow<int64_t>();
    // bool ** bool computes in int32.
    EXPECT_TRUE(wt::exact<int32_t>("pow",
                                   wok::pow(wt::tensor(std::vector<bool>{false, false, true, true}),
                                            wt::tensor(std::vector<bool>{false, true, false, true})),
                                   {1, 0, 1, 1}));
    // Scalar exponents keep the integer dtype.
    EXPECT_TRUE(wt::exact<int32_t>("pow", wok::pow(wt::tensor(std::vector<int32_t>{3, -2}), 3), {27, -8}));
    EXPECT_TRUE(wt::exact<int64_t>("pow", wok::pow(wt::tensor(std::vector<int64_t>{2, 5}), -1), {0, 0}));
  });
}

// Note [Exact integer powers] (runtime/kernels/cpu/vec_math.h): an
// integer-valued exponent gives the exact power wherever it is
// representable, so results cast back to integers are right.
TEST(PowOp, IntegerBaseFloatExponentCastsBackExactly) {
  wt::for_each_backend([&] {
    // int32 and float32 promote to float64; 9^3 by exp(3 log 9) was 728.999...
    Tensor p = wok::pow(wt::tensor(std::vector<int32_t>{9, 3, 7, -5, 10, 2, 12}),
                        wt::tensor(std::vector<float>{3, 19, 11, 3, 9, 30, 5}));
    EXPECT_EQ(p.dtype(), DType::kFloat64);
    EXPECT_TRUE(wt::exact<int32_t>("pow", wok::cast(p, DType::kInt32),
                                   {729, 1162261467, 1977326743, -125, 1000000000, 1073741824, 248832}));
  });
}

TEST(PowOp, ExactIntegerPowersAreExact) {
  wt::for_each_backend([&] {
    // float64: every representable power, up to 2^53 and beyond for powers of two.
    std::vector<double> a = {9, 3, -3, 7, 10, 10, 5, -2, 2, 0.5, 0.5, 1.5, -1.5, 3, 10, 2, 0.1, 12345};
    std::vector<double> b = {3, 33, 33, 18, 22, -3, -20, 63, 1023, 1074, -1023, 9, 7, -5, 15, -1074, 1, 3};
    std::vector<double> want;
    for (size_t i = 0; i < a.size(); ++i) want.push_back(static_cast<double>(std::pow(static_cast<LD>(a[i]), static_cast<LD>(b[i]))));
    auto describe = [&](size_t i) { return "a=" + wt::fmt(a[i]) + ", b=" + wt::fmt(b[i]); };
    EXPECT_TRUE(wt::exact<double>("pow", wok::pow(wt::tensor(a), wt::tensor(b)), want, describe));
    // With a plain-number exponent, and fused with neighbours.
    EXPECT_TRUE(wt::exact<double>("pow", wok::pow(wt::tensor(std::vector<double>{9, 11, 1e5}), 3.0) + 0.0,
                                  {729, 1331, 1e15}));
    // float32 (computed in float64, rounded once).
    std::vector<float> af = {9, 3, 7, 10, 2, 0.5f, 3, -9, 1.1f, 16777215};
    std::vector<float> bf = {3, 15, 8, 10, 127, 149, -4, 5, 2, 1};
    std::vector<float> wantf;
    for (size_t i = 0; i < af.size(); ++i)
      wantf.push_back(static_cast<float>(std::pow(static_cast<LD>(af[i]), static_cast<LD>(bf[i]))));
    EXPECT_TRUE(wt::exact<float>("pow", wok::pow(wt::tensor(af), wt::tensor(bf)), wantf,
                                 [&](size_t i) { return "a=" + wt::fmt(af[i]) + ", b=" + wt::fmt(bf[i]); }));
  });
}

// Integer powers whose results are not representable keep the general
// bound (2 ulp in float64), and the special cases still win.
TEST(PowOp, InexactIntegerPowersStayAccurate) {
  wt::for_each_backend([&] {
    std::vector<double> a, b;
    for (double x : {3.0, -3.0, 7.0, 1.1, 0.3, 123456789.0, 1.0000001})
      for (double y : {34.0, 35.0, 40.0, 100.0, -37.0, 1000.0, 2047.0, 2048.0, 5000.0}) {
        a.push_back(x);
        b.push_back(y);
      }
    std::vector<LD> want;
    for (size_t i = 0; i < a.size(); ++i) want.push_back(std::pow(static_cast<LD>(a[i]), static_cast<LD>(b[i])));
    EXPECT_TRUE(wt::within_ulp<double>("pow", wok::pow(wt::tensor(a), wt::tensor(b)), want, 4,
                                       [&](size_t i) { return "a=" + wt::fmt(a[i]) + ", b=" + wt::fmt(b[i]); }));
    // Signs and zeros through the exact path.
    EXPECT_TRUE(wt::exact<double>("pow",
                                  wok::pow(wt::tensor(std::vector<double>{-2, -2, -0.0, 0.0, -1, kNaN, kInf, -kInf}),
                                           wt::tensor(std::vector<double>{3, -3, 3, -2, 2047, 0, 3, 3})),
                                  {-8, -0.125, -0.0, kInf, -1, 1, kInf, -kInf}));
  });
}

TEST(PowOp, Int64LargeValuesAreExact) {
  wt::for_each_backend([&] {
    std::vector<int64_t> a = {3, -3, 7, 2, -2, 10, 1 << 20, 3037000499LL, -1};
    std::vector<int64_t> b = {39, 39, 22, 62, 63, 18, 3, 2, 1LL << 40};
    std::vector<int64_t> want = {4052555153018976267LL,
                                 -4052555153018976267LL,
                                 3909821048582988049LL,
                                 4611686018427387904LL,
                                 std::numeric_limits<int64_t>::min(),
                                 1000000000000000000LL,
                                 1LL << 60,
                                 9223372030926249001LL,
                                 1};
    EXPECT_TRUE(wt::exact<int64_t>("pow", wok::pow(wt::tensor(a), wt::tensor(b)), want,
                                   [&](size_t i) { return "a=" + wt::fmt(a[i]) + ", b=" + wt::fmt(b[i]); }));
    // int64 with a float exponent computes in float64: exact where representable.
    Tensor p = wok::pow(wt::tensor(std::vector<int64_t>{3, 9, 2}), wt::tensor(std::vector<double>{33, 16, 62}));
    EXPECT_TRUE(wt::exact<int64_t>("pow", wok::cast(p, DType::kInt64), {5559060566555523LL, 1853020188851841LL, 1LL << 62}));
  });
}

}  // namespace
