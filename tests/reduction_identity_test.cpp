// Reductions over zero elements give the identity of their combining
// operation (ONNX): sum 0, prod 1, max -inf and min +inf (an integer
// dtype's lowest and highest value; bool false and true), mean nan. Every
// dtype, on both backends, through the layouts the kernels distinguish
// (inner and outer axes, all axes, keepdims), bare and after a fused
// elementwise op, and in a compiled function. argmax of nothing stays an
// error (there is no index to give).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "test_util.h"

namespace {

using wok::DType;
using wok::Shape;
using wok::Tensor;

class ReductionIdentity : public wt::BothBackends {};

// One empty-reduction case: input shape, axes, keepdims.
struct Case {
  Shape shape;
  std::vector<int64_t> axes;
  bool keepdims;
  Shape out;
};

const std::vector<Case> kCases = {
    {{3, 0}, {1}, false, {3}},          // inner axis
    {{0, 4}, {0}, true, {1, 4}},        // outer axis
    {{2, 0, 3}, {1}, false, {2, 3}},    // middle axis
    {{0}, {}, false, {}},               // all axes
    {{2, 0, 3}, {0, 1, 2}, true, {1, 1, 1}},
    {{1 << 17, 0}, {}, false, {}},      // long and empty
};

template <typename T>
void check_dtype() {
  using L = std::numeric_limits<T>;
  const DType t = wok::dtype_of<T>();
  for (const Case& c : kCases) {
    const std::string at = wt::dname(t) + wok::shape_str(c.shape) + " axes " + wok::shape_str(c.axes);
    const size_t n = static_cast<size_t>(wok::numel(c.out));
    Tensor x = wok::zeros(c.shape, t);
    Tensor mx = wok::max(x, c.axes, c.keepdims), mn = wok::min(x, c.axes, c.keepdims);
    EXPECT_EQ(mx.shape(), c.out) << at;
    if constexpr (std::is_floating_point_v<T>) {
      EXPECT_TRUE(wt::exact<T>("max " + at, mx, std::vector<T>(n, -L::infinity())));
      EXPECT_TRUE(wt::exact<T>("min " + at, mn, std::vector<T>(n, L::infinity())));
      EXPECT_TRUE(wt::exact<T>("sum " + at, wok::sum(x, c.axes, c.keepdims), std::vector<T>(n, T(0))));
      EXPECT_TRUE(wt::exact<T>("prod " + at, wok::prod(x, c.axes, c.keepdims), std::vector<T>(n, T(1))));
      EXPECT_TRUE(wt::exact<T>("mean " + at, wok::mean(x, c.axes, c.keepdims), std::vector<T>(n, L::quiet_NaN())));
      // After a fused elementwise op, and feeding one.
      EXPECT_TRUE(wt::exact<T>("max(abs) " + at, wok::max(wok::abs(x), c.axes, c.keepdims) * T(2),
                               std::vector<T>(n, -L::infinity())));
      EXPECT_TRUE(wt::exact<T>("min(x * 2) + 1 " + at, wok::min(x * T(2), c.axes, c.keepdims) + T(1),
                               std::vector<T>(n, L::infinity())));
    } else {
      // bool: false and true; integers: the lowest and highest value.
      EXPECT_TRUE(wt::exact<T>("max " + at, mx, std::vector<T>(n, L::lowest())));
      EXPECT_TRUE(wt::exact<T>("min " + at, mn, std::vector<T>(n, L::max())));
      EXPECT_TRUE(wt::exact<int64_t>("sum " + at, wok::sum(x, c.axes, c.keepdims), std::vector<int64_t>(n, 0)));
      EXPECT_TRUE(wt::exact<int64_t>("prod " + at, wok::prod(x, c.axes, c.keepdims), std::vector<int64_t>(n, 1)));
      if constexpr (std::is_same_v<T, bool>)
        EXPECT_TRUE(wt::exact<float>("mean " + at, wok::mean(x, c.axes, c.keepdims), std::vector<float>(n, NAN)));
      else
        EXPECT_TRUE(wt::exact<double>("mean " + at, wok::mean(x, c.axes, c.keepdims), std::vector<double>(n, NAN)));
    }
  }
}

TEST_P(ReductionIdentity, Float32) { check_dtype<float>(); }
TEST_P(ReductionIdentity, Float64) { check_dtype<double>(); }
TEST_P(ReductionIdentity, Int32) { check_dtype<int32_t>(); }
TEST_P(ReductionIdentity, Int64) { check_dtype<int64_t>(); }
TEST_P(ReductionIdentity, Bool) { check_dtype<bool>(); }

// An empty reduction beside non-empty work in one program: the identity
// flows into what follows.
TEST_P(ReductionIdentity, InsideALargerProgram) {
  Tensor e = wok::zeros({4, 0});
  Tensor x = wok::from_vector(std::vector<float>{1, -2, 3, -4}, {4, 1});
  Tensor y = wok::maximum(wok::max(e, {1}, true), x);  // -inf loses everywhere
  EXPECT_TRUE(wt::exact<float>("maximum(max of nothing, x)", y, {1, -2, 3, -4}));
  Tensor z = wok::minimum(wok::min(wok::exp(e), {1}, true), x) + wok::sum(e, {1}, true);
  EXPECT_TRUE(wt::exact<float>("minimum(min of nothing, x)", z, {1, -2, 3, -4}));
}

TEST_P(ReductionIdentity, ArgmaxOfNothingIsAnError) {
  EXPECT_TRUE(wt::throws_naming<wok::ShapeError>([] { wok::argmax(wok::zeros({3, 0}), {1}); },
                                                 {"wok::argmax", "size 0", "no identity"}));
  EXPECT_EQ(wok::argmax(wok::zeros({0, 3}), {1}).shape(), (Shape{0}));  // nothing to index: fine
}

INSTANTIATE_TEST_SUITE_P(Backends, ReductionIdentity, wt::kBothBackends, wt::backend_param_name);

TEST(ReductionIdentityCompile, CompiledMaxOfNothing) {
  auto f = wok::compile([](const Tensor& x) { return wok::max(x * 2.0f, {1}); });
  for (int64_t rows : {3, 5}) {
    Tensor got = f(wok::zeros({rows, 0}));
    EXPECT_TRUE(wt::exact<float>("compiled max rows=" + std::to_string(rows), got,
                                 std::vector<float>(static_cast<size_t>(rows), -INFINITY)));
  }
}

}  // namespace
