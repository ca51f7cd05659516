// The ops added through runtime/ops/unary_op_list.h as docs/adding-an-op.md
// describes: softplus (a composite: one line) and trunc (a primitive: one
// row in each backend table), on both CPU backends. The CUDA rendering of
// every op in the list is compiled by tests/cuda_codegen_test.cpp.
#include <gtest/gtest.h>
#include <wok/wok.h>

#include <cmath>
#include <limits>

#include "test_util.h"

namespace {

class UnaryOpList : public wt::BothBackends {};

// Relative error in units of float32 or float64 epsilon.
template <typename T>
double eps_error(double got, double want) {
  if (want == 0) return got == 0 ? 0 : std::numeric_limits<double>::infinity();
  return std::fabs(got - want) / std::fabs(want) / std::numeric_limits<T>::epsilon();
}

TEST_P(UnaryOpList, SoftplusIsAccurateFromTinyToHuge) {
  std::vector<float> xf;
  for (double v = -100; v <= 100; v += 0.37) xf.push_back(static_cast<float>(v));
  xf.insert(xf.end(), {-1e-30f, 0.0f, 1e-30f, 88.0f, 1e30f});
  std::vector<double> xd(xf.begin(), xf.end());
  std::vector<float> gf = wok::softplus(wok::from_vector(xf)).to_vector<float>();
  std::vector<double> gd = wok::softplus(wok::from_vector(xd)).to_vector<double>();
  double worst_f = 0, worst_d = 0;
  for (size_t i = 0; i < xf.size(); ++i) {
    // log1p(e^x), from the max(x, 0) + log1p(e^-|x|) split, in long double.
    long double x = xd[i];
    long double want = std::max(x, 0.0L) + std::log1p(std::exp(-std::fabs(x)));
    // float32 results below its normal range carry fewer bits: not counted.
    if (want >= std::numeric_limits<float>::min())
      worst_f = std::max(worst_f, eps_error<float>(gf[i], static_cast<double>(want)));
    worst_d = std::max(worst_d, eps_error<double>(gd[i], static_cast<double>(want)));
  }
  // A few ulp: no cancellation where e^x underflows 1 + e^x (x < -17 in float32).
  EXPECT_LT(worst_f, 4.0);
  EXPECT_LT(worst_d, 4.0);
  // Special values.
  std::vector<float> s = wok::softplus(wok::from_vector(std::vector<float>{
      -std::numeric_limits<float>::infinity(), std::numeric_limits<float>::infinity(),
      std::numeric_limits<float>::quiet_NaN()})).to_vector<float>();
  EXPECT_EQ(s[0], 0.0f);
  EXPECT_EQ(s[1], std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(s[2]));
  // Integers compute in float64, bool in float32.
  EXPECT_EQ(wok::softplus(wok::from_vector(std::vector<int32_t>{1})).dtype(), wok::DType::kFloat64);
  EXPECT_EQ(wok::softplus(wok::from_vector(std::vector<bool>{true})).dtype(), wok::DType::kFloat32);
}

TEST_P(UnaryOpList, TruncRoundsTowardZero) {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> x = {-2.5f, -1.5f, -0.5f, -0.0f, 0.0f, 0.5f, 1.5f, 2.5f, 1e30f, -inf, inf, 8388607.5f, -3.99f};
  std::vector<float> got = wok::trunc(wok::from_vector(x)).to_vector<float>();
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(got[i], std::trunc(x[i])) << x[i];
    EXPECT_EQ(std::signbit(got[i]), std::signbit(std::trunc(x[i]))) << "the sign of " << x[i] << " stays";
  }
  EXPECT_TRUE(std::isnan(wok::trunc(wok::from_vector(std::vector<double>{NAN})).to_vector<double>()[0]));
  // On integers it is the identity, and keeps the dtype.
  wok::Tensor i = wok::trunc(wok::from_vector(std::vector<int64_t>{-7, 0, 9}));
  EXPECT_EQ(i.dtype(), wok::DType::kInt64);
  EXPECT_EQ(i.to_vector<int64_t>(), (std::vector<int64_t>{-7, 0, 9}));
  // Fused with its neighbours on the JIT.
  wok::Tensor a = wok::from_vector(std::vector<double>{-2.75, 3.25});
  wok::Tensor y = wok::trunc(a * 2.0) + 0.5;
  wok::reset_stats();
  EXPECT_EQ(y.to_vector<double>(), (std::vector<double>{-4.5, 6.5}));
  if (GetParam() == wok::Backend::kJit) {
    EXPECT_EQ(wok::stats().kernel_launches, 1);
  }
}

TEST(UnaryOpListErrors, TruncRefusesBoolAndNamesTheOp) {
  try {
    wok::trunc(wok::from_vector(std::vector<bool>{true}));
    ADD_FAILURE() << "trunc of bool was accepted";
  } catch (const wok::DTypeError& e) {
    EXPECT_NE(std::string(e.what()).find("trunc"), std::string::npos) << e.what();
  }
}

INSTANTIATE_TEST_SUITE_P(Backends, UnaryOpList, wt::kBothBackends, wt::backend_param_name);

}  // namespace
