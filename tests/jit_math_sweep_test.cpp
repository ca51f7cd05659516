// Dense sweeps of the transcendental functions against higher-precision
// references. The generated (JIT) kernels are measured; the precompiled
// kernels must agree with them bitwise on every input. The bounds asserted
// here are the ones docs/numerics.md states.
#include <gtest/gtest.h>
#include <wok/wok.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>

#include "wok/runtime/cpu_features.h"

namespace {

using wok::Tensor;

template <typename T>
double ulp_of(long double ref) {
  // Spacing of T's representable numbers at |ref| (subnormal spacing below).
  long double a = std::fabs(ref);
  int exp;
  std::frexp(static_cast<double>(a), &exp);
  constexpr int digits = std::numeric_limits<T>::digits;
  constexpr int min_exp = std::numeric_limits<T>::min_exponent;
  return std::ldexp(1.0, std::max(exp, min_exp) - digits);
}

template <typename T>
double ulp_error(T got, long double want) {
  if (std::isnan(want)) return std::isnan(got) ? 0 : INFINITY;
  if (std::isinf(want)) return got == want ? 0 : INFINITY;
  // A result beyond T's range is counted against the largest finite value.
  long double w = std::fabs(want) > std::numeric_limits<T>::max() ? std::copysign(std::numeric_limits<T>::max(), want) : want;
  if (std::isinf(got)) return std::fabs(want) >= std::numeric_limits<T>::max() ? 0 : INFINITY;
  return static_cast<double>(std::fabs(static_cast<long double>(got) - w) / ulp_of<T>(w));
}

// Inputs spread evenly over the bit patterns in [lo, hi]: every float in
// the range for float32 when `stride` is 1.
std::vector<float> sweep_f32(float lo, float hi, int64_t target) {
  std::vector<float> out;
  auto walk = [&](float a, float b) {  // a <= b, same sign
    uint32_t ua, ub;
    std::memcpy(&ua, &a, 4);
    std::memcpy(&ub, &b, 4);
    if (ua > ub) std::swap(ua, ub);
    uint64_t span = ub - ua;
    uint64_t stride = std::max<uint64_t>(1, span / static_cast<uint64_t>(target));
    for (uint64_t u = ua; u <= ub; u += stride) {
      float f;
      uint32_t bits = static_cast<uint32_t>(u);
      std::memcpy(&f, &bits, 4);
      out.push_back(f);
    }
  };
  if (lo < 0 && hi > 0) {
    walk(lo, -0.0f);
    walk(0.0f, hi);
  } else {
    walk(lo, hi);
  }
  return out;
}

std::vector<double> sweep_f64(double lo, double hi, int64_t target) {
  std::vector<double> out;
  auto walk = [&](double a, double b) {
    uint64_t ua, ub;
    std::memcpy(&ua, &a, 8);
    std::memcpy(&ub, &b, 8);
    if (ua > ub) std::swap(ua, ub);
    uint64_t stride = std::max<uint64_t>(1, (ub - ua) / static_cast<uint64_t>(target));
    for (uint64_t u = ua; u <= ub; u += stride) {
      double f;
      std::memcpy(&f, &u, 8);
      out.push_back(f);
    }
  };
  if (lo < 0 && hi > 0) {
    walk(lo, -0.0);
    walk(0.0, hi);
  } else {
    walk(lo, hi);
  }
  return out;
}

struct Case {
  const char* name;
  Tensor (*fn)(const Tensor&);
  long double (*ref)(long double);
  double lo, hi;
  double bound_f32, bound_f64;  // max ulp asserted
  double lo64 = NAN, hi64 = NAN;  // float64's range where it differs
};

long double ref_sigmoid(long double x) { return 1 / (1 + std::exp(-x)); }
long double ref_silu(long double x) { return x / (1 + std::exp(-x)); }
long double ref_exp(long double x) { return std::exp(x); }
long double ref_log(long double x) { return std::log(x); }
long double ref_tanh(long double x) { return std::tanh(x); }
long double ref_sin(long double x) { return std::sin(x); }
long double ref_cos(long double x) { return std::cos(x); }
long double ref_erf(long double x) { return std::erf(x); }
long double ref_tan(long double x) { return std::tan(x); }
long double ref_asin(long double x) { return std::asin(x); }
long double ref_acos(long double x) { return std::acos(x); }
long double ref_atan(long double x) { return std::atan(x); }
long double ref_sinh(long double x) { return std::sinh(x); }
long double ref_cosh(long double x) { return std::cosh(x); }
long double ref_asinh(long double x) { return std::asinh(x); }
long double ref_acosh(long double x) { return std::acosh(x); }
long double ref_atanh(long double x) { return std::atanh(x); }
long double ref_softsign(long double x) { return x / (1 + std::fabs(x)); }
long double ref_mish(long double x) { return x * std::tanh(std::log1p(std::exp(x))); }
long double ref_hard_swish(long double x) { return x * std::min(std::max(x + 3, 0.0L), 6.0L) / 6; }

const Case kCases[] = {
    {"exp", wok::exp, ref_exp, -104, 89, 1.5, 1},
    {"log", wok::log, ref_log, 1e-38, 3e38, 1, 1.5},
    {"tanh", wok::tanh, ref_tanh, -12, 12, 3, 2.5},
    // Ranges stop where results turn subnormal (fewer bits, ulp errors
    // meaningless); special values are tested in elementwise_ops_test.cpp.
    {"sigmoid", wok::sigmoid, ref_sigmoid, -87, 90, 3, 3},
    {"silu", wok::silu, ref_silu, -82, 90, 3.5, 3},
    {"sin", wok::sin, ref_sin, -1e5, 1e5, 1, 2},
    {"cos", wok::cos, ref_cos, -1e5, 1e5, 1, 2},
    {"erf", wok::erf, ref_erf, -7, 7, 3, 2},
    // Composites of the primitives (Note [Composite transcendentals] in
    // runtime/ops/formula_helpers.h).
    {"tan", wok::tan, ref_tan, -1e5, 1e5, 2, 4},
    {"asin", wok::asin, ref_asin, -1, 1, 3, 3},
    {"acos", wok::acos, ref_acos, -1, 1, 3, 3},
    {"atan", wok::atan, ref_atan, -3e38, 3e38, 2, 2, -1e300, 1e300},
    {"sinh", wok::sinh, ref_sinh, -89, 89, 3, 3, -710, 710},
    {"cosh", wok::cosh, ref_cosh, -89, 89, 3, 3, -710, 710},
    {"asinh", wok::asinh, ref_asinh, -3e38, 3e38, 3, 3, -1e300, 1e300},
    {"acosh", wok::acosh, ref_acosh, 1, 3e38, 3, 3, 1, 1e300},
    {"atanh", wok::atanh, ref_atanh, -1, 1, 4, 4},
    {"softsign", wok::softsign, ref_softsign, -3e38, 3e38, 2, 2},
    {"mish", wok::mish, ref_mish, -80, 88, 4, 4, -700, 700},
    {"hard_swish", wok::hard_swish, ref_hard_swish, -10, 10, 2, 2},
};

template <typename T>
void sweep(const Case& c, std::vector<T> xs, double bound, const char* dtype) {
  Tensor in = wok::from_vector(xs);
  wok::set_backend(wok::Backend::kJit);
  std::vector<T> jit = c.fn(in).template to_vector<T>();
  wok::set_backend(wok::Backend::kPrecompiled);
  std::vector<T> pre = c.fn(in).template to_vector<T>();
  wok::set_backend(wok::Backend::kJit);
  double worst = 0;
  size_t worst_at = 0, differ = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    if (std::memcmp(&jit[i], &pre[i], sizeof(T)) != 0 && !(std::isnan(jit[i]) && std::isnan(pre[i]))) ++differ;
    double e = ulp_error<T>(jit[i], c.ref(static_cast<long double>(xs[i])));
    if (e > worst) {
      worst = e;
      worst_at = i;
    }
  }
  std::printf("  %-8s %-7s %8zu inputs in [%g, %g]: max %.2f ulp (at x = %.9g)\n", c.name, dtype, xs.size(), c.lo, c.hi,
              worst, static_cast<double>(xs[worst_at]));
  EXPECT_LE(worst, bound) << c.name << " " << dtype << " at x = " << xs[worst_at];
  EXPECT_EQ(differ, 0u) << c.name << " " << dtype << ": JIT and precompiled differ on " << differ << " inputs";
}

class MathSweep : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    if (wok::host_cpu_isa() == wok::CpuIsa::kBaseline) GTEST_SKIP() << "host has no AVX2: the JIT is off";
  }
};

TEST_P(MathSweep, Float32) {
  const Case& c = kCases[GetParam()];
  sweep<float>(c, sweep_f32(static_cast<float>(c.lo), static_cast<float>(c.hi), 1 << 21), c.bound_f32, "float32");
}

TEST_P(MathSweep, Float64) {
  Case c = kCases[GetParam()];
  if (!std::isnan(c.lo64)) c.lo = c.lo64, c.hi = c.hi64;
  sweep<double>(c, sweep_f64(c.lo, c.hi, 1 << 19), c.bound_f64, "float64");
}

INSTANTIATE_TEST_SUITE_P(Functions, MathSweep, ::testing::Range(0, static_cast<int>(std::size(kCases))),
                         [](const auto& info) { return std::string(kCases[info.param].name); });

// float32 exp in a kernel whose lanes a float64 value sets: ymm registers
// on AVX-512 and xmm on AVX2 (Note [Lanes and registers]), where the sweeps
// above run it in zmm and ymm; the same bits as the precompiled kernels.
TEST(MathSweepExp, Float32InNarrowerRegisters) {
  if (wok::host_cpu_isa() == wok::CpuIsa::kBaseline) GTEST_SKIP() << "host has no AVX2: the JIT is off";
  std::vector<float> xs = sweep_f32(-104.0f, 89.0f, 1 << 17);
  xs.push_back(std::numeric_limits<float>::quiet_NaN());
  xs.push_back(-std::numeric_limits<float>::infinity());
  xs.push_back(std::numeric_limits<float>::infinity());
  std::vector<double> xd(xs.begin(), xs.end());
  Tensor in = wok::from_vector(xd);
  auto f = [&] { return wok::exp(wok::cast(in, wok::DType::kFloat32)).to_vector<float>(); };
  wok::set_backend(wok::Backend::kPrecompiled);
  std::vector<float> pre = f();
  wok::set_backend(wok::Backend::kJit);
  std::vector<float> jit = f();
  double worst = 0;
  size_t differ = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    if (std::memcmp(&jit[i], &pre[i], sizeof(float)) != 0 && !(std::isnan(jit[i]) && std::isnan(pre[i]))) ++differ;
    worst = std::max(worst, ulp_error<float>(jit[i], std::exp(static_cast<long double>(xs[i]))));
  }
  EXPECT_LE(worst, 1.0);
  EXPECT_EQ(differ, 0u) << "JIT and precompiled differ on " << differ << " inputs";
}

// pow over a grid of bases and exponents (float32 computes in float64).
TEST(MathSweepPow, Grid) {
  if (wok::host_cpu_isa() == wok::CpuIsa::kBaseline) GTEST_SKIP() << "host has no AVX2: the JIT is off";
  std::vector<float> a, b;
  for (float x : sweep_f32(1e-3f, 1e3f, 1500))
    for (float y : sweep_f32(-12.0f, 12.0f, 400)) {
      a.push_back(x);
      b.push_back(y);
    }
  std::vector<double> ad(a.begin(), a.end()), bd(b.begin(), b.end());
  for (int f64 = 0; f64 < 2; ++f64) {
    Tensor ta = f64 ? wok::from_vector(ad) : wok::from_vector(a), tb = f64 ? wok::from_vector(bd) : wok::from_vector(b);
    std::vector<double> got = wok::pow(ta, tb).to_vector<double>();
    double worst = 0;
    size_t at = 0;
    for (size_t i = 0; i < a.size(); ++i) {
      long double want = std::pow(static_cast<long double>(a[i]), static_cast<long double>(b[i]));
      double e = f64 ? ulp_error<double>(got[i], want) : ulp_error<float>(static_cast<float>(got[i]), want);
      if (e > worst) worst = e, at = i;
    }
    std::printf("  pow      %-7s %8zu inputs: max %.2f ulp (at a = %.9g, b = %.9g)\n", f64 ? "float64" : "float32", a.size(),
                worst, static_cast<double>(a[at]), static_cast<double>(b[at]));
    EXPECT_LE(worst, f64 ? 2.0 : 1.0);
  }
}

// atan2 over a grid of points in every quadrant and at every scale: y and
// x each over [-1e30, 1e30] by bit pattern (float32's grid also in float64).
TEST(MathSweepAtan2, Grid) {
  if (wok::host_cpu_isa() == wok::CpuIsa::kBaseline) GTEST_SKIP() << "host has no AVX2: the JIT is off";
  std::vector<float> ys, xs;
  for (float y : sweep_f32(-1e30f, 1e30f, 1200))
    for (float x : sweep_f32(-1e30f, 1e30f, 1200)) {
      ys.push_back(y);
      xs.push_back(x);
    }
  std::vector<double> yd(ys.begin(), ys.end()), xd(xs.begin(), xs.end());
  for (int f64 = 0; f64 < 2; ++f64) {
    Tensor ty = f64 ? wok::from_vector(yd) : wok::from_vector(ys), tx = f64 ? wok::from_vector(xd) : wok::from_vector(xs);
    wok::set_backend(wok::Backend::kPrecompiled);
    std::vector<double> pre = wok::atan2(ty, tx).to_vector<double>();
    wok::set_backend(wok::Backend::kJit);
    std::vector<double> got = wok::atan2(ty, tx).to_vector<double>();
    double worst = 0;
    size_t at = 0, differ = 0;
    for (size_t i = 0; i < ys.size(); ++i) {
      if (std::memcmp(&got[i], &pre[i], sizeof(double)) != 0 && !(std::isnan(got[i]) && std::isnan(pre[i]))) ++differ;
      long double want = std::atan2(static_cast<long double>(ys[i]), static_cast<long double>(xs[i]));
      if (std::fabs(want) < (f64 ? 1e-300 : 1e-37)) continue;  // subnormal results: fewer bits
      double e = f64 ? ulp_error<double>(got[i], want) : ulp_error<float>(static_cast<float>(got[i]), want);
      if (e > worst) worst = e, at = i;
    }
    std::printf("  atan2    %-7s %8zu inputs: max %.2f ulp (at y = %.9g, x = %.9g)\n", f64 ? "float64" : "float32",
                ys.size(), worst, static_cast<double>(ys[at]), static_cast<double>(xs[at]));
    EXPECT_LE(worst, 2.0);
    EXPECT_EQ(differ, 0u) << "atan2: JIT and precompiled differ on " << differ << " inputs";
  }
}

}  // namespace
