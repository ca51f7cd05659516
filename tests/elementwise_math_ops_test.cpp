// The unary ops written as composites of the primitives (Note [Composite
// transcendentals] in runtime/ops/formula_helpers.h): tan, the inverse
// trigonometric and the hyperbolic functions, sign, isnan, isinf, gelu_erf,
// softsign, mish, hard_swish, and the primitive bitwise_not, on both CPU
// backends: values against long double, special values, signed zeros,
// dtypes and fusion. The dense accuracy sweeps are in jit_math_sweep_test.cpp.
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

class ElementwiseMath : public wt::BothBackends {};

struct MathCase {
  const char* name;
  Tensor (*fn)(const Tensor&);
  LD (*ref)(LD);
  double lo, hi;        // random inputs
  double ulp32, ulp64;  // bounds
};

const MathCase kMath[] = {
    {"tan", wok::tan, [](LD x) { return std::tan(x); }, -10, 10, 2, 4},
    {"asin", wok::asin, [](LD x) { return std::asin(x); }, -1, 1, 3, 3},
    {"acos", wok::acos, [](LD x) { return std::acos(x); }, -1, 1, 3, 3},
    {"atan", wok::atan, [](LD x) { return std::atan(x); }, -50, 50, 2, 2},
    {"sinh", wok::sinh, [](LD x) { return std::sinh(x); }, -20, 20, 3, 3},
    {"cosh", wok::cosh, [](LD x) { return std::cosh(x); }, -20, 20, 3, 3},
    {"asinh", wok::asinh, [](LD x) { return std::asinh(x); }, -1e4, 1e4, 3, 3},
    {"acosh", wok::acosh, [](LD x) { return std::acosh(x); }, 1, 1e4, 3, 3},
    {"atanh", wok::atanh, [](LD x) { return std::atanh(x); }, -1, 1, 4, 4},
    // The limits at +-inf, where the plain formulas give inf / inf or -inf * 0.
    {"softsign", wok::softsign, [](LD x) { return std::isinf(x) ? std::copysign(1.0L, x) : x / (1 + std::fabs(x)); },
     -100, 100, 2, 2},
    {"mish", wok::mish, [](LD x) { return x == -INFINITY ? -0.0L : x * std::tanh(std::log1p(std::exp(x))); }, -20, 20,
     4, 4},
    {"hard_swish", wok::hard_swish,
     [](LD x) { return x <= -3 ? -0.0L : x * std::min(std::max(x + 3, 0.0L), 6.0L) / 6; }, -8, 8, 2, 2},
};

template <typename T>
void check_math(const MathCase& c) {
  SCOPED_TRACE(std::string(c.name) + " on " + wt::dname(wok::dtype_of<T>()));
  std::vector<T> x = wt::random_values<T>(2048, c.lo, c.hi, 17);
  for (T s : wt::special_values<T>()) x.push_back(s);
  for (T s : wt::log_spread<T>(256, -30, 30, 4)) x.push_back(s);
  std::vector<LD> want;
  for (T v : x) {
    // tan, like sin and cos, is nan beyond 2.1e8 (docs/numerics.md).
    bool beyond = std::string(c.name) == "tan" && std::fabs(static_cast<double>(v)) > 2.1e8;
    want.push_back(beyond ? NAN : c.ref(static_cast<LD>(v)));
  }
  // Results below T's normal range carry fewer bits: compared absolutely.
  // (mish's softplus underflows first, below -87 in float32.)
  auto tiny = [&](size_t i) {
    return std::fabs(want[i]) < std::numeric_limits<T>::min() ? static_cast<double>(std::numeric_limits<T>::min()) : 0.0;
  };
  wt::UlpReport r;
  EXPECT_TRUE(wt::within_ulp<T>(c.name, c.fn(wt::tensor(x)), want, std::is_same_v<T, float> ? c.ulp32 : c.ulp64,
                                [&](size_t i) { return "x=" + wt::fmt(x[i]); }, &r, tiny));
  wt::report_ulp(c.name, wok::dtype_of<T>(), r);
}

TEST_P(ElementwiseMath, CompositesAreAccurateOnRandomAndSpecialInputs) {
  for (const MathCase& c : kMath) {
    check_math<float>(c);
    check_math<double>(c);
  }
}

// Odd functions keep the sign of zero and return tiny arguments themselves.
TEST_P(ElementwiseMath, OddFunctionsKeepSignedZerosAndTinyArguments) {
  for (auto fn : {wok::tan, wok::asin, wok::atan, wok::sinh, wok::asinh, wok::atanh, wok::softsign}) {
    for (DType t : {DType::kFloat32, DType::kFloat64}) {
      Tensor x = wok::cast(wt::tensor(std::vector<double>{-0.0, 0.0, 1e-30, -1e-30, 1e-40}), t);
      std::vector<double> got = fn(x).to_vector<double>();
      std::vector<double> in = x.to_vector<double>();
      for (size_t i = 0; i < in.size(); ++i) {
        EXPECT_EQ(got[i], in[i]) << "f(" << in[i] << ") on " << wt::dname(t);
        EXPECT_EQ(std::signbit(got[i]), std::signbit(in[i])) << "sign of f(" << in[i] << ") on " << wt::dname(t);
      }
    }
  }
}

TEST_P(ElementwiseMath, SpecialValuesAndDomains) {
  const double pi = 3.14159265358979323846, pio2 = pi / 2;
  struct Special {
    Tensor (*fn)(const Tensor&);
    const char* name;
    std::vector<double> x, want;
  };
  const std::vector<Special> cases = {
      {wok::tan, "tan", {kInf, -kInf, kNaN}, {kNaN, kNaN, kNaN}},
      {wok::asin, "asin", {1, -1, 1.5, -1.0000001, kInf, kNaN}, {pio2, -pio2, kNaN, kNaN, kNaN, kNaN}},
      {wok::acos, "acos", {1, -1, 0, 2, -2, kInf, kNaN}, {0, pi, pio2, kNaN, kNaN, kNaN, kNaN}},
      {wok::atan, "atan", {kInf, -kInf, kNaN, 1e300, -1e300}, {pio2, -pio2, kNaN, pio2, -pio2}},
      {wok::sinh, "sinh", {kInf, -kInf, kNaN, 1000, -1000}, {kInf, -kInf, kNaN, kInf, -kInf}},
      {wok::cosh, "cosh", {0, kInf, -kInf, kNaN, 1000, -1000}, {1, kInf, kInf, kNaN, kInf, kInf}},
      {wok::asinh, "asinh", {kInf, -kInf, kNaN}, {kInf, -kInf, kNaN}},
      {wok::acosh, "acosh", {1, kInf, 0.5, 0, -1, -1e30, -kInf, kNaN}, {0, kInf, kNaN, kNaN, kNaN, kNaN, kNaN, kNaN}},
      {wok::atanh, "atanh", {1, -1, 1.5, -2, kInf, -kInf, kNaN}, {kInf, -kInf, kNaN, kNaN, kNaN, kNaN, kNaN}},
      {wok::softsign, "softsign", {kInf, -kInf, kNaN, 1e300}, {1, -1, kNaN, 1}},
      {wok::mish, "mish", {kInf, -kInf, kNaN, 0, -1e5}, {kInf, -0.0, kNaN, 0, -0.0}},
      {wok::hard_swish, "hard_swish", {kInf, -kInf, kNaN, -3, 3, -4, 0}, {kInf, -0.0, kNaN, -0.0, 3, -0.0, 0}},
  };
  for (const Special& c : cases) {
    for (DType t : {DType::kFloat32, DType::kFloat64}) {
      Tensor y = c.fn(wok::cast(wt::tensor(c.x), t));
      std::vector<double> got = wok::cast(y, DType::kFloat64).to_vector<double>();
      for (size_t i = 0; i < c.x.size(); ++i) {
        double want = t == DType::kFloat32 ? static_cast<double>(static_cast<float>(c.want[i])) : c.want[i];
        EXPECT_TRUE(wt::same_value(got[i], want))
            << c.name << "(" << c.x[i] << ") on " << wt::dname(t) << ": got " << got[i] << ", want " << want;
      }
    }
  }
  // sinh and cosh stay finite up to where the result overflows.
  EXPECT_TRUE(std::isfinite(wok::sinh(wt::tensor(std::vector<float>{89.4f})).to_vector<float>()[0]));
  EXPECT_TRUE(std::isfinite(wok::cosh(wt::tensor(std::vector<double>{710.4})).to_vector<double>()[0]));
  EXPECT_TRUE(std::isinf(wok::sinh(wt::tensor(std::vector<float>{89.5f})).to_vector<float>()[0]));
}

TEST_P(ElementwiseMath, IntegersComputeInFloat64AndBoolInFloat32) {
  Tensor i = wt::tensor(std::vector<int32_t>{0, 1, -1, 2});
  for (auto fn : {wok::tan, wok::asin, wok::acos, wok::atan, wok::sinh, wok::cosh, wok::asinh, wok::acosh, wok::atanh,
                  wok::gelu_erf, wok::softsign, wok::mish, wok::hard_swish}) {
    EXPECT_EQ(fn(i).dtype(), DType::kFloat64);
    EXPECT_EQ(fn(wt::tensor(std::vector<bool>{true})).dtype(), DType::kFloat32);
  }
  EXPECT_TRUE(wt::exact<double>("atan", wok::atan(wt::tensor(std::vector<int64_t>{1})),
                                {static_cast<double>(std::atan(1.0L))}));
}

TEST_P(ElementwiseMath, SignKeepsTheDtype) {
  EXPECT_TRUE(wt::exact<float>("sign", wok::sign(wt::tensor(std::vector<float>{-2.5f, -0.0f, 0.0f, 3, -1e-45f, 1e30f,
                                                                              -INFINITY, INFINITY, NAN})),
                               {-1, -0.0f, 0.0f, 1, -1, 1, -1, 1, NAN}));
  EXPECT_TRUE(wt::exact<double>("sign", wok::sign(wt::tensor(std::vector<double>{-kInf, 7, -0.0, kNaN})),
                                {-1, 1, -0.0, kNaN}));
  const int32_t mn = std::numeric_limits<int32_t>::min(), mx = std::numeric_limits<int32_t>::max();
  EXPECT_TRUE(wt::exact<int32_t>("sign", wok::sign(wt::tensor(std::vector<int32_t>{-7, 0, 5, mn, mx})), {-1, 0, 1, -1, 1}));
  EXPECT_TRUE(wt::exact<int64_t>("sign", wok::sign(wt::tensor(std::vector<int64_t>{std::numeric_limits<int64_t>::min(), 0, 1LL << 40})),
                                 {-1, 0, 1}));
  EXPECT_TRUE(wt::throws_naming<wok::DTypeError>([] { wok::sign(wt::tensor(std::vector<bool>{true})); },
                                                 {"wok::sign", "bool"}));
}

TEST_P(ElementwiseMath, IsnanAndIsinfGiveBool) {
  std::vector<double> x = {0, -0.0, 1, kNaN, -kNaN, kInf, -kInf, 1e308, std::numeric_limits<double>::denorm_min()};
  std::vector<bool> nan_want = {false, false, false, true, true, false, false, false, false};
  std::vector<bool> inf_want = {false, false, false, false, false, true, true, false, false};
  for (DType t : {DType::kFloat32, DType::kFloat64}) {
    Tensor tx = wok::cast(wt::tensor(x), t);
    EXPECT_TRUE(wt::exact<bool>("isnan", wok::isnan(tx), nan_want));
    // float32 overflows 1e308 to inf.
    std::vector<bool> iw = inf_want;
    if (t == DType::kFloat32) iw[7] = true;
    EXPECT_TRUE(wt::exact<bool>("isinf", wok::isinf(tx), iw));
  }
  // Integers (their largest values too) and bool are never nan or inf.
  Tensor i = wt::tensor(std::vector<int32_t>{0, std::numeric_limits<int32_t>::max(), std::numeric_limits<int32_t>::min()});
  EXPECT_TRUE(wt::exact<bool>("isnan", wok::isnan(i), {false, false, false}));
  EXPECT_TRUE(wt::exact<bool>("isinf", wok::isinf(i), {false, false, false}));
  Tensor l = wt::tensor(std::vector<int64_t>{std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()});
  EXPECT_TRUE(wt::exact<bool>("isinf", wok::isinf(l), {false, false}));
  EXPECT_TRUE(wt::exact<bool>("isnan", wok::isnan(wt::tensor(std::vector<bool>{true, false})), {false, false}));
  EXPECT_TRUE(wt::exact<bool>("isinf", wok::isinf(wt::tensor(std::vector<bool>{true, false})), {false, false}));
  // As a mask, fused under the JIT: where(isnan(x), 0, x).
  Tensor y = wok::where(wok::isnan(wt::tensor(std::vector<float>{1, NAN, 3})), 0.0f, wt::tensor(std::vector<float>{1, NAN, 3}));
  EXPECT_TRUE(wt::exact<float>("where(isnan)", y, {1, 0, 3}));
}

// Exact GELU: 0.5 x (1 + erf(x / sqrt 2)). Like PyTorch's, it cancels for
// x < 0 (1 + erf -> 0): there an absolute error of a few eps |x| is allowed.
TEST_P(ElementwiseMath, GeluErfIsTheExactGelu) {
  const LD rsqrt2 = 1 / std::sqrt(2.0L);
  for (DType t : {DType::kFloat32, DType::kFloat64}) {
    std::vector<double> x = wt::random_values<double>(2000, -8, 20, 3);
    for (double s : {0.0, -0.0, 1e-30, -1e-30, kInf, -kInf, kNaN}) x.push_back(s);
    Tensor tx = wok::cast(wt::tensor(x), t);
    std::vector<double> xs = tx.to_vector<double>();
    std::vector<LD> want;
    for (double v : xs) want.push_back(0.5L * v * (1 + std::erf(v * rsqrt2)));
    want[want.size() - 2] = -0.0L;  // -inf: 0.5 (-inf) (1 + -1) is nan in the formula; see below
    const double eps = wt::eps_of(t);
    Tensor y = wok::gelu_erf(tx);
    std::vector<double> got = wok::cast(y, DType::kFloat64).to_vector<double>();
    EXPECT_TRUE(std::isnan(got[got.size() - 2])) << "gelu_erf(-inf) is 0.5 (-inf) 0, nan, as in PyTorch";
    got.pop_back(), got.pop_back(), want.pop_back(), want.pop_back(), xs.pop_back(), xs.pop_back();
    for (size_t i = 0; i < got.size(); ++i) {
      if (!std::isfinite(got[i]) || !std::isfinite(static_cast<double>(want[i]))) {
        EXPECT_TRUE(wt::same_value(got[i], static_cast<double>(want[i]))) << "gelu_erf(" << xs[i] << ")";
        continue;
      }
      double tol = 4 * eps * std::fabs(static_cast<double>(want[i])) + 4 * eps * std::fabs(xs[i]) + wt::tiny_of(t);
      EXPECT_LE(std::fabs(got[i] - static_cast<double>(want[i])), tol) << "gelu_erf(" << xs[i] << ") on " << wt::dname(t);
    }
  }
  // Close to the tanh approximation, not equal to it.
  std::vector<float> x = {-2, -1, -0.5f, 0.5f, 1, 2};
  std::vector<float> a = wok::gelu_erf(wt::tensor(x)).to_vector<float>(), b = wok::gelu(wt::tensor(x)).to_vector<float>();
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_NEAR(a[i], b[i], 1e-3) << x[i];
    EXPECT_NE(a[i], b[i]) << x[i];
  }
}

TEST_P(ElementwiseMath, BitwiseNot) {
  EXPECT_TRUE(wt::exact<int32_t>("bitwise_not", wok::bitwise_not(wt::tensor(std::vector<int32_t>{0, -1, 5, std::numeric_limits<int32_t>::min()})),
                                 {-1, 0, -6, std::numeric_limits<int32_t>::max()}));
  EXPECT_TRUE(wt::exact<int64_t>("bitwise_not", wok::bitwise_not(wt::tensor(std::vector<int64_t>{0, 1LL << 40})),
                                 {-1, ~(1LL << 40)}));
  EXPECT_TRUE(wt::exact<bool>("bitwise_not", wok::bitwise_not(wt::tensor(std::vector<bool>{true, false})), {false, true}));
  for (DType t : {DType::kFloat32, DType::kFloat64}) {
    Tensor f = wok::cast(wt::tensor(std::vector<double>{1}), t);
    EXPECT_TRUE(wt::throws_naming<wok::DTypeError>([&] { wok::bitwise_not(f); }, {"wok::bitwise_not", wt::dname(t)}));
  }
}

TEST_P(ElementwiseMath, CompositesFuseIntoOneKernel) {
  Tensor x = wt::tensor(std::vector<float>{0.25f, -0.5f, 0.75f});
  Tensor y = wok::atan(x * 2.0f) + wok::asin(x) * wok::sinh(x) - wok::acosh(wok::cosh(x) + 1.0f);
  wok::reset_stats();
  std::vector<float> got = y.to_vector<float>();
  if (GetParam() == wok::Backend::kJit) {
    EXPECT_EQ(wok::stats().kernel_launches, 1);
  }
  for (size_t i = 0; i < got.size(); ++i) {
    LD v = std::vector<float>{0.25f, -0.5f, 0.75f}[i];
    LD want = std::atan(2 * v) + std::asin(v) * std::sinh(v) - std::acosh(std::cosh(v) + 1);
    EXPECT_NEAR(got[i], static_cast<double>(want), 1e-6) << v;
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, ElementwiseMath, wt::kBothBackends, wt::backend_param_name);

}  // namespace
