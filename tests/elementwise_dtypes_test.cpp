// The elementwise ops' dtype rules: integer edges and bool inputs of the
// unary ops, casts between every pair of dtypes, dtypes rejected or
// promoted, and empty, 0-d and large (split across threads) shapes.
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

// ---- integer and bool edges ---------------------------------------------------------------

TEST(UnaryOps, IntegerEdgesWrap) {
  wt::for_each_backend([&] {
    std::vector<int32_t> x = {std::numeric_limits<int32_t>::min(), -5, 0, 5, std::numeric_limits<int32_t>::max()};
    EXPECT_TRUE(
        wt::exact<int32_t>("neg", wok::neg(wt::tensor(x)),
                           {std::numeric_limits<int32_t>::min(), 5, 0, -5, -std::numeric_limits<int32_t>::max()}));
    EXPECT_TRUE(
        wt::exact<int32_t>("abs", wok::abs(wt::tensor(x)),
                           {std::numeric_limits<int32_t>::min(), 5, 0, 5, std::numeric_limits<int32_t>::max()}));
    EXPECT_TRUE(wt::exact<int32_t>("square", wok::square(wt::tensor(std::vector<int32_t>{65536, 46341, -3})),
                                   {0, static_cast<int32_t>(46341u * 46341u), 9}));
    // Integer inputs to float ops give float64 and are exact where float64 is.
    EXPECT_TRUE(wt::exact<double>("reciprocal", wok::reciprocal(wt::tensor(std::vector<int32_t>{0, 2, -4})),
                                  {kInf, 0.5, -0.25}));
    EXPECT_TRUE(wt::exact<double>("sqrt", wok::sqrt(wt::tensor(std::vector<int64_t>{0, 4, -1})), {0, 2, kNaN}));
    EXPECT_TRUE(wt::exact<float>("exp", wok::exp(wt::tensor(std::vector<bool>{false})), {1.0f}));
  });
}

TEST(UnaryOps, LogicalNotEveryDType) {
  wt::for_each_backend([&] {
    EXPECT_TRUE(
        wt::exact<bool>("logical_not", wok::logical_not(wt::tensor(std::vector<bool>{true, false})), {false, true}));
    EXPECT_TRUE(wt::exact<bool>("logical_not",
                                !wt::tensor(std::vector<int32_t>{0, 1, -7, std::numeric_limits<int32_t>::min()}),
                                {true, false, false, false}));
    EXPECT_TRUE(wt::exact<bool>("logical_not", wok::logical_not(wt::tensor(std::vector<int64_t>{0, int64_t{1} << 40})),
                                {true, false}));
    // nan is true (non-zero), as in NumPy; -0 is false.
    EXPECT_TRUE(wt::exact<bool>(
        "logical_not", wok::logical_not(wt::tensor(std::vector<float>{0.0f, -0.0f, 0.5f, NAN, -INFINITY, 1e-45f})),
        {true, true, false, false, false, false}));
    EXPECT_TRUE(wt::exact<bool>("logical_not",
                                wok::logical_not(wt::tensor(std::vector<double>{0.0, -0.0, 1e-320, kNaN})),
                                {true, true, false, false}));
  });
}

TEST(UnaryOps, ReadingBoolResults) {
  Tensor b = wt::tensor(std::vector<float>{0.0f, 2.0f, -1.0f}) > 0.0f;
  EXPECT_EQ(b.to_vector<bool>(), (std::vector<bool>{false, true, false}));
  EXPECT_EQ(b.to_vector<int32_t>(), (std::vector<int32_t>{0, 1, 0}));
  EXPECT_EQ(b.data<bool>()[1], true);
  EXPECT_EQ(wt::tensor(std::vector<int32_t>{0, 3}).to_vector<bool>(), (std::vector<bool>{false, true}));
  EXPECT_TRUE((wok::scalar_tensor(1.0) == 1.0).item<bool>());
  EXPECT_THROW(b.data<float>(), wok::DTypeError);
}

// ---- cast -------------------------------------------------------------------------------

template <typename In>
std::vector<In> cast_inputs() {
  if constexpr (std::is_same_v<In, bool>) {
    return {false, true};
  } else if constexpr (std::is_integral_v<In>) {
    // Includes values that do not fit int32 or float32 exactly.
    std::vector<In> v = wt::integer_edges<In>();
    v.push_back(static_cast<In>(16777217));
    v.push_back(static_cast<In>(-16777219));
    return v;
  } else {
    // Only values every integer type can hold (C++ leaves the rest undefined).
    return {In(0),    -In(0),  In(0.5),  In(-0.5), In(1.9),   In(-1.9),       In(2.5),
            In(-2.5), In(1e9), In(-2e9), In(0.1),  In(1e-30), In(16777217.0), In(1.0000000000000002)};
  }
}

template <typename In, typename Out>
void check_cast() {
  std::vector<In> x = cast_inputs<In>();
  std::vector<Out> want;
  for (In v : x) want.push_back(static_cast<Out>(v));
  Tensor y = wok::cast(wt::tensor(x), wok::dtype_of<Out>());
  EXPECT_TRUE(wt::exact<Out>("cast " + wt::dname(wok::dtype_of<In>()) + "->" + wt::dname(wok::dtype_of<Out>()), y, want,
                             [&](size_t i) { return "x=" + wt::fmt(x[i]); }));
}

template <typename In>
void check_cast_from() {
  check_cast<In, bool>();
  check_cast<In, int32_t>();
  check_cast<In, int64_t>();
  check_cast<In, float>();
  check_cast<In, double>();
}

TEST(CastOp, EveryPairOfDTypes) {
  wt::for_each_backend([&] {
    check_cast_from<bool>();
    check_cast_from<int32_t>();
    check_cast_from<int64_t>();
    check_cast_from<float>();
    check_cast_from<double>();
  });
}

TEST(CastOp, FloatSpecialsToFloatAndBool) {
  wt::for_each_backend([&] {
    std::vector<double> x = {kNaN, kInf, -kInf, -0.0, 1e300, -1e300, 1e-300, 3.4028235677973366e38};
    std::vector<float> want;
    for (double v : x) want.push_back(static_cast<float>(v));
    EXPECT_TRUE(wt::exact<float>("cast float64->float32", wok::cast(wt::tensor(x), DType::kFloat32), want));
    EXPECT_TRUE(wt::exact<bool>("cast float64->bool", wok::cast(wt::tensor(x), DType::kBool),
                                {true, true, true, false, true, true, true, true}));
    EXPECT_TRUE(wt::exact<double>("cast float32->float64", wok::cast(wt::tensor(want), DType::kFloat64),
                                  std::vector<double>(want.begin(), want.end())));
  });
}

// ---- dtype rules of the ops -------------------------------------------------------------------

TEST(ElementwiseDTypes, BoolRejectedWhereUndefined) {
  Tensor b = wt::tensor(std::vector<bool>{true, false});
  for (auto fn : {wok::neg, wok::abs, wok::relu, wok::floor, wok::ceil, wok::round})
    EXPECT_THROW(fn(b), wok::DTypeError);
  EXPECT_THROW(wok::sub(b, b), wok::DTypeError);
  EXPECT_EQ(wok::square(b).dtype(), DType::kInt32);
  EXPECT_EQ(wok::maximum(b, b).dtype(), DType::kBool);
  EXPECT_EQ(wok::pow(b, b).dtype(), DType::kInt32);
  EXPECT_EQ(wok::sqrt(b).dtype(), DType::kFloat32);
  EXPECT_EQ(wok::reciprocal(b).dtype(), DType::kFloat32);
  EXPECT_EQ((b / b).dtype(), DType::kFloat32);
}

TEST(ElementwiseShapes, EmptyAndZeroDim) {
  wt::for_each_backend([&] {
    Tensor e = wok::zeros({0, 3});
    Tensor y = wok::exp(e) + 1.0f;
    EXPECT_EQ(y.shape(), (wok::Shape{0, 3}));
    EXPECT_TRUE(y.to_vector<float>().empty());
    Tensor s = wok::scalar_tensor(2.0);
    Tensor z = wok::sqrt(s) * s;
    EXPECT_EQ(z.shape(), wok::Shape{});
    EXPECT_DOUBLE_EQ(z.item<double>(), 2.0 * std::sqrt(2.0));
  });
}

// A large input crosses the thread pool's grain: every chunk must be right.
TEST(ElementwiseShapes, LargeInputSplitAcrossThreads) {
  wt::for_each_backend([&] {
    const int64_t n = (1 << 18) + 7;
    Tensor x = wok::rand({n}, 1, DType::kFloat32);
    std::vector<float> xv = x.to_vector<float>();
    std::vector<float> got = (wok::exp(x) * 2.0f - x).to_vector<float>();
    ASSERT_EQ(got.size(), xv.size());
    int bad = 0;
    for (int64_t i = 0; i < n && bad < 5; ++i) {
      LD want = std::exp(static_cast<LD>(xv[i]));
      float e = got[i] - (static_cast<float>(want) * 2.0f - xv[i]);
      if (std::fabs(e) > 4e-7f * 3) {
        ++bad;
        ADD_FAILURE() << "index " << i << " x=" << xv[i] << " got=" << got[i];
      }
    }
  });
}

}  // namespace
