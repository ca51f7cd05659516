// The parameterised activations of frontend/activations.h against long
// double references of ONNX's formulas, float32 and float64, on both CPU
// backends: values from tiny to huge of both signs and the IEEE specials;
// e^x - 1 near 0 without cancellation (elu, selu, celu); integer inputs;
// hardmax's first maximum along each axis; each activation fusing with its
// neighbours into one kernel under the JIT (and the continuous ones into a
// matmul's epilogue); and the errors.
#include <gtest/gtest.h>
#include <wok/wok.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "test_util.h"

namespace {

using wok::DType;
using wok::Shape;
using wok::Tensor;
using LD = long double;

constexpr DType kF32 = DType::kFloat32;
constexpr DType kF64 = DType::kFloat64;

// Inputs of type T: a grid over [-100, 100], magnitudes from 1e-30 (1e-300
// in float64) to 1e4 of both signs, and the specials (infinities, nan,
// signed zeros, the extremes, subnormals).
template <typename T>
std::vector<T> inputs() {
  std::vector<T> v;
  for (double x = -100; x <= 100; x += 0.37) v.push_back(static_cast<T>(x));
  const double lo = std::is_same_v<T, float> ? -30 : -300;
  v = wt::concat_vec(v, wt::log_spread<T>(400, lo, 4, 11));
  v = wt::concat_vec(v, wt::log_spread<T>(200, -8, 0.5, 12));  // around 0, where e^x - 1 cancels
  return wt::concat_vec(v, wt::special_values<T>());
}

// One activation: the function under test and its reference, with the
// bound in ulp and an absolute bound for formulas that cancel.
struct Case {
  std::string name;
  std::function<Tensor(const Tensor&)> fn;
  // The reference for x (given in T, as double); `t` is T's dtype, for
  // parameters that ONNX rounds to T (its attributes are float32).
  std::function<LD(LD x, DType t)> ref;
  double max_ulp;
  std::function<double(LD x, DType t)> abs_tol = {};
};

// A parameter as the kernel sees it: rounded to the tensor's dtype.
LD in(DType t, double p) { return t == kF32 ? static_cast<LD>(static_cast<float>(p)) : static_cast<LD>(p); }

LD ref_elu(LD x, LD alpha) { return std::isnan(x) ? x : x > 0 ? x : alpha * std::expm1(x); }

std::vector<Case> cases() {
  const double selu_a = 1.67326319217681884765625, selu_g = 1.05070102214813232421875;
  return {
      {"leaky_relu", [](const Tensor& x) { return wok::leaky_relu(x); },
       [](LD x, DType t) { return x < 0 ? in(t, 0.01) * x : x; }, 1},
      {"leaky_relu(0)", [](const Tensor& x) { return wok::leaky_relu(x, 0.0); },
       [](LD x, DType) { return x < 0 ? 0 * x : x; }, 0},  // ONNX's alpha x: nan at -inf
      {"leaky_relu(3.5)", [](const Tensor& x) { return wok::leaky_relu(x, 3.5); },
       [](LD x, DType) { return x < 0 ? 3.5L * x : x; }, 1},
      {"leaky_relu(-0.5)", [](const Tensor& x) { return wok::leaky_relu(x, -0.5); },
       [](LD x, DType) { return x < 0 ? -0.5L * x : x; }, 1},
      {"elu", [](const Tensor& x) { return wok::elu(x); }, [](LD x, DType) { return ref_elu(x, 1); }, 4},
      {"elu(0.3)", [](const Tensor& x) { return wok::elu(x, 0.3); },
       [](LD x, DType t) { return ref_elu(x, in(t, 0.3)); }, 5},
      {"selu", [](const Tensor& x) { return wok::selu(x); },
       [=](LD x, DType t) { return x > 0 ? in(t, selu_g) * x : ref_elu(x, in(t, selu_a * selu_g)); }, 5},
      {"celu", [](const Tensor& x) { return wok::celu(x); }, [](LD x, DType) { return ref_elu(x, 1); }, 4},
      {"celu(0.7)", [](const Tensor& x) { return wok::celu(x, 0.7); },
       [](LD x, DType t) {
         const LD a = in(t, 0.7);
         return std::isnan(x) ? x : x > 0 ? x : a * std::expm1(x / a);
       },
       6},
      {"hard_sigmoid", [](const Tensor& x) { return wok::hard_sigmoid(x); },
       [](LD x, DType t) { return std::isnan(x) ? x : std::clamp<LD>(in(t, 0.2) * x + 0.5L, 0, 1); }, 1,
       // alpha x + beta cancels near x = -2.5: two roundings of its terms.
       [](LD x, DType t) { return 2 * wt::eps_of(t) * static_cast<double>(std::fabs(0.2L * x) + 0.5L); }},
      {"hard_sigmoid(1/6, 0.5)", [](const Tensor& x) { return wok::hard_sigmoid(x, 1.0 / 6, 0.5); },
       [](LD x, DType t) { return std::isnan(x) ? x : std::clamp<LD>(in(t, 1.0 / 6) * x + 0.5L, 0, 1); }, 1,
       [](LD x, DType t) { return 2 * wt::eps_of(t) * static_cast<double>(std::fabs(x / 6) + 0.5L); }},
      {"thresholded_relu", [](const Tensor& x) { return wok::thresholded_relu(x); },
       [](LD x, DType) { return x > 1 ? x : 0; }, 0},
      {"thresholded_relu(0.3)", [](const Tensor& x) { return wok::thresholded_relu(x, 0.3); },
       [](LD x, DType t) { return x > in(t, 0.3) ? x : 0; }, 0},
      {"shrink", [](const Tensor& x) { return wok::shrink(x); },
       [](LD x, DType t) { return x < -in(t, 0.5) ? x : x > in(t, 0.5) ? x : 0; }, 0},
      {"shrink(1.5, 1)", [](const Tensor& x) { return wok::shrink(x, 1.5, 1.0); },
       [](LD x, DType) { return x < -1 ? x + 1.5L : x > 1 ? x - 1.5L : 0; }, 0.5,
       // x +- bias cancels near -+bias: one rounding of its terms.
       [](LD x, DType t) { return wt::eps_of(t) * static_cast<double>(std::fabs(x) + 1.5L); }},
  };
}

class Activations : public wt::BothBackends {};

template <typename T>
void check_case(const Case& c) {
  const DType t = wok::dtype_of<T>();
  const std::vector<T> xs = inputs<T>();
  std::vector<LD> want;
  for (T x : xs) want.push_back(c.ref(static_cast<LD>(x), t));
  Tensor y = c.fn(wok::from_vector(xs));
  std::function<double(size_t)> tol;
  if (c.abs_tol) tol = [&](size_t i) { return c.abs_tol(static_cast<LD>(xs[i]), t); };
  wt::UlpReport report;
  EXPECT_TRUE(wt::within_ulp<T>(c.name, y, want, c.max_ulp, [&](size_t i) { return "x=" + wt::fmt(xs[i]); },
                                &report, tol));
  ::testing::Test::RecordProperty(c.name + "_" + wt::dname(t) + "_max_ulp", std::to_string(report.max_ulp));
}

TEST_P(Activations, MatchLongDoubleReferences) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    check_case<float>(c);
    check_case<double>(c);
  }
}

// The e^x - 1 of elu, selu and celu keeps the digits of tiny x, where
// exp(x) - 1 would give 0 (float32 below 6e-8) or a few correct bits.
TEST_P(Activations, ExponentialLinearKeepsTinyNegativeInputs) {
  const std::vector<float> xf = {-1e-30f, -1e-12f, -3e-8f, -1e-7f, -1e-5f, -1e-3f, -0.1f, -1e-38f};
  const std::vector<double> xd = {-1e-300, -1e-30, -1e-17, -1e-12, -1e-8, -1e-4, -0.1, -1e-307};
  std::vector<LD> wf, wd;
  for (float x : xf) wf.push_back(std::expm1(static_cast<LD>(x)));
  for (double x : xd) wd.push_back(std::expm1(static_cast<LD>(x)));
  for (const char* name : {"elu", "celu"}) {
    auto fn = [&](const Tensor& x) { return std::string(name) == "elu" ? wok::elu(x) : wok::celu(x); };
    EXPECT_TRUE(wt::within_ulp<float>(name, fn(wok::from_vector(xf)), wf, 4));
    EXPECT_TRUE(wt::within_ulp<double>(name, fn(wok::from_vector(xd)), wd, 4));
  }
  // selu of -inf is -gamma alpha; elu of -inf is -alpha.
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_FLOAT_EQ(wok::selu(wok::from_vector(std::vector<float>{-inf})).item<float>(),
                  static_cast<float>(-1.67326319217681884765625 * 1.05070102214813232421875));
  EXPECT_EQ(wok::elu(wok::from_vector(std::vector<float>{-inf}), 0.5).item<float>(), -0.5f);
}

TEST_P(Activations, PreluBroadcastsTheSlopeOneWay) {
  // x [2, 3, 2, 2] with a per-channel slope [3, 1, 1], a scalar slope and
  // a full one; float32 and int32 (which stays int32).
  const Shape shape = {2, 3, 2, 2};
  const std::vector<float> xs = wt::random_values<float>(24, -5, 5, 21);
  const std::vector<float> per_channel = {0.25f, -1.5f, 2.0f};
  std::vector<LD> want;
  for (size_t i = 0; i < xs.size(); ++i) {
    const float s = per_channel[(i / 4) % 3];
    want.push_back(xs[i] < 0 ? static_cast<LD>(s) * xs[i] : xs[i]);
  }
  Tensor x = wok::from_vector(xs, shape);
  EXPECT_TRUE(
      wt::within_ulp<float>("prelu [3, 1, 1]", wok::prelu(x, wok::from_vector(per_channel, {3, 1, 1})), want, 0.5));
  std::vector<LD> want_scalar;
  for (float v : xs) want_scalar.push_back(v < 0 ? static_cast<LD>(0.2f) * v : v);
  EXPECT_TRUE(wt::within_ulp<float>("prelu []", wok::prelu(x, wok::full({}, 0.2f)), want_scalar, 0.5));
  Tensor full_slope = wok::from_vector(wt::random_values<float>(24, -2, 2, 22), shape);
  const std::vector<float> fs = full_slope.to_vector<float>();
  std::vector<LD> want_full;
  for (size_t i = 0; i < xs.size(); ++i) want_full.push_back(xs[i] < 0 ? static_cast<LD>(fs[i]) * xs[i] : xs[i]);
  EXPECT_TRUE(wt::within_ulp<float>("prelu full", wok::prelu(x, full_slope), want_full, 0.5));

  Tensor xi = wok::from_vector(std::vector<int32_t>{-4, -1, 0, 3, 7, -9}, {2, 3});
  Tensor si = wok::from_vector(std::vector<int32_t>{2, -3, 5});
  EXPECT_TRUE(wt::exact<int32_t>("prelu int32", wok::prelu(xi, si), {-8, 3, 0, 3, 7, -45}));
}

TEST_P(Activations, HardmaxMarksTheFirstMaximumAlongTheAxis) {
  // Small integers, so that ties are common; a nan counts as the maximum.
  const Shape shape = {3, 4, 5};
  std::vector<double> xs = wt::random_values<double>(60, -2, 2, 31);
  for (double& v : xs) v = std::round(v);
  xs[7] = std::numeric_limits<double>::quiet_NaN();
  for (DType t : {kF32, kF64}) {
    Tensor x = wok::from_vector(xs, shape).astype(t);
    for (int64_t axis : {0, 1, 2, -1, -3}) {
      SCOPED_TRACE(wt::dname(t) + " axis " + std::to_string(axis));
      const int a = static_cast<int>(axis < 0 ? axis + 3 : axis);
      int64_t stride = 1;
      for (int d = a + 1; d < 3; ++d) stride *= shape[d];
      const int64_t n = shape[a];
      std::vector<double> want(xs.size(), 0);
      for (int64_t i = 0; i < 60; ++i) {
        if ((i / stride) % n != 0) continue;  // i is the first element of its line
        int64_t best = 0;
        for (int64_t j = 1; j < n; ++j) {
          const double b = xs[i + best * stride], c = xs[i + j * stride];
          if (!std::isnan(b) && (std::isnan(c) || c > b)) best = j;
        }
        want[i + best * stride] = 1;
      }
      Tensor y = wok::hardmax(x, axis);
      EXPECT_EQ(y.dtype(), t);
      EXPECT_EQ(y.shape(), shape);
      EXPECT_EQ(y.to_vector<double>(), want);
    }
  }
  // Integers keep their dtype; an empty axis gives an empty result.
  EXPECT_TRUE(wt::exact<int32_t>("hardmax int32",
                                 wok::hardmax(wok::from_vector(std::vector<int32_t>{3, 9, 9, -1}, {2, 2})),
                                 {0, 1, 1, 0}));
  EXPECT_EQ(wok::hardmax(wok::zeros({2, 0, 3}), 1).shape(), (Shape{2, 0, 3}));
}

TEST_P(Activations, IntegerInputsComputeInFloatingPoint) {
  Tensor i = wok::from_vector(std::vector<int32_t>{-2, 0, 3});
  Tensor b = wok::from_vector(std::vector<bool>{true, false});
  for (auto fn : std::vector<std::function<Tensor(const Tensor&)>>{
           [](const Tensor& x) { return wok::leaky_relu(x); }, [](const Tensor& x) { return wok::elu(x); },
           [](const Tensor& x) { return wok::selu(x); }, [](const Tensor& x) { return wok::celu(x); },
           [](const Tensor& x) { return wok::hard_sigmoid(x); },
           [](const Tensor& x) { return wok::thresholded_relu(x); }, [](const Tensor& x) { return wok::shrink(x); }}) {
    EXPECT_EQ(fn(i).dtype(), kF64);
    EXPECT_EQ(fn(b).dtype(), kF32);
  }
  EXPECT_TRUE(wt::within_ulp<double>("elu int32", wok::elu(i), {std::expm1(-2.0L), 0, 3}, 4));
  EXPECT_TRUE(wt::exact<double>("leaky_relu int32", wok::leaky_relu(i, 0.5), {-1, 0, 3}));
}

INSTANTIATE_TEST_SUITE_P(Backends, Activations, wt::kBothBackends, wt::backend_param_name);

// ---- fusion under the JIT ------------------------------------------------------------

class ActivationFusion : public wt::JitLaunchCounts {};

struct Named {
  const char* name;
  std::function<Tensor(const Tensor&)> fn;
};

// prelu's slope is a ready input, broadcast along the rows.
std::vector<Named> all_activations(const Tensor& slope) {
  return {
      {"leaky_relu", [](const Tensor& x) { return wok::leaky_relu(x, 0.1); }},
      {"prelu", [slope](const Tensor& x) { return wok::prelu(x, slope); }},
      {"elu", [](const Tensor& x) { return wok::elu(x, 0.8); }},
      {"selu", [](const Tensor& x) { return wok::selu(x); }},
      {"celu", [](const Tensor& x) { return wok::celu(x, 1.5); }},
      {"hard_sigmoid", [](const Tensor& x) { return wok::hard_sigmoid(x); }},
      {"thresholded_relu", [](const Tensor& x) { return wok::thresholded_relu(x, 0.5); }},
      {"shrink", [](const Tensor& x) { return wok::shrink(x, 0.25, 0.75); }},
  };
}

// Each one between a scale-and-shift and a subtract-and-square is one
// kernel, whose values are the precompiled backend's, bit for bit.
TEST_F(ActivationFusion, EachFusesWithItsNeighboursIntoOneKernel) {
  Tensor x = wok::from_vector(wt::random_values<float>(4 * 37, -6, 6, 41), {4, 37});
  Tensor slope = wok::from_vector(wt::random_values<float>(37, -1, 1, 42));
  for (const Named& a : all_activations(slope)) {
    SCOPED_TRACE(a.name);
    auto chain = [&] { return wok::square(a.fn(x * 0.5f + 1.0f) - 2.0f); };
    Tensor y = chain();
    EXPECT_EQ(launches_of({y}), 1);
    wok::set_backend(wok::Backend::kPrecompiled);
    const std::vector<float> unfused = chain().to_vector<float>();
    wok::set_backend(wok::Backend::kJit);
    EXPECT_TRUE(wt::exact<float>(a.name, y, unfused));
  }
}

// The continuous ones (Note [Activations without compares] in
// frontend/activations.cpp) run in a matmul's epilogue: matmul + bias +
// activation costs what matmul + bias does.
TEST_F(ActivationFusion, ContinuousOnesRunInAMatmulEpilogue) {
  Tensor a = wok::rand({16, 24}, 51) - 0.5f, b = wok::rand({24, 12}, 52) - 0.5f, bias = wok::rand({12}, 53) - 0.5f;
  wok::eval({a, b, bias});
  const int64_t alone = launches_of({wok::matmul(a, b) + bias});
  EXPECT_EQ(alone, 1);
  for (const Named& act : all_activations(bias)) {
    const std::string name = act.name;
    if (name == "thresholded_relu" || name == "shrink") continue;  // they compare
    SCOPED_TRACE(name);
    EXPECT_EQ(launches_of({act.fn(wok::matmul(a, b) + bias)}), alone);
  }
}

// ---- on a GPU -------------------------------------------------------------------------------

// The same compositions on CUDA tensors (hardmax's positions are made on
// x's device), against the CPU's results.
TEST(ActivationsOnCuda, MatchTheCpu) {
  if (!wok::cuda_available()) GTEST_SKIP() << "no CUDA device: " << wok::cuda_unavailable_reason();
  const wok::Device gpu = wok::Device::cuda();
  Tensor x = wok::from_vector(wt::random_values<float>(4 * 37, -6, 6, 61), {4, 37});
  Tensor slope = wok::from_vector(wt::random_values<float>(37, -1, 1, 62));
  std::vector<Named> acts = all_activations(slope.to(gpu));
  std::vector<Named> on_cpu = all_activations(slope);
  acts.push_back({"hardmax", [](const Tensor& t) { return wok::hardmax(t, 0); }});
  on_cpu.push_back(acts.back());
  for (size_t i = 0; i < acts.size(); ++i) {
    SCOPED_TRACE(acts[i].name);
    Tensor y = acts[i].fn(x.to(gpu));
    EXPECT_EQ(y.device(), gpu);
    EXPECT_TRUE(wt::close<float>(acts[i].name, y, on_cpu[i].fn(x).to_vector<double>(), 1e-6, 1e-7));
  }
}

// ---- errors ------------------------------------------------------------------------------

using wt::throws_naming;

TEST(ActivationErrors, NameTheOpAndTheShapes) {
  Tensor x = wok::zeros({2, 3});
  EXPECT_TRUE(throws_naming<wok::ShapeError>([&] { wok::prelu(x, wok::zeros({4})); },
                                             {"wok::prelu", "slope float32[4]", "x float32[2, 3]"}));
  // The slope may not widen x: [2, 1, 3] against [2, 3].
  EXPECT_TRUE(throws_naming<wok::ShapeError>([&] { wok::prelu(x, wok::zeros({2, 1, 3})); },
                                             {"wok::prelu", "[2, 1, 3]", "[2, 3]"}));
  EXPECT_TRUE(throws_naming<wok::ArgumentError>([&] { wok::celu(x, 0.0); }, {"wok::celu", "alpha", "positive"}));
  EXPECT_TRUE(throws_naming<wok::ArgumentError>([&] { wok::celu(x, -1.0); }, {"wok::celu", "-1"}));
  EXPECT_TRUE(throws_naming<wok::ShapeError>([&] { wok::hardmax(x, 2); }, {"wok::hardmax", "axis 2", "[2, 3]"}));
  EXPECT_TRUE(throws_naming<wok::Error>([&] { wok::hardmax(wok::full({}, 1.0f)); }, {"wok::hardmax"}));
  EXPECT_TRUE(throws_naming<wok::Error>([&] { wok::prelu(Tensor(), x); }, {"wok::prelu", "undefined"}));
  EXPECT_TRUE(throws_naming<wok::Error>([&] { wok::elu(Tensor()); }, {"undefined"}));
}

}  // namespace
